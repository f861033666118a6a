"""Exit codes and user-facing errors, in one place (as TLC keeps its messages)."""

from __future__ import annotations

OK = 0  # every checked property holds and the search completed
VIOLATION = 1  # a property is violated (or a trace/implementation rejected)
BAD_INPUT = 2  # the user's input is wrong: one line on stderr, no traceback
INCOMPLETE = 3  # a time or state limit ended the run before it could decide
REJECTED = 4  # `isr replay`: a step of the trace is not a transition of the spec
ENGINE_FAILURE = 5  # `isr check --workers`: a worker process died; the run has no verdict


class UsageError(Exception):
    """A mistake in the user's input. The CLI prints `isr: error: <message>` and exits 2."""


def one_line(message: str, limit: int = 500) -> str:
    """``message`` as one printable line: control characters (a hostile file's field names and
    values reach messages) escaped, whitespace runs folded, long messages cut."""
    text = "".join(c if c.isprintable() else repr(c)[1:-1] for c in " ".join(message.split()))
    return text if len(text) <= limit else text[: limit - 3] + "..."


def refuse_unwritable(path: str, option: str) -> None:
    """UsageError when ``path``'s folder does not exist or is not writable: for an output
    written at the end of a long run (``--html``, ``--html-report``, ``--timeline``), refused
    before the run rather than after it."""
    import os

    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder) or not os.access(folder, os.W_OK):
        raise UsageError(f"cannot write {option} {path}: {folder} is not a writable folder")


def write_output(path: str, text: str, option: str) -> None:
    """Write an output file a command was asked for (a page, a report); an unwritable one is a
    UsageError naming the option (one line, exit 2)."""
    try:
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
    except OSError as e:
        raise UsageError(f"cannot write {option} {path}: {e.strerror}") from None
