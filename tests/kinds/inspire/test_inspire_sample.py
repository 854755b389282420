"""The Inspire sample builder: lineage-v1, redact-v1, and a whole build on a tiny RAP root."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import numpy as np
import pytest

from rapgen.errors import UsageProblem
from rapgen.kinds.inspire.archive import parse_instances, parse_judgements, parse_references
from rapgen.kinds.inspire.sample import briefs, build_inspire_sample, coined_name, lineage, redact, title_overlap, unique_names
from rapgen.kinds.inspire.sample.lineage import days_of, named_antecedents, spans
from rapgen.kinds.inspire.sample.papers import SourcePaper


@pytest.mark.parametrize("title, name", [
    ("LoRA: Low-Rank Adaptation of Large Language Models", "LoRA"),
    ("GPT-4: a technical report", "GPT-4"),
    ("Llama-2.5: open models", "Llama-2.5"),
    ("Towards better adapters", None),  # no colon
    ("Better adapters: a study", None),  # two words
    ("lora: lower case", None),  # no capital
    ("X: one letter", None),
    ("C++: templates", None),
])
def test_coined_name(title, name):
    assert coined_name(title) == name


def test_spans_match_names_inside_hyphenated_tokens():
    assert {"GPT", "GPT-4", "GPT-4-based", "4", "based"} <= spans("We extend GPT-4-based agents.")
    assert "agents." not in spans("We extend GPT-4-based agents.")


def _p(i, title, abstract, d):
    return SourcePaper(i, title, abstract, d, "cs.CL")


def test_unique_names_and_named_antecedents():
    papers = [
        _p("2301.00001", "LoRA: low-rank adaptation", "a", date(2023, 1, 1)),
        _p("2301.00002", "BERT: deep bidirectional transformers", "b", date(2023, 1, 2)),
        _p("2301.00003", "Probing BERT layers", "c", date(2023, 1, 3)),  # BERT in another title: not unique
        _p("2503.00004", "Our method", "We improve LoRA-style tuning over BERT and LoRA.", date(2025, 3, 1)),
        _p("2504.00005", "Later: a paper", "Cites LoRA", date(2025, 4, 1)),
    ]
    names = unique_names(papers)
    assert names == {"LoRA": 0, "Later": 4}
    assert named_antecedents(3, papers, names) == [("LoRA", 0)]
    assert named_antecedents(0, papers, {"Later": 4}) == []  # only earlier papers


def test_lineage_labels_named_neighbours_t0_and_concurrent():
    t_p = date(2025, 6, 15)  # cutoff 2025-03-15, floor 2021-06-15
    papers = [_p("2506.00000", "Target", "We build on LoRA and on NewSet.", t_p),
              _p("2301.00001", "LoRA: low-rank adaptation", "", date(2023, 1, 1)),
              _p("2504.00002", "NewSet: a benchmark", "", date(2025, 4, 1))]  # named, concurrent
    papers += [_p(f"2401.{n:05d}", f"Paper {n} dataset" if n == 2 else f"Paper {n}", "", date(2024, 1, 1)) for n in range(1, 13)]
    papers += [_p("2504.00099", "Close concurrent", "", date(2025, 4, 2)), _p("2101.00001", "Too old", "", date(2021, 1, 1))]
    cos = np.array([1.0, 0.9, 0.9] + [0.5 - 0.01 * n for n in range(12)] + [0.95, 0.99])
    cos[14] = 0.1  # 2401.00012 is below the threshold: not a reference at all
    got = {papers[c.index].arxiv_id: (c.tier, c.role) for c in lineage(0, papers, unique_names(papers), cos, max_graded=10,
                                                                        days=days_of(papers))}
    assert got.pop("2301.00001") == ("T3", "conceptual")
    assert got.pop("2504.00002") == (None, None)  # concurrent named work is not judged
    assert got.pop("2504.00099") == (None, None)  # concurrent neighbour
    assert "2101.00001" not in got and "2401.00012" not in got  # older than the floor; below the cosine threshold
    # 9 labels left after the T3: neighbours 1-3 T2, 4-9 T1, the rest T0 (paper 2's title says dataset)
    assert [got[f"2401.{n:05d}"] for n in range(1, 12)] == (
        [("T2", "conceptual"), ("T2", "infrastructural"), ("T2", "conceptual")] + [("T1", "conceptual")] * 6
        + [("T0", "conceptual")] * 2)


def test_redaction_and_briefs():
    abstract = "We present LoRA-X, built on LoRA. It adapts models.  Results on GLUE improve. More text here."
    assert redact(abstract, ["LoRA", "LoRA-X"]) == "We present [method], built on [method]. It adapts models. Results on GLUE improve. More text here."
    brief, terse = briefs(abstract, ["LoRA"])
    assert brief.endswith("More text here. What prior work should we read to make progress on this problem?")
    assert terse == "We present [method]-X, built on [method]. It adapts models. What prior work should we read to make progress on this problem?"


@pytest.mark.parametrize("title, brief, want", [
    # title pairs (low rank) (rank adaptation) (adaptation models); the brief holds the first two
    ("Low-rank adaptation of models", "we study low rank adaptation of large models", 0.666667),
    ("Speech", "speech translation", 1.0),  # one token: its token
    ("Speech", "translation", 0.0),
    ("A", "anything", 0.0),  # no tokens
])
def test_title_overlap(title, brief, want):
    assert title_overlap(title, brief) == want


# ---------------------------------------------------------------- a whole build on a tiny root
def _root(tmp_path):
    from inspire_fixture import parquet

    rows = [("2303.00001", "LoRA: low-rank adapters for language models", "Low-rank adapters tune large language models cheaply.", date(2023, 3, 1)),
            ("2304.00002", "MegaBench: a benchmark for adapter tuning", "A benchmark of adapter tuning for language models.", date(2023, 4, 1)),
            ("2305.00003", "QuantAdapt: quantised adapters", "Quantised low-rank adapters for language models save memory.", date(2023, 5, 1))]
    rows += [(f"2306.{n:05d}", f"Adapter study {n}", f"Low-rank adapters and prompt tuning for language models, variant {n}.",
              date(2023, 6, 1 + n)) for n in range(1, 9)]
    rows += [(f"2502.{n:05d}", f"Target paper {n}", f"We extend LoRA and evaluate on MegaBench with low-rank adapters for language models {n}.",
              date(2025, 2, 1 + n)) for n in range(1, 5)]
    rows += [("2410.00001", "Another target", "We revisit QuantAdapt low-rank adapters for language models.", date(2024, 10, 10))]
    cols = {"arxiv_id": [r[0] for r in rows], "title": [r[1] for r in rows], "abstract": [r[2] for r in rows],
            "first_submitted": [r[3] for r in rows], "categories": ["cs.CL"] * len(rows)}
    types = {"arxiv_id": "string", "title": "string", "abstract": "string", "first_submitted": "date", "categories": "string"}
    bench = tmp_path / "rap" / "archive" / "benchmark"
    bench.mkdir(parents=True)
    (bench / "papers.parquet").write_bytes(parquet(cols, types))
    (bench / "assignments.parquet").write_bytes(parquet({"arxiv_id": cols["arxiv_id"], "field_id": ["adapters"] * len(rows)},
                                                        {"arxiv_id": "string", "field_id": "string"}))
    return tmp_path / "rap"


def test_build_on_a_tiny_root_is_checked_and_deterministic(tmp_path):
    root = _root(tmp_path)
    summary = build_inspire_sample(root, tmp_path / "a")
    assert summary["by_split"] == {"eval": 4, "dev": 1} and summary["checked"]["calls"] == summary["checked"]["reproduced"] > 0
    instances, f1 = parse_instances((tmp_path / "a/archive/benchmark/instances.jsonl").read_bytes())
    judged, f2 = parse_judgements((tmp_path / "a/archive/benchmark/judgements.parquet").read_bytes())
    refs, f3 = parse_references((tmp_path / "a/archive/benchmark/references.parquet").read_bytes())
    assert f1 == f2 == f3 == []
    assert all("LoRA" not in i.brief and "MegaBench" not in i.brief for i in instances if i.split == "eval")
    assert {j.tier for j in judged if j.instance_id == "insp-0001"} >= {"T3"}
    assert {(j.arxiv_id, j.role) for j in judged if j.tier == "T3"} >= {("2303.00001", "conceptual"), ("2304.00002", "infrastructural")}
    build_inspire_sample(root, tmp_path / "b")
    assert (tmp_path / "a/SHA256SUMS").read_bytes() == (tmp_path / "b/SHA256SUMS").read_bytes()
    with pytest.raises(UsageProblem, match="already holds archive/ or SHA256SUMS"):
        build_inspire_sample(root, tmp_path / "a")
    with pytest.raises(UsageProblem, match="no archive/benchmark/papers.parquet"):
        build_inspire_sample(tmp_path / "nowhere", tmp_path / "c")


COMMITTED = Path(__file__).resolve().parents[3] / "benchmarks" / "inspire"


@pytest.mark.skipif(not (COMMITTED / "SHA256SUMS").is_file(), reason="no committed Inspire sample")
def test_the_committed_sample_holds_its_sums_and_invariants():
    """benchmarks/inspire/: SHA256SUMS right, every file parses, every invariant holds (replay: the builder's check)."""
    from rapgen.archive import parse_sums, sha256_file
    from rapgen.kinds.inspire.archive import (
        check_benchmark, check_manifest, layout, parse_corpus, parse_ledger, parse_manifest, parse_targets,
    )

    entries, problems = parse_sums((COMMITTED / "SHA256SUMS").read_bytes())
    assert problems == [] and all(sha256_file(COMMITTED / e.path) == e.digest for e in entries)
    assert sum((COMMITTED / e.path).stat().st_size for e in entries) <= 12 * 1024 * 1024

    def data(rel):
        return (COMMITTED / rel).read_bytes()

    ledger, f0 = parse_ledger(data(layout.LEDGER_JSON))
    instances, f1 = parse_instances(data(layout.INSTANCES_JSONL))
    targets, f2 = parse_targets(data(layout.TARGETS_PARQUET))
    judged, f3 = parse_judgements(data(layout.JUDGEMENTS_PARQUET))
    refs, f4 = parse_references(data(layout.REFERENCES_PARQUET))
    corpus, f5 = parse_corpus(data(layout.CORPUS_PARQUET))
    manifest, f6 = parse_manifest(data(layout.MANIFEST_JSONL))
    assert f0 + f1 + f2 + f3 + f4 + f5 + f6 == []
    assert check_benchmark(instances, targets, judged, refs, corpus, ledger) == []
    assert check_manifest(manifest, instances, corpus) == []
    assert (len(instances), sum(i.split == "eval" for i in instances)) == (90, 60)
