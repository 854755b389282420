"""``rapgen serve-search --mcp``: the frozen Search tool as a Model Context Protocol server.

One server serves one unit (``--field``, ``--origin``, ``--condition``): the
agent sees exactly the benchmark's tool, whatever framework it runs in.

- One tool, ``search``, whose input schema is the benchmark's Search
  arguments and nothing else (``query``, ``sort``, ``date_from``, ``date_to``;
  the same JSON Schema ``rapgen prompt`` gives the driver). The unit is bound
  by the server, never an argument.
- The result is the same call the driver and ``rapgen serve-search`` make
  (:class:`~rapgen.kit.session.SearchSession`): ``{"call_index",
  "total_hits", "papers", "calls_left"}`` as structured content and as JSON
  text, papers in the order of ``rapgen search … --json``. A malformed call is
  an error result that counts; the call after the cap is an error result that
  does not count.
- The server is the authority on the call cap: parallel calls are counted one
  at a time under the session's lock, and each counted call is written to
  ``--traces FILE`` (traces.jsonl format, fsync'd) before it is answered, so
  the file holds exactly calls 0 … n−1.

Arguments are not validated by the MCP layer: they reach the session as sent,
so a malformed call is counted and recorded exactly as in the other two ways
in (the schema is published for the client, the session enforces it).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable

from rapgen.archive import Archive
from rapgen.errors import UsageProblem
from rapgen.kit.prompt import search_schema
from rapgen.kit.serve import check_loopback, open_traces
from rapgen.kit.session import SearchSession, ToolError, check_unit

TOOL_NAME = "search"
SERVER_NAME = "rapgen-search"


def tool_description(session: SearchSession, unit: tuple) -> str:
    field_id, origin, condition = unit
    base = search_schema()["function"]["description"]
    return (f"{base} Bound to field {field_id}, origin {origin.isoformat()}, condition {condition}: "
            f"at most {session.top_k} papers per call, at most {session.max_calls} calls; "
            "a malformed call is an error and still counts.")


def _result(payload: dict, is_error: bool):
    from mcp.types import CallToolResult, TextContent

    text = json.dumps(payload, ensure_ascii=False)
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=payload, is_error=is_error)


def make_mcp_server(session: SearchSession, field_id: str, origin: str, condition: str):
    """An ``MCPServer`` with the one Search tool bound to a unit (a usage error if it names none)."""
    try:
        unit = session.unit(field_id, origin, condition)
    except ToolError as exc:
        raise UsageProblem(str(exc)) from None

    def call(arguments: Any) -> tuple[dict, bool]:
        try:
            outcome = session.call(unit[0], unit[1].isoformat(), unit[2], arguments)
        except ToolError as exc:
            return {"error": str(exc)}, True
        return outcome.to_dict(), outcome.error is not None

    return tool_server(call, name=TOOL_NAME, description=tool_description(session, unit),
                       parameters=search_schema()["function"]["parameters"],
                       instructions=f"The RAP benchmark's frozen Search tool for {unit[0]} {unit[1]} {unit[2]}.")


def tool_server(call: Callable[[Any], tuple[dict, bool]], *, name: str, description: str, parameters: dict, instructions: str,
                server_name: str = SERVER_NAME):
    """An ``MCPServer`` offering one read-only tool ``name`` with the JSON Schema ``parameters``.

    ``call(arguments) -> (payload, is_error)`` runs in a worker thread and gets the arguments as
    sent (no MCP-side validation: the kit's session is the one authority on a call); the payload is
    the structured content and, as JSON, the text content of the result."""
    import anyio.to_thread
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.tools import Tool
    from mcp.types import ToolAnnotations

    def answer(arguments: Any):
        return _result(*call(arguments))

    class RawArgumentsTool(Tool):
        """Hands the arguments to the session as sent (no MCP-side validation)."""

        async def run(self, arguments: dict[str, Any], context: Any, convert_result: bool = False) -> Any:
            return await anyio.to_thread.run_sync(answer, arguments)

    def search(arguments: Any = None) -> Any:  # signature only; RawArgumentsTool.run does the work
        return answer(arguments)

    base = Tool.from_function(search, name=name, description=description, structured_output=False,
                              annotations=ToolAnnotations(read_only_hint=True, open_world_hint=False))
    fields = {key: getattr(base, key) for key in Tool.model_fields}
    fields["parameters"] = parameters
    return MCPServer(server_name, instructions=instructions, tools=[RawArgumentsTool(**fields)], log_level="WARNING")


def run_mcp(server, *, http_port: int | None, host: str) -> None:
    """Serve ``server`` over stdio (``http_port`` None) or streamable HTTP on loopback until stopped."""
    try:
        if http_port is None:
            import anyio

            from rapgen.kit.mcp_stdio import run_stdio

            anyio.run(run_stdio, server)  # the library's stdio transport, answering every refused request
        else:
            server.run("streamable-http", host=host, port=http_port)
    except KeyboardInterrupt:
        pass


def refuse_existing_traces(traces: str | Path | None) -> None:
    """``--traces`` must name a new file (checked before any index is opened)."""
    if traces is not None and (Path(traces).exists() or Path(traces).is_symlink()):
        raise UsageProblem(f"--traces {traces}: already exists; choose a new file so that runs are never mixed")


def serve_mcp(
    root: str | Path,
    field_id: str,
    origin: str,
    condition: str,
    *,
    traces: str | Path | None = None,
    http_port: int | None = None,
    host: str = "127.0.0.1",
    cache_dir: Path | None = None,
) -> None:
    """Serve over stdio (``http_port`` None) or streamable HTTP on loopback until stopped."""
    check_loopback(host)
    refuse_existing_traces(traces)
    archive = Archive(root)
    try:
        check_unit(archive, field_id, origin, condition)  # before the index is opened or any file made
    except ToolError as exc:
        raise UsageProblem(str(exc)) from None
    session = SearchSession(archive, cache_dir=cache_dir)
    server = make_mcp_server(session, field_id, origin, condition)
    appender = open_traces(traces)
    session.on_record = appender
    try:
        run_mcp(server, http_port=http_port, host=host)
    finally:
        if appender is not None:
            appender.close()
