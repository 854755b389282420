"""The Inspire sample archive (INSPIRE.md §6): ``lineage-v1`` labels, ``redact-v1``
briefs and the reference agents' runs, from the committed cs.CL papers only.

Public surface: :func:`build_inspire_sample`, :func:`default_source_root`,
:data:`MAX_BYTES`; the instrument (:mod:`.lineage`: :func:`coined_name`,
:func:`unique_names`, :func:`named_antecedents`, :func:`lineage`), the briefs
(:mod:`.redact`: :func:`briefs`, :func:`redact`, :func:`title_overlap`) and
:func:`check_built`; the synthetic archive at full or test size: :func:`write_synthetic_inspire`,
:data:`SCALES` / :class:`SynthScale`.
"""

from rapgen.kinds.inspire.sample.build import MAX_BYTES, build_inspire_sample, default_source_root
from rapgen.kinds.inspire.sample.check import check_built
from rapgen.kinds.inspire.sample.lineage import coined_name, lineage, named_antecedents, unique_names
from rapgen.kinds.inspire.sample.redact import briefs, redact, title_overlap
from rapgen.kinds.inspire.sample.synth import SCALES, SynthScale, synth_step, write_synthetic_inspire

__all__ = ["synth_step", "MAX_BYTES", "build_inspire_sample", "default_source_root", "check_built", "coined_name", "lineage",
           "named_antecedents", "unique_names", "briefs", "redact", "title_overlap", "SCALES", "SynthScale", "write_synthetic_inspire"]
