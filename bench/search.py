"""Benchmark the Search backend at full scale: index build, trace generation, replay.

Usage:
    python bench/search.py [--root DIR] [--work DIR] [--reference-shards N]

With --root, DIR is a full-scale synthetic archive (``rapgen synth --scale full``)
whose models carry traces. Without it, the bench writes its own full-scale
archive under --work: the real arXiv metadata sample (124,808 papers) spread
over 278 fields (578,745 memberships), five origins, 7 synthetic models with
about 86,000 replayable calls made by ``rapgen.sample.generate_traces``.

Figures printed (all measured in this run):
  * cold index build (tokenise every member paper once, one npz per field), 2 processes;
  * replay throughput, cold (``rapgen replay`` with an empty cache: verify + build + replay)
    and warm (cache present), end to end through the CLI;
  * the reference: a naive per-shard Whoosh build (whoosh-reloaded 2.7.5, one index per
    shard, as the notes recommend) timed on a sample of real shards, extrapolated to
    every shard; and Whoosh query latency on those shards against ours for the same calls;
  * the speed reference: bm25s (``pip install bm25s``; skipped with a message if it is not
    importable) on the same shards, every shard its own pair of indexes (title, abstract;
    scores summed, ``method="lucene"``, k1 and b from the ledger) built from the tokens of
    ``rapgen.search.tokenize`` (each paper tokenised once, as the backend does), in one
    process: build throughput, and every recorded call answered on its shard (date bounds
    applied exactly by scoring the whole shard and masking), against the backend on the same
    calls and ``rapgen replay``, each with the ratio rapgen / bm25s. ``--bm25s-every N``
    indexes every N-th shard only and extrapolates. bm25s's BM25 is not Whoosh's BM25F, so
    its top-8 differs; agreement and overlap@8 are printed as information only.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from collections import Counter
from datetime import date
from dataclasses import dataclass
from pathlib import Path

import numpy as np

SAMPLE = Path("/work/shared/data/arxiv-sample/papers.jsonl.gz")
N_FIELDS = 278
N_MEMBERSHIPS = 578_745
ORIGINS = ["2024-01-01", "2024-07-01", "2025-01-01", "2025-07-01", "2026-01-01"]
MODELS = [f"synthetic-model-{i}" for i in range(1, 8)]
LEDGER = {
    "bm25": {"k1": 1.5, "b": 0.75}, "search": {"top_k": 8, "max_calls": 20},
    "bootstrap": {"resamples": 10000, "seed": 0, "level": 0.95}, "ewma_weights": [0.25, 0.25, 0.5],
    "arima110": {"phi": -0.4}, "holt": {"alpha": 0.85, "beta": 0.6}, "var_ridge": {"ratio": 133.352},
    "residual": {"direct_permutations": 2048, "seed": 0},
    "change_rich": {"p_max": 0.05, "repeatability_min": 0.5, "null_draws": 2000, "seed": 0},
    "reliability": {"splits": 200, "seed": 0},
}


def say(msg: str) -> None:
    print(msg, flush=True)


def build_archive(root: Path, seed: int = 0) -> None:
    """A full-scale synthetic archive from the real arXiv sample (not sealed yet)."""
    from rapgen.archive import add_months
    from rapgen.archive.writer import write_assignments, write_papers
    from rapgen.io import write_json, write_jsonl
    from rapgen.search import tokenize

    rng = np.random.default_rng(seed)
    papers = []
    with gzip.open(SAMPLE, "rt", encoding="utf-8") as handle:
        for line in handle:
            r = json.loads(line)
            papers.append((r["arxiv_id"], r["title"], r["abstract"], date.fromisoformat(r["first_submitted"])))
    papers.sort(key=lambda p: p[0])
    arch = root / "archive"
    write_json(arch / "ARCHIVE.json", {"format": "rap-archive", "format_version": 1, "name": "bench full-scale",
                                       "description": "bench/search.py", "created": "2026-11-29", "synthetic": True,
                                       "source": "arXiv metadata sample", "license": "CC0-1.0"})
    write_json(arch / "benchmark" / "origins.json", {"origins": ORIGINS, "window_months": 6, "history_windows": 3, "strict_origin": "2026-01-01"})
    write_json(arch / "provenance" / "FINAL_PARAMETER_LEDGER_V1.json", LEDGER)
    fields = [f"field-{i:03d}" for i in range(N_FIELDS)]
    write_jsonl(arch / "benchmark" / "fields.jsonl", [
        {"field_id": f, "name": f"Field {i}", "definition": "", "split": "test" if (i // 4) % 3 else "dev",
         "block_id": f"b{i // 4}", "eligible_pre2024": True} for i, f in enumerate(fields)])
    blocks: dict[str, list[str]] = {}
    for i, f in enumerate(fields):
        blocks.setdefault(f"b{i // 4}", []).append(f)
    write_jsonl(arch / "benchmark" / "blocks.jsonl", [
        {"block_id": b, "split": "test" if int(b[1:]) % 3 else "dev", "fields": fs} for b, fs in sorted(blocks.items())])
    # codebook words: mid-frequency words of the corpus
    counts = Counter(t for p in papers[:8000] for t in tokenize(p[2]))
    vocab = [w for w, _ in counts.most_common(6000)[150:] if w.isalpha()]
    write_jsonl(arch / "benchmark" / "codebooks.jsonl", [
        {"field_id": f, "directions": [
            {"slot": f"D{k}", "name": " ".join(rng.choice(vocab, 2)), "definition": " ".join(rng.choice(vocab, 8)),
             "include": " ".join(rng.choice(vocab, 6)), "exclude": "", "exemplars": []} for k in range(8)]}
        for f in fields])
    # memberships: every paper in 4 to 6 fields, trimmed to exactly N_MEMBERSHIPS
    per_paper = rng.integers(4, 7, size=len(papers))
    excess = int(per_paper.sum()) - N_MEMBERSHIPS
    per_paper[rng.choice(np.flatnonzero(per_paper > 4), size=max(excess, 0), replace=False)] -= 1
    slots = np.array([f"D{k}" for k in range(8)] + ["other"])
    rows = []
    for (pid, _t, _a, d), k in zip(papers, per_paper):
        for f in rng.choice(N_FIELDS, size=int(k), replace=False):
            primary = slots[rng.integers(0, 9)]
            rows.append((pid, fields[f], d, primary, None, "other" if primary == "other" else "single"))
    rows.sort(key=lambda r: (r[1], r[0]))
    write_papers(arch / "benchmark" / "papers.parquet", {
        "arxiv_id": [p[0] for p in papers], "title": [p[1] for p in papers], "abstract": [p[2] for p in papers],
        "first_submitted": [p[3] for p in papers], "categories": ["cs.CL"] * len(papers)})
    write_assignments(arch / "benchmark" / "assignments.parquet", {
        "arxiv_id": [r[0] for r in rows], "field_id": [r[1] for r in rows], "first_submitted": [r[2] for r in rows],
        "primary": [r[3] for r in rows], "secondary": [r[4] for r in rows], "assignment_type": [r[5] for r in rows]})
    by_field: dict[str, list[tuple[str, date]]] = {}
    for r in rows:
        by_field.setdefault(r[1], []).append((r[0], r[2]))
    for regime in ("fixed", "expanding"):
        lines = []
        for f in fields:
            for o in ORIGINS:
                origin = date.fromisoformat(o)
                lo = add_months(origin, -6) if regime == "fixed" else None
                members = sorted((p, d) for p, d in by_field.get(f, []) if d < origin and (lo is None or d >= lo))
                dates = [d for _, d in members]
                lines.append({"field_id": f, "origin": o, "regime": regime, "date_from": lo.isoformat() if lo else None,
                              "date_to": o, "n_papers": len(members),
                              "min_date": min(dates).isoformat() if dates else None,
                              "max_date": max(dates).isoformat() if dates else None,
                              "ids_sha256": hashlib.sha256("\n".join(p for p, _ in members).encode()).hexdigest()})
        write_jsonl(arch / "search" / f"manifest_{regime}.jsonl", lines)
    for i, mid in enumerate(MODELS):
        write_json(arch / "models" / mid / "model.json", {
            "model_id": mid, "display_name": f"Synthetic model {i + 1}", "provider": "bench", "proprietary": False,
            "knowledge_cutoff": None, "release_date": None, "cutoff_source": "", "diagnostic": True,
            "submitted": "2026-11-29", "contact": "", "notes": ""})
        write_jsonl(arch / "models" / mid / "predictions.jsonl", [
            {"field_id": f, "origin": o, "condition": c, "weights": {f"D{k}": int(w) for k, w in enumerate(rng.integers(1, 30, 8))}}
            for f in fields for o in ORIGINS for c in ("A0", "A1", "A2", "A3", "A4")])


def rapgen(*args: str) -> tuple[float, subprocess.CompletedProcess]:
    started = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "rapgen", *args], capture_output=True, text=True)
    return time.perf_counter() - started, proc


def whoosh_reference(archive, backend, con, traces: dict, *, n_shards: int, shard_docs: int, build: float) -> None:
    """Naive per-shard Whoosh on ``n_shards`` real shards: build speed, and every answer identical to the backend's."""
    from rapgen.archive import CONDITION_REGIME
    from rapgen.search.reference import WhooshShard

    manifests = sorted(archive.manifest("expanding") + archive.manifest("fixed"), key=lambda m: m.n_papers)
    picks = [manifests[int(q * (len(manifests) - 1))] for q in np.linspace(0.3, 1.0, n_shards)]
    w_docs = w_time = 0.0
    ours_q = whoosh_q = 0.0
    n_q = 0
    backend.search(picks[0].field_id, picks[0].origin, picks[0].regime, {"query": "warm up", "sort": "date"})  # loads the vocabulary
    for m in picks:
        rows = con.execute(
            "SELECT p.arxiv_id, p.title, p.abstract, p.first_submitted FROM assignments a JOIN papers p USING (arxiv_id) "
            "WHERE a.field_id = ? AND a.first_submitted < ? AND (? IS NULL OR a.first_submitted >= ?)",
            [m.field_id, m.date_to, m.date_from, m.date_from]).fetchall()
        t = time.perf_counter()
        ref = WhooshShard(rows, k1=1.5, b=0.75)
        w_time += time.perf_counter() - t
        w_docs += len(rows)
        shard = backend.shard(m.field_id, m.origin, m.regime)
        calls = [c for mid in archive.model_ids for c in traces[mid] if c.field_id == m.field_id and c.origin == m.origin
                 and CONDITION_REGIME.get(c.condition) == m.regime][:100]
        for c in calls:
            args = {"query": c.query, "sort": c.sort, "date_from": c.date_from, "date_to": c.date_to}
            t = time.perf_counter()
            got = shard.search(args, top_k=8, k1=1.5, b=0.75)
            ours_q += time.perf_counter() - t
            t = time.perf_counter()
            total, ids, _ = ref.search(c.query, c.sort, c.date_from and date.fromisoformat(c.date_from),
                                       c.date_to and date.fromisoformat(c.date_to), 8)
            whoosh_q += time.perf_counter() - t
            assert (total, ids) == (got.total_hits, list(got.ids)), (m, c)
            n_q += 1
    rate = w_docs / w_time
    naive = shard_docs / rate
    say(f"reference, naive per-shard Whoosh build: {rate:,.0f} docs/s on {len(picks)} shards ({int(w_docs):,} docs) "
        f"→ all {shard_docs:,} shard documents ≈ {naive / 60:,.0f} min on one core, {naive / 120:,.0f} min on two")
    say(f"  build ratio: per-shard Whoosh / this backend ≈ {naive / 2 / build:,.0f}× (both on 2 cores)")
    if n_q:
        say(f"query latency on the same {n_q} recorded calls: ours {1000 * ours_q / n_q:.2f} ms, Whoosh {1000 * whoosh_q / n_q:.2f} ms "
            f"per call ({whoosh_q / ours_q:,.0f}×); results identical on all {n_q}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--root", type=Path, help="an existing full-scale archive with traces")
    ap.add_argument("--work", type=Path, default=Path("/tmp/rapgen-bench-search"))
    ap.add_argument("--reference-shards", type=int, default=4, help="shards indexed by naive per-shard Whoosh")
    ap.add_argument("--mean-calls", type=float, default=2.21)
    ap.add_argument("--bm25s-every", type=int, default=1,
                    help="bm25s indexes every N-th shard (1: all, the default; 0 skips bm25s); a sample is extrapolated")
    opts = ap.parse_args()

    from rapgen.archive import Archive, seal_archive
    from rapgen.sample import generate_traces
    from rapgen.search import Backend

    if opts.root is None:
        root = opts.work / "repo"
        if not (root / "SHA256SUMS").is_file():
            shutil.rmtree(root, ignore_errors=True)
            t = time.perf_counter()
            build_archive(root)
            say(f"wrote a full-scale archive in {time.perf_counter() - t:.1f} s: {root}")
            cache = opts.work / "gen-cache"
            t = time.perf_counter()
            written = generate_traces(root, MODELS, seed=0, mean_calls=opts.mean_calls, cache_dir=cache, jobs=2)
            gen = time.perf_counter() - t
            say(f"generate_traces: {sum(written.values()):,} calls for {len(written)} models in {gen:.1f} s "
                f"(incl. index build) = {sum(written.values()) / gen:,.0f} calls/s")
            seal_archive(root)
    else:
        root = opts.root
    archive = Archive(root)
    say(f"load average before the run: {' '.join(f'{x:.2f}' for x in os.getloadavg())} (2 cores)")
    shard_docs = sum(m.n_papers for r in ("fixed", "expanding") for m in archive.manifest(r))
    say(f"archive: {len(archive.fields)} fields, {len(archive.manifest('fixed')) * 2} shards holding {shard_docs:,} documents in total")

    # 1. cold index build, library level, 2 processes
    cache = opts.work / "bench-cache"
    shutil.rmtree(cache, ignore_errors=True)
    t = time.perf_counter()
    backend = Backend(archive, cache_dir=cache, jobs=2)
    build = time.perf_counter() - t
    meta = json.loads((backend.folder / "meta.json").read_text())["stats"]
    say(f"index build (cold, 2 processes): {build:.1f} s for {meta['papers']:,} papers / {meta['memberships']:,} memberships "
        f"= {meta['papers'] / build:,.0f} papers/s, {shard_docs / build:,.0f} shard documents/s "
        f"(tokenising {meta['tokenize_seconds']:.1f} s)")

    # 2. replay end to end through the CLI: cold, then warm
    env_cache = opts.work / "cli-cache"
    shutil.rmtree(env_cache, ignore_errors=True)
    cold, proc = rapgen("replay", "--root", str(root), "--cache-dir", str(env_cache), "--json")
    if proc.returncode != 0:
        say(proc.stderr[-2000:])
        raise SystemExit("replay failed")
    n_calls = json.loads(proc.stdout)["calls"]
    warm, proc = rapgen("replay", "--root", str(root), "--cache-dir", str(env_cache), "--json")
    assert proc.returncode == 0, proc.stderr[-2000:]
    verify, proc_v = rapgen("verify", "--root", str(root))
    say(f"rapgen replay, cold cache: {cold:.1f} s for {n_calls:,} calls ({n_calls / cold:,.0f} calls/s), all reproduced")
    say(f"rapgen replay, warm cache: {warm:.1f} s ({n_calls / warm:,.0f} calls/s); of which 'rapgen verify' alone takes {verify:.1f} s")
    say(f"  goals: cold ≤ 1200 s {'met' if cold <= 1200 else 'MISSED'}; warm ≤ 300 s {'met' if warm <= 300 else 'MISSED'}")

    # 3. reference: naive per-shard Whoosh on a sample of real shards (sizes spread over the range)
    con = archive.connect()
    traces = {mid: archive.traces(mid) for mid in archive.model_ids}
    whoosh_reference(archive, backend, con, traces, n_shards=opts.reference_shards, shard_docs=shard_docs, build=build)

    # 4. speed reference: bm25s on a sample of the same shards
    if opts.bm25s_every > 0:
        bm25s_reference(archive, backend, con, traces, shard_docs=shard_docs, n_calls=n_calls, build=build,
                        cold=cold, warm=warm, every=opts.bm25s_every)
    say(f"load average after the run: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


@dataclass
class _Tally:
    """What the bm25s reference accumulates over the shards and calls."""

    idx_time: float = 0.0
    ours_q: float = 0.0
    ref_q: float = 0.0
    idx_docs: int = 0
    n_q: int = 0
    n_rel: int = 0
    same_total: int = 0
    same_date: int = 0
    same_rel: int = 0
    overlap: float = 0.0


def _bm25s_call(pair, days, sids, call, top_k: int) -> tuple[int, list[str]]:
    """bm25s has no filter: score every shard document, then keep the call's bounds (exact)."""
    scores = np.zeros(len(sids), dtype=np.float32)
    for ix in pair:
        tids = ix.get_tokens_ids(list(call.terms))
        if tids:
            scores += ix.get_scores_from_ids(tids)
    hit = scores > 0  # Lucene idf is positive, so a matching document scores > 0
    if call.date_from is not None:
        hit &= days >= call.date_from.toordinal()
    if call.date_to is not None:
        hit &= days < call.date_to.toordinal()
    cand = np.flatnonzero(hit)
    key = -scores[cand] if call.sort == "relevance" else -days[cand]
    return len(cand), [str(i) for i in sids[cand[np.lexsort((cand, key))[:top_k]]]]


def _bm25s_shard(bm25s, m, members, titles, abstracts, ids, backend, calls, tally: _Tally) -> None:
    """Index one shard with bm25s (title and abstract apart) and compare all its recorded calls."""
    from rapgen.search import validate_call

    k1, b, top_k = backend.k1, backend.b, backend.top_k
    fpos, fdays = members.get(m.field_id, (np.zeros(0, dtype=int), np.zeros(0, dtype=int)))
    keep = fdays < m.date_to.toordinal()
    if m.date_from is not None:
        keep &= fdays >= m.date_from.toordinal()
    spos, days = fpos[keep], fdays[keep]
    assert len(spos) == m.n_papers, m
    t = time.perf_counter()
    pair = []
    if len(spos):
        for tokens in (titles, abstracts):
            ix = bm25s.BM25(k1=k1, b=b, method="lucene")
            ix.index([tokens[i] for i in spos], show_progress=False)
            pair.append(ix)
    tally.idx_time += time.perf_counter() - t
    tally.idx_docs += len(spos)
    shard = backend.shard(m.field_id, m.origin, m.regime)
    for c in calls:
        args = {"query": c.query, "sort": c.sort, "date_from": c.date_from, "date_to": c.date_to}
        t = time.perf_counter()
        got = shard.search(args, top_k=top_k, k1=k1, b=b)
        tally.ours_q += time.perf_counter() - t
        t = time.perf_counter()
        try:
            call = validate_call(args)
        except ValueError:
            tally.ref_q += time.perf_counter() - t
            continue  # a malformed call: an error result for both, nothing to compare
        total, top = _bm25s_call(pair, days, ids[spos], call, top_k)
        tally.ref_q += time.perf_counter() - t
        tally.n_q += 1
        tally.same_total += total == got.total_hits
        if call.sort == "date":
            tally.same_date += top == list(got.ids)
        else:
            tally.n_rel += 1
            tally.same_rel += top == list(got.ids)
            tally.overlap += len(set(top) & set(got.ids)) / max(len(top), len(got.ids), 1)


def bm25s_reference(archive, backend, con, traces: dict, *, shard_docs: int, n_calls: int, build: float,
                    cold: float, warm: float, every: int) -> None:
    """bm25s, one index pair per shard, on every ``every``-th shard (1: all); all their recorded calls."""
    try:
        import bm25s
    except ImportError:
        say("bm25s reference skipped: the package 'bm25s' is not importable (pip install bm25s; it is not a rapgen dependency)")
        return
    import logging

    from rapgen.archive import CONDITION_REGIME
    from rapgen.search import tokenize

    logging.getLogger("bm25s").setLevel(logging.ERROR)
    shards = sorted((m for r in ("fixed", "expanding") for m in archive.manifest(r)), key=lambda m: (m.field_id, m.origin, m.regime))
    picks = shards[::every]
    calls_by_shard: dict[tuple, list] = {}
    for mid in archive.model_ids:
        for c in traces[mid]:
            if c.condition in CONDITION_REGIME:
                calls_by_shard.setdefault((c.field_id, c.origin, CONDITION_REGIME[c.condition]), []).append(c)
    # tokenise every member paper once with rapgen's analyzer (as the backend does), title and abstract apart
    rows = con.execute("SELECT arxiv_id, title, abstract FROM papers WHERE arxiv_id IN (SELECT arxiv_id FROM assignments) "
                       "ORDER BY arxiv_id").fetchall()
    t = time.perf_counter()
    titles = [tokenize(r[1]) for r in rows]
    abstracts = [tokenize(r[2]) for r in rows]
    tok_time = time.perf_counter() - t
    ids = np.array([r[0] for r in rows])
    pos = {pid: i for i, pid in enumerate(ids)}
    members: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    for fid, group in con.execute("SELECT field_id, arxiv_id, first_submitted FROM assignments ORDER BY field_id, arxiv_id").df().groupby("field_id", sort=False):
        members[fid] = (np.array([pos[p] for p in group["arxiv_id"]]),
                        np.array([d.toordinal() for d in group["first_submitted"]]))
    tally = _Tally()
    field_seen = None
    for m in picks:
        if field_seen is not None and field_seen != m.field_id:
            backend.release(field_seen)  # keep memory flat: one field's arrays at a time
        field_seen = m.field_id
        _bm25s_shard(bm25s, m, members, titles, abstracts, ids, backend, calls_by_shard.get((m.field_id, m.origin, m.regime), []), tally)
    if field_seen is not None:
        backend.release(field_seen)
    _bm25s_report(bm25s.__version__, tally, len(shards), len(picks), every, len(rows), tok_time,
                  shard_docs=shard_docs, n_calls=n_calls, build=build, cold=cold, warm=warm)


def _bm25s_report(version: str, tally: _Tally, n_shards: int, n_picks: int, every: int, n_papers: int, tok_time: float, *,
                  shard_docs: int, n_calls: int, build: float, cold: float, warm: float) -> None:
    t = tally
    scale = n_shards / n_picks  # 1 when every shard was indexed
    sampled = "" if every == 1 else f" (every {every}th shard; figures below extrapolated ×{scale:.1f})"
    est_build = tok_time + t.idx_time * scale
    say(f"reference, bm25s {version}, one title + one abstract index per shard, tokens from rapgen.search.tokenize, "
        f"1 process: {n_picks} of {n_shards} shards{sampled}")
    say(f"  tokenise {n_papers:,} papers once: {tok_time:.1f} s; index {t.idx_docs:,} shard docs: {t.idx_time:.1f} s "
        f"= {t.idx_docs / max(t.idx_time, 1e-9):,.0f} docs/s")
    say(f"  build throughput: rapgen {shard_docs / build:,.0f} shard docs/s (cold, 2 processes, {build:.1f} s); bm25s "
        f"{shard_docs / est_build:,.0f} on 1 core ({est_build:.1f} s), ≈ {2 * shard_docs / est_build:,.0f} on 2 (ideal split); "
        f"throughput ratio rapgen/bm25s ≈ {est_build / 2 / build:,.2f}× (both on 2 cores)")
    if not t.n_q:
        return
    ours_ms, ref_ms = 1000 * t.ours_q / t.n_q, 1000 * t.ref_q / t.n_q
    say(f"  query latency on the same {t.n_q:,} recorded calls ({t.n_rel:,} relevance): rapgen {ours_ms:.3f} ms, bm25s {ref_ms:.3f} ms "
        f"per call = {1000 / ours_ms:,.0f} vs {1000 / ref_ms:,.0f} calls/s; throughput ratio rapgen/bm25s {ref_ms / ours_ms:,.2f}×")
    est_replay = (est_build + t.ref_q * scale) / 2  # build + every call, split ideally over 2 cores
    say(f"  replay of all {n_calls:,} calls, cold: rapgen {cold:.1f} s end to end (verify + build + replay) = {n_calls / cold:,.0f} calls/s; "
        f"bm25s build + queries {2 * est_replay:.1f} s on 1 core, ≈ {est_replay:.1f} s on 2 = {n_calls / est_replay:,.0f} calls/s; throughput "
        f"ratio rapgen/bm25s {est_replay / cold:,.2f}×")
    warm_ref = t.ref_q * scale / 2
    say(f"  replay, warm: rapgen {warm:.1f} s end to end (incl. verify) = {n_calls / warm:,.0f} calls/s; bm25s queries alone "
        f"(indexes kept in memory) ≈ {warm_ref:.1f} s on 2 = {n_calls / warm_ref:,.0f} calls/s; throughput ratio rapgen/bm25s {warm_ref / warm:,.2f}×")
    say(f"  agreement, information only (bm25s's Lucene BM25 is not Whoosh's BM25F): total_hits equal on {t.same_total:,}/{t.n_q:,}, "
        f"date-sorted top-8 identical on {t.same_date:,}/{t.n_q - t.n_rel:,}, relevance top-8 identical on {t.same_rel:,}/{t.n_rel:,}, "
        f"mean overlap@8 {t.overlap / max(t.n_rel, 1):.3f}")


if __name__ == "__main__":
    main()
