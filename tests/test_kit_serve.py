"""The Search tool session and rapgen serve-search over loopback HTTP."""

from __future__ import annotations

import json
import threading
import urllib.error
import urllib.request
from datetime import date

import pytest
from click.testing import CliRunner

from rapgen.archive import Archive
from rapgen.cli import cli
from rapgen.errors import SearchError
from rapgen.kit import SearchSession, ToolError
from rapgen.kit.serve import MAX_BODY as MAX, TraceAppender, make_server
from test_submit_support import fake_executor, shard_papers

Q = {"query": "parsing methods", "sort": "relevance"}


@pytest.fixture
def session(tiny_archive) -> SearchSession:
    return SearchSession(Archive(tiny_archive.root), executor=fake_executor(tiny_archive.root))


def test_a_valid_call_is_executed_and_recorded(session, tiny_archive) -> None:
    out = session.call("alpha", "2024-01-01", "A1", {**Q, "date_from": "2023-09-01", "date_to": None})
    shard = [p for p in shard_papers(tiny_archive.root, "alpha", "2024-01-01", "fixed") if p[1] >= date(2023, 9, 1)]
    assert out.error is None and out.call_index == 0 and out.calls_left == 19
    assert out.total_hits == len(shard) and [p["arxiv_id"] for p in out.papers] == [a for a, _ in shard[:8]]
    assert session.records == [{
        "field_id": "alpha", "origin": "2024-01-01", "condition": "A1", "call_index": 0, "query": "parsing methods",
        "sort": "relevance", "date_from": "2023-09-01", "date_to": None, "total_hits": len(shard), "returned_ids": [a for a, _ in shard[:8]],
    }]


SANITISED = {"query": "", "sort": "relevance", "date_from": None, "date_to": None}


@pytest.mark.parametrize(
    ("arguments", "error", "recorded"),
    [
        ({**Q, "limit": 3}, "unknown argument 'limit'; allowed: query, sort, date_from, date_to", SANITISED),
        ({"query": "x"}, "missing required argument 'sort'", {**SANITISED, "sort": ""}),
        ("parsing", "the arguments must be an object, found str", {**SANITISED, "sort": ""}),
        ({"query": 5, "sort": "date"}, "query must be a string, found int", {**SANITISED, "sort": "date"}),
        ({"query": "", "sort": "date"}, "the query is empty", {**SANITISED, "sort": "date"}),
        ({"query": "q", "sort": "popularity"}, "sort must be 'relevance' or 'date', found 'popularity'", {"query": "q", "sort": "popularity", "date_from": None, "date_to": None}),
        ({**Q, "date_from": "2023-02-30"}, "date_from '2023-02-30' is not a calendar date", {**Q, "date_from": "2023-02-30", "date_to": None}),
        ({**Q, "date_to": 20230101}, "date_to must be an ISO date YYYY-MM-DD or null, found 20230101", SANITISED),
        ({**Q, "date_from": float("nan"), "date_to": "2023-09-01"}, "date_from must be an ISO date YYYY-MM-DD or null, found nan", {**SANITISED, "date_to": "2023-09-01"}),
        ({**Q, "date_to": "2023-W01-1"}, "date_to must be an ISO date YYYY-MM-DD or null, found '2023-W01-1'", {**Q, "date_from": None, "date_to": "2023-W01-1"}),
        ({**Q, "date_from": "2023-10-01", "date_to": "2023-09-01"}, "date_from 2023-10-01 must be before date_to 2023-09-01", {**Q, "date_from": "2023-10-01", "date_to": "2023-09-01"}),
    ],
)
def test_every_malformed_call_counts_and_is_recorded(session, arguments, error, recorded) -> None:
    out = session.call("alpha", "2024-01-01", "A3", arguments)
    assert out.error == f"malformed call: {error}" and out.call_index == 0
    assert session.calls_made("alpha", date(2024, 1, 1), "A3") == 1
    assert session.records == [{
        "field_id": "alpha", "origin": "2024-01-01", "condition": "A3", "call_index": 0, **recorded,
        "total_hits": 0, "returned_ids": [],
    }]


def test_malformed_calls_fill_the_cap_in_the_trace(session) -> None:
    for k in range(20):
        assert session.call("beta", "2023-07-01", "A1", {"query": 5, "bogus": True}).call_index == k
    assert session.call("beta", "2023-07-01", "A1", Q).error.startswith("the call cap of 20")
    assert [r["call_index"] for r in session.records] == list(range(20))


