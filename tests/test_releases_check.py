"""The pure history checker on plain data: a valid three-release history, then one tamper per case.

Digests are stand-ins (sha256 of a label); the checker sees only lines, records and spans.
"""

from __future__ import annotations

import hashlib
from dataclasses import replace
from datetime import date

import pytest

from rapgen.archive.history.check import HistoryInput, WindowSpan, check_history, first_release
from rapgen.archive.history.records import (
    Commitment,
    OpenOrigin,
    ReleaseKind,
    ReleaseRecord,
    Replaced,
    commitment_path,
    manifest_path,
    record_path,
    reveal_path,
    search_path,
    superseded_path,
    window_path,
)
from rapgen.archive.records import Category, ShardManifest
from rapgen.archive.sums import format_sums

O1, O2, O3 = date(2023, 1, 1), date(2023, 7, 1), date(2024, 1, 1)
P = hashlib.sha256(b"predictions").hexdigest()
ARCHIVE_JSON = "archive/ARCHIVE.json"
MODEL_JSON = "archive/models/m/model.json"
COMMIT = commitment_path(O2, "m")
REVEAL = reveal_path("m", O2, "predictions.jsonl")


def _h(label: str) -> str:
    return hashlib.sha256(label.encode()).hexdigest()


R1 = ReleaseRecord(1, date(2023, 7, 1), ReleaseKind.INITIAL, (O1,), O1, OpenOrigin(O2, date(2023, 7, 15)), None)
R2 = ReleaseRecord(2, date(2023, 7, 15), ReleaseKind.MODELS, (O1,), O1, OpenOrigin(O2, date(2023, 7, 15)), "")
R3 = ReleaseRecord(3, date(2024, 1, 5), ReleaseKind.ROLL, (O1, O2), O2, OpenOrigin(O3, date(2024, 1, 15)), "")
ADDS = [
    {ARCHIVE_JSON: _h("archive"), "archive/benchmark/origins.json": _h("origins"),
     search_path(O2, "manifest_fixed.jsonl"): _h("f2"), search_path(O2, "manifest_expanding.jsonl"): _h("e2")},
    {MODEL_JSON: _h("model"), COMMIT: _h("commitment")},
    {window_path(O2, "papers.parquet"): _h("wp"), window_path(O2, "assignments.parquet"): _h("wa"),
     search_path(O3, "manifest_fixed.jsonl"): _h("f3"), search_path(O3, "manifest_expanding.jsonl"): _h("e3")},
]


def build(records=(R1, R2, R3), adds=ADDS, unreleased=None, **extra) -> HistoryInput:
    """A consistent history: manifest k = manifest k-1 + adds + the two release files; root = latest + its manifest."""
    root: dict[str, str] = {}
    manifests: dict[int, dict[str, str]] = {}
    previous: dict[str, str] = {}
    recs = {}
    for record, add in zip(records, adds):
        k = record.release
        manifest = dict(previous, **add)
        if k > 1:
            manifest[manifest_path(k - 1)] = root[manifest_path(k - 1)]
            record = replace(record, parent_sha256=root[manifest_path(k - 1)])
        manifest[record_path(k)] = _h(repr(record))
        recs[k] = record
        manifests[k] = manifest
        root = dict(manifest)
        root[manifest_path(k)] = hashlib.sha256(format_sums(manifest)).hexdigest()
        previous = manifest
    root.update(unreleased if unreleased is not None else {REVEAL: P})
    fields = dict(
        root=root, records=recs, manifests=manifests, origins=(O1,), strict_origin=O1, window_months=6, format_version=2,
        windows=[WindowSpan(window_path(O2, "papers.parquet"), 10, date(2023, 7, 3), date(2023, 12, 30))],
        shards={O3: [ShardManifest("f", O3, "fixed", O2, O3, 4, date(2023, 7, 3), date(2023, 12, 30), _h("ids"))]},
        commitments={COMMIT: Commitment("m", O2, P, None, "0.1")},
    )
    fields.update(extra)
    return HistoryInput(**fields)


def test_the_valid_history_has_no_finding():
    assert check_history(build()) == []
    assert first_release(build(), COMMIT) == 2 and first_release(build(), REVEAL) is None


def test_an_unrevealed_commitment_is_no_finding():
    assert check_history(build(unreleased={})) == []


def _reseal_manifest(inp: HistoryInput, k: int, manifest: dict) -> HistoryInput:
    """Edit release k's manifest and re-seal the root, as a careless maintainer would."""
    manifests = dict(inp.manifests)
    manifests[k] = manifest
    root = dict(inp.root)
    root[manifest_path(k)] = hashlib.sha256(format_sums(manifest)).hexdigest()
    if k in manifests and manifest_path(k) in manifests.get(k + 1, {}):
        pass  # the later manifest still lists the old digest: that is what the chain catches
    return replace(inp, manifests=manifests, root=root)


