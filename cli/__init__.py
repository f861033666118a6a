"""The `isr` command line: the one place that wires protocol names to models and engines."""
