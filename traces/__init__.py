"""Trace format (FORMAT.md, schema/) and, later, the validator that replays traces on the spec."""
