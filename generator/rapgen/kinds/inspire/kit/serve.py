"""Inspire's ``search_papers`` tool over loopback HTTP or MCP (the server enforces the call cap).

HTTP (the kit's :class:`~rapgen.kit.GuardedHandler`: JSON errors, the Host/Origin refusal,
the request watchdog, the envelope checks):

- ``POST /search_papers``, ``Content-Type: application/json``, body
  ``{"instance_id", "condition", "arguments": {query, sort, date_from, date_to}}``
  → 200 ``{"call_index", "total_hits", "papers", "calls_left"}``, or 200
  ``{"error", …}`` for a malformed call (counted) or one past the cap (not counted);
- ``GET /tools?instance_id=…&condition=…`` → that unit's prompt and tools;
- ``GET /traces`` → every counted call so far, as traces.jsonl lines;
- ``GET /health`` → ``{"ok": true, "max_calls", "top_k"}`` (and ``instance_id``,
  ``condition`` of a bound server).

A server started for one instance (``--instance``) answers calls of that unit only (another is
a 400, never counted). Anything else is a 4xx JSON ``{"error"}`` and is never counted.

MCP (:func:`serve_mcp`, stdio or streamable HTTP): one tool, ``search_papers``, with exactly
SEARCH.md's arguments, bound to one unit; the result is the same session's answer.

A counted call is recorded (and appended to ``--traces``) before it is answered.
"""

from __future__ import annotations

import json
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any, Callable
from urllib.parse import parse_qs, urlparse

from rapgen.errors import RapgenError, UsageProblem
from rapgen.kit import (
    GuardedHandler, ToolError, bind_loopback, check_loopback, open_traces, refuse_existing_traces, run_mcp, serve_until_interrupted,
    tool_server,
)

from rapgen.kinds.inspire.archive import layout
from rapgen.kinds.inspire.kit.prompt import SEARCH_TOOL, build_prompt, search_papers_schema
from rapgen.kinds.inspire.kit.session import InspireSession

ENVELOPE = ("instance_id", "condition", "arguments")
PATH = f"/{SEARCH_TOOL}"
SERVER_NAME = "rapgen-inspire-search"


class _Handler(GuardedHandler):
    """The loopback server's routes; JSON answers, the Host/Origin refusal and the watchdog are the kit's."""

    server_version = SERVER_NAME
    envelope_keys = ENVELOPE
    session: InspireSession
    ledger: object
    bound: tuple[str, str] | None = None

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
        bound = {} if self.bound is None else {"instance_id": self.bound[0], "condition": self.bound[1]}
        self._send(200, {"ok": True, "max_calls": self.session.max_calls, "top_k": self.session.top_k, **bound})

    def _traces(self) -> None:
        body = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in list(self.session.records)).encode("utf-8")
        self._send(200, body, "application/x-ndjson")

    def _tools(self) -> None:
        query = parse_qs(urlparse(self.path).query)
        default = self.bound or ("", layout.PRIMARY_CONDITION)
        try:
            prompt = build_prompt(self.session.instances, self.ledger, query.get("instance_id", [default[0]])[0],
                                  query.get("condition", [default[1]])[0])
        except UsageProblem as exc:
            self._send(400, {"error": str(exc)})
            return
        self._send(200, prompt.to_dict())

    def _post(self) -> None:
        body = self._read_envelope()
        if body is None:
            return
        unit = (body["instance_id"], body["condition"])
        if self.bound is not None and unit != self.bound:
            self._send(400, {"error": f"this server serves {self.bound[0]} ({self.bound[1]}) only"})
            return
        try:
            status, payload = 200, self.session.call(*unit, body["arguments"]).to_dict()
        except RapgenError as exc:  # an unknown unit (ToolError, not counted), or the backend failing
            status, payload = 400 if isinstance(exc, ToolError) else 500, {"error": str(exc)}
        self._send(status, payload)


def make_server(session: InspireSession, ledger, host: str = "127.0.0.1", port: int = 0,
                bound: tuple[str, str] | None = None) -> ThreadingHTTPServer:
    """A bound, not yet serving, server (``port`` 0: a free one, see ``server.server_address``);
    ``bound``: the one unit it answers."""
    handler = type("InspireSearchHandler", (_Handler,), {"session": session, "ledger": ledger, "bound": bound})
    return bind_loopback(handler, host, port)


def tool_description(session: InspireSession, unit: tuple[str, str]) -> str:
    instance = session.instances[unit[0]]
    return (f"{search_papers_schema()['function']['description']} Bound to instance {unit[0]} ({unit[1]} brief): "
            f"the corpus papers first posted before {instance.cutoff.isoformat()}, at most {session.top_k} papers per call, "
            f"at most {session.max_calls} calls; a malformed call is an error and still counts.")


def make_mcp_server(session: InspireSession, instance_id: str, condition: str):
    """An ``MCPServer`` with ``search_papers`` bound to one unit (a usage error if it names none)."""
    try:
        unit = session.unit(instance_id, condition)
    except ToolError as exc:
        raise UsageProblem(str(exc)) from None

    def call(arguments: Any) -> tuple[dict, bool]:
        outcome = session.call(*unit, arguments)
        return outcome.to_dict(), outcome.error is not None

    return tool_server(call, name=SEARCH_TOOL, description=tool_description(session, unit),
                       parameters=search_papers_schema()["function"]["parameters"], server_name=SERVER_NAME,
                       instructions=f"The Inspire benchmark's frozen literature search for {unit[0]} ({unit[1]}).")


def serve_search(release, *, host: str = "127.0.0.1", port: int = 8765, traces: str | Path | None = None,
                 announce: Callable[[str], None] = print, backend=None, bound: tuple[str, str] | None = None) -> None:
    """Serve the tool over HTTP for ``release`` until interrupted; ``traces``: a new file every counted
    call is appended to; ``bound``: the one unit served (else any)."""
    check_loopback(host)
    appender = open_traces(traces)
    session = InspireSession.of_release(release, backend, on_record=appender)
    try:
        server = make_server(session, release.ledger, host, port, bound)
    except OSError as exc:
        raise UsageProblem(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    where = f"{bound[0]} ({bound[1]})" if bound else "any instance"
    announce(f"{SEARCH_TOOL} on http://{server.server_address[0]}:{server.server_address[1]}{PATH} for {where} "
             f"(max {session.max_calls} calls per unit); Ctrl-C to stop")
    serve_until_interrupted(server)


def serve_mcp(release, instance_id: str, condition: str, *, traces: str | Path | None = None, http_port: int | None = None,
              host: str = "127.0.0.1", backend=None) -> None:
    """Serve ``search_papers`` for one unit over MCP (stdio, or streamable HTTP on loopback ``http_port``)."""
    check_loopback(host)
    refuse_existing_traces(traces)
    session = InspireSession.of_release(release, backend)
    server = make_mcp_server(session, instance_id, condition)
    session.on_record = open_traces(traces)
    run_mcp(server, http_port=http_port, host=host)