def _edit_old_manifest(inp):
    return _reseal_manifest(inp, 1, {**inp.manifests[1], "archive/benchmark/origins.json": _h("edited")})


def _edit_frozen_file(inp):
    return replace(inp, root={**inp.root, ARCHIVE_JSON: _h("edited archive")})


def _wrong_parent(inp):
    return replace(inp, records={**inp.records, 3: replace(inp.records[3], parent_sha256="0" * 64)})


def _remove_release(inp):
    root = {p: d for p, d in inp.root.items() if p not in (record_path(2), manifest_path(2))}
    records = {k: r for k, r in inp.records.items() if k != 2}
    manifests = {k: m for k, m in inp.manifests.items() if k != 2}
    return replace(inp, root=root, records=records, manifests=manifests)


def _decreasing_date(inp):
    return replace(inp, records={**inp.records, 3: replace(inp.records[3], date=date(2023, 7, 14))})


def _drop_line(inp):
    m3 = dict(inp.manifests[3])
    del m3[MODEL_JSON]
    return replace(inp, manifests={**inp.manifests, 3: m3})


def _change_line(inp):
    return replace(inp, manifests={**inp.manifests, 3: {**inp.manifests[3], MODEL_JSON: _h("other model")}})


def _roll_adds_more(inp):
    extra = "archive/benchmark/fields.jsonl"
    return replace(inp, manifests={**inp.manifests, 3: {**inp.manifests[3], extra: _h("x")}}, root={**inp.root, extra: _h("x")})


def _roll_misses_window(inp):
    m3 = dict(inp.manifests[3])
    del m3[window_path(O2, "assignments.parquet")]
    return replace(inp, manifests={**inp.manifests, 3: m3})


def _unreleased_benchmark(inp):
    return replace(inp, root={**inp.root, "archive/benchmark/extra.jsonl": _h("x")})


def _reveal_differs(inp):
    return replace(inp, root={**inp.root, REVEAL: _h("other predictions")})


def _reveal_traces_not_committed(inp):
    return replace(inp, root={**inp.root, reveal_path("m", O2, "traces.jsonl"): _h("traces")})


def _window_rows_outside(inp):
    return replace(inp, windows=[WindowSpan(window_path(O2, "papers.parquet"), 10, date(2023, 6, 30), date(2023, 12, 30))])


def _open_shard_after_origin(inp):
    return replace(inp, shards={O3: [ShardManifest("f", O3, "fixed", O2, O3, 4, O2, O3, _h("ids"))]})


def _manifest_lists_itself(inp):
    return replace(inp, manifests={**inp.manifests, 2: {**inp.manifests[2], manifest_path(2): _h("self")}})


def _roll_skips_origin(inp):
    return replace(inp, records={**inp.records, 3: replace(inp.records[3], resolved_origins=(O1, O3), strict_origin=O3)})


def _models_release_resolves(inp):
    return replace(inp, records={**inp.records, 2: replace(inp.records[2], resolved_origins=(O1, O2), strict_origin=O2)})


def _format_version_1(inp):
    return replace(inp, format_version=1)


def _search_never_opened(inp):
    path = search_path(date(2025, 1, 1), "manifest_fixed.jsonl")
    return replace(inp, root={**inp.root, path: _h("x")})


def _commitment_never_opened(inp):
    path = commitment_path(O1, "m")
    return replace(inp, root={**inp.root, path: _h("c")}, commitments={**inp.commitments, path: Commitment("m", O1, P, None, "0.1")})


def _initial_origins_differ(inp):
    return replace(inp, origins=(O1, O2))


def _window_misnamed(inp):
    return replace(inp, root={**inp.root, "archive/benchmark/windows/2024-01-15/papers.parquet": _h("x")})


def _window_extra_file(inp):
    return replace(inp, root={**inp.root, "archive/benchmark/windows/2023-07-01/notes.txt": _h("x")})


def _stray_release_file(inp):
    return replace(inp, root={**inp.root, "archive/releases/latest.json": _h("x")})


