"""Inspire's ``search_papers`` tool as a loopback HTTP endpoint (the server enforces the call cap).

- ``POST /search_papers``, ``Content-Type: application/json``, body
  ``{"instance_id", "condition", "arguments": {query, sort, date_from, date_to}}``
  → 200 ``{"call_index", "total_hits", "papers", "calls_left"}``, or 200
  ``{"error", …}`` for a malformed call (counted) or one past the cap (not counted);
- ``GET /tools?instance_id=…&condition=…`` → that unit's prompt and tools;
- ``GET /traces`` → every counted call so far, as traces.jsonl lines;
- ``GET /health`` → ``{"ok": true, "max_calls", "top_k"}``.

Anything else is a 4xx JSON ``{"error"}`` and is never counted: another content
type, no Content-Length, a body over :data:`MAX_BODY`, a body that is not strict
UTF-8 JSON, an envelope without exactly those three keys, an unknown unit,
path or method. A counted call is recorded (and appended to the traces file)
before it is answered. The server binds to loopback only; an unexpected error
in one request is a 500 for that request alone.
"""

from __future__ import annotations

import json
from http.server import ThreadingHTTPServer
from typing import Callable
from urllib.parse import parse_qs, urlparse

from rapgen.errors import RapgenError, UsageProblem
from rapgen.kit import GuardedHandler, ToolError, decode_json

from rapgen.kinds.inspire.kit.prompt import SEARCH_TOOL, build_prompt
from rapgen.kinds.inspire.kit.session import InspireSession

LOOPBACK = ("127.0.0.1", "localhost")
MAX_BODY = 1 << 20
ENVELOPE = ("instance_id", "condition", "arguments")
PATH = f"/{SEARCH_TOOL}"


class _Handler(GuardedHandler):
    """The loopback server's routes; JSON answers, the Host/Origin refusal and the watchdog are the kit's."""

    server_version = "rapgen-inspire-search"
    session: InspireSession
    ledger: object

    def _dispatch(self) -> None:
        self._guarded(self._route)

    def _route(self) -> None:
        """Every method and path through one routing table; nothing but a routed POST is counted."""
        url = urlparse(self.path)
        routes = {("GET", "/health"): self._health, ("GET", "/traces"): self._traces, ("GET", "/tools"): self._tools,
                  ("POST", PATH): self._post}
        handler = routes.get((self.command, url.path))
        if self.command != "POST":
            self._read_done()  # a GET has no body: the request is read
        if handler is not None:
            handler()
        elif any(path == url.path for _, path in routes):
            self._send(405, {"error": f"method {self.command} is not supported on {url.path}"})
        else:
            self._send(404, {"error": f"no such endpoint {url.path[:80]!r}; use POST {PATH}, GET /tools, /traces, /health"})

    do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = do_OPTIONS = _dispatch  # noqa: N815 - http.server naming

    def _health(self) -> None:
        self._send(200, {"ok": True, "max_calls": self.session.max_calls, "top_k": self.session.top_k})

    def _traces(self) -> None:
        body = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in list(self.session.records)).encode("utf-8")
        self._send(200, body, "application/x-ndjson")

    def _tools(self) -> None:
        query = parse_qs(urlparse(self.path).query)
        try:
            prompt = build_prompt(self.session.instances, self.ledger, query.get("instance_id", [""])[0],
                                  query.get("condition", ["detailed"])[0])
        except UsageProblem as exc:
            self._send(400, {"error": str(exc)})
            return
        self._send(200, prompt.to_dict())

    def _post(self) -> None:
        if (self.headers.get("Content-Type") or "").split(";")[0].strip().lower() != "application/json":
            self._send(415, {"error": "send the body as Content-Type: application/json"})
            return
        raw = (self.headers.get("Content-Length") or "").strip()
        if not raw.isdigit():
            self._send(411, {"error": "a Content-Length header is required"})
            return
        if int(raw) > MAX_BODY:
            self.close_connection = True
            self._send(413, {"error": f"the request body is over {MAX_BODY} bytes"})
            return
        try:
            data = self.rfile.read(int(raw))
            self._read_done()
            body = decode_json(data)
        except ValueError as exc:
            self._send(400, {"error": f"the request body is not JSON ({exc})"})
            return
        if not isinstance(body, dict) or sorted(body) != sorted(ENVELOPE):
            self._send(400, {"error": "the body must be a JSON object with exactly instance_id, condition, arguments"})
            return
        try:
            status, payload = 200, self.session.call(body["instance_id"], body["condition"], body["arguments"]).to_dict()
        except RapgenError as exc:  # an unknown unit (ToolError, not counted), or the backend failing
            status, payload = 400 if isinstance(exc, ToolError) else 500, {"error": str(exc)}
        self._send(status, payload)


def make_server(session: InspireSession, ledger, host: str = "127.0.0.1", port: int = 0) -> ThreadingHTTPServer:
    """A bound, not yet serving, server (``port`` 0: a free one, see ``server.server_address``)."""
    if host not in LOOPBACK:
        raise UsageProblem(f"--host {host}: serve-search binds to loopback only (127.0.0.1 or localhost)")
    handler = type("InspireSearchHandler", (_Handler,), {"session": session, "ledger": ledger})
    server = ThreadingHTTPServer((host, port), handler)
    server.daemon_threads = True
    return server


def serve_search(release, *, host: str = "127.0.0.1", port: int = 8765, traces=None, announce: Callable[[str], None] = print,
                 backend=None) -> None:
    """Serve the tool for ``release`` until interrupted; ``traces``: a new file every counted call is appended to."""
    from rapgen.kit import LineAppender

    appender = None
    if traces is not None:
        try:
            appender = LineAppender(traces, exclusive=True)
        except FileExistsError:
            raise UsageProblem(f"--traces {traces}: already exists; choose a new file so that runs are never mixed") from None
    session = InspireSession.of_release(release, backend, on_record=appender)
    try:
        server = make_server(session, release.ledger, host, port)
    except OSError as exc:
        raise UsageProblem(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    bound = server.server_address
    announce(f"search_papers on http://{bound[0]}:{bound[1]}{PATH} (max {session.max_calls} calls per unit); Ctrl-C to stop")
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
