"""Support code for the submit and kit tests: a good submission built in code, sealing,
git, tree hashing, and a fake Search executor over the tiny archive's ledger."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from datetime import date
from pathlib import Path

from rapgen.archive import Archive, add_months
from rapgen.io import write_json, write_jsonl

NEW_ID = "newbie"
FORECAST = ("A0", "A1", "A3")


def weights_for(i: int) -> dict:
    return {f"D{k}": (i * 7 + k * 13) % 50 + 1 for k in range(8)}


_SHARDS: dict[tuple, list] = {}


def shard_papers(root: Path, field_id: str, origin: str, regime: str) -> list[tuple[str, date]]:
    """(arxiv_id, first_submitted) of a shard, newest first, ties by id (memoised by the ledger's bytes)."""
    ledger = hashlib.sha256((Path(root) / "archive" / "benchmark" / "assignments.parquet").read_bytes()).hexdigest()
    key = (ledger, field_id, origin, regime)
    if key not in _SHARDS:
        _SHARDS[key] = _shard_papers(root, field_id, origin, regime)
    return list(_SHARDS[key])


def _shard_papers(root: Path, field_id: str, origin: str, regime: str) -> list[tuple[str, date]]:
    o = date.fromisoformat(origin)
    lo = add_months(o, -6) if regime == "fixed" else date(1900, 1, 1)
    con = Archive(root).connect()
    rows = con.execute(
        "SELECT arxiv_id, first_submitted FROM assignments WHERE field_id = ? AND first_submitted >= ? AND first_submitted < ? "
        "ORDER BY first_submitted DESC, arxiv_id",
        [field_id, lo, o],
    ).fetchall()
    con.close()
    return rows


def good_lines(root: Path, conditions=FORECAST) -> list[dict]:
    archive = Archive(root)
    lines = []
    i = 0
    for condition in conditions:
        for f in sorted(archive.field_map):
            for o in archive.origins.origins:
                lines.append({"field_id": f, "origin": o.isoformat(), "condition": condition, "weights": weights_for(i)})
                i += 1
    return lines


def good_traces(root: Path) -> list[dict]:
    """Two calls for alpha at the first two origins, A1 (fixed) and A3 (expanding)."""
    archive = Archive(root)
    out = []
    for origin in [o.isoformat() for o in archive.origins.origins[:2]]:
        for condition, regime in (("A1", "fixed"), ("A3", "expanding")):
            shard = shard_papers(root, "alpha", origin, regime)
            for k in range(2):
                out.append({
                    "field_id": "alpha", "origin": origin, "condition": condition, "call_index": k,
                    "query": "parsing methods", "sort": "date", "date_from": None, "date_to": None,
                    "total_hits": len(shard), "returned_ids": [a for a, _ in shard[:8]],
                })
    return out


def model_json(model_id: str = NEW_ID, **changes) -> dict:
    info = {
        "model_id": model_id, "display_name": "Newbie 1", "provider": "Example Lab", "proprietary": False,
        "knowledge_cutoff": "2023-12-01", "release_date": None, "cutoff_source": "model card",
        "diagnostic": False, "submitted": "2026-11-29", "contact": "lab@example.org", "notes": "",
    }
    info.update(changes)
    return info


def write_submission(folder: Path, root: Path, *, model_id: str | None = None, traces: bool = True) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    write_json(folder / "model.json", model_json(model_id or folder.name))
    write_jsonl(folder / "predictions.jsonl", good_lines(root))
    if traces:
        write_jsonl(folder / "traces.jsonl", good_traces(root))
    return folder


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def append_sums(root: Path, model_id: str) -> None:
    """Add canonical SHA256SUMS lines for every regular file of the model folder (like `rapgen seal`)."""
    sums = root / "SHA256SUMS"
    entries = {}
    for line in sums.read_text().splitlines():
        digest, path = line.split("  ", 1)
        entries[path] = digest
    folder = root / "archive" / "models" / model_id
    for p in sorted(folder.iterdir()):
        if p.is_file() and not p.is_symlink():
            entries[f"archive/models/{model_id}/{p.name}"] = sha256(p)
    sums.write_text("".join(f"{entries[p]}  {p}\n" for p in sorted(entries, key=lambda s: s.encode())))


def tree_digest(root: Path) -> str:
    """One digest over every path, kind and byte under root (excluding .git)."""
    h = hashlib.sha256()
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d != ".git")
        for name in sorted(filenames):
            p = Path(dirpath) / name
            h.update(str(p.relative_to(root)).encode() + b"\0")
            h.update(os.readlink(p).encode() if p.is_symlink() else p.read_bytes())
        for name in dirnames:
            h.update(str((Path(dirpath) / name).relative_to(root)).encode() + b"/\0")
    return h.hexdigest()


def git(root: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.org", "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    out = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, env=env, check=True)
    return out.stdout


def git_init(root: Path) -> None:
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "base")


def fake_executor(root: Path):
    """A stand-in Search backend: the shard filtered by the date bounds, newest first (query ignored)."""

    def execute(field_id, origin, regime, query, sort, date_from, date_to):
        rows = shard_papers(root, field_id, origin.isoformat(), regime)
        rows = [r for r in rows if (date_from is None or r[1] >= date_from) and (date_to is None or r[1] < date_to)]
        return len(rows), [{"arxiv_id": a, "first_submitted": d.isoformat(), "title": f"t {a}", "abstract": "a"} for a, d in rows[:8]], None

    return execute


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(l) for l in path.read_text().splitlines() if l]


# ---------------------------------------------------------------- a fake OpenAI-compatible endpoint
import re


def scripted_reply(request: dict) -> dict:
    """Deterministic replies with native tool calls, chosen from the unit named in the system prompt.

    - delta 2023-01-01: answers in text twice -> invalid (no tool call)
    - gamma 2023-07-01: Finish with a negative weight -> invalid
    - beta 2024-01-01 (Search conditions): one Search with an unknown key, one with sort "popularity", then Finish
    - otherwise: Search conditions make two Search calls (relevance, then date with bounds), then Finish
    """
    system = request["messages"][0]["content"]
    field = re.search(r"\(`([a-z0-9_-]+)`\)", system).group(1)
    origin = re.search(r"Today is (\d{4}-\d{2}-\d{2})", system).group(1)
    has_search = any(t["function"]["name"] == "Search" for t in request["tools"])
    done = sum(1 for m in request["messages"] if m["role"] == "tool")
    n = len(request["messages"])

    def call(name: str, args) -> dict:
        return {"choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
            "role": "assistant", "content": None,
            "tool_calls": [{"id": f"call_{n}", "type": "function", "function": {"name": name, "arguments": args if isinstance(args, str) else json.dumps(args)}}],
        }}]}

    if field == "delta" and origin == "2023-01-01":
        return {"choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "I think D0 grows."}}]}
    weights = {f"D{k}": (len(field) * 3 + k * 5 + int(origin[2:4])) % 17 + 1 for k in range(8)}
    if field == "gamma" and origin == "2023-07-01":
        weights["D2"] = -3
    if has_search and field == "beta" and origin == "2024-01-01" and done < 2:
        bad = [{"query": "parsing", "sort": "relevance", "limit": 5}, {"query": "parsing", "sort": "popularity"}][done]
        return call("Search", bad)
    if has_search and done < 2:
        args = [{"query": "parsing methods for language", "sort": "relevance"},
                {"query": "dialogue speech", "sort": "date", "date_from": "2022-01-01", "date_to": origin}][done]
        return call("Search", args)
    return call("Finish", {**weights, "rationale": f"scripted {field} {origin}"})


