"""Builders shared by the site tests: a tiny archive and score outputs written in code.

Nothing here is a test. The score outputs follow the column lists of SCORING.md §7
exactly; their numbers are arbitrary but deterministic (a seeded generator), so the
golden Markdown pages are stable.
"""

from __future__ import annotations

import hashlib
import json
from datetime import date
from pathlib import Path

import numpy as np
import pandas as pd

from rapgen.archive import BENCHMARK_LEDGER
from rapgen.archive.writer import write_assignments, write_papers
from rapgen.io import write_json, write_jsonl

SLOTS = [f"D{i}" for i in range(8)]
ORIGINS = ["2025-01-01", "2025-07-01", "2026-01-01"]
FIELDS = [
    # field_id, name, split, block
    ("f-alpha", "Alpha systems", "test", "b1"),
    ("f-beta", "Beta learning", "test", "b1"),
    ("f-delta", "Delta graphs", "test", "b3"),
    ("f-gamma", "Gamma retrieval", "dev", "b2"),
]
MODELS = {
    "m-open": {"display_name": "Open Model 7B", "provider": "Lab A", "proprietary": False,
               "knowledge_cutoff": "2025-06-01", "release_date": "2025-09-01", "diagnostic": True},
    "m-prop": {"display_name": "Prop <Model>", "provider": "Corp B", "proprietary": True,
               "knowledge_cutoff": None, "release_date": "2026-03-01", "diagnostic": False},
}
LEDGER = {**BENCHMARK_LEDGER, "bootstrap": {"resamples": 200, "seed": 0, "level": 0.95}}  # fewer resamples: fast tests
BASELINES = ["arima110", "ewma", "holt", "linear_trend", "recent", "var_ridge"]


def _write_manifests(a: Path, field_ids: list[str]) -> None:
    """Both Search manifests, rebuilt from the ledger by the archive's shard rule (so the archive verifies)."""
    from rapgen.archive.history.ledger import UnionLedger

    ledger = UnionLedger(a / "benchmark/papers.parquet", a / "benchmark/assignments.parquet", [], field_ids)
    try:
        lines = {regime: [] for regime in ("fixed", "expanding")}
        for origin in ORIGINS:
            for regime, rows in ledger.shard_manifests(date.fromisoformat(origin), 6).items():
                lines[regime] += rows
    finally:
        ledger.close()
    for regime, rows in lines.items():
        write_jsonl(a / f"search/manifest_{regime}.jsonl", rows)


def _seal(root: Path) -> None:
    lines = []
    for path in sorted((root / "archive").rglob("*"), key=lambda p: p.relative_to(root).as_posix().encode()):
        if path.is_file():
            rel = path.relative_to(root).as_posix()
            lines.append(f"{hashlib.sha256(path.read_bytes()).hexdigest()}  {rel}\n")
    (root / "SHA256SUMS").write_text("".join(lines), encoding="utf-8")


def scaled(n_fields: int, n_models: int) -> tuple[list, dict]:
    """Field and model lists for a larger archive (benchmarks): blocks of 3 fields, 70 % test."""
    fields = [(f"field-{i:03d}", f"Field {i:03d} studies", "test" if i % 10 < 7 else "dev", f"blk-{i // 3:03d}")
              for i in range(n_fields)]
    fields = [(fid, name, "test" if int(block[4:]) % 10 < 7 else "dev", block) for fid, name, _, block in fields]
    models = {}
    for j in range(n_models):
        models[f"model-{j:02d}"] = {"display_name": f"Model {j:02d}", "provider": f"Provider {j % 4}", "proprietary": j % 2 == 0,
                                    "knowledge_cutoff": "2025-06-01" if j % 3 else None, "release_date": "2025-09-01",
                                    "diagnostic": j % 4 == 0}
    return fields, models


