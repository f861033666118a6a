"""Sans-I/O protocol core: handlers take a message or a timer event (plus the current time as an
input) and return effects. No sockets, files, clocks or randomness in here (docs/DESIGN.md, h11-style)."""
