"""The committed sample, recomputed from its raw files (issue 15's done-when).

``rapgen score`` runs once on the committed sample; this module then rebuilds,
from the archive's own files and the written specs alone, three of its
outputs and compares every number to 1e-9:

* the replay cells (INTERVENTIONS.md §1, the ``analysis = replay`` rows of
  ``interventions/cells.csv``), subsets ``all`` and ``change_rich``;
* the matched-call signature (§5, ``interventions/signature.csv``);
* the posterior-predictive ceiling (§6, ``diagnostics.json``
  ``reliability.posterior.<split>``), with the per-episode future-rank
  repeatability and the change-rich test redrawn from SCORING.md §6's protocol.

Point estimates, both intervals (block and field-clustered, SCORING.md §5's
draws) and the counts. The recomputation imports nothing of ``rapgen.scores``
or ``rapgen.archive``: the raw JSONL and JSON are read with :mod:`json`, the
parquet tables with pyarrow, and the arithmetic is numpy and scipy.

First, the prompt hashes every readout and exact-history record carries are
the kit's: what ``rapgen prompt … --readout`` and ``rapgen prompt … O1|O2|O3``
print as ``template_sha256``.
"""

from __future__ import annotations

import csv
import json
import math
from collections import defaultdict
from datetime import date
from functools import cached_property
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner
from scipy.stats import rankdata

from rapgen.cli import cli

REPO = Path(__file__).resolve().parent.parent
ARCHIVE = REPO / "archive"
SLOTS = [f"D{i}" for i in range(8)]
TOL = 1e-9
CONSTANT = 1e-12  # SCORING.md §2: "constant" means max − min ≤ 1e-12
JSD_TIE = 1e-12  # a null JSD equal to the observed one up to summation order counts as ≥
pytestmark = pytest.mark.skipif(not (ARCHIVE / "models").is_dir(), reason="no committed archive in this checkout")


# ---------------------------------------------------------------- reading the raw files
def _jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()] if path.is_file() else []


def _model_lines(folder: Path, name: str) -> list[dict]:
    """A model's lines of ``name``: the folder's file plus the later origins' files."""
    out = _jsonl(folder / name)
    for sub in sorted((folder / "origins").glob("*")) if (folder / "origins").is_dir() else ():
        out += _jsonl(sub / name)
    return out


