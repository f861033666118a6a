"""`isr explore`: a local web page to walk the spec's state space by hand, as stateright's
Explorer does: from an initial state, pick an enabled action, see what it changed and which
properties hold, go back, search for a state by a predicate, jump along a counterexample.

The state walking is cli/explore_session.py; the page is cli/explore_page.py. This module is the
command and a small HTTP server (the standard library's ThreadingHTTPServer) answering the page
and its JSON API:

* ``GET /``                        the page (self-contained: no external script, style or font)
* ``GET /api/info``                the model, its initial states, properties, the trace
* ``GET /api/state/<id>``          a state, its fingerprint and its properties
* ``GET /api/successors/<id>``     its enabled actions, each with what it changes
* ``GET /api/walk?path=0.3.1``     the states along a path (initial index, successor positions)
* ``GET /api/search?q=...&from=<id>``  a shortest path to a state matching the query

The server listens on the loopback interface only (a page that runs the model for anyone who
can reach it has no business on a network) and answers only requests addressed to it by a
loopback name (a DNS-rebinding page elsewhere cannot read it)."""

from __future__ import annotations

import argparse
import errno
import ipaddress
import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from .errors import UsageError, one_line
from .explore_page import PAGE
from .explore_session import (
    MAX_PATH,
    SEARCH_MAX_SECONDS,
    SEARCH_MAX_STATES,
    ExploreError,
    ExploreSession,
)
from .models import add_model_args, int_in, model_from_args, positive_int, seconds_in
from .replay import load_trace

DEFAULT_PORT = 8470
LOOPBACK_NAMES = ("localhost",)


def register(sub) -> None:
    p = sub.add_parser(
        "explore",
        help="walk the state space in a local web page: pick actions, see what they change, "
        "search a state by a predicate, step through a counterexample",
        description="Serves a page on 127.0.0.1 to walk the spec by hand (as stateright's "
        "Explorer): the enabled actions of a state with the fields each changes, the invariants "
        "holding or violated in it, back and forward, a search for the shortest path to a "
        "state matching a predicate (e.g. `leader_view[r1] == 1 and hw[r0] < 2`, `not "
        "StrongIsr`), and with --trace the states of a counterexample. Exit 0: stopped by "
        "Ctrl-C; 2: bad input, an address that is not loopback, or the port in use.",
    )
    before = {a.dest for a in p._actions}
    add_model_args(p)
    model_dests = [a.dest for a in p._actions if a.dest not in before]
    p.add_argument(
        "--trace",
        metavar="FILE",
        help="a counterexample written by `isr check --trace-out` (NDJSON or ITF): the page "
        "can jump to each of its states; the model is the one the file was written with (no "
        "model options with it)",
    )
    p.add_argument(
        "--port",
        type=int_in(0, 65_535),
        default=DEFAULT_PORT,
        metavar="N",
        help=f"TCP port on 127.0.0.1 (default {DEFAULT_PORT}; 0: any free port)",
    )
    p.add_argument(
        "--bind",
        default="127.0.0.1",
        metavar="ADDR",
        help="address to listen on: a loopback address only (default 127.0.0.1); any other is "
        "refused",
    )
    browser = p.add_mutually_exclusive_group()
    browser.add_argument("--open", action="store_true", help="open the page in a web browser")
    browser.add_argument(
        "--no-browser", action="store_true", help="do not open a browser (the default)"
    )
    p.add_argument(
        "--search-max-states",
        type=positive_int,
        default=SEARCH_MAX_STATES,
        metavar="N",
        help=f"a search stops after N distinct states (default {SEARCH_MAX_STATES:,})",
    )
    p.add_argument(
        "--search-max-seconds",
        type=seconds_in(0.0, 3_600.0),
        default=SEARCH_MAX_SECONDS,
        metavar="S",
        help=f"a search stops after S seconds (default {SEARCH_MAX_SECONDS:g})",
    )
    p.set_defaults(run=run, model_defaults={d: p.get_default(d) for d in model_dests})


def session_from_args(args: argparse.Namespace) -> ExploreSession:
    """The session of the options: the model as `isr check` builds it from the model options,
    or, with --trace, the model the trace's header names (as `isr replay` builds it) and the
    trace replayed through it."""
    limits = {"max_states": args.search_max_states, "max_seconds": args.search_max_seconds}
    if not args.trace:
        return ExploreSession(model_from_args(args, exhaustive=False), **limits)
    given = [
        d
        for d, default in args.model_defaults.items()
        if getattr(args, d) != default and d != "protocol_file"
    ]
    if given:
        opt = "--" + given[0].replace("_", "-")
        raise UsageError(
            f"{opt} with --trace: the model is the one {args.trace} was written with (its header)"
        )
    trace, model = load_trace(args.trace, args.protocol_file)
    try:
        return ExploreSession(model, trace=trace, trace_name=args.trace, **limits)
    except ExploreError as e:
        raise UsageError(str(e)) from None


# --- the HTTP server ----------------------------------------------------------------------------
class ExploreServer(ThreadingHTTPServer):
    """The page and the API of one session, on a loopback address."""

    daemon_threads = True  # a search still running does not hold Ctrl-C

    def __init__(self, session: ExploreSession, host: str = "127.0.0.1", port: int = 0) -> None:
        self.session = session
        super().__init__((loopback(host), port), _Handler)

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        return f"http://{host}:{port}/"