def test_the_call_cap_is_enforced_per_unit(session) -> None:
    for k in range(20):
        assert session.call("beta", "2023-07-01", "A1", Q).call_index == k
    over = session.call("beta", "2023-07-01", "A1", Q)
    assert over.error == "the call cap of 20 Search calls is reached; call Finish now" and over.call_index is None
    assert len(session.records) == 20 and max(r["call_index"] for r in session.records) == 19
    assert session.call("beta", "2023-07-01", "A3", Q).call_index == 0  # another unit has its own cap


@pytest.mark.parametrize(
    ("unit", "message"),
    [
        (("omega", "2024-01-01", "A1"), "field_id 'omega' is not a field"),
        (("alpha", "2024-02-01", "A1"), "origin '2024-02-01' is not an origin"),
        (("alpha", "2024-01-01", "A0"), "condition 'A0' has no Search tool"),
    ],
)
def test_unknown_units_are_refused(session, unit, message) -> None:
    with pytest.raises(ToolError, match=message):
        session.call(*unit, Q)
    assert session.records == []


def test_a_backend_leak_is_never_recorded(tiny_archive) -> None:
    def leaky(field_id, origin, regime, *args):
        return 1, [{"arxiv_id": "x", "first_submitted": origin.isoformat(), "title": "", "abstract": ""}], None

    s = SearchSession(Archive(tiny_archive.root), executor=leaky)
    with pytest.raises(SearchError, match="on or after the origin 2024-01-01"):
        s.call("alpha", "2024-01-01", "A1", Q)
    assert s.records == []