def make_site_archive(root: Path, *, synthetic: bool = True, fields: list | None = None, models: dict | None = None) -> Path:
    """Write a tiny archive (4 fields, 3 blocks, 3 origins, 2 models) under ``root``."""
    FIELDS = fields or globals()["FIELDS"]  # noqa: N806
    MODELS = models or globals()["MODELS"]  # noqa: N806
    a = root / "archive"
    write_json(a / "ARCHIVE.json", {
        "format": "rap-archive", "format_version": 1, "name": "site-test", "description": "A tiny archive for site tests.",
        "created": "2026-01-15", "synthetic": synthetic, "source": "generated in tests", "license": "CC0-1.0"})
    write_json(a / "benchmark/origins.json", {"origins": ORIGINS, "window_months": 6, "history_windows": 3,
                                              "strict_origin": "2026-01-01"})
    write_jsonl(a / "benchmark/fields.jsonl", [
        {"field_id": fid, "name": name, "definition": f"Research on {name.lower()} & friends.", "split": split,
         "block_id": block, "eligible_pre2024": fid != "f-delta"} for fid, name, split, block in FIELDS])
    write_jsonl(a / "benchmark/codebooks.jsonl", [
        {"field_id": fid, "directions": [
            {"slot": s, "name": f"{name} direction {i}", "definition": f"Work on aspect {i} of {name}.",
             "include": f"papers about aspect {i}", "exclude": "surveys <only>", "exemplars": [f"2401.{i:05d}"] if i % 2 == 0 else []}
            for i, s in enumerate(SLOTS)]} for fid, name, _, _ in FIELDS])
    blocks: dict[str, list[str]] = {}
    splits = {}
    for fid, _, split, block in FIELDS:
        blocks.setdefault(block, []).append(fid)
        splits[block] = split
    write_jsonl(a / "benchmark/blocks.jsonl", [{"block_id": b, "split": splits[b], "fields": blocks[b]} for b in sorted(blocks)])
    write_papers(a / "benchmark/papers.parquet", {
        "arxiv_id": ["2401.00001"], "title": ["A paper"], "abstract": ["An abstract."],
        "first_submitted": [date(2024, 1, 5)], "categories": ["cs.LG"]})
    write_assignments(a / "benchmark/assignments.parquet", {
        "arxiv_id": ["2401.00001"], "field_id": [FIELDS[0][0]], "first_submitted": [date(2024, 1, 5)],
        "primary": ["D0"], "secondary": [None], "assignment_type": ["single"]})
    write_json(a / "provenance/FINAL_PARAMETER_LEDGER_V1.json", LEDGER)
    _write_manifests(a, [fid for fid, *_ in FIELDS])
    for mid, meta in MODELS.items():
        write_json(a / f"models/{mid}/model.json", {
            "model_id": mid, **meta, "cutoff_source": "vendor card", "submitted": "2026-02-01",
            "contact": "someone@example.org", "notes": ""})
        conditions = ["A0", "A1", "A2", "A3", "A4"] if meta["diagnostic"] else ["A0", "A1", "A3"]
        rows = []
        for fid, *_ in FIELDS:
            for origin in ORIGINS:
                for c in conditions:
                    if meta["proprietary"] and fid == FIELDS[1][0] and origin == ORIGINS[0] and c == "A1":
                        rows.append({"field_id": fid, "origin": origin, "condition": c, "weights": None,
                                     "status": "invalid", "reason": "no answer"})
                    else:
                        rows.append({"field_id": fid, "origin": origin, "condition": c,
                                     "weights": {s: (i + 1) for i, s in enumerate(SLOTS)}})
        write_jsonl(a / f"models/{mid}/predictions.jsonl", rows)
    traces = []
    for fid, *_ in FIELDS:
        for origin in ORIGINS:
            for c in ("A1", "A3"):
                for k in range(2 if c == "A1" else 3):
                    # the one paper is the first field's, dated 2024-01-05: in each of its Expanding (A3) shards only
                    found = ["2401.00001"] if fid == FIELDS[0][0] and c == "A3" else []
                    traces.append({"field_id": fid, "origin": origin, "condition": c, "call_index": k,
                                   "query": "alpha", "sort": "relevance", "date_from": None, "date_to": None,
                                   "total_hits": len(found), "returned_ids": found})
    write_jsonl(a / f"models/{next(iter(MODELS))}/traces.jsonl", traces)
    _seal(root)
    return root


def _entries(models: dict) -> list[tuple[str, str, list[str]]]:
    out = [(mid, "model", ["A0", "A1", "A2", "A3", "A4"] if m["diagnostic"] else ["A0", "A1", "A3"]) for mid, m in models.items()]
    out += [(b, "baseline", ["BASE"]) for b in BASELINES]
    return out


