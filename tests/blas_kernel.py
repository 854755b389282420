"""The OpenBLAS kernel the test run uses, set when this module is first imported (by conftest.py,
before numpy is imported)."""

from __future__ import annotations

import os
from pathlib import Path

BASELINE_KERNEL = "SkylakeX"
AVX512 = {"avx512f", "avx512dq", "avx512cd", "avx512bw", "avx512vl"}  # what OpenBLAS's SkylakeX kernel needs


def _pin_blas_kernel() -> str | None:
    """The OpenBLAS kernel the output baselines were recorded with, where this CPU can run it.

    A matrix product's last bits depend on the kernel OpenBLAS uses (the bootstrap's products,
    for one). The baselines of tests/golden/ were written with its SkylakeX kernel, the one it
    picks by default on an Intel processor with AVX-512; an AMD processor with AVX-512 gets
    Haswell's by default, and a machine may pin another in ``OPENBLAS_CORETYPE``. Where the CPU
    has AVX-512 the tests set SkylakeX before numpy is first imported (conftest.py imports this
    module first; every build the tests start inherits it). Elsewhere the environment's kernel stays, and the
    baseline tests skip (tests/test_outputs_golden.py). Returns the kernel set, or None."""
    try:
        flags = next((line for line in Path("/proc/cpuinfo").read_text().splitlines() if line.startswith("flags")), "")
    except OSError:
        flags = ""
    if AVX512 <= set(flags.split()):
        os.environ["OPENBLAS_CORETYPE"] = BASELINE_KERNEL
        return BASELINE_KERNEL
    return None


BLAS_KERNEL = _pin_blas_kernel()