def _request(url: str, body: object | None = None) -> tuple[int, bytes]:
    data = None if body is None else (body if isinstance(body, bytes) else json.dumps(body).encode())
    headers = {"Content-Type": "application/json"} if data is not None else {}
    req = urllib.request.Request(url, data=data, method="POST" if data is not None else "GET", headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def test_http_endpoint(session, tmp_path) -> None:
    traces = tmp_path / "traces.jsonl"
    appender = TraceAppender(traces)
    session.on_record = appender
    server = make_server(session, "127.0.0.1", 0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        status, body = _request(base + "/search", {"field_id": "gamma", "origin": "2025-01-01", "condition": "A3", "arguments": Q})
        first = json.loads(body)
        assert status == 200 and first["call_index"] == 0 and first["total_hits"] > 0 and len(first["papers"]) == 8
        status, body = _request(base + "/search", {"field_id": "gamma", "origin": "2025-01-01", "condition": "A3", "arguments": {"query": "q", "sort": "best"}})
        assert status == 200 and json.loads(body)["error"].startswith("malformed call: sort")
        assert _request(base + "/search", b"not json")[0] == 400
        status, body = _request(base + "/search", {"field_id": "gamma", "origin": "2025-01-01", "condition": "A0", "arguments": Q})
        assert status == 400 and "has no Search tool" in json.loads(body)["error"]
        assert _request(base + "/nowhere")[0] == 404
        status, body = _request(base + "/tools?condition=A0")
        assert status == 200 and [t["function"]["name"] for t in json.loads(body)] == ["Finish"]
        status, body = _request(base + "/health")
        assert json.loads(body) == {"ok": True, "max_calls": 20, "top_k": 8}
        status, body = _request(base + "/traces")
        lines = [json.loads(l) for l in body.decode().splitlines()]
        assert [l["call_index"] for l in lines] == [0, 1] and lines[1]["sort"] == "best"
    finally:
        server.shutdown()
        server.server_close()
        appender.close()
    assert [json.loads(l) for l in traces.read_text().splitlines()] == lines


def test_serve_search_is_loopback_only(tiny_archive, tmp_path) -> None:
    result = CliRunner().invoke(cli, ["serve-search", "--root", str(tiny_archive.root), "--host", "0.0.0.0"])
    assert result.exit_code == 2 and "loopback only" in result.stderr
    existing = tmp_path / "t.jsonl"
    existing.write_text("")
    result = CliRunner().invoke(cli, ["serve-search", "--root", str(tiny_archive.root), "--traces", str(existing)])
    assert result.exit_code == 2 and "already exists" in result.stderr


# ---------------------------------------------------------------- HTTP abuse: 4xx JSON, never counted, server stays up
import http.client
import socket

UNIT = {"field_id": "alpha", "origin": "2024-01-01", "condition": "A1"}


@pytest.fixture
def served(session, tmp_path):
    traces = tmp_path / "traces.jsonl"
    appender = TraceAppender(traces)
    session.on_record = appender
    server = make_server(session, "127.0.0.1", 0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1], session, traces
    finally:
        server.shutdown()
        server.server_close()
        appender.close()


def _raw(port: int, method: str, path: str, body: bytes = b"", headers: dict | None = None) -> tuple[int, dict]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    conn.request(method, path, body=body, headers=headers if headers is not None else {"Content-Type": "application/json"})
    response = conn.getresponse()
    data = response.read()
    conn.close()
    return response.status, (json.loads(data) if data else {})


def _envelope(arguments) -> bytes:
    return json.dumps({**UNIT, "arguments": arguments}).encode()


ABUSE = [
    ("POST", "/search", b"\xff\xfe\x00garbage", None, 400),
    ("POST", "/search", _envelope(Q)[:-1] + b', "x": "\\ud800"}', None, 400),  # an unknown envelope key
    ("POST", "/search", json.dumps({**UNIT, "field_id": "\udfff"}).encode()[:-1] + b', "arguments": {}}', None, 400),
    ("POST", "/search", b'{"field_id": ' + b"[" * 50000 + b"]" * 50000 + b"}", None, 400),
    ("POST", "/search", b'{"field_id": ' + b"9" * 6000 + b"}", None, 400),
    ("POST", "/search", b'{"a": NaN}', None, 400),
    ("POST", "/search", b"[]", None, 400),
    ("POST", "/search", json.dumps(UNIT).encode(), None, 400),  # no arguments
    ("POST", "/search", json.dumps({**UNIT, "condition": "A0", "arguments": Q}).encode(), None, 400),
    ("POST", "/search", json.dumps({**UNIT, "origin": "2024-01-01T00:00", "arguments": Q}).encode(), None, 400),
    ("POST", "/search", _envelope(Q), {"Content-Type": "text/plain"}, 415),
    ("POST", "/search", _envelope(Q), {}, 415),
    ("POST", "/search", b"x" * (MAX + 1), None, 413),
    ("POST", "/nowhere", _envelope(Q), None, 404),
    ("GET", "/search", b"", None, 405),
    ("PUT", "/search", _envelope(Q), None, 405),
    ("DELETE", "/traces", b"", None, 405),
    ("BREW", "/search", b"", None, 501),
    ("GET", "/../../etc/passwd", b"", None, 404),
]


@pytest.mark.parametrize(("method", "path", "body", "headers", "status"), ABUSE, ids=range(len(ABUSE)))
def test_abusive_requests_are_4xx_json_and_never_counted(served, method, path, body, headers, status) -> None:
    port, session, traces = served
    code, payload = _raw(port, method, path, body, headers)
    assert code == status and isinstance(payload.get("error"), str)
    assert session.records == [] and traces.read_text() == ""
    code, payload = _raw(port, "POST", "/search", _envelope(Q))  # still up, and the next call is call 0
    assert code == 200 and payload["call_index"] == 0


def test_a_body_without_content_length_or_a_slow_client_does_not_hang_the_server(served) -> None:
    port, session, _ = served
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(b"POST /search HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n" % port)
        assert s.recv(1000).startswith(b"HTTP/1.0 411")
    idle = socket.create_connection(("127.0.0.1", port), timeout=10)  # never sends anything
    try:
        code, payload = _raw(port, "POST", "/search", _envelope(Q))
        assert code == 200 and payload["call_index"] == 0
    finally:
        idle.close()


def test_every_counted_call_is_in_the_trace_gapless_under_a_mix_of_requests(served) -> None:
    port, session, traces = served
    answers = []
    for k in range(45):  # bounded: valid, malformed and abusive requests interleaved, past the cap
        if k % 3 == 0:
            answers.append(_raw(port, "POST", "/search", _envelope({"query": f"parsing {k}", "sort": "relevance"})))
        elif k % 3 == 1:
            answers.append(_raw(port, "POST", "/search", _envelope({"query": k, "sort": "relevance"})))
        else:
            answers.append(_raw(port, "POST", "/search", b"\xff" * k))
    counted = [p["call_index"] for code, p in answers if code == 200 and p.get("call_index") is not None]
    lines = [json.loads(line) for line in traces.read_text().splitlines()]
    assert counted == list(range(20)) and [line["call_index"] for line in lines] == counted
    assert lines == session.records
    refused = [p for code, p in answers if code == 200 and p.get("call_index") is None]
    assert refused and all("call cap" in p["error"] for p in refused)


def test_a_lone_surrogate_in_the_query_is_a_counted_malformed_call_recorded_sanitised(served) -> None:
    port, session, traces = served
    code, payload = _raw(port, "POST", "/search", json.dumps({**UNIT, "arguments": {"query": "\ud800", "sort": "relevance"}}).encode())
    assert code == 200 and payload["call_index"] == 0 and "not valid Unicode" in payload["error"]
    assert [json.loads(line)["query"] for line in traces.read_text().splitlines()] == [""]