def add_months(d: date, months: int) -> date:
    k = d.year * 12 + d.month - 1 + months
    return date(k // 12, k % 12 + 1, 1)


def _union(root: Path, name: str) -> list[Path]:
    """RELEASES.md: the snapshot is ``benchmark/<name>`` plus every ingested window's."""
    return [root / "benchmark" / name] + sorted((root / "benchmark/windows").glob(f"*/{name}"))


def _byte_sorted(ids) -> list[str]:
    return sorted(set(ids), key=lambda s: s.encode("utf-8"))


class Raw:
    """The committed sample as plain Python and numpy, read straight from its files."""

    def __init__(self, root: Path):
        self.root = root
        self.ledger = json.loads((root / "provenance/FINAL_PARAMETER_LEDGER_V1.json").read_text())
        fields = _jsonl(root / "benchmark/fields.jsonl")
        self.field_ids = _byte_sorted(f["field_id"] for f in fields)
        by_id = {f["field_id"]: f for f in fields}
        self.split = {f: by_id[f]["split"] for f in self.field_ids}
        self.block = {f: by_id[f]["block_id"] for f in self.field_ids}
        latest = max(root.glob("releases/[0-9][0-9][0-9][0-9].json"), key=lambda p: int(p.stem))
        self.origins = [date.fromisoformat(o) for o in json.loads(latest.read_text())["resolved_origins"]]
        self.window = int(json.loads((root / "benchmark/origins.json").read_text())["window_months"])
        self.first_submitted = {}
        for path in _union(root, "papers.parquet"):
            papers = pq.read_table(path, columns=["arxiv_id", "first_submitted"]).to_pydict()
            self.first_submitted.update(zip(papers["arxiv_id"], papers["first_submitted"]))
        rows: dict[str, list] = defaultdict(list)
        for path in _union(root, "assignments.parquet"):
            for key, values in pq.read_table(path, columns=["arxiv_id", "field_id", "first_submitted", "primary"]).to_pydict().items():
                rows[key] += values
        self.ledger_rows: dict[str, list[tuple[date, int]]] = defaultdict(list)
        self.labels: dict[str, dict[str, int]] = defaultdict(dict)  # field -> member -> counted primary slot
        for pid, fid, day, primary in zip(rows["arxiv_id"], rows["field_id"], rows["first_submitted"], rows["primary"]):
            if primary in SLOTS:  # "other" never counts
                self.ledger_rows[fid].append((day, SLOTS.index(primary)))
                self.labels[fid][pid] = SLOTS.index(primary)
        self.models = sorted(p.name for p in (root / "models").iterdir() if (p / "model.json").is_file())

    def counts(self, fid: str, lo: date, hi: date) -> np.ndarray:
        out = np.zeros(8)
        for day, slot in self.ledger_rows[fid]:
            if lo <= day < hi:
                out[slot] += 1
        return out

    def window_counts(self, offset: int) -> np.ndarray:
        """(F, O, 8) canonical counts of the window starting ``offset`` windows after each origin."""
        w = self.window
        return np.array([[self.counts(f, add_months(o, offset * w), add_months(o, (offset + 1) * w)) for o in self.origins]
                         for f in self.field_ids])

    @cached_property
    def target_counts(self) -> np.ndarray:
        return self.window_counts(0)

    @cached_property
    def recent_counts(self) -> np.ndarray:
        return self.window_counts(-1)

    @cached_property
    def y(self) -> np.ndarray:
        return composition(self.target_counts)

    @cached_property
    def x(self) -> np.ndarray:
        return composition(self.recent_counts)

    @cached_property
    def ewma(self) -> np.ndarray:
        """SCORING.md §3: w1·h1 + w2·h2 + w3·h3, rounded to 12 decimals, clipped, renormalised."""
        w1, w2, w3 = self.ledger["ewma_weights"]
        h = [composition(self.window_counts(k)) for k in (-3, -2, -1)]
        v = np.clip(np.round(w1 * h[0] + w2 * h[1] + w3 * h[2], 12), 0, None)
        total = v.sum(axis=-1, keepdims=True)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(total > 0, v / np.where(total > 0, total, 1), 1 / 8)  # NaN rows stay NaN

    def grid(self, records: list[dict]) -> tuple[np.ndarray, np.ndarray]:
        """(F, O, 8) renormalised valid weights (NaN otherwise) and (F, O) presence of ``records``."""
        fi, oi = {f: i for i, f in enumerate(self.field_ids)}, {o.isoformat(): j for j, o in enumerate(self.origins)}
        p, present = np.full((len(fi), len(oi), 8), np.nan), np.zeros((len(fi), len(oi)), dtype=bool)
        for r in records:
            if r["origin"] not in oi:
                continue
            i, j = fi[r["field_id"]], oi[r["origin"]]
            present[i, j] = True
            shares = valid_shares(r)
            if shares is not None:
                p[i, j] = shares
        return p, present


def composition(counts: np.ndarray) -> np.ndarray:
    total = counts.sum(axis=-1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(total > 0, counts / np.where(total > 0, total, 1), np.nan)


def valid_shares(record: dict) -> np.ndarray | None:
    """SUBMISSION.md: weights D0–D7, finite, ≥ 0, a positive total; renormalised."""
    w = record.get("weights")
    if record.get("status") == "invalid" or not isinstance(w, dict) or sorted(w) != SLOTS:
        return None
    v = np.array([float(w[s]) for s in SLOTS])
    if not np.isfinite(v).all() or (v < 0).any() or v.sum() <= 0:
        return None
    return v / v.sum()


# ---------------------------------------------------------------- the records' prompt hashes are the kit's
def _shown(*args: str) -> dict:
    result = CliRunner().invoke(cli, ["prompt", "--root", str(REPO), "--json", *args])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def test_every_readout_and_oracle_record_carries_the_kits_template_hash():
    from rapgen.kit import oracle_template_sha256, readout_template_sha256

    readout, oracle = readout_template_sha256(), oracle_template_sha256()
    assert readout != oracle
    seen = defaultdict(int)
    for folder in sorted((ARCHIVE / "models").iterdir()):
        for name, want in (("replays.jsonl", readout), ("oracle.jsonl", oracle)):
            for number, record in enumerate(_jsonl(folder / name), 1):
                assert record["prompt_sha256"] == want, f"{folder.name}/{name}:{number}"
                seen[name] += 1
    assert seen["replays.jsonl"] >= 3 * 680 and seen["oracle.jsonl"] >= 3 * 255  # three diagnostic models


@pytest.mark.parametrize("model", ["ref-recent-hits", "ref-history-trend", "ref-sample-classify"])
def test_rapgen_prompt_prints_the_hashes_the_sample_records_carry(model):
    """For one episode, every readout cell and O unit: ``rapgen prompt``'s template_sha256 is the
    record's prompt_sha256, and its input hash the record's evidence or block hash.
    (The kit prompts on release 1's origins only; the episode is one of them.)"""
    folder = ARCHIVE / "models" / model
    field, origin = "dialogue", "2023-07-01"
    readouts = [r for r in _jsonl(folder / "replays.jsonl") if (r["field_id"], r["origin"]) == (field, origin)]
    assert len(readouts) == 8
    for r in readouts:
        shown = _shown(field, origin, r["source_condition"], "--readout", r["readout"], "--budget", r["budget"], "--model", model)
        assert (shown["template_sha256"], shown["evidence_sha256"]) == (r["prompt_sha256"], r["evidence_sha256"]), r
        assert shown["calls_used"] == r["calls_used"]
    units = [u for u in _jsonl(folder / "oracle.jsonl") if (u["field_id"], u["origin"]) == (field, origin)]
    assert sorted(u["condition"] for u in units) == ["O1", "O2", "O3"]
    for u in units:
        shown = _shown(field, origin, u["condition"])
        assert (shown["template_sha256"], shown["input_sha256"]) == (u["prompt_sha256"], u["input_sha256"]), u


# ---------------------------------------------------------------- SCORING.md §2 metrics, one unit at a time
def spearman(a, b) -> float:
    if a is None or b is None or np.isnan(a).any() or np.isnan(b).any():
        return math.nan
    if np.ptp(a) <= CONSTANT:
        return 0.0
    if np.ptp(b) <= CONSTANT:
        return math.nan
    return float(np.corrcoef(rankdata(a), rankdata(b))[0, 1])


def tv(a, b) -> float:
    return 0.5 * float(np.abs(np.asarray(a) - np.asarray(b)).sum())


def jsd(a, b) -> float:
    a, b = np.asarray(a, float), np.asarray(b, float)
    m = (a + b) / 2

    def kl(p):
        keep = p > 0
        return float((p[keep] * np.log(p[keep] / m[keep])).sum())

    return 0.5 * kl(a) + 0.5 * kl(b)


METRICS = {"spearman": spearman, "tv": tv, "jsd": jsd}


def unit_grid(metric, p: np.ndarray, y: np.ndarray) -> np.ndarray:
    out = np.full(p.shape[:2], np.nan)
    for i, j in np.ndindex(*p.shape[:2]):
        if not (np.isnan(p[i, j]).any() or np.isnan(y[i, j]).any()):
            out[i, j] = metric(p[i, j], y[i, j])
    return out


def field_means(values: np.ndarray) -> np.ndarray:
    """Per field, the mean of the defined values over origins (NaN if none)."""
    out = np.full(values.shape[0], np.nan)
    for i, row in enumerate(values):
        ok = row[~np.isnan(row)]
        if ok.size:
            out[i] = ok.mean()
    return out


# ---------------------------------------------------------------- SCORING.md §5 draws
class Draws:
    """One split's count matrices: a fresh ``default_rng(seed)`` per unit kind, units in byte order."""

    def __init__(self, raw: Raw, split: str):
        boot = raw.ledger["bootstrap"]
        self.level = float(boot["level"])
        self.columns = [i for i, f in enumerate(raw.field_ids) if split == "all" or raw.split[f] == split]
        self.unit_of, self.C = {}, {}
        for kind, key in (("block", raw.block), ("field", {f: f for f in raw.field_ids})):
            units = _byte_sorted(key[raw.field_ids[i]] for i in self.columns)
            draws = np.random.default_rng(int(boot["seed"])).integers(0, len(units), size=(int(boot["resamples"]), len(units)))
            self.C[kind] = np.stack([np.bincount(row, minlength=len(units)) for row in draws]).astype(float)
            self.unit_of[kind] = np.array([units.index(key[raw.field_ids[i]]) for i in self.columns])

    def replicates(self, field_values: np.ndarray, kind: str) -> np.ndarray:
        v = np.asarray(field_values, float)[self.columns]
        ok = ~np.isnan(v)
        K = self.C[kind].shape[1]
        S = np.bincount(self.unit_of[kind][ok], weights=v[ok], minlength=K)
        N = np.bincount(self.unit_of[kind][ok], minlength=K).astype(float)
        num, den = self.C[kind] @ S, self.C[kind] @ N
        return np.where(den > 0, num / np.where(den > 0, den, 1), np.nan)

    def interval(self, reps: np.ndarray) -> tuple[float, float]:
        ok = reps[~np.isnan(reps)]
        if not ok.size:
            return math.nan, math.nan
        low, high = np.percentile(ok, [100 * (1 - self.level) / 2, 100 * (1 + self.level) / 2])
        return float(low), float(high)

    def row(self, field_values: np.ndarray) -> dict:
        """INTERVENTIONS.md's interval row of one statistic."""
        v = np.asarray(field_values, float)[self.columns]
        ok = v[~np.isnan(v)]
        out = {"estimate": float(ok.mean()) if ok.size else math.nan, "n_fields": int(ok.size)}
        for prefix, kind in (("ci", "block"), ("fc", "field")):
            out[f"{prefix}_low"], out[f"{prefix}_high"] = self.interval(self.replicates(field_values, kind))
        return out


# ---------------------------------------------------------------- the score run and its files
@pytest.fixture(scope="module")
def raw() -> Raw:
    return Raw(ARCHIVE)


@pytest.fixture(scope="module")
def draws(raw: Raw) -> dict[str, Draws]:
    return {s: Draws(raw, s) for s in ("dev", "test", "all")}


@pytest.fixture(scope="module")
def scored(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("sample-scores")
    result = CliRunner().invoke(cli, ["score", "--root", str(REPO), "--out", str(out)])
    assert result.exit_code == 0, result.output
    return out


def _csv(path: Path) -> list[dict]:
    with open(path, newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def _num(cell) -> float:
    return math.nan if cell in ("", None) else float(cell)


def assert_row(got: dict, want: dict, where: str) -> None:
    for column, value in want.items():
        g = _num(got[column])
        assert (math.isnan(g) and math.isnan(value)) or abs(g - value) <= TOL, f"{where} {column}: scored {g}, recomputed {value}"


# ---------------------------------------------------------------- SCORING.md §6: the change-rich test and repeatability
def _rank_rows(a: np.ndarray) -> np.ndarray:
    return rankdata(a, axis=-1)


def spearman_rows(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """§2 spearman of each row pair (0 when a row of ``a`` is constant, NaN when then ``b``'s is)."""
    ra, rb = _rank_rows(a), _rank_rows(b)
    ra, rb = ra - ra.mean(axis=-1, keepdims=True), rb - rb.mean(axis=-1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        r = (ra * rb).sum(axis=-1) / np.sqrt((ra * ra).sum(axis=-1) * (rb * rb).sum(axis=-1))
    r = np.where(np.ptp(b, axis=-1) <= CONSTANT, np.nan, r)
    return np.where(np.ptp(a, axis=-1) <= CONSTANT, 0.0, r)


def jsd_rows(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    m = (a + b) / 2
    with np.errstate(invalid="ignore", divide="ignore"):
        ka = np.where(a > 0, a * np.log(np.where(a > 0, a, 1) / np.where(a > 0, m, 1)), 0.0).sum(axis=-1)
        kb = np.where(b > 0, b * np.log(np.where(b > 0, b, 1) / np.where(b > 0, m, 1)), 0.0).sum(axis=-1)
    return 0.5 * ka + 0.5 * kb


@pytest.fixture(scope="module")
def episodes(raw: Raw) -> dict[str, np.ndarray]:
    """Per episode (F, O): the change test's p-value, the future-rank repeatability and the
    change-rich flag, redrawn: one ``default_rng(seed)``, episodes by (field_id, origin); per
    defined episode Multinomial(Σr, π) and Multinomial(Σf, π) null draws, θ ~ Dirichlet(f + ½),
    then two replicate sets Multinomial(Σf, θ)."""
    par = raw.ledger["change_rich"]
    D, rng = int(par["null_draws"]), np.random.default_rng(int(par["seed"]))
    shape = (len(raw.field_ids), len(raw.origins))
    p_value, repeat = np.full(shape, np.nan), np.full(shape, np.nan)
    for i, j in np.ndindex(*shape):  # field_ids are byte-sorted, origins ascending
        r, f = raw.recent_counts[i, j].astype(np.int64), raw.target_counts[i, j].astype(np.int64)
        nr, nf = int(r.sum()), int(f.sum())
        if nr == 0 or nf == 0:
            continue
        pi = (r + f + 0.5) / (nr + nf + 4.0)
        null_r, null_f = rng.multinomial(nr, pi, size=D), rng.multinomial(nf, pi, size=D)
        theta = rng.dirichlet(f + 0.5, size=D)
        a, b = rng.multinomial(nf, theta), rng.multinomial(nf, theta)
        observed = jsd(r / nr, f / nf)
        p_value[i, j] = (1 + np.count_nonzero(jsd_rows(null_r / nr, null_f / nf) >= observed - JSD_TIE)) / (1 + D)
        rho = spearman_rows(a.astype(float), b.astype(float))
        if (~np.isnan(rho)).any():
            repeat[i, j] = float(np.nanmean(rho))
    with np.errstate(invalid="ignore"):
        rich = (p_value <= float(par["p_max"])) & (repeat >= float(par["repeatability_min"]))
    return {"p_value": p_value, "repeatability": repeat, "change_rich": rich}


def test_the_redrawn_episodes_match_diagnostics_json(raw, episodes, scored):
    """The recomputation's own footing: the change-rich list of diagnostics.json, episode by episode."""
    listed = json.loads((scored / "diagnostics.json").read_text())["change_rich"]["episodes"]
    fi, oi = {f: i for i, f in enumerate(raw.field_ids)}, {o.isoformat(): j for j, o in enumerate(raw.origins)}
    assert len(listed) == len(fi) * len(oi)
    for ep in listed:
        i, j = fi[ep["field_id"]], oi[ep["origin"]]
        for key in ("p_value", "repeatability"):
            want = episodes[key][i, j]
            assert (ep[key] is None and math.isnan(want)) or abs(ep[key] - want) <= TOL, (ep, key, want)
        assert ep["change_rich"] == bool(episodes["change_rich"][i, j]), ep
    assert 0 < episodes["change_rich"].sum() < episodes["change_rich"].size  # both subsets are non-trivial


# ---------------------------------------------------------------- (a) the replay cells
def _cell(record: dict) -> str:
    x = "F" if record["source_condition"] == "A3" else "S"
    return f"{x}->{'F' if record['readout'] == 'forecast' else 'S'}:{record['budget']}"


def recomputed_cells(raw: Raw, draws: dict[str, Draws], rich: np.ndarray) -> dict[tuple, dict]:
    """(split, entry, subset, cell, metric) -> the interval row and unit counts of cells.csv."""
    out: dict[tuple, dict] = {}
    for model in raw.models:
        by_cell: dict[str, list[dict]] = defaultdict(list)
        for record in _jsonl(raw.root / "models" / model / "replays.jsonl"):
            by_cell[_cell(record)].append(record)
        for cell, records in by_cell.items():
            p, present = raw.grid(records)
            valid = present & ~np.isnan(p).any(axis=-1)
            values = {name: unit_grid(fn, p, raw.y) for name, fn in METRICS.items()}
            for subset, mask in (("all", np.ones_like(rich)), ("change_rich", rich)):
                for name, grid in values.items():
                    fv = field_means(np.where(mask, grid, np.nan))
                    for split in ("dev", "test"):
                        d = draws[split]
                        counts = {"n_units": (present & mask)[d.columns].sum(), "n_valid": (valid & mask)[d.columns].sum(),
                                  "n_invalid": (present & ~valid & mask)[d.columns].sum()}
                        out[(split, model, subset, cell, name)] = {**d.row(fv), **{k: float(v) for k, v in counts.items()}}
    return out


def test_replay_cells_agree_with_a_recomputation_from_the_raw_files(raw, draws, episodes, scored):
    rows = {(r["split"], r["entry"], r["subset"], r["cell"], r["metric"]): r
            for r in _csv(scored / "interventions/cells.csv") if r["analysis"] == "replay"}
    assert all(r["track"] == "all_origin" for r in rows.values())
    mine = recomputed_cells(raw, draws, episodes["change_rich"])
    assert len(mine) == 3 * 8 * 3 * 2 * 2  # three diagnostic models, eight cells, three metrics, two subsets, two splits
    assert set(rows) == set(mine)
    for key, want in mine.items():
        assert_row(rows[key], want, str(key))


# ---------------------------------------------------------------- (b) the matched-call signature
def malformed(call: dict) -> bool:
    """SEARCH.md's malformed call: empty query, an unknown sort, a bad date, date_from ≥ date_to."""
    query, sort = call.get("query"), call.get("sort")
    if not isinstance(query, str) or not query.strip() or sort not in ("relevance", "date"):
        return True
    bounds = []
    for key in ("date_from", "date_to"):
        value = call.get(key)
        if value is None:
            bounds.append(None)
            continue
        try:
            bounds.append(date.fromisoformat(value))
        except (TypeError, ValueError):
            return True
    return None not in bounds and bounds[0] >= bounds[1]


def side(calls: list[dict], origin: date, raw: Raw, fid: str, fi: int, oi: int) -> tuple[dict, set]:
    """INTERVENTIONS.md §5's side metrics of the kept calls, and their distinct ids."""
    k, start = len(calls), add_months(origin, -raw.window)
    ok = [c for c in calls if not malformed(c)]
    slots = [pid for c in ok for pid in c["returned_ids"]]
    ids = set(slots)
    ratio = (lambda n, d: n / d if d else math.nan)
    out = {
        "recent_share": ratio(sum(start <= raw.first_submitted[pid] < origin for pid in slots), len(slots)),
        "distinct": float(len(ids)) if slots else math.nan,
        "duplicate_share": 1 - len(ids) / len(slots) if slots else math.nan,
        "sort_date": ratio(sum(c["sort"] == "date" for c in ok), k),
        "bounded": ratio(sum(c["date_from"] is not None or c["date_to"] is not None for c in ok), k),
        "recent_bounded": ratio(sum(c["date_from"] is not None and date.fromisoformat(c["date_from"]) >= start for c in ok), k),
    }
    c = np.zeros(8)
    for pid in ids:
        if pid in raw.labels[fid]:
            c[raw.labels[fid][pid]] += 1
    has = c.sum() > 0
    out["align_recent"] = spearman(c, raw.x[fi, oi]) if has else math.nan
    out["align_future"] = spearman(c, raw.y[fi, oi]) if has else math.nan
    return out, ids


def signature_grids(raw: Raw, model: str) -> dict[str, dict[tuple[str, str], np.ndarray]]:
    """regime -> (side, metric) -> (F, O) values over the model's pairs (NaN elsewhere)."""
    folder = raw.root / "models" / model
    units = {(u["field_id"], u["origin"], u["condition"]) for u in _model_lines(folder, "predictions.jsonl")}
    calls: dict[tuple, list[dict]] = defaultdict(list)
    for c in _model_lines(folder, "traces.jsonl"):
        calls[(c["field_id"], c["origin"], c["condition"])].append(c)
    out: dict[str, dict] = {}
    for regime, fc, sc in (("expanding", "A3", "A4"), ("fixed", "A1", "A2")):
        grids: dict[tuple[str, str], np.ndarray] = defaultdict(lambda: np.full((len(raw.field_ids), len(raw.origins)), np.nan))
        for fi, fid in enumerate(raw.field_ids):
            for oi, origin in enumerate(raw.origins):
                if (fid, origin.isoformat(), fc) not in units or (fid, origin.isoformat(), sc) not in units:
                    continue
                f_calls, s_calls = (sorted(calls[(fid, origin.isoformat(), c)], key=lambda c: c["call_index"]) for c in (fc, sc))
                k = min(len(f_calls), len(s_calls))
                (fv, f_ids), (sv, s_ids) = (side(c[:k], origin, raw, fid, fi, oi) for c in (f_calls, s_calls))
                pair = {"jaccard": len(f_ids & s_ids) / len(f_ids | s_ids) if f_ids | s_ids else math.nan, "matched_calls": float(k)}
                for name, values in (("forecast", fv), ("state", sv), ("delta", {m: sv[m] - fv[m] for m in fv}), ("pair", pair)):
                    for metric, value in values.items():
                        grids[(name, metric)][fi, oi] = value
                grids[("", "present")][fi, oi] = 1.0
        if grids:
            out[regime] = dict(grids)
    return out


def test_matched_call_signature_agrees_with_a_recomputation_from_the_raw_files(raw, draws, scored):
    rows = {(r["split"], r["entry"], r["regime"], r["side"], r["metric"]): r for r in _csv(scored / "interventions/signature.csv")}
    mine: dict[tuple, dict] = {}
    for model in raw.models:
        for regime, grids in signature_grids(raw, model).items():
            present = ~np.isnan(grids.pop(("", "present")))
            for (name, metric), grid in grids.items():
                fv = field_means(grid)
                for split in ("dev", "test"):
                    d = draws[split]
                    mine[(split, model, regime, name, metric)] = {**d.row(fv), "n_units": float(present[d.columns].sum())}
    assert {k[2] for k in mine} == {"expanding", "fixed"} and len({k[1] for k in mine}) == 3  # the three Search models
    assert set(rows) == set(mine)
    for key, want in mine.items():
        assert_row(rows[key], want, str(key))


# ---------------------------------------------------------------- (c) the posterior-predictive ceiling
def test_posterior_ceiling_agrees_with_a_recomputation_from_the_raw_files(raw, draws, episodes, scored):
    posterior = json.loads((scored / "diagnostics.json").read_text())["reliability"]["posterior"]
    assert set(posterior) == {"dev", "test", "all"}
    repeat = field_means(episodes["repeatability"])
    ewma = field_means(unit_grid(spearman, raw.ewma, raw.y))
    sqrt = (lambda v: math.sqrt(v) if v >= 0 else math.nan)
    for split, d in draws.items():
        row = d.row(repeat)
        want = {**row, "ceiling": sqrt(row["estimate"]), "ceiling_ci_low": sqrt(row["ci_low"]), "ceiling_ci_high": sqrt(row["ci_high"])}
        want["ewma_gap"] = want["ceiling"] - d.row(ewma)["estimate"]
        for prefix, kind in (("ci", "block"), ("fc", "field")):
            with np.errstate(invalid="ignore"):
                gap = np.sqrt(d.replicates(repeat, kind)) - d.replicates(ewma, kind)
            want[f"ewma_gap_{prefix}_low"], want[f"ewma_gap_{prefix}_high"] = d.interval(gap)
        both = ~np.isnan(repeat) & ~np.isnan(ewma)
        want["ewma_gap_n_fields"] = float(both[d.columns].sum())
        want["n_episodes"] = float(len(d.columns) * len(raw.origins))
        want["n_defined"] = float((~np.isnan(episodes["repeatability"][d.columns])).sum())
        assert set(posterior[split]) == set(want)
        assert_row(posterior[split], want, f"posterior.{split}")
    assert posterior["all"]["n_fields"] == len(raw.field_ids)
