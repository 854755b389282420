"""The evaluator's embeddings: ``tfidf-sample-v1`` (the sample's) and an OpenAI-compatible endpoint.

``tfidf-sample-v1``, declared exactly so that anyone can rebuild it: the space
of one episode is fitted on its history and future papers (title "\\n"
abstract); tokens are ``norm`` words of at least two characters that are not
in :data:`STOPWORDS`; the vocabulary is sorted; idf = ln((1 + n) / (1 + df)) + 1;
a text's vector is raw term counts × idf, L2-normalised (zero if empty).
Ideas are embedded as title, rationale, approach and key terms joined by "\\n".

:class:`EndpointEmbedder` posts ``{"model", "input": [texts]}`` to
``<base>/embeddings`` through the kit's chat client (its retries and strict
JSON), caching every vector by SHA-256(model "\\n" text) in a durable journal,
so a rerun embeds nothing twice. Vectors are kept as float32 (as the journal
stores them) whether fresh or cached, so a resumed run ranks exactly as an
uninterrupted one; a vector whose length is not the ledger's ``dimensions`` is
an :class:`~rapgen.kit.EndpointError`.
"""

from __future__ import annotations

import base64
import hashlib
from collections import Counter
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Protocol

import numpy as np

from rapgen.kinds.ideas.archive.normalise import norm
from rapgen.kinds.ideas.kit.journal import Journal
from rapgen.kit import ChatClient, EndpointError

TFIDF = "tfidf-sample-v1"
STOPWORDS = frozenset(
    "a an and are as at be by can for from has have in into is it its of on or our that the their this to via we with without "
    "which while using use based towards toward new how what when where do does not than these those over under between".split()
)


@lru_cache(maxsize=1 << 16)
def _tokens(text: str) -> tuple[str, ...]:
    return tuple(w for w in norm(text).split(" ") if len(w) >= 2 and w not in STOPWORDS)


def tokens(text: str) -> list[str]:
    """The words ``tfidf-sample-v1`` and the lexical judges count (memoised: papers recur across episodes)."""
    return list(_tokens(text))


def idea_text(fields: dict) -> str:
    return "\n".join([fields["title"], fields["rationale"], fields["approach"], *fields["key_terms"]])


def paper_document(title: str, abstract: str) -> str:
    return f"{title}\n{abstract}"


class Embedder(Protocol):
    name: str

    def fit(self, documents: Sequence[str]) -> None: ...

    def embed(self, texts: Sequence[str]): ...  # one L2-normalised row per text (dense or sparse)


class TfidfEmbedder:
    """``tfidf-sample-v1``: refit per episode with :meth:`fit`, then :meth:`embed` any text."""

    name = TFIDF

    def __init__(self) -> None:
        self.vocabulary: dict[str, int] = {}
        self.idf = np.zeros(0)

    def fit(self, documents: Sequence[str]) -> None:
        docs = [set(tokens(d)) for d in documents]
        df = Counter(w for d in docs for w in d)
        words = sorted(df)
        self.vocabulary = {w: i for i, w in enumerate(words)}
        n = len(documents)
        self.idf = np.array([np.log((1 + n) / (1 + df[w])) + 1.0 for w in words])

    def embed(self, texts: Sequence[str]):
        """A sparse (CSR) matrix, one L2-normalised row per text."""
        from scipy.sparse import csr_matrix, diags

        vocab = self.vocabulary
        ids = [[j for w in _tokens(t) if (j := vocab.get(w)) is not None] for t in texts]
        rows = np.repeat(np.arange(len(texts)), [len(x) for x in ids])
        cols = np.fromiter((j for x in ids for j in x), dtype=np.int64, count=len(rows))
        counts = csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(len(texts), len(vocab)))  # duplicates summed
        weighted = counts @ diags(self.idf) if len(vocab) else counts
        norms = np.sqrt(np.asarray(weighted.multiply(weighted).sum(axis=1)).ravel())
        return (diags(np.divide(1.0, norms, out=np.zeros_like(norms), where=norms > 0)) @ weighted).tocsr()


class EmbeddingsClient(ChatClient):
    """The kit's OpenAI-compatible client, pointed at ``/embeddings`` instead of ``/chat/completions``."""

    def __init__(self, base_url: str, api_key: str | None, timeout: float = 60.0, retries: int = 2):
        super().__init__(base_url, api_key, timeout, retries)
        self.url = self.url[: -len("/chat/completions")] + "/embeddings"


class EndpointEmbedder:
    """Embeddings from an OpenAI-compatible endpoint (one space for all episodes: ``fit`` does nothing)."""

    def __init__(self, client: EmbeddingsClient, model: str, cache: str | Path | None = None, batch: int = 64,
                 dimensions: int | None = None):
        self.client, self.model, self.name, self.batch, self.dimensions = client, model, model, batch, dimensions
        self.journal = Journal(cache) if cache is not None else None
        self.calls = 0

    def fit(self, documents: Sequence[str]) -> None:
        return None

    def _key(self, text: str) -> str:
        return hashlib.sha256(f"{self.model}\n{text}".encode("utf-8")).hexdigest()

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        known = {} if self.journal is None else self.journal.entries
        todo = list(dict.fromkeys(t for t in texts if self._key(t) not in known))
        fresh: dict[str, np.ndarray] = {}
        for start in range(0, len(todo), self.batch):
            chunk = todo[start:start + self.batch]
            reply = self.client.complete({"model": self.model, "input": chunk})
            self.calls += 1
            try:
                data = sorted(reply["data"], key=lambda d: d["index"])
                vectors = [np.asarray(d["embedding"], dtype=np.float64) for d in data]
            except (KeyError, TypeError, ValueError):
                raise EndpointError(f"the reply from {self.client.url} has no data[].embedding list") from None
            if len(vectors) != len(chunk) or len({v.shape for v in vectors}) != 1:
                raise EndpointError(f"the reply from {self.client.url} has {len(vectors)} embeddings for {len(chunk)} inputs")
            if vectors[0].ndim != 1 or (self.dimensions is not None and vectors[0].shape[0] != self.dimensions):
                raise EndpointError(f"the reply from {self.client.url} has embeddings of shape {vectors[0].shape}, "
                                    f"not the ledger's {self.dimensions} dimensions")
            for text, vec in zip(chunk, vectors):
                vec = vec.astype("<f4").astype(np.float64)  # as the journal keeps it
                fresh[self._key(text)] = vec
                if self.journal is not None:
                    self.journal.add(self._key(text), {"vector": base64.b64encode(vec.astype("<f4").tobytes()).decode("ascii")})
        rows = []
        for t in texts:
            k = self._key(t)
            rows.append(fresh[k] if k in fresh else np.frombuffer(base64.b64decode(known[k]["vector"]), dtype="<f4").astype(np.float64))
        out = np.vstack(rows) if rows else np.zeros((0, 0))
        norms = np.linalg.norm(out, axis=1, keepdims=True) if rows else np.zeros((0, 1))
        return np.divide(out, norms, out=np.zeros_like(out), where=norms > 0)
