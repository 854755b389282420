"""``rapgen serve-search``: the frozen Search tool as a loopback HTTP endpoint.

Protocol (JSON over HTTP/1.0, stdlib ``http.server``):

- ``POST /search`` with ``Content-Type: application/json`` and
  ``{"field_id", "origin", "condition", "arguments": {query, sort, date_from, date_to}}``
  → 200 ``{"call_index", "total_hits", "papers": [...], "calls_left"}``, or 200
  ``{"error": …}`` for a malformed call (counted) or one past the cap (not counted).
- ``GET /tools?condition=A1`` → the tool schemas of that condition.
- ``GET /traces`` → every recorded call so far, as ``traces.jsonl`` lines.
- ``GET /health`` → ``{"ok": true, "max_calls", "top_k"}``.

Every other request gets a 4xx JSON ``{"error": …}`` and is never counted: a
body that is not strict JSON in UTF-8 (bad bytes, NaN, deep nesting, a huge
number), text with a lone surrogate, a body over :data:`MAX_BODY` (413 as soon
as the headers declare it, before any of the body is read) or without a
Content-Length, another content type, an envelope that is not an object with
exactly those four keys, a unit that does not exist, an unknown path or method.

DNS rebinding: a web page the submitter visits may address the server by a name
it controls that resolves to 127.0.0.1. Every request must therefore name the
server by loopback in its ``Host`` (``127.0.0.1``, ``localhost`` or ``[::1]``, with
the server's port; else 421), and a browser's ``Origin``, when sent, must be such
an address too (else 403): the rules of ``--mcp-http``. A client has
:data:`REQUEST_TIMEOUT` seconds in all to send its request line, headers and
body, however slowly it trickles them; then the connection is closed. A counted call is recorded (and, with ``--traces FILE``, appended and
fsync'd) before it is answered, so the trace is gapless and never disagrees
with the answers. The server binds to loopback addresses only and stays up:
an unexpected failure in one request is a 500 JSON error for that request.
"""

from __future__ import annotations

import json
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Callable
from urllib.parse import parse_qs, urlparse

from rapgen.archive import FIXED_FORECAST, Archive
from rapgen.errors import RapgenError, UsageProblem
from rapgen.kit.chat import decode_json
from rapgen.kit.journal import LineAppender, dumps_line
from rapgen.kit.prompt import tool_schemas
from rapgen.kit.session import SearchSession, ToolError

LOOPBACK = ("127.0.0.1", "::1", "localhost")
MAX_BODY = 1 << 20
DRAIN_LIMIT = 8 << 20  # an oversized body up to this size is read and dropped before the 413
REQUEST_TIMEOUT = 30.0  # seconds a client may take to send its whole request (line, headers, body)
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")  # the names a Host or Origin may give the server
ENVELOPE_KEYS = ("field_id", "origin", "condition", "arguments")
ENDPOINTS = "POST /search, GET /tools, GET /traces, GET /health"


def _body(payload: object) -> bytes:
    try:
        return (json.dumps(payload, ensure_ascii=False) + "\n").encode("utf-8")
    except UnicodeEncodeError:
        return (json.dumps(payload, ensure_ascii=True) + "\n").encode("ascii")


def loopback_authority(value: str | None, port: int, *, scheme: str | None = None) -> bool:
    """Whether a Host header (``scheme`` None) or an Origin (``scheme`` "http") names this loopback server."""
    if value is None:
        return False
    if scheme is not None:
        if not value.startswith(scheme + "://"):
            return False
        value = value[len(scheme) + 3:]
    return value in {f"{name}:{port}" for name in LOOPBACK_NAMES} or (port == 80 and value in LOOPBACK_NAMES)