# (mutation, path of the finding, its detail must contain)
TAMPERS = [
    (_edit_old_manifest, record_path(2), "release 2: parent_sha256 does not match releases/0001.SHA256SUMS"),
    (_edit_frozen_file, ARCHIVE_JSON, "release 1: SHA256SUMS gives a digest other than the release's"),
    (_wrong_parent, record_path(3), "release 3: parent_sha256 does not match"),
    (_remove_release, record_path(3), "release 3: follows release 1 but release 2 is missing"),
    (_decreasing_date, record_path(3), "release 3: dated 2023-07-14 before release 2 (2023-07-15)"),
    (_drop_line, manifest_path(3), f"release 3: drops {MODEL_JSON}, listed by release 2"),
    (_change_line, manifest_path(3), f"release 3: changes {MODEL_JSON}, frozen since release 2"),
    (_roll_adds_more, "archive/benchmark/fields.jsonl", "release 3: added by a roll release, which may not add it"),
    (_roll_misses_window, manifest_path(3), "release 3: a roll must add archive/benchmark/windows/2023-07-01/assignments.parquet"),
    (_unreleased_benchmark, "archive/benchmark/extra.jsonl", "release 3: listed by SHA256SUMS but by no release"),
    (_reveal_differs, REVEAL, "release 2: differs from its commitment archive/commitments/2023-07-01/m.json"),
    (_reveal_traces_not_committed, reveal_path("m", O2, "traces.jsonl"), "release 2: was not committed"),
    (_window_rows_outside, window_path(O2, "papers.parquet"), "release 3: rows dated 2023-06-30..2023-12-30 lie outside the window [2023-07-01, 2024-01-01)"),
    (_open_shard_after_origin, search_path(O3, "manifest_fixed.jsonl"), "release 3: f fixed: the open origin's shard holds a paper dated 2024-01-01"),
    (_manifest_lists_itself, manifest_path(2), "release 2: the release's manifest lists itself"),
    (_roll_skips_origin, record_path(3), "release 3: a roll appends exactly the open origin 2023-07-01"),
    (_models_release_resolves, record_path(2), "release 2: a models release keeps release 1's resolved origins"),
    (_format_version_1, ARCHIVE_JSON, "the archive has releases but 'format_version' is 1"),
    (_search_never_opened, "archive/search/2025-01-01", "search manifests for 2025-01-01, an origin no release opened"),
    (_commitment_never_opened, commitment_path(O1, "m"), "commitment for 2023-01-01, an origin no release opened"),
    (_window_misnamed, "archive/benchmark/windows/2024-01-15", "a window folder is named by its first day"),
    (_window_extra_file, "archive/benchmark/windows/2023-07-01/notes.txt", "release 3: unexpected file in a window"),
    (_stray_release_file, "archive/releases/latest.json", "unexpected file under archive/releases/"),
    (_initial_origins_differ, record_path(1), "release 1: resolved_origins [2023-01-01] differ from origins.json's"),
]


@pytest.mark.parametrize("mutate,path,fragment", TAMPERS, ids=[t[0].__name__.strip("_") for t in TAMPERS])
def test_each_tamper_is_an_invariant_finding_naming_the_release(mutate, path, fragment):
    findings = check_history(mutate(build()))
    assert findings, "tamper not detected"
    assert all(f.category is Category.INVARIANT for f in findings)
    hits = [f for f in findings if f.path == path and fragment in f.detail]
    assert hits, [(f.path, f.detail) for f in findings]


def _errata(superseded: bool) -> HistoryInput:
    r4 = ReleaseRecord(4, date(2024, 2, 1), ReleaseKind.ERRATA, (O1, O2), O2, OpenOrigin(O3, date(2024, 1, 15)), "",
                       (Replaced(MODEL_JSON, "wrong cut-off"),))
    add = {MODEL_JSON: _h("fixed model")}
    if superseded:
        add[superseded_path(4, MODEL_JSON)] = _h("model")
    return build(records=(R1, R2, R3, r4), adds=ADDS + [add])


def test_errata_keeps_the_old_bytes():
    assert check_history(_errata(True)) == []
    findings = check_history(_errata(False))
    assert [f.detail for f in findings] == [
        f"release 4: replaces {MODEL_JSON} but {superseded_path(4, MODEL_JSON)} does not hold its old bytes "
        f"(expected {_h('model')}, actual None)"
    ]


def test_a_format1_archive_holds_no_format2_file():
    root = {ARCHIVE_JSON: _h("a"), window_path(O2, "papers.parquet"): _h("w")}
    inp = HistoryInput(root, {}, {}, (O1,), O1, 6, 1)
    findings = check_history(inp)
    assert [(f.path, f.detail) for f in findings] == [
        (window_path(O2, "papers.parquet"), "release 1: a format-1 archive (one implicit release) cannot hold this format-2 file; cut releases first")
    ]
    assert check_history(HistoryInput({ARCHIVE_JSON: _h("a")}, {}, {}, (O1,), O1, 6, 1)) == []
    assert "no releases/ record" in check_history(HistoryInput({ARCHIVE_JSON: _h("a")}, {}, {}, (O1,), O1, 6, 2))[0].detail