def loopback(host: str) -> str:
    """``host`` as an IPv4 loopback address to bind; UsageError for any other address (the
    explorer is a local tool: it is never served to a network)."""
    if host in LOOPBACK_NAMES:
        return "127.0.0.1"
    try:
        addr = ipaddress.ip_address(host)
    except ValueError:
        addr = None
    if addr is None or not addr.is_loopback or addr.version != 4:
        raise UsageError(
            f"--bind {one_line(host, 80)}: isr explore listens on a loopback address only "
            "(127.0.0.1 or localhost), never on a network"
        )
    return str(addr)


def make_server(session: ExploreSession, host: str = "127.0.0.1", port: int = 0) -> ExploreServer:
    """A server for ``session`` on ``host:port`` (port 0: any free one), not yet serving.
    UsageError for a non-loopback address or a port in use."""
    try:
        return ExploreServer(session, host, port)
    except OSError as e:
        if e.errno == errno.EADDRINUSE:
            raise UsageError(
                f"port {port} on {host} is in use: give another with --port N (0: any free port)"
            ) from None
        if e.errno == errno.EACCES:
            raise UsageError(
                f"port {port} on {host}: permission denied (use a port >= 1024)"
            ) from None
        raise UsageError(f"cannot listen on {host}:{port}: {e.strerror}") from None


class _Handler(BaseHTTPRequestHandler):
    server: ExploreServer
    server_version = "isr-explore"
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        pass  # quiet: the terminal shows the URL and nothing else

    def do_GET(self) -> None:
        if not self._host_ok():
            self._send(
                403, {"error": "this server answers requests to 127.0.0.1 or localhost only"}
            )
            return
        url = urlsplit(self.path)
        parts = [p for p in url.path.split("/") if p]
        query = parse_qs(url.query)
        try:
            if not parts:
                self._send_page()
                return
            if parts[0] != "api" or len(parts) < 2:
                self._send(404, {"error": f"no page {url.path}"})
                return
            self._send(200, self._api(parts[1:], query))
        except ExploreError as e:
            self._send(400, {"error": one_line(str(e))})
        except _NotFound as e:
            self._send(404, {"error": str(e)})
        except Exception as e:  # a bug: one line here and on the terminal, the server goes on
            msg = one_line(f"internal error on {url.path}: {type(e).__name__}: {e}")
            print(f"isr explore: {msg}", file=sys.stderr)
            self._send(500, {"error": msg})

    def _api(self, parts: list[str], query: dict[str, list[str]]) -> Any:
        session = self.server.session
        what = parts[0]
        if what == "info" and len(parts) == 1:
            return session.info()
        if what in ("state", "successors") and len(parts) == 2:
            sid = _int(parts[1], "state id")
            return session.state_view(sid) if what == "state" else session.successors_view(sid)
        if what == "walk" and len(parts) == 1:
            return session.walk(_path(_one(query, "path", "0")))
        if what == "search" and len(parts) == 1:
            start = _one(query, "from", "")
            return session.search(_one(query, "q", ""), _int(start, "from") if start else None)
        raise _NotFound(f"no API /api/{'/'.join(parts)}")

    def _host_ok(self) -> bool:
        host = (self.headers.get("Host") or "").strip().lower()
        name = host.rsplit(":", 1)[0] if not host.endswith("]") else host
        try:
            return name in LOOPBACK_NAMES or ipaddress.ip_address(name).is_loopback
        except ValueError:
            return False

    def _send_page(self) -> None:
        body = PAGE.encode("utf-8")
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        # the page loads nothing but its own API
        self.send_header(
            "Content-Security-Policy",
            "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
            "connect-src 'self'; img-src data:; base-uri 'none'; form-action 'none'",
        )
        self._finish(body)

    def _send(self, code: int, obj: Any) -> None:
        body = json.dumps(obj, separators=(",", ":")).encode("utf-8")
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self._finish(body)

    def _finish(self, body: bytes) -> None:
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        self.end_headers()
        self.wfile.write(body)


class _NotFound(Exception):
    pass


def _one(query: dict[str, list[str]], key: str, default: str) -> str:
    values = query.get(key)
    return values[-1] if values else default


def _int(text: str, what: str) -> int:
    if not text.isdigit() or len(text) > 12:
        raise ExploreError(f"{what} {one_line(text, 40)!r} is not a number")
    return int(text)


def _path(text: str) -> list[int]:
    words = text.split(".")
    if len(words) > MAX_PATH + 1:
        raise ExploreError(f"a path of more than {MAX_PATH} steps")
    return [_int(w, "path step") for w in words]


# --- the command --------------------------------------------------------------------------------
def run(args: argparse.Namespace) -> int:
    host = loopback(args.bind)  # refused before the model is built
    session = session_from_args(args)
    server = make_server(session, host, args.port)
    try:
        print(f"isr explore: {session.model.name} at {server.url} (Ctrl-C stops it)", flush=True)
        if args.open:
            import webbrowser

            threading.Thread(target=webbrowser.open, args=(server.url,), daemon=True).start()
        server.serve_forever()
    except KeyboardInterrupt:
        print("isr explore: stopped", file=sys.stderr)
    finally:
        server.server_close()
    return 0