class GuardedHandler(BaseHTTPRequestHandler):
    """What every loopback Search server of the kit shares: JSON answers, errors as JSON, the
    Host/Origin refusal, the whole-request watchdog and one failing request never ending the server.
    A subclass routes inside :meth:`_guarded`, reads a POSTed call with :meth:`_read_envelope` (the
    content type, the length, strict JSON, exactly :attr:`envelope_keys`) and calls :meth:`_read_done`
    once it has read a request without a body."""

    timeout = REQUEST_TIMEOUT  # per read; the watchdog below bounds the whole request
    read_deadline = REQUEST_TIMEOUT
    envelope_keys: tuple[str, ...] = ENVELOPE_KEYS  # the keys of a POSTed call (:meth:`_read_envelope`)

    def setup(self) -> None:
        super().setup()
        self._watchdog = threading.Timer(self.read_deadline, self._cut)
        self._watchdog.daemon = True
        self._watchdog.start()

    def _cut(self) -> None:
        """The client is still sending after the deadline: end the connection (a blocked read returns)."""
        try:
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def _read_done(self) -> None:
        self._watchdog.cancel()

    def finish(self) -> None:
        self._watchdog.cancel()
        super().finish()

    def log_message(self, fmt: str, *args) -> None:  # quiet by default; the traces are the log
        pass

    def _send(self, status: int, payload: object, content_type: str = "application/json") -> None:
        body = payload if isinstance(payload, bytes) else _body(payload)
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Connection", "close")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """Every error http.server raises itself (bad request line, unknown method …) as JSON."""
        self.close_connection = True
        try:
            self._send(code, {"error": message or self.responses.get(code, ("error",))[0]})
        except OSError:
            pass

    def _foreign(self) -> bool:
        """Answer (421 or 403) and return True when Host or Origin is not this loopback server."""
        port = self.server.server_address[1]
        if not loopback_authority(self.headers.get("Host"), port):
            self._send(421, {"error": f"the Host header must name this server on loopback ({', '.join(f'{n}:{port}' for n in LOOPBACK_NAMES)})"})
            return True
        origin = self.headers.get("Origin")
        if origin is not None and not loopback_authority(origin, port, scheme="http"):
            self._send(403, {"error": "requests from web pages are refused; only a loopback Origin is accepted"})
            return True
        return False

    def _read_envelope(self) -> dict | None:
        """The request's JSON object, or None after answering with a 4xx."""
        kind = (self.headers.get("Content-Type") or "").split(";")[0].strip().lower()
        if kind != "application/json":
            self._send(415, {"error": "the request body must be sent as Content-Type: application/json"})
            return None
        raw = self.headers.get("Content-Length")
        length = int(raw) if raw is not None and raw.strip().isdigit() else -1
        if length < 0:
            self._send(411, {"error": "a Content-Length header is required"})
            return None
        if length > MAX_BODY:
            self._send(413, {"error": f"the request body is over {MAX_BODY} bytes"})  # at once, before reading any of it
            self.connection.settimeout(1.0)  # then drop what the client already sent, briefly, so it reads the answer
            self._discard(min(length, DRAIN_LIMIT))
            return None
        try:
            data = self.rfile.read(length)
            self._read_done()
            body = decode_json(data)
        except ValueError as exc:
            self._send(400, {"error": f"the request body is not JSON ({exc})"})
            return None
        if not isinstance(body, dict) or sorted(body) != sorted(self.envelope_keys):
            self._send(400, {"error": f"the request body must be a JSON object with exactly {', '.join(self.envelope_keys)}"})
            return None
        return body

    def _discard(self, length: int) -> None:
        while length > 0:
            try:
                chunk = self.rfile.read1(min(length, 1 << 16))
            except OSError:
                break
            if not chunk:
                break
            length -= len(chunk)

    def _guarded(self, handler: Callable[[], None]) -> None:
        try:
            if self._foreign():
                return
            handler()
        except (BrokenPipeError, ConnectionResetError, socket.timeout):
            self.close_connection = True
        except Exception as exc:  # noqa: BLE001 - one request fails, the server stays up
            try:
                self._send(500, {"error": f"internal error: {type(exc).__name__}"})
            except OSError:
                pass


