"""The scorer's entry point on the tiny archive: every DIR/interventions/ file from the
scorer's own arrays and draws, and the §6 additions recomputed from diagnostics.json."""

from __future__ import annotations

import csv
import io

import numpy as np
import pytest

from rapgen.archive import open_release
from rapgen.archive.interventions import Readout
from rapgen.scores import compute_scores
from rapgen.scores.interventions import INTERVENTION_FILES
from rapgen.scores.interventions.assemble import ModelRecords
from rapgen.scores.interventions.compute import compute_interventions

HEX = "0" * 64


@pytest.fixture(scope="module")
def scored(_tiny_template):
    archive = open_release(_tiny_template.root)
    result = compute_scores(archive, resamples=60)
    records = []
    for info in archive.models:
        units = archive.predictions(info.model_id)
        traces = archive.traces(info.model_id) if archive.has_traces(info.model_id) else []
        # Readouts: each A3 unit's own answer read back as a forecast (a deterministic stand-in).
        readouts = [Readout(u.field_id, u.origin, "A3", "forecast", "all", 0, HEX, HEX, u.weights, u.valid)
                    for u in units if u.condition == "A3"]
        records.append(ModelRecords(info.model_id, units, traces, readouts, knowledge_cutoff=info.knowledge_cutoff,
                                    release_date=info.release_date))
    out = compute_interventions(result.inputs, result.diagnostics, records, lambda call: not call.query.strip())
    return archive, result, out


def test_files_have_exact_columns(scored):
    _, _, out = scored
    assert sorted(out.files) == sorted(f"interventions/{n}" for n in INTERVENTION_FILES)
    for name, columns in INTERVENTION_FILES.items():
        header = next(csv.reader(io.StringIO(out.files[f"interventions/{name}"].decode())))
        assert tuple(header) == columns


def test_native_shift_is_zero_for_an_echoing_readout(scored):
    _, _, out = scored
    rows = list(csv.DictReader(io.StringIO(out.files["interventions/contrasts.csv"].decode())))
    shift = [r for r in rows if r["contrast"] == "native_shift_F" and r["subset"] == "all"]
    assert shift and all(float(r["estimate"]) == 0.0 for r in shift if r["estimate"])


def test_posterior_ceiling_from_the_diagnostics_episodes(scored):
    archive, result, out = scored
    fields = {f.field_id: f.split for f in archive.fields}
    posterior = out.reliability["posterior"]
    assert sorted(posterior) == ["all", "dev", "test"]
    for split in ("dev", "test", "all"):
        per_field: dict[str, list[float]] = {}
        for ep in result.diagnostics["change_rich"]["episodes"]:
            if (split == "all" or fields[ep["field_id"]] == split) and ep["repeatability"] is not None:
                per_field.setdefault(ep["field_id"], []).append(ep["repeatability"])
        macro = np.mean([np.mean(v) for v in per_field.values()])
        assert posterior[split]["estimate"] == pytest.approx(macro, abs=1e-9)
        assert posterior[split]["ceiling"] == pytest.approx(np.sqrt(macro), abs=1e-9)
        n_fields = sum(1 for s in fields.values() if split in ("all", s))
        assert posterior[split]["n_episodes"] == n_fields * len(archive.origins.origins)
    assert [row["horizon"] for row in out.reliability["revision"]["test"]] == [6, 12, 18]


def test_declared_tables_read_the_additions(scored):
    from rapgen.scores.schema import OPTIONAL_SCORE_FILES as SCORE_FILES
    from rapgen.scores.schema import POSTERIOR_TABLE, REVISION_TABLES, table_records

    RELIABILITY_TABLES = (POSTERIOR_TABLE, *REVISION_TABLES)

    _, _, out = scored
    body = {"reliability": out.reliability}
    posterior = table_records(RELIABILITY_TABLES[0], body)
    assert [r["split"] for r in posterior] == ["dev", "test", "all"]
    assert all(c.key in posterior[0] and (not c.interval or (c.ci_low in posterior[0] and c.ci_high in posterior[0]))
               for c in RELIABILITY_TABLES[0].columns)
    for spec in RELIABILITY_TABLES[1:]:
        rows = table_records(spec, body)
        assert [r["horizon"] for r in rows] == [6, 12, 18]
        assert all(c.key in rows[0] for c in spec.columns)
    assert set(SCORE_FILES) == set(out.files)
