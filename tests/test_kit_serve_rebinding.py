"""serve-search against a hostile web page and a hostile client: DNS rebinding (Host, Origin),
a declared body far over the limit, a client that trickles its request; and MCP over stdio
answering every request whose params the JSON-RPC schema refuses."""

from __future__ import annotations

import json
import os
import select
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from rapgen.kit.mcp_stdio import refusal
from rapgen.kit.serve import LOOPBACK_NAMES, loopback_authority
from test_kit_serve import Q, _envelope, served, session  # noqa: F401 - fixtures


def _request(port: int, head: str, body: bytes = b"", timeout: float = 10) -> tuple[int, dict, float]:
    start = time.monotonic()
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        s.sendall(head.encode("latin-1") + b"\r\n\r\n" + body)
        data = b""
        while chunk := s.recv(65536):
            data += chunk
    status = int(data.split(b" ", 2)[1])
    payload = data.split(b"\r\n\r\n", 1)[1]
    return status, (json.loads(payload) if payload else {}), time.monotonic() - start


def _post(port: int, *headers: str, body: bytes | None = None) -> tuple[int, dict, float]:
    body = _envelope(Q) if body is None else body
    head = "\r\n".join(["POST /search HTTP/1.1", "Content-Type: application/json", f"Content-Length: {len(body)}", *headers])
    return _request(port, head, body)


@pytest.mark.parametrize("host", ["evil.example:{port}", "127.0.0.1.evil.example:{port}", "localhost:1", "127.0.0.1",
                                  "127.0.0.2:{port}", "", "[::1]:{port}x"])
def test_a_foreign_host_is_refused_and_never_counted(served, host) -> None:  # noqa: F811
    port, session, traces = served
    status, payload, _ = _post(port, f"Host: {host.format(port=port)}")
    assert status == 421 and "Host header must name this server on loopback" in payload["error"]
    status, _, _ = _request(port, f"GET /traces HTTP/1.1\r\nHost: {host.format(port=port)}")
    assert status == 421
    assert session.records == [] and traces.read_text() == ""


@pytest.mark.parametrize("origin", ["http://evil.example", "null", "https://127.0.0.1:{port}", "http://127.0.0.1:1",
                                    "http://localhost:{port}.evil.example"])
def test_a_foreign_origin_is_refused_and_never_counted(served, origin) -> None:  # noqa: F811
    port, session, traces = served
    status, payload, _ = _post(port, f"Host: 127.0.0.1:{port}", f"Origin: {origin.format(port=port)}")
    assert status == 403 and "Origin" in payload["error"]
    assert session.records == [] and traces.read_text() == ""


@pytest.mark.parametrize("name", LOOPBACK_NAMES)
def test_loopback_host_and_origin_are_served(served, name) -> None:  # noqa: F811
    port, session, _ = served
    status, payload, _ = _post(port, f"Host: {name}:{port}", f"Origin: http://{name}:{port}")
    assert status == 200 and payload["call_index"] == len(session.records) - 1


def test_the_authority_rule() -> None:
    assert loopback_authority("localhost:8765", 8765) and loopback_authority("[::1]:8765", 8765)
    assert not loopback_authority("localhost", 8765) and loopback_authority("localhost", 80)
    assert not loopback_authority(None, 8765) and not loopback_authority("http://localhost:8765", 8765)
    assert loopback_authority("http://localhost:8765", 8765, scheme="http")
    assert not loopback_authority("localhost:8765", 8765, scheme="http")


def test_a_huge_declared_body_gets_413_at_once(served) -> None:  # noqa: F811
    port, session, _ = served
    head = "\r\n".join(["POST /search HTTP/1.1", f"Host: 127.0.0.1:{port}", "Content-Type: application/json",
                        f"Content-Length: {10 ** 20}"])
    status, payload, seconds = _request(port, head)  # the body never comes
    assert status == 413 and "over" in payload["error"]
    assert seconds < 5, seconds  # answered without waiting for the body (the drain after it is bounded to ~1 s)
    assert session.records == []


def test_a_trickling_client_is_cut_off_at_the_deadline(served, monkeypatch) -> None:  # noqa: F811
    port, session, _ = served
    from rapgen.kit import serve

    monkeypatch.setattr(serve._Handler, "read_deadline", 1.5)
    start = time.monotonic()
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(b"POST /search HTTP/1.1\r\n")
        cut = False
        for _ in range(40):  # one header byte every 0.25 s, each well inside the per-read timeout
            try:
                s.sendall(b"X")
                time.sleep(0.25)
                r, _, _ = select.select([s], [], [], 0)
                if r and s.recv(1000) == b"":
                    cut = True
                    break
            except OSError:
                cut = True
                break
    assert cut and time.monotonic() - start < 6
    assert session.records == []


# ---------------------------------------------------------------- MCP over stdio
@pytest.mark.parametrize("line,answer", [
    ('{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": "x"}', (7, -32602)),
    ('{"jsonrpc": "2.0", "id": "a", "method": "tools/list", "params": [1]}', ("a", -32602)),
    ('{"jsonrpc": "2.0", "id": 8, "method": 5}', (8, -32600)),
    ('not json', (None, -32700)),
    ('[1, 2]', (None, -32600)),
    ('{"jsonrpc": "2.0", "method": "notifications/x", "params": 3}', None),  # a notification: no answer
    ('{"jsonrpc": "2.0", "id": true, "method": "tools/list", "params": 3}', None),  # not a usable id
])
def test_refusal_rule(line, answer) -> None:
    found = refusal(line)
    assert (found is None) if answer is None else (found[:2] == answer)


GENERATOR = str(Path(__file__).resolve().parents[1] / "generator")


def test_mcp_stdio_answers_every_request_with_malformed_params(tiny_archive, tmp_path) -> None:
    env = {**os.environ, "PYTHONPATH": GENERATOR, "RAPGEN_CACHE": str(tmp_path / "cache")}
    proc = subprocess.Popen([sys.executable, "-m", "rapgen", "serve-search", "--mcp", "--root", str(tiny_archive.root),
                             "--field", "alpha", "--origin", "2024-01-01", "--condition", "A3"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)

    def send(obj) -> None:
        proc.stdin.write(((obj if isinstance(obj, str) else json.dumps(obj)) + "\n").encode())
        proc.stdin.flush()

    def reply(timeout: float = 60) -> dict:
        r, _, _ = select.select([proc.stdout], [], [], timeout)
        assert r, "no reply"
        return json.loads(proc.stdout.readline())

    try:
        send({"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}})
        assert reply()["id"] == 1
        send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        bad = [{"jsonrpc": "2.0", "id": 10, "method": "tools/call", "params": "x"},
               {"jsonrpc": "2.0", "id": 11, "method": "tools/list", "params": 7},
               {"jsonrpc": "2.0", "id": "twelve", "method": "tools/call", "params": [1, 2]},
               {"jsonrpc": "2.0", "id": 13, "method": "tools/call", "params": None},
               {"jsonrpc": "2.0", "id": 14, "method": "tools/call", "params": {"name": 5}}]
        for msg in bad:
            send(msg)
            answer = reply(10)
            assert answer["id"] == msg["id"] and answer["error"]["code"] in (-32602, -32600), answer
        send({"jsonrpc": "2.0", "id": 20, "method": "tools/list"})  # and the server still serves
        assert [t["name"] for t in reply(10)["result"]["tools"]] == ["search"]
    finally:
        proc.kill()
        proc.wait(timeout=10)