class _Handler(GuardedHandler):
    server_version = "rapgen-serve-search"
    session: SearchSession  # set on the subclass made by make_server

    def do_GET(self) -> None:  # noqa: N802 - http.server naming
        self._guarded(self._get)

    def do_POST(self) -> None:  # noqa: N802
        self._guarded(self._post)

    def _not_allowed(self) -> None:
        self._send(405, {"error": f"method {self.command} is not supported; use {ENDPOINTS}"})

    do_PUT = do_DELETE = do_PATCH = do_OPTIONS = do_HEAD = _not_allowed  # noqa: N815

    def _get(self) -> None:
        self._read_done()
        url = urlparse(self.path)
        if url.path == "/health":
            self._send(200, {"ok": True, "max_calls": self.session.max_calls, "top_k": self.session.top_k})
        elif url.path == "/tools":
            condition = parse_qs(url.query).get("condition", [FIXED_FORECAST])[0]
            try:
                self._send(200, tool_schemas(condition))
            except RapgenError as exc:
                self._send(400, {"error": str(exc)})
        elif url.path == "/traces":
            body = "".join(dumps_line(r) + "\n" for r in list(self.session.records)).encode("utf-8")
            self._send(200, body, "application/x-ndjson")
        elif url.path == "/search":
            self._send(405, {"error": "use POST /search"})
        else:
            self._send(404, {"error": f"no such endpoint {url.path[:80]!r}; use {ENDPOINTS}"})

    def _post(self) -> None:
        if urlparse(self.path).path != "/search":
            self._send(404, {"error": "POST /search is the only POST endpoint"})
            return
        body = self._read_envelope()
        if body is None:
            return
        try:
            outcome = self.session.call(body["field_id"], body["origin"], body["condition"], body["arguments"])
        except ToolError as exc:
            self._send(400, {"error": str(exc)})
            return
        except RapgenError as exc:
            self._send(500, {"error": str(exc)})
            return
        self._send(200, outcome.to_dict())


def make_server(session: SearchSession, host: str = "127.0.0.1", port: int = 0) -> ThreadingHTTPServer:
    """A bound (not yet serving) server; ``port`` 0 picks a free port (see ``server.server_address``)."""
    return bind_loopback(type("SearchHandler", (_Handler,), {"session": session}), host, port)


def bind_loopback(handler: type[GuardedHandler], host: str = "127.0.0.1", port: int = 0) -> ThreadingHTTPServer:
    """A threading server of ``handler`` bound to a loopback ``host`` (IPv6 for ``::1``), not yet serving."""
    check_loopback(host)
    if ":" in host:
        class _Server6(ThreadingHTTPServer):
            address_family = socket.AF_INET6

        server: ThreadingHTTPServer = _Server6((host, port), handler)
    else:
        server = ThreadingHTTPServer((host, port), handler)
    server.daemon_threads = True
    return server


def check_loopback(host: str) -> str:
    if host not in LOOPBACK:
        raise UsageProblem(f"--host {host}: serve-search binds to loopback only (127.0.0.1, ::1 or localhost)")
    return host


def serve_until_interrupted(server: ThreadingHTTPServer) -> None:
    """Serve until Ctrl-C, then close the listening socket."""
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


def open_traces(traces: str | Path | None) -> LineAppender | None:
    """A new ``--traces`` file, appended and fsync'd line by line; it must not exist yet."""
    if traces is None:
        return None
    try:
        return LineAppender(Path(traces), exclusive=True)
    except FileExistsError:
        raise UsageProblem(f"--traces {traces}: already exists; choose a new file so that runs are never mixed") from None
    except OSError as exc:
        raise UsageProblem(f"--traces {traces}: cannot create it ({exc.strerror or exc})") from None


TraceAppender = LineAppender  # the name earlier code used


def serve_search(
    root: str | Path,
    *,
    host: str = "127.0.0.1",
    port: int = 8765,
    traces: str | Path | None = None,
    announce: Callable[[str], None] = print,
    cache_dir: Path | None = None,
) -> None:
    """Serve the Search tool until interrupted."""
    check_loopback(host)
    archive = Archive(root)
    appender = open_traces(traces)
    try:
        session = SearchSession(archive, on_record=appender, cache_dir=cache_dir)
        try:
            server = make_server(session, host, port)
        except OSError as exc:
            raise UsageProblem(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
        bound_host, bound_port = server.server_address[:2]
        announce(f"Search tool on http://{bound_host}:{bound_port}/search (max {session.max_calls} calls per unit); Ctrl-C to stop")
        serve_until_interrupted(server)
    finally:
        if appender is not None:
            appender.close()
