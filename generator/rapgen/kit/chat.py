"""The OpenAI-compatible chat client and the reading of its replies.

Real servers (vLLM, llama.cpp, hosted APIs) differ in small ways. Every shape a
reply can take becomes one defined outcome here, never an exception:

| reply | outcome |
| --- | --- |
| HTTP 408/409/429/5xx, timeout, connection error | retried ``retries`` times, then :class:`EndpointError` |
| other HTTP error, a body that is not strict JSON (bad UTF-8, NaN, deep nesting, a 10,000-digit number), a body over :data:`MAX_REPLY_BYTES` | :class:`EndpointError` at once |
| no ``choices[0].message`` object (a string, a list, null …) | :class:`ReplyProblem` |
| ``tool_calls`` absent, null or ``[]`` | a text reply (also with ``finish_reason: "tool_calls"``) |
| ``tool_calls`` not a list, an entry that is not an object or has no function name | :class:`ReplyProblem` |
| a call without an ``id`` | an id ``call_<turn>_<k>`` is assigned and used in the conversation |
| ``arguments`` an object instead of a string | taken as the object |
| ``arguments`` null or ``""`` | ``{}`` |
| ``arguments`` a string that is not strict JSON, or another type | the call's arguments are unreadable (see :class:`ToolCall`) |
| several calls in one reply | handled in order (the runner decides what each does) |
| ``content`` next to tool calls, or null content | kept as given (a non-string content is sent back as null) |

Requests are sent with ``ensure_ascii`` JSON, so text the model produced —
even a lone surrogate — can always be sent back.
"""

from __future__ import annotations

import http.client
import json
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from typing import Any

from rapgen.archive import loads_strict  # the one strict JSON decoder (NaN, duplicate keys, huge ints)
from rapgen.errors import RapgenError, UsageProblem

MAX_REPLY_BYTES = 32 << 20
RETRY_STATUS = (408, 409, 429)


class EndpointError(RapgenError):
    """The chat endpoint failed after retries (recorded as an invalid unit)."""


class ReplyProblem(RapgenError):
    """The endpoint answered, but not with a usable chat message (an invalid unit)."""


@dataclass(frozen=True)
class ToolCall:
    """One tool call of a reply. ``arguments`` is the decoded value, or None with
    ``problem`` set when the arguments could not be read."""

    id: str
    name: str
    arguments: Any
    problem: str | None = None


@dataclass(frozen=True)
class Turn:
    """A reply as the runner uses it, plus the assistant message to send back."""

    content: str | None
    calls: tuple[ToolCall, ...]
    finish_reason: str | None
    message: dict


def check_base_url(base_url: str) -> str:
    """Return ``base_url`` if it is an http(s) URL with a host; else a usage error."""
    try:
        parts = urllib.parse.urlsplit(base_url)
        host = parts.hostname
        parts.port  # noqa: B018 - raises ValueError on a bad port
    except ValueError as exc:
        raise UsageProblem(f"--base-url {base_url!r} is not a valid URL ({exc}); give e.g. http://127.0.0.1:8000/v1") from None
    if parts.scheme not in ("http", "https") or not host:
        raise UsageProblem(
            f"--base-url {base_url!r} is not an http:// or https:// URL with a host; "
            "give the API base, e.g. http://127.0.0.1:8000/v1"
        )
    return base_url


def decode_json(data: bytes | str) -> Any:
    """Strict JSON from bytes or text; ValueError with a short reason for anything else."""
    if isinstance(data, bytes):
        try:
            data = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ValueError(f"not valid UTF-8 at byte {exc.start}") from None
    try:
        return loads_strict(data)
    except RecursionError:
        raise ValueError("nested too deeply") from None
    except ValueError as exc:
        raise ValueError(str(exc).split("\n")[0][:200]) from None


def encode_json(obj: Any) -> str:
    """ASCII JSON text of ``obj`` (any str survives, even a lone surrogate); ValueError if it cannot be encoded."""
    try:
        return json.dumps(obj, ensure_ascii=True)
    except (RecursionError, ValueError, TypeError) as exc:
        raise ValueError(f"cannot be encoded as JSON ({type(exc).__name__})") from None


