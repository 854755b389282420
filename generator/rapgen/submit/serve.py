"""``rapgen serve-search``: the frozen Search tool as a loopback HTTP endpoint.

Protocol (JSON over HTTP/1.1, stdlib ``http.server``):

- ``POST /search`` with ``{"field_id", "origin", "condition", "arguments": {query, sort, date_from, date_to}}``
  → 200 ``{"call_index", "total_hits", "papers": [...], "calls_left"}``, or 200
  ``{"error": …}`` for a malformed call or one past the cap (the model sees it);
  400 for a body that is not JSON or names no valid unit.
- ``GET /tools?condition=A1`` → the tool schemas of that condition.
- ``GET /traces`` → every recorded call so far, as ``traces.jsonl`` lines.
- ``GET /health`` → ``{"ok": true, "max_calls", "top_k"}``.

Every recorded call is also appended, one line at a time, to ``--traces FILE``.
The server binds to loopback addresses only.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Callable
from urllib.parse import parse_qs, urlparse

from rapgen.archive import Archive
from rapgen.archive.writer import dumps_line
from rapgen.errors import RapgenError, UsageProblem
from rapgen.submit.prompt import tool_schemas
from rapgen.submit.session import SearchSession, ToolError

LOOPBACK = ("127.0.0.1", "::1", "localhost")
MAX_BODY = 1 << 20


class _Handler(BaseHTTPRequestHandler):
    server_version = "rapgen-serve-search"
    session: SearchSession  # set on the subclass made by make_server

    def log_message(self, fmt: str, *args) -> None:  # quiet by default; the traces are the log
        pass

    def _send(self, status: int, payload: object, content_type: str = "application/json") -> None:
        body = payload if isinstance(payload, bytes) else (json.dumps(payload, ensure_ascii=False) + "\n").encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:  # noqa: N802 - http.server naming
        url = urlparse(self.path)
        if url.path == "/health":
            self._send(200, {"ok": True, "max_calls": self.session.max_calls, "top_k": self.session.top_k})
        elif url.path == "/tools":
            condition = parse_qs(url.query).get("condition", ["A1"])[0]
            try:
                self._send(200, tool_schemas(condition))
            except RapgenError as exc:
                self._send(400, {"error": str(exc)})
        elif url.path == "/traces":
            body = "".join(dumps_line(r) + "\n" for r in self.session.records).encode("utf-8")
            self._send(200, body, "application/x-ndjson")
        else:
            self._send(404, {"error": f"no such endpoint {url.path}; use POST /search, GET /tools, /traces, /health"})

    def do_POST(self) -> None:  # noqa: N802
        if urlparse(self.path).path != "/search":
            self._send(404, {"error": "POST /search is the only POST endpoint"})
            return
        try:
            length = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            length = -1
        if length < 0 or length > MAX_BODY:
            self._send(400, {"error": "a request body of at most 1 MiB with a Content-Length is required"})
            return
        try:
            body = json.loads(self.rfile.read(length).decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError):
            self._send(400, {"error": "the request body is not JSON"})
            return
        if not isinstance(body, dict):
            self._send(400, {"error": "the request body must be a JSON object with field_id, origin, condition, arguments"})
            return
        try:
            outcome = self.session.call(body.get("field_id"), body.get("origin"), body.get("condition"), body.get("arguments"))
        except ToolError as exc:
            self._send(400, {"error": str(exc)})
            return
        except RapgenError as exc:
            self._send(500, {"error": str(exc)})
            return
        self._send(200, outcome.to_dict())


def make_server(session: SearchSession, host: str = "127.0.0.1", port: int = 0) -> ThreadingHTTPServer:
    """A bound (not yet serving) server; ``port`` 0 picks a free port (see ``server.server_address``)."""
    if host not in LOOPBACK:
        raise UsageProblem(f"--host {host}: serve-search binds to loopback only (127.0.0.1, ::1 or localhost)")
    handler = type("SearchHandler", (_Handler,), {"session": session})
    if ":" in host:
        import socket

        class _Server6(ThreadingHTTPServer):
            address_family = socket.AF_INET6

        server: ThreadingHTTPServer = _Server6((host, port), handler)
    else:
        server = ThreadingHTTPServer((host, port), handler)
    server.daemon_threads = True
    return server


class TraceAppender:
    """Append recorded calls to a traces.jsonl file, flushed line by line."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self._lock = threading.Lock()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._handle = open(self.path, "x", encoding="utf-8")

    def __call__(self, record: dict) -> None:
        with self._lock:
            self._handle.write(dumps_line(record) + "\n")
            self._handle.flush()

    def close(self) -> None:
        self._handle.close()


def serve_search(
    root: str | Path,
    *,
    host: str = "127.0.0.1",
    port: int = 8765,
    traces: str | Path | None = None,
    announce: Callable[[str], None] = print,
) -> None:
    """Serve the Search tool until interrupted."""
    if host not in LOOPBACK:
        raise UsageProblem(f"--host {host}: serve-search binds to loopback only (127.0.0.1, ::1 or localhost)")
    archive = Archive(root)
    appender = None
    if traces is not None:
        try:
            appender = TraceAppender(Path(traces))
        except FileExistsError:
            raise UsageProblem(f"--traces {traces}: already exists; choose a new file so that runs are never mixed") from None
    session = SearchSession(archive, on_record=appender)
    try:
        server = make_server(session, host, port)
    except OSError as exc:
        raise UsageProblem(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    bound_host, bound_port = server.server_address[:2]
    announce(f"Search tool on http://{bound_host}:{bound_port}/search (max {session.max_calls} calls per unit); Ctrl-C to stop")
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
        if appender is not None:
            appender.close()
