"""Sample and synthetic archives: ``rapgen sample build`` and ``rapgen synth``.

Public surface: :func:`build_sample` (the committed sample archive from real
cs.CL arXiv papers) and :func:`write_synthetic_archive` (a benchmark-sized
synthetic archive for speed measurements and tests).
"""

from rapgen.sample.build import DEFAULT_DATA, build_sample, default_data_path, report_markdown

__all__ = ["build_sample", "write_synthetic_archive", "report_markdown", "default_data_path", "DEFAULT_DATA", "SCALES"]


def __getattr__(name: str):  # synth pulls in its own machinery only when used
    if name in ("write_synthetic_archive", "SCALES"):
        from rapgen.sample import synth

        return getattr(synth, name)
    raise AttributeError(name)
