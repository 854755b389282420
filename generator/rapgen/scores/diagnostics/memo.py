"""The §6 draws that read the episode counts alone, kept between runs.

The change-rich test and the split-half reliability draw millions of random numbers, in
an order SCORING.md §6 fixes, from nothing but the canonical episode counts and the
ledger's parameters: no model output enters them. Scoring the same archive again (a
second build, a submission check that adds a model, a past release) therefore draws the
same numbers. A :class:`DrawStore` keeps each result in a folder of the cache
(``<cache>/scores/``, beside the Search indexes), under a key that digests everything the
result is a function of: the store's format version, the function's name and parameters,
numpy's version (its generators' streams are not promised to stay the same across
releases), and the dtype, shape and bytes of every input array. A file that is missing,
unreadable or not the expected arrays is recomputed and written again (to a temporary
file, then renamed); a folder that cannot be written leaves the result computed, never
an error. ``rapgen score --no-cache`` computes every draw afresh. A store opened with
``keep=False`` reads what is kept and writes nothing (the submission check, which scores
in a temporary copy and writes no draws).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TypeVar

import numpy as np

from rapgen.io import atomic_path

STORE_VERSION = 1
_DTYPES = (np.dtype(np.float64), np.dtype(np.int64), np.dtype(np.bool_))  # what the per-episode results hold
T = TypeVar("T")


def draws_key(name: str, arrays: tuple[np.ndarray, ...], params: Mapping[str, object]) -> str:
    """The SHA-256 naming one result: format version, function, parameters, numpy, inputs."""
    h = hashlib.sha256()
    head = {"store": STORE_VERSION, "function": name, "numpy": np.__version__,
            "params": {k: repr(v) for k, v in sorted(params.items())},
            "arrays": [[a.dtype.str, list(a.shape)] for a in arrays]}
    h.update(json.dumps(head, sort_keys=True).encode())
    for a in arrays:
        h.update(np.ascontiguousarray(a).tobytes())
    return h.hexdigest()


class DrawStore:
    """A folder of kept draw results (``None``: keep nothing, compute every time).
    ``keep=False``: take the results the folder holds, but never write one."""

    def __init__(self, folder: str | Path | None, *, keep: bool = True) -> None:
        self.folder = Path(folder) if folder is not None else None
        self.keep = keep

    def get(self, name: str, compute: Callable[..., T], arrays: tuple[np.ndarray, ...], params: Mapping[str, object],
            result_type: type[T]) -> T:
        """``compute(*arrays, **params)``, read from the store when it holds it, else computed and kept.
        ``result_type`` is the dataclass of numpy arrays ``compute`` returns."""
        if self.folder is None:
            return compute(*arrays, **params)
        path = self.folder / f"{name}-{draws_key(name, arrays, params)}.npz"
        kept = _read(path, result_type)
        if kept is not None:
            return kept
        result = compute(*arrays, **params)
        if self.keep:
            _write(path, result)
        return result


def _read(path: Path, result_type: type[T]) -> T | None:
    names = [f.name for f in dataclasses.fields(result_type)]
    try:
        with np.load(path, allow_pickle=False) as z:
            if sorted(z.files) != sorted(names):
                return None
            values = {n: z[n] for n in names}
    except Exception:  # noqa: BLE001 - absent, truncated or not a store file (zipfile, OSError, ValueError…): computed again
        return None
    shapes = {v.shape for v in values.values()}
    if len(shapes) != 1 or len(next(iter(shapes))) != 1 or any(v.dtype not in _DTYPES for v in values.values()):
        return None
    return result_type(**values)


def _write(path: Path, result: object) -> None:
    arrays = {f.name: np.asarray(getattr(result, f.name)) for f in dataclasses.fields(result)}
    try:
        with atomic_path(path) as tmp, open(tmp, "wb") as fh:
            np.savez(fh, **arrays)
    except OSError:
        pass  # an unwritable cache only means computing again next time


NOWHERE = DrawStore(None)  # the default: every draw made afresh