def make_score_outputs(out: Path, manifest_sha256: str, *, with_diagnostics: bool = True, with_replay: bool = True,
                       fields: list | None = None, models: dict | None = None) -> Path:
    """Write every file of SCORING.md §7 (plus compositions/ranks/origin scores) with arbitrary numbers."""
    FIELDS = fields or globals()["FIELDS"]  # noqa: N806
    MODELS = models or globals()["MODELS"]  # noqa: N806
    rng = np.random.default_rng(7)
    out.mkdir(parents=True, exist_ok=True)
    r6 = lambda v: float(round(float(v), 6))  # noqa: E731
    split_fields = {s: [f for f, _, sp, _ in FIELDS if sp == s] for s in ("dev", "test")}
    lb, ct, rk, fs, osc, units = [], [], [], [], [], []
    for split in ("dev", "test"):
        nf = len(split_fields[split])
        for track, origins in (("all_origin", ORIGINS), ("forecast_strict", ORIGINS[-1:])):
            for policy in ("canonical", "split", "single", "flip"):
                rank_rows = {}
                for entry, kind, conds in _entries(MODELS):
                    if track == "forecast_strict" and kind == "model" and not MODELS[entry]["knowledge_cutoff"]:
                        continue
                    for cond in conds:
                        metrics = ["spearman", "tv", "jsd", "tv_gain"] + (["state_recent"] if cond in ("A2", "A4") else ["pred_recent"])
                        for metric in sorted(metrics):
                            est = rng.uniform(0.1, 0.9)
                            half = rng.uniform(0.02, 0.2)
                            n_valid = nf * len(origins) - (1 if kind == "model" and MODELS[entry]["proprietary"] and cond == "A1"
                                                           and split == "test" and track == "all_origin" else 0)
                            lb.append([track, split, policy, entry, kind, cond, metric, r6(est), r6(est - half), r6(est + half),
                                       nf, nf * len(origins), n_valid, nf * len(origins) - n_valid if kind == "model" else 0])
                            if metric == "spearman":
                                rank_rows.setdefault(cond, []).append((entry, r6(est)))
                            for fid in split_fields[split]:
                                fs.append([track, split, policy, entry, kind, cond, metric, fid, r6(rng.uniform(-0.5, 1)), len(origins)])
                            if track == "all_origin" and metric == "spearman":
                                for origin in ORIGINS:
                                    osc.append([split, policy, entry, kind, cond, metric, origin, r6(rng.uniform(-0.2, 1)), nf])
                for cond, rows in sorted(rank_rows.items()):
                    rows.sort(key=lambda r: (-r[1], r[0]))
                    for i, (entry, est) in enumerate(rows):
                        rank = 1.5 if i < 2 else float(i + 1)  # the first two are tied
                        rk.append([track, split, policy, cond, "spearman", entry, est, rank, r6(0.5 if i < 2 else 0.0)])
                for entry, kind, conds in _entries(MODELS):
                    if kind != "model" or (track == "forecast_strict" and not MODELS[entry]["knowledge_cutoff"]):
                        continue
                    names = ["A1-A0", "A3-A1", "A0-ewma", "A1-ewma", "A3-ewma"] + (["A2-A1", "A4-A3"] if "A2" in conds else [])
                    for contrast in sorted(names):
                        for metric in ("spearman", "tv"):
                            est = rng.uniform(-0.2, 0.2)
                            ct.append([track, split, policy, entry, contrast, metric, r6(est), r6(est - 0.1), r6(est + 0.1), nf])
    pd.DataFrame(lb, columns="track,split,policy,entry,kind,condition,metric,estimate,ci_low,ci_high,n_fields,n_episodes,n_valid,n_invalid".split(",")).to_csv(out / "leaderboard.csv", index=False)
    pd.DataFrame(ct, columns="track,split,policy,entry,contrast,metric,estimate,ci_low,ci_high,n_fields".split(",")).to_csv(out / "contrasts.csv", index=False)
    pd.DataFrame(rk, columns="track,split,policy,condition,metric,entry,estimate,rank,p_first".split(",")).to_csv(out / "ranks.csv", index=False)
    pd.DataFrame(fs, columns="track,split,policy,entry,kind,condition,metric,field_id,estimate,n_origins".split(",")).to_csv(out / "field_scores.csv", index=False)
    pd.DataFrame(osc, columns="split,policy,entry,kind,condition,metric,origin,estimate,n_fields".split(",")).to_csv(out / "origin_scores.csv", index=False)
    comp = []
    windows = ["2023-07-01", "2024-01-01", "2024-07-01", "2025-01-01", "2025-07-01", "2026-01-01", "2026-07-01"]
    for fid, *_ in FIELDS:
        for policy in ("canonical", "split"):
            for ws, we in zip(windows[:-1], windows[1:]):
                counts = rng.integers(0, 20, size=8)
                comp.append([fid, policy, ws, we, float(counts.sum()), *[r6(c / counts.sum()) for c in counts]])
    pd.DataFrame(comp, columns=["field_id", "policy", "window_start", "window_end", "n_total", *SLOTS]).to_csv(out / "compositions.csv", index=False)
    for fid, _, split, _ in FIELDS:
        for origin in ORIGINS:
            for entry, kind, conds in _entries(MODELS):
                for cond in conds:
                    p = rng.dirichlet(np.ones(8))
                    invalid = kind == "model" and MODELS[entry]["proprietary"] and fid == FIELDS[1][0] and origin == ORIGINS[0] and cond == "A1"
                    units.append({"split": split, "policy": "canonical", "entry": entry, "kind": kind, "condition": cond,
                                  "field_id": fid, "origin": origin, "valid": not invalid, "reason": "no answer" if invalid else "",
                                  "spearman": r6(rng.uniform(-1, 1)),
                                  "tv": r6(rng.uniform(0, 1)), "jsd": r6(rng.uniform(0, 0.6)), "pred_recent": None,
                                  "state_recent": None, "tv_gain": r6(rng.uniform(-0.2, 0.2)),
                                  **{f"p_{s}": r6(v) for s, v in zip(SLOTS, p)}})
    pd.DataFrame(units).to_parquet(out / "units.parquet", index=False)
    strict = [mid for mid, m in MODELS.items() if m["knowledge_cutoff"]]
    tracks = {"all_origin": {"origins": ORIGINS, "models": list(MODELS)}, "forecast_strict": {"origins": ORIGINS[-1:], "models": strict}}
    (out / "scores.json").write_text(json.dumps({"schema_version": 1, "manifest_sha256": manifest_sha256, "resamples": 200,
                                                 "seed": 0, "level": 0.95, "tracks": tracks}, indent=2) + "\n")
    if with_diagnostics:
        # The layout `rapgen score` writes (diagnostics_version 1), trimmed to a few rows.
        def est(v: float, h: float = 0.05) -> dict:
            return {"estimate": v, "ci_low": r6(v - h), "ci_high": r6(v + h)}

        diag = {
            "schema_version": 1, "manifest_sha256": manifest_sha256, "diagnostics_version": 1,
            "policy": "canonical", "track": "all_origin",
            "parameters": {"reliability": {"splits": 200, "seed": 0}, "revision_horizons": [6, 12, 18]},
            "reliability": {
                "splits": {"dev": {**est(0.7), "n_fields": 1, "ceiling": 0.83666, "ceiling_ci_low": 0.8, "ceiling_ci_high": 0.87},
                           "test": {**est(0.81234), "n_fields": 3, "ceiling": 0.9013, "ceiling_ci_low": 0.88, "ceiling_ci_high": 0.92}},
                "episodes": [{"field_id": fid, "origin": o, "split": sp, "reliability": r6(0.5 + 0.1 * i)}
                             for i, (fid, _, sp, _) in enumerate(FIELDS) for o in ORIGINS[:1]],
            },
            "change_rich": {
                "splits": {"test": {"n_episodes": 9, "n_change_rich": 1, "n_fields": 1}},
                "episodes": [{"field_id": FIELDS[0][0], "origin": ORIGINS[1], "split": "test", "p_value": 0.01,
                              "repeatability": 0.7, "change_rich": True}],
                "scores": [{"split": "test", "entry": e, "kind": k, "condition": c, "metric": m, **est(0.41), "n_fields": 1}
                           for e, k, c in (("ewma", "baseline", "BASE"), (next(iter(MODELS)), "model", "A3"))
                           for m in ("spearman", "tv")],
            },
            "residual_alignment": {"rows": [
                {"split": "test", "entry": next(iter(MODELS)), "kind": "model", "condition": c, "statistic": st, **est(0.2), "n_fields": 3}
                for st in ("direct_cosine", "partial_residual") for c in ("A0", "A3")],
                "subsets": [{"split": "test", "subset": sub, "origin": ORIGINS[-1] if sub == "latest_origin" else None,
                             "entry": next(iter(MODELS)), "kind": "model", "condition": "A3", "statistic": st, **est(0.1),
                             "n_fields": 1, "n_units": 1, "n_defined": 1}
                            for sub in ("change_rich", "latest_origin") for st in ("direct_cosine", "partial_residual")],
                "contrasts": [{"split": "test", "entry": next(iter(MODELS)), "contrast": "A3-A0", "statistic": st, **est(-0.05),
                               "n_fields": 3} for st in ("direct_cosine", "partial_residual")]},
            "search_evidence": {"window_months": 6, "rows": [
                {"entry": "m-open", "condition": "A1", "calls": 24, "units": 12, "returned_slots": 24, "recent_slots": 20,
                 "recent_share": 0.833333, "spearman_recent": 0.4, "spearman_units": 12, "spearman_future": 0.25,
                 "spearman_future_units": 12, "called_units": 12, "calls_per_unit_mean": 2.0, "calls_per_unit_max": 2},
                {"entry": "m-open", "condition": "A3", "calls": 36, "units": 12, "returned_slots": 36, "recent_slots": 18,
                 "recent_share": 0.5, "spearman_recent": None, "spearman_units": 0, "spearman_future": -0.1,
                 "spearman_future_units": 12, "called_units": 12, "calls_per_unit_mean": 3.0, "calls_per_unit_max": 3}]},
            "policy_sensitivity": {"track": "all_origin", "rows": [
                {"split": "test", "entry": "ewma", "kind": "baseline", "condition": "BASE", "metric": "spearman",
                 "estimates": {"canonical": 0.5, "split": 0.49, "single": 0.52, "flip": 0.47}, "max_change": 0.03}],
                "orderings": [{"split": "test", "entry": "m-open", "conditions": "A0 A1 A3", "canonical_order": "A1 > A3 > A0",
                               "n_policies": 4, "order_stable": 3, "changed_policies": "flip", "max_change": 0.04}],
                "contrast_signs": [{"split": "test", "entry": "m-open", "contrast": "A1-A0", "metric": "spearman",
                                    "estimates": {"canonical": 0.1, "split": 0.09, "single": 0.12, "flip": 0.02},
                                    "signs": {"canonical": "+", "split": "+", "single": "+", "flip": "+"}, "sign_kept": True}]},
            "unit_provenance": {"keys": ["response_model", "attempts", "unit_attempt", "usage", "max_output_tokens"], "rows": [
                {"entry": "m-open", "file": "predictions", "units": 27, "with_response_model": 27, "response_models": "open-7b (27)",
                 "with_attempts": 27, "attempts_max": 2, "retried": 1, "unit_attempt_max": 1, "rerun": 0, "with_usage": 27,
                 "input_tokens": 5400, "output_tokens": 810, "reasoning_tokens": None, "max_output_tokens": "1600 (27)"}]},
        }
        (out / "diagnostics.json").write_text(json.dumps(diag, indent=2) + "\n")
    if with_replay:
        replay = {"schema_version": 1, "manifest_sha256": manifest_sha256, "ok": False, "calls": 60, "reproduced": 59, "failed": 1,
                  "models": [{"model_id": "m-open", "calls": 60, "reproduced": 59, "failed": 1, "conditions": [
                      {"condition": "A1", "calls": 24, "reproduced": 24, "failed": 0, "errors_recorded": 0, "first_differences": []},
                      {"condition": "A3", "calls": 36, "reproduced": 35, "failed": 1, "errors_recorded": 0,
                       "first_differences": [{"line": 7, "field_id": "f-alpha", "origin": "2025-01-01", "call_index": 0}]}]}]}
        (out / "replay.json").write_text(json.dumps(replay, indent=2) + "\n")
    return out
