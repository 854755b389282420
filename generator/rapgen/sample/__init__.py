"""Sample and synthetic archives: ``rapgen sample build`` and ``rapgen synth``.

Public surface: :func:`build_sample` (the committed sample archive from real
cs.CL arXiv papers), :func:`write_synthetic_archive` (a benchmark-sized
synthetic archive for speed measurements and tests) and :func:`generate_traces`
(replayable synthetic Search traces for its models).
"""

from rapgen.sample.build import DEFAULT_DATA, build_sample, default_data_path, report_markdown
from rapgen.sample.committed import PANEL, build_committed_sample
from rapgen.sample.history import build_sample_history
from rapgen.sample.synth_history import BASE_ID, DAMPINGS, PANEL_ID

__all__ = ["build_sample", "write_synthetic_archive", "generate_traces", "report_markdown", "default_data_path", "DEFAULT_DATA", "SCALES",
           "build_committed_sample", "build_sample_history", "BASE_ID", "DAMPINGS", "PANEL", "PANEL_ID"]


def __getattr__(name: str):  # synth and traces pull in their own machinery only when used
    if name in ("write_synthetic_archive", "SCALES"):
        from rapgen.sample import synth as module
    elif name == "generate_traces":
        from rapgen.sample import traces as module
    else:
        raise AttributeError(name)
    return getattr(module, name)
