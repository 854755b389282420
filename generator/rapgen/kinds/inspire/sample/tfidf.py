"""The sample's similarity instrument: TF-IDF cosine over title and abstract.

Tokens are the frozen search analyzer's (``rapgen.search.tokenize``); weights
are sublinear, ``1 + ln(tf)``, times the smoothed ``ln((N + 1) / (df + 1)) + 1``
over all source papers; rows are L2-normalised, so a dot product is a cosine.
Cosines are rounded to six decimals before any comparison, so the last bits
of a sum cannot change a label between machines.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import scipy.sparse as sp

from rapgen.search import tokenize


def tfidf_matrix(texts: Sequence[str]) -> sp.csr_matrix:
    """Rows: the texts' L2-normalised TF-IDF vectors."""
    vocab: dict[str, int] = {}
    rows, cols, vals = [], [], []
    for r, text in enumerate(texts):
        counts: dict[int, int] = {}
        for tok in tokenize(text):
            t = vocab.setdefault(tok, len(vocab))
            counts[t] = counts.get(t, 0) + 1
        for t, c in counts.items():
            rows.append(r)
            cols.append(t)
            vals.append(1.0 + np.log(c))
    m = sp.csr_matrix((vals, (rows, cols)), shape=(len(texts), len(vocab)), dtype=np.float64)
    df = np.bincount(m.indices, minlength=len(vocab))
    idf = np.log((len(texts) + 1) / (df + 1)) + 1.0
    m = m @ sp.diags(idf)
    norms = np.sqrt(m.multiply(m).sum(axis=1)).A.ravel()
    norms[norms == 0] = 1.0
    return sp.csr_matrix(sp.diags(1.0 / norms) @ m)


def cosines(matrix: sp.csr_matrix, row: int) -> np.ndarray:
    """Cosine of paper ``row`` with every paper, rounded to six decimals."""
    return np.round((matrix @ matrix[row].T).toarray().ravel(), 6)
