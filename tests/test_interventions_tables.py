"""The DIR/interventions/ files (INTERVENTIONS.md §8): exact columns, byte-order sorting by the
key columns, CSV bytes, and an end-to-end cells/contrasts table from readouts."""

from __future__ import annotations

from datetime import date

import numpy as np
import pytest

from rapgen.errors import ScoringError
from rapgen.scores.interventions import (
    INTERVENTION_FILES,
    CellUnits,
    build_table,
    intervention_files,
    mask_rows,
    readout_values,
    replay_statistics,
    split_draws,
    strict_mask_rows,
    summarise,
)
from rapgen.scores.interventions.tables import key_columns

R = "estimate,ci_low,ci_high,fc_low,fc_high,n_fields"
SPEC_COLUMNS = {  # INTERVENTIONS.md §8, verbatim
    "cells.csv": f"analysis,track,split,entry,subset,cell,metric,{R},n_units,n_valid,n_invalid",
    "contrasts.csv": f"analysis,track,split,entry,subset,contrast,metric,{R}",
    "fidelity.csv": f"split,entry,readout,metric,{R},n_units",
    "signature.csv": f"split,entry,regime,side,metric,{R},n_units",
    "strict_masks.csv": "entry,origin,forecast_strict,joint_strict,forecast_boundary,joint_boundary",
    "exposure.csv": f"split,entry,mask,contrast,metric,stratum,{R},n_origins",
    "option_counterfactual.csv": f"split,entry,regime,budget,side,arm,metric,{R},n_units",
}


def test_declared_columns_are_the_spec():
    assert {name: ",".join(cols) for name, cols in INTERVENTION_FILES.items()} == SPEC_COLUMNS
    assert key_columns("fidelity.csv") == ("split", "entry", "readout", "metric")
    assert key_columns("strict_masks.csv") == INTERVENTION_FILES["strict_masks.csv"]


def test_empty_files_have_their_header():
    files = intervention_files({})
    assert sorted(files) == sorted(f"interventions/{n}" for n in SPEC_COLUMNS)
    for name, header in SPEC_COLUMNS.items():
        assert files[f"interventions/{name}"] == (header + "\n").encode()


def test_strict_masks_csv_bytes():
    origins = [date(2024, 1, 1), date(2024, 7, 1), date(2025, 1, 1), date(2025, 7, 1), date(2026, 1, 1)]
    rows = mask_rows(strict_mask_rows("z-model", date(2024, 7, 1), None, "month", origins, 6)
                     + strict_mask_rows("a-model", date(2025, 12, 1), None, "day", origins[:2], 6))
    text = intervention_files({"strict_masks.csv": rows})["interventions/strict_masks.csv"].decode()
    assert text.splitlines() == [
        SPEC_COLUMNS["strict_masks.csv"],
        "a-model,2024-01-01,false,false,false,false",
        "a-model,2024-07-01,false,false,false,false",
        "z-model,2024-01-01,false,false,false,false",
        "z-model,2024-07-01,false,false,true,false",
        "z-model,2025-01-01,true,false,false,true",
        "z-model,2025-07-01,true,true,false,false",
        "z-model,2026-01-01,true,true,false,false",
    ]


def test_rows_sort_in_byte_order_and_refuse_duplicates():
    row = {c: "" for c in INTERVENTION_FILES["fidelity.csv"]}
    rows = [{**row, "split": "test", "entry": "b", "readout": "state", "metric": "tv"},
            {**row, "split": "test", "entry": "B", "readout": "state", "metric": "tv"},
            {**row, "split": "dev", "entry": "b", "readout": "state", "metric": "tv"}]
    table = build_table("fidelity.csv", rows)
    assert [(r[0], r[1]) for r in table.rows()] == [("dev", "b"), ("test", "B"), ("test", "b")]  # "B" < "b" in bytes
    with pytest.raises(ScoringError, match="two rows share the key test, b, state, tv"):
        build_table("fidelity.csv", rows + rows[:1])
    with pytest.raises(ScoringError, match="a row lacks column 'n_units'"):
        build_table("fidelity.csv", [{k: v for k, v in rows[0].items() if k != "n_units"}])
    with pytest.raises(ScoringError, match="unknown interventions file"):
        build_table("cells.parquet", [])


def test_cells_and_contrasts_end_to_end():
    rng = np.random.default_rng(5)
    F, O = 4, 2
    y = rng.dirichlet(np.ones(8), size=(F, O))
    cells = {}
    for name in ("F->F:all", "S->F:all", "S->S:all", "F->F:matched", "S->F:matched", "S->S:matched"):
        p = rng.dirichlet(np.ones(8), size=(F, O))
        p[0, 1] = np.nan  # one invalid readout per cell
        cells[name] = CellUnits(p, np.ones((F, O), bool))
    a3, a4 = rng.dirichlet(np.ones(8), size=(F, O)), rng.dirichlet(np.ones(8), size=(F, O))
    subsets = {"all": np.ones((F, O), bool), "change_rich": np.array([[1, 0], [0, 1], [1, 1], [0, 0]], bool)}
    cell_stats, contrast_stats = replay_statistics("m", readout_values(cells, a3, a4, y), cells, subsets)
    draws = split_draws(["f1", "f2", "f3", "f4"], ["dev", "test", "test", "test"], ["x", "y", "y", "z"], 100, 0, 0.95)
    files = intervention_files({"cells.csv": summarise(cell_stats, draws), "contrasts.csv": summarise(contrast_stats, draws)})
    cells_csv = files["interventions/cells.csv"].decode().splitlines()
    assert cells_csv[0] == SPEC_COLUMNS["cells.csv"]
    assert len(cells_csv) - 1 == 2 * 6 * 3 * 2  # splits × cells × metrics × subsets
    first = cells_csv[1].split(",")
    assert first[:7] == ["replay", "all_origin", "dev", "m", "all", "F->F:all", "jsd"]
    assert first[-3:] == ["2", "1", "1"]  # f1's two units, one invalid
    cr_dev = [line for line in cells_csv if line.startswith("replay,all_origin,dev,m,change_rich,F->F:all,spearman")]
    assert cr_dev[0].split(",")[-4:] == ["1", "1", "1", "0"]  # n_fields 1; f1's change-rich T1 is its valid unit
    contrasts_csv = files["interventions/contrasts.csv"].decode().splitlines()
    names = {line.split(",")[5] for line in contrasts_csv[1:]}
    assert names == {"acquisition:all", "readout:all", "pipeline:all", "acquisition:matched", "readout:matched",
                     "pipeline:matched", "native_shift_F", "native_shift_S"}
    assert contrasts_csv[1:] == sorted(contrasts_csv[1:], key=lambda s: s.split(",")[:7])


def test_docs_name_every_file_and_record():
    from pathlib import Path

    from rapgen.archive.intervention_folder import INTERVENTION_MODEL_FILES
    from rapgen.archive.parse import MODEL_EXTENSION_KEYS, UNIT_PROVENANCE_KEYS

    text = (Path(__file__).resolve().parent.parent / "docs" / "interventions.md").read_text(encoding="utf-8")
    for name in list(INTERVENTION_FILES) + list(INTERVENTION_MODEL_FILES) + list(MODEL_EXTENSION_KEYS) + list(UNIT_PROVENANCE_KEYS):
        assert f"`{name}`" in text, f"docs/interventions.md does not mention `{name}`"
