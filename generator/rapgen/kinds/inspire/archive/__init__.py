"""Inspire's files and invariants (INSPIRE.md §1–§2): parsers from bytes to frozen
records plus findings, and the cross-file checks.

Public surface: :mod:`.layout` (paths, vocabularies, :data:`LEDGER`);
:func:`shift_months`, :func:`cutoff_of`, :func:`recency_floor`; :func:`canon`,
:func:`is_canonical`; the records; :func:`parse_archive_json`,
:func:`parse_ledger` / :class:`Ledger`; :func:`parse_instances`,
:func:`parse_targets`, :func:`parse_judgements`, :func:`parse_references`,
:func:`parse_corpus`; :func:`check_benchmark`, :func:`expected_statuses`,
:func:`expected_view`; :func:`build_manifest`, :func:`parse_manifest`,
:func:`check_manifest`, :class:`CorpusDates`; :func:`parse_predictions`,
:func:`parse_traces`, :func:`check_traces`, :func:`calls_by_unit`; :func:`read_files`
(every file of a folder parsed and checked once) -> :class:`InspireFiles`, :class:`ModelFiles`.
"""

from rapgen.kinds.inspire.archive import layout
from rapgen.kinds.inspire.archive.benchmark import (
    brief_digest, parse_corpus, parse_instances, parse_judgements, parse_references, parse_targets,
)
from rapgen.kinds.inspire.archive.calendar import cutoff_of, recency_floor, shift_months
from rapgen.kinds.inspire.archive.documents import Ledger, ledger_from, parse_archive_json, parse_ledger
from rapgen.kinds.inspire.archive.ids import Canon, canon, is_canonical
from rapgen.kinds.inspire.archive.invariants import check_benchmark, expected_statuses, expected_view
from rapgen.kinds.inspire.archive.manifest import CorpusDates, build_manifest, check_manifest, parse_manifest
from rapgen.kinds.inspire.archive.models import calls_by_unit, check_traces, coverage_findings, parse_predictions, parse_traces
from rapgen.kinds.inspire.archive.read import InspireFiles, ModelFiles, read_files
from rapgen.kinds.inspire.archive.records import (
    Call, CorpusPaper, Instance, Judgement, ManifestRow, Prediction, RankedEntry, Reference, Target,
)

__all__ = [
    "layout", "brief_digest", "parse_corpus", "parse_instances", "parse_judgements", "parse_references", "parse_targets",
    "cutoff_of", "recency_floor", "shift_months", "Ledger", "ledger_from", "parse_archive_json", "parse_ledger",
    "Canon", "canon", "is_canonical", "check_benchmark", "expected_statuses", "expected_view",
    "CorpusDates", "build_manifest", "check_manifest", "parse_manifest",
    "calls_by_unit", "check_traces", "coverage_findings", "parse_predictions", "parse_traces",
    "InspireFiles", "ModelFiles", "read_files",
    "Call", "CorpusPaper", "Instance", "Judgement", "ManifestRow", "Prediction", "RankedEntry", "Reference", "Target",
]
