"""Trace formats and validation: counterexample files (`isr check --trace-out`, `isr replay`) and
the implementation trace format (FORMAT.md)."""
