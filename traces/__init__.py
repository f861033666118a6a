"""Trace formats and validation: the implementation trace format (FORMAT.md, schema/, format.py)
and counterexample files (`isr check --trace-out`, `isr replay`: counterexample.py)."""
