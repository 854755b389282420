"""The scores -> site contract (rapgen.scores.schema) describes what is written."""

from __future__ import annotations

import json

import pytest

from rapgen.archive import open_release
from rapgen.scores.schema import table_records
from rapgen.scores import (
    DIAGNOSTIC_SECTIONS,
    DIAGNOSTICS_META,
    METRICS,
    PRIMARY,
    REGISTRY,
    SCORE_FILES,
    Interval,
    compute_scores,
    diagnostic_tables,
    write_scores,
)


@pytest.fixture(scope="module")
def score_folder(_tiny_template, tmp_path_factory):
    out = tmp_path_factory.mktemp("scores")
    write_scores(compute_scores(open_release(_tiny_template.root), resamples=50), out)
    return out


def test_every_score_file_has_its_declared_columns(score_folder):
    import pyarrow.parquet as pq

    for name, columns in SCORE_FILES.items():
        path = score_folder / name
        if name.endswith(".csv"):
            header = path.read_text(encoding="utf-8").split("\n", 1)[0]
            assert tuple(header.split(",")) == columns, name
        else:
            assert tuple(pq.read_schema(path).names) == columns, name


def test_metrics_are_the_registry_and_primary_is_a_declared_choice():
    assert METRICS == tuple(REGISTRY.values())
    assert PRIMARY.metric in REGISTRY and REGISTRY[PRIMARY.metric].higher_is_better is True
    assert (PRIMARY.policy, PRIMARY.track) == ("canonical", "all_origin")


def test_declared_layout_is_faithful_to_diagnostics_json(score_folder):
    body = json.loads((score_folder / "diagnostics.json").read_text(encoding="utf-8"))
    declared = {s.key for s in DIAGNOSTIC_SECTIONS}
    # Nothing undeclared in the file, nothing declared that the file lacks.
    assert set(body) == declared | set(DIAGNOSTICS_META)
    for spec in DIAGNOSTIC_SECTIONS:
        for table in spec.tables:
            records = table_records(table, body)
            if table.optional and not records:  # the interventions' additions: only with intervention records
                continue
            assert records, (spec.key, table.title)
            for record in records:
                for column in table.columns:
                    keys = [column.key, column.ci_low, column.ci_high] if column.interval else [column.key]
                    for key in keys:
                        head, *rest = key.split(".")
                        assert head in record and all(k in record[head] for k in rest), (spec.key, table.title, key)
    for section in diagnostic_tables(body):
        assert section.present and section.tables
        for table in section.tables:
            for i, column in enumerate(table.columns):
                if column.interval:
                    assert all(isinstance(r[i], Interval) for r in table.rows)


def test_a_missing_section_is_reported_absent_not_guessed():
    sections = diagnostic_tables({"schema_version": 1, "reliability": {"splits": {"test": {"estimate": 0.5, "ci_low": 0.4,
                                                                                         "ci_high": 0.6, "n_fields": 2}}}})
    by_key = {s.key: s for s in sections}
    assert [s.key for s in sections] == [s.key for s in DIAGNOSTIC_SECTIONS]
    assert not by_key["change_rich"].present and by_key["change_rich"].tables == ()
    (splits,) = [t for t in by_key["reliability"].tables if t.title == "Reliability by split"]
    assert splits.rows[0][:2] == ("test", Interval(0.5, 0.4, 0.6))