# ---------------------------------------------------------------- Live entries and deadlines
from rapgen.archive.history.live import LiveStatus, judge_deadline, live_entries  # noqa: E402


def test_live_entries_receipts_and_status():
    inp = build()
    (entry,) = live_entries(inp)
    assert (entry.model_id, entry.origin, entry.sealed, entry.receipt, entry.receipt_date) == ("m", O2, True, 2, date(2023, 7, 15))
    assert entry.closes == date(2023, 7, 15) and entry.on_time  # received on the deadline day: on time
    assert entry.status is LiveStatus.REVEALED and entry.revealed_in is None  # revealed, not yet released
    unrevealed = build(unreleased={})
    assert live_entries(unrevealed)[0].status is LiveStatus.UNREVEALED  # O2 resolved by release 3
    as_of_2 = live_entries(inp, as_of=2)[0]
    assert as_of_2.status is LiveStatus.SEALED  # at release 2, O2 was still open


def test_a_late_commitment_is_listed_but_not_on_time():
    late = replace(R2, date=date(2023, 7, 16))
    (entry,) = live_entries(build(records=(R1, late, R3)))
    assert entry.receipt == 2 and not entry.on_time and entry.status is LiveStatus.REVEALED


def test_open_entries_and_pending_ones():
    open_path = reveal_path("n", O3, "predictions.jsonl")
    inp = build(unreleased={open_path: _h("open")})
    entries = {e.model_id: e for e in live_entries(inp)}
    assert entries["n"].status is LiveStatus.PENDING and entries["n"].receipt is None and not entries["n"].on_time
    assert not entries["n"].sealed and entries["n"].closes == date(2024, 1, 15)


@pytest.mark.parametrize("origin,now,expected", [
    (O3, date(2024, 1, 15), None),
    (O3, date(2024, 1, 16), "the deadline for origin 2024-01-01 was 2024-01-15; this submission is dated 2024-01-16"),
    (O2, date(2024, 1, 2), "origin 2023-07-01 is not open; release 3 has 2024-01-01 open"),
])
def test_judge_deadline(origin, now, expected):
    assert judge_deadline(build(), origin, now) == expected


def test_a_monthly_kind_resolves_the_key_its_target_names():
    """A kind's HistorySpec (KINDS.md §5): windows of one month whose target ends four months on
    (Ideas). The roll that ingests [2024-11, 2024-12) opens 2024-12 and resolves 2024-08,
    adding exactly the window, the opened key's file and the resolved key's file."""
    from rapgen.archive import HistorySpec

    spec = HistorySpec(1, 4, ("archive/benchmark/windows/{start}/papers.parquet", "archive/benchmark/windows/{start}/assignments.parquet"),
                       ("archive/benchmark/cutoffs/{key}/episodes.jsonl",), ("archive/benchmark/cutoffs/{key}/futures.jsonl",))
    m, nxt, resolved = date(2024, 11, 1), date(2024, 12, 1), date(2024, 8, 1)
    one = ReleaseRecord(1, date(2024, 11, 1), ReleaseKind.INITIAL, (date(2024, 7, 1),), date(2024, 7, 1), OpenOrigin(m, date(2024, 11, 15)), None)
    two = ReleaseRecord(2, date(2024, 12, 2), ReleaseKind.ROLL, (date(2024, 7, 1), resolved), resolved, OpenOrigin(nxt, date(2024, 12, 15)), "")
    adds = [{ARCHIVE_JSON: _h("archive")},
            {**{p: _h(p) for p in spec.window_paths(m)}, spec.opened_paths(nxt)[0]: _h("e"), spec.resolved_paths(resolved)[0]: _h("f")}]
    inp = build((one, two), adds, unreleased={}, origins=(date(2024, 7, 1),), strict_origin=date(2024, 7, 1), window_months=1,
                windows=[], shards={}, commitments={}, spec=spec)
    assert inp.roll_keys(m) == (resolved, nxt)
    assert check_history(inp) == []
    # with RAP's rhythm the same roll resolves the month it ingests, and a futures file is not its to add
    rap = replace(inp, spec=replace(spec, target_months=None))
    details = [f.detail for f in check_history(rap)]
    assert any("a roll appends exactly the open origin 2024-11-01" in d for d in details), details
    assert any("added by a roll release, which may not add it" in d for d in details), details
