"""The MCP stdio transport with one addition: every request the JSON-RPC schema refuses is answered.

The MCP library drops a line that does not validate as a JSON-RPC message (say
``{"id": 3, "method": "tools/call", "params": "x"}``), so a client waiting on id 3
would hang. Here each line is screened with the library's own validator as it is
read; when the library then reports the same line as unreadable, the server
answers it with a JSON-RPC error instead:

- not JSON: ``-32700`` (parse error) with id null;
- JSON but not an object: ``-32600`` (invalid request) with id null;
- an object with a method and an id (a string or an integer): ``-32602``
  (invalid params) when its ``params`` is there but not an object, else ``-32600``.

Malformed notifications and responses (no method, or no id) get no answer, as
JSON-RPC says. Everything else is the library's stdio transport unchanged.
"""

from __future__ import annotations

import collections
import json
import sys
from typing import Any

JSONRPC_INVALID_REQUEST = -32600
JSONRPC_INVALID_PARAMS = -32602
JSONRPC_PARSE_ERROR = -32700


def refusal(line: str) -> tuple[Any, int, str] | None:
    """(id, code, message) of the error that answers a line the schema refused; None when none is owed."""
    try:
        obj = json.loads(line)
    except ValueError:
        return None, JSONRPC_PARSE_ERROR, "Parse error: the line is not JSON"
    if not isinstance(obj, dict):
        return None, JSONRPC_INVALID_REQUEST, "Invalid request: a JSON-RPC message is an object"
    rid = obj.get("id")
    if "method" not in obj or isinstance(rid, bool) or not isinstance(rid, (str, int)):
        return None  # a notification or a response: JSON-RPC answers neither
    if "params" in obj and not isinstance(obj["params"], dict):
        return rid, JSONRPC_INVALID_PARAMS, "Invalid params: 'params' must be an object"
    return rid, JSONRPC_INVALID_REQUEST, "Invalid request: the message does not follow the JSON-RPC schema"


class _ScreenedLines:
    """The stdin lines, unchanged; each one the schema refuses leaves its answer in ``owed``."""

    def __init__(self, inner, owed: collections.deque) -> None:
        self.inner, self.owed = inner.__aiter__(), owed

    def __aiter__(self):
        return self

    async def __anext__(self) -> str:
        import mcp_types

        line = await self.inner.__anext__()
        try:
            mcp_types.jsonrpc_message_adapter.validate_json(line, by_name=False)
        except Exception:  # noqa: BLE001 - whatever the library's validator refuses, it will refuse too
            self.owed.append(refusal(line))
        return line


class _AnsweringStream:
    """The transport's read stream; an unreadable line it yields is answered on the write stream instead."""

    def __init__(self, inner, write, owed: collections.deque) -> None:
        self.inner, self.write, self.owed = inner, write, owed

    @property
    def last_context(self):
        return getattr(self.inner, "last_context", None)

    async def receive(self):
        import mcp_types
        from mcp.shared.message import SessionMessage

        while True:
            item = await self.inner.receive()
            if not isinstance(item, Exception) or not self.owed:
                return item
            answer = self.owed.popleft()
            if answer is None:
                continue
            rid, code, message = answer
            error = mcp_types.JSONRPCError(jsonrpc="2.0", id=rid, error=mcp_types.ErrorData(code=code, message=message))
            await self.write.send(SessionMessage(error))

    def __aiter__(self):
        return self

    async def __anext__(self):
        import anyio

        try:
            return await self.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            raise StopAsyncIteration from None

    async def aclose(self) -> None:
        await self.inner.aclose()

    async def __aenter__(self):
        return self

    async def __aexit__(self, *exc) -> None:
        await self.aclose()


async def run_stdio(server) -> None:
    """Serve ``server`` (an ``MCPServer``) over stdin/stdout until stdin closes."""
    import anyio
    from mcp.server.stdio import stdio_server

    owed: collections.deque = collections.deque()
    text = open(sys.stdin.fileno(), encoding="utf-8", errors="replace", closefd=False)  # noqa: SIM115 - the process's stdin
    stdin = _ScreenedLines(anyio.wrap_file(text), owed)
    async with stdio_server(stdin=stdin) as (read_stream, write_stream):
        low = server._lowlevel_server  # what MCPServer.run("stdio") serves, with the answering read stream
        await low.run(_AnsweringStream(read_stream, write_stream, owed), write_stream, low.create_initialization_options())