class ChatClient:
    """Minimal OpenAI-compatible chat-completions client on urllib."""

    def __init__(self, base_url: str, api_key: str | None, timeout: float, retries: int):
        self.url = check_base_url(base_url).rstrip("/") + "/chat/completions"
        self.api_key = api_key
        self.timeout = timeout
        self.retries = retries
        self.attempts = 0  # HTTP requests sent so far (retries included)

    def complete(self, payload: dict) -> Any:
        """POST ``payload``; the decoded reply body, or :class:`EndpointError`."""
        try:
            body = encode_json(payload).encode("ascii")
        except ValueError as exc:
            raise EndpointError(f"the conversation {exc}") from None
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        last = ""
        for attempt in range(self.retries + 1):
            request = urllib.request.Request(self.url, data=body, headers=headers, method="POST")
            self.attempts += 1
            retry = True
            try:
                with urllib.request.urlopen(request, timeout=self.timeout) as response:
                    data = response.read(MAX_REPLY_BYTES + 1)
                if len(data) > MAX_REPLY_BYTES:
                    raise EndpointError(f"the reply from {self.url} is larger than {MAX_REPLY_BYTES >> 20} MiB")
                try:
                    return decode_json(data)
                except ValueError as exc:
                    raise EndpointError(f"the reply from {self.url} is not JSON ({exc})") from None
            except urllib.error.HTTPError as exc:
                last = f"HTTP {exc.code} from {self.url}"
                retry = exc.code in RETRY_STATUS or exc.code >= 500
            except (urllib.error.URLError, TimeoutError, ConnectionError) as exc:
                last = f"cannot reach {self.url}: {getattr(exc, 'reason', exc)}"
            except (http.client.HTTPException, OSError) as exc:  # a reply cut short, a bad status line …
                last = f"broken reply from {self.url}: {type(exc).__name__}"
            if not retry:
                break
            if attempt < self.retries:
                time.sleep(0.5 * 2**attempt)
        raise EndpointError(last)


def _arguments(raw: Any) -> tuple[Any, str | None]:
    if isinstance(raw, dict):
        return raw, None
    if raw is None or raw == "":
        return {}, None
    if not isinstance(raw, str):
        return None, f"the arguments are a JSON {type(raw).__name__}, not a JSON string"
    try:
        return decode_json(raw), None
    except ValueError as exc:
        return None, f"the arguments are not valid JSON ({exc})"


def read_turn(reply: Any, turn: int) -> Turn:
    """Normalise one chat-completions reply (see the module table)."""
    try:
        choice = reply["choices"][0]
        message = choice["message"]
    except (KeyError, IndexError, TypeError):
        raise ReplyProblem("the endpoint's reply has no choices[0].message") from None
    if not isinstance(message, dict) or not isinstance(choice, dict):
        raise ReplyProblem("the endpoint's choices[0].message is not an object")
    finish_reason = choice.get("finish_reason") if isinstance(choice.get("finish_reason"), str) else None
    content = message.get("content") if isinstance(message.get("content"), str) else None
    raw_calls = message.get("tool_calls")
    if raw_calls is None:
        raw_calls = []
    if not isinstance(raw_calls, list):
        raise ReplyProblem("the reply's tool_calls is not a list")
    calls, echoed = [], []
    for k, raw in enumerate(raw_calls):
        function = raw.get("function") if isinstance(raw, dict) else None
        name = function.get("name") if isinstance(function, dict) else None
        if not isinstance(name, str):
            raise ReplyProblem(f"tool call {k} of the reply is not an object with a function name")
        call_id = raw.get("id") if isinstance(raw.get("id"), str) and raw.get("id") else f"call_{turn}_{k}"
        arguments, problem = _arguments(function.get("arguments"))
        calls.append(ToolCall(call_id, name, arguments, problem))
        raw_args = function.get("arguments")
        try:
            text = raw_args if isinstance(raw_args, str) else encode_json(arguments if problem is None else raw_args)
        except ValueError as exc:
            raise ReplyProblem(f"tool call {k} of the reply: the arguments {exc}") from None
        echoed.append({"id": call_id, "type": "function", "function": {"name": name, "arguments": text}})
    assistant: dict = {"role": "assistant", "content": content}
    if echoed:
        assistant["tool_calls"] = echoed
    return Turn(content, tuple(calls), finish_reason, assistant)
