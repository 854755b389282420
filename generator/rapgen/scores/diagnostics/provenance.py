"""Per-unit provenance (INTERVENTIONS.md §7): shown, never scored.

The optional keys a unit line may carry in ``predictions.jsonl`` (and each
later origin's copy), ``replays.jsonl`` and ``oracle.jsonl`` — ``response_model``,
``attempts``, ``unit_attempt``, ``usage`` and ``max_output_tokens`` — summarised
per model and file for the ``unit_provenance`` section of diagnostics.json, so
that the site shows what the endpoint reported without reading the archive:

* ``units``: the file's units; ``with_response_model``, ``with_attempts``,
  ``with_usage``: how many carry the key;
* ``response_models``: each reported model name with its count,
  ``name (n)`` joined by ``; `` in name order (text, for display);
* ``attempts_max`` and ``retried`` (units with ``attempts`` > 1); ``unit_attempt_max``
  and ``rerun`` (units with ``unit_attempt`` > 1);
* ``input_tokens``, ``output_tokens``, ``reasoning_tokens``: sums over the units
  that report them (null when none does);
* ``max_output_tokens``: each recorded cap with its count, as ``response_models``.

The keys come from the records ``verify`` parsed (``check_unit_provenance`` keeps
them on each unit): no file is read again. The units are those the scorer scores:
of the scored origins, the predictions the scored release lists (``keep``) and the
intervention files it lists (``files``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from datetime import date
from typing import Any

from rapgen.archive import ORACLE_JSONL, REPLAYS_JSONL, model_file
from rapgen.scores.interventions.sources import folder_records

TOKENS: tuple[str, ...] = ("input_tokens", "output_tokens", "reasoning_tokens")
KEYS: tuple[str, ...] = ("response_model", "attempts", "unit_attempt", "usage", "max_output_tokens")


def _counted(counter: Counter) -> str | None:
    return "; ".join(f"{k} ({n})" for k, n in sorted(counter.items(), key=lambda kv: str(kv[0]))) or None


def summarise(lines: Sequence[Mapping]) -> dict:
    """The provenance summary of one file's units (each a mapping of the §7 keys it carries)."""
    models = Counter(str(x["response_model"]) for x in lines if x.get("response_model") is not None)
    attempts = [x["attempts"] for x in lines if isinstance(x.get("attempts"), int)]
    reruns = [x["unit_attempt"] for x in lines if isinstance(x.get("unit_attempt"), int)]
    usage = [x["usage"] for x in lines if isinstance(x.get("usage"), Mapping)]
    caps = Counter(x["max_output_tokens"] for x in lines if isinstance(x.get("max_output_tokens"), int))
    tokens = {k: sum(u[k] for u in usage if k in u) if any(k in u for u in usage) else None for k in TOKENS}
    return {
        "units": len(lines), "with_response_model": sum(models.values()), "response_models": _counted(models),
        "with_attempts": len(attempts), "attempts_max": max(attempts) if attempts else None,
        "retried": sum(a > 1 for a in attempts),
        "unit_attempt_max": max(reruns) if reruns else None, "rerun": sum(a > 1 for a in reruns),
        "with_usage": len(usage), **tokens, "max_output_tokens": _counted(caps),
    }


def _keys(records: Iterable[Any], scored: set[date] | None, keep: Callable[[date], bool] | None = None) -> list[Mapping]:
    return [r.provenance or {} for r in records
            if (scored is None or r.origin in scored) and (keep is None or keep(r.origin))]


def unit_provenance(archive: Any, origins: Sequence[date] | None = None, keep: Callable[[str, date], bool] | None = None,
                    files: Collection[str] | None = None) -> dict:
    """The ``unit_provenance`` section: one row per model (archive order) and unit file it has.

    ``origins``: the scored origins (None: all); ``keep(model_id, origin)``: the predictions the
    scored release lists (None: all); ``files``: the paths it lists (None: every file)."""
    scored = None if origins is None else set(origins)
    rows = []
    for model_id in archive.model_ids:
        rec = folder_records(archive, model_id)
        listed = lambda name: files is None or model_file(model_id, name) in files  # noqa: E731
        groups = (
            ("predictions", _keys(archive.predictions(model_id), scored, None if keep is None else (lambda o: keep(model_id, o)))),
            ("replays", _keys(rec.readouts, scored) if listed(REPLAYS_JSONL) else []),
            ("oracle", _keys(rec.oracle, scored) if listed(ORACLE_JSONL) else []),
        )
        rows += [{"entry": model_id, "file": label, **summarise(lines)} for label, lines in groups if lines]
    return {"keys": list(KEYS), "rows": rows}
