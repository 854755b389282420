"""Support for the kit tests: a fake OpenAI-compatible endpoint on 127.0.0.1 that
answers with scripted tool calls, or replays any raw reply (status and bytes)."""

from __future__ import annotations

import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable


def unit_of(request: dict) -> tuple[str, str]:
    """(field_id, origin) named in a request's system prompt."""
    system = request["messages"][0]["content"]
    field = re.search(r"\(`([a-z0-9_-]+)`\)", system).group(1)
    origin = re.search(r"The forecast origin is (\d{4}-\d{2}-\d{2})", system).group(1)
    return field, origin


def tool_reply(*calls: tuple[str, object], content=None, finish_reason: str = "tool_calls", ids: bool = True) -> dict:
    """A reply with native tool calls; arguments given as objects are sent as JSON strings."""
    tool_calls = []
    for k, (name, args) in enumerate(calls):
        call = {"type": "function", "function": {"name": name, "arguments": args if isinstance(args, str) else json.dumps(args)}}
        if ids:
            call["id"] = f"call_{k}"
        tool_calls.append(call)
    return {"choices": [{"index": 0, "finish_reason": finish_reason,
                         "message": {"role": "assistant", "content": content, "tool_calls": tool_calls}}]}


def weights(field: str, origin: str) -> dict:
    return {f"D{k}": (len(field) * 3 + k * 5 + int(origin[2:4])) % 17 + 1 for k in range(8)}


def scripted_reply(request: dict) -> dict:
    """Deterministic replies with native tool calls, chosen from the unit named in the system prompt.

    - delta 2023-01-01: answers in text -> invalid (no tool call)
    - gamma 2023-07-01: Finish with a negative weight -> invalid
    - beta 2024-01-01 (Search conditions): one Search with an unknown key, one with sort "popularity", then Finish
    - otherwise: Search conditions make two Search calls (relevance, then date with bounds), then Finish
    """
    field, origin = unit_of(request)
    has_search = any(t["function"]["name"] == "Search" for t in request["tools"])
    done = sum(1 for m in request["messages"] if m["role"] == "tool")
    if field == "delta" and origin == "2023-01-01":
        return {"choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "I think D0 grows."}}]}
    w = weights(field, origin)
    if field == "gamma" and origin == "2023-07-01":
        w["D2"] = -3
    if has_search and field == "beta" and origin == "2024-01-01" and done < 2:
        bad = [{"query": "parsing", "sort": "relevance", "limit": 5}, {"query": "parsing", "sort": "popularity"}][done]
        return tool_reply(("Search", bad))
    if has_search and done < 2:
        args = [{"query": "parsing methods for language", "sort": "relevance"},
                {"query": "dialogue speech", "sort": "date", "date_from": "2022-01-01", "date_to": origin}][done]
        return tool_reply(("Search", args))
    return tool_reply(("Finish", {**w, "rationale": f"scripted {field} {origin}"}))


Reply = Callable[[dict], object]  # request -> dict (sent as JSON) | bytes | (status, bytes)


class FakeChat:
    """A tiny OpenAI-compatible /v1/chat/completions server on 127.0.0.1 (use as a context manager).

    ``reply(request)`` returns a dict (sent as JSON with status 200), raw bytes
    (status 200), or ``(status, bytes)``; it may also raise to drop the connection.
    ``embeddings``, if given, answers ``/v1/embeddings`` the same way."""

    def __init__(self, reply: Reply = scripted_reply, embeddings: Reply | None = None):
        self.requests: list[dict] = []
        self.headers: list[dict] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                outer.requests.append(body)
                outer.headers.append(dict(self.headers))
                routes = {"/v1/chat/completions": reply, "/v1/embeddings": embeddings}
                if routes.get(self.path) is None:
                    self.send_response(404)
                    self.end_headers()
                    return
                answer = routes[self.path](body)
                status = 200
                if isinstance(answer, tuple):
                    status, answer = answer
                data = answer if isinstance(answer, bytes) else json.dumps(answer).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.base_url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def __enter__(self) -> "FakeChat":
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()
