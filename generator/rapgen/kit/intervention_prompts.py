"""The readout and exact-history prompts (INTERVENTIONS.md §1, §2; ``rapgen prompt --readout|--oracle``).

- A **readout** prompt (``templates/prompts/readout.md.j2``) asks for a
  Forecast or a State answer from frozen evidence: the canonical JSON of
  :func:`rapgen.archive.evidence.build_evidence`, embedded verbatim and
  nothing else of the source unit (no system prompt, reasoning, answer or
  rationale). Tools: ``Finish`` only.
- An **oracle** prompt (``templates/prompts/oracle.md.j2``) asks for a
  Forecast given the exact canonical counts of the history windows (the
  canonical JSON of :func:`rapgen.archive.evidence.build_oracle_block`): h3 for
  O1, h1–h3 for O2 and O3. O3 also offers ``Search`` on the expanding shard
  with the ledger's call cap.

The field, task, directions and tool texts are the Forecast/State prompt's,
and the tool schemas are the benchmark's own (:func:`tool_schemas`).

Two hashes, as for the main prompts: ``prompt_sha256`` of a rendered prompt
identifies exactly what was sent (messages and tools); the *template* hash,
the SHA-256 of the template file's bytes (``sha256sum`` gives it), is the
``prompt_sha256`` every replays.jsonl / oracle.jsonl line carries — one value
per file, as the contract asks.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import date

from rapgen.archive import (
    CLOSED_FORECAST, Archive, canonical_json, BUDGETS, ORACLE_CONDITIONS, ORACLE_SEARCH, READOUTS, SOURCE_CONDITIONS,
)
from rapgen.errors import RapgenError, UsageProblem
from rapgen.kit.prompt import Prompt, render, templates_dir, tool_schemas, unit_context

READOUT_TEMPLATE = "readout.md.j2"
ORACLE_TEMPLATE = "oracle.md.j2"


def _template_bytes(name: str) -> bytes:
    path = templates_dir() / name
    try:
        return path.read_bytes()
    except OSError:
        raise RapgenError(f"{path}: the prompt template is missing or unreadable (set RAPGEN_PROMPT_TEMPLATES to the templates/prompts folder)") from None


def template_file_sha256(name: str) -> str:
    """SHA-256 of a prompt template's bytes (what ``sha256sum`` prints)."""
    return hashlib.sha256(_template_bytes(name)).hexdigest()


def readout_template_sha256() -> str:
    """The ``prompt_sha256`` of every replays.jsonl line the kit writes."""
    return template_file_sha256(READOUT_TEMPLATE)


def oracle_template_sha256() -> str:
    """The ``prompt_sha256`` of every oracle.jsonl line the kit writes."""
    return template_file_sha256(ORACLE_TEMPLATE)


@dataclass(frozen=True)
class InterventionPrompt(Prompt):
    """A readout or oracle prompt: the messages and tools, plus what its record carries.

    ``condition`` is ``readout`` for a readout and O1/O2/O3 for an oracle unit;
    ``template_sha256`` is the record's ``prompt_sha256``; ``input_sha256`` is
    the record's ``evidence_sha256`` (readout) or ``input_sha256`` (oracle)."""

    kind: str = ""  # "readout" | "oracle"
    readout: str | None = None
    source_condition: str | None = None
    budget: str | None = None
    calls_used: int | None = None
    input_sha256: str = ""

    def to_dict(self) -> dict:
        out = super().to_dict()
        if self.kind == "readout":
            out.update(readout=self.readout, source_condition=self.source_condition, budget=self.budget,
                       calls_used=self.calls_used, evidence_sha256=self.input_sha256)
        else:
            out["input_sha256"] = self.input_sha256
        return out


def _render_parts(name: str, context: dict, **extra) -> tuple[str, str]:
    text = _template_bytes(name).decode("utf-8")
    values = {k: v for k, v in context.items() if k != "origin_date"}
    return render(text, part="system", **values, **extra), render(text, part="user", **values, **extra)


def build_readout_prompt(
    archive: Archive, field_id: str, origin: str | date, readout: str, evidence: list[dict], *,
    source_condition: str, budget: str,
) -> InterventionPrompt:
    """The readout prompt of one (episode, source, readout, budget) for the given evidence list."""
    if readout not in READOUTS:
        raise UsageProblem(f"readout {readout!r} is not one of {', '.join(READOUTS)}")
    if source_condition not in SOURCE_CONDITIONS:
        raise UsageProblem(f"source {source_condition!r} is not one of {', '.join(SOURCE_CONDITIONS)}")
    if budget not in BUDGETS:
        raise UsageProblem(f"budget {budget!r} is not one of {', '.join(BUDGETS)}")
    context = unit_context(archive, field_id, origin)
    evidence_bytes = canonical_json(evidence)
    system, user = _render_parts(READOUT_TEMPLATE, context, readout=readout, evidence=evidence_bytes.decode("utf-8"),
                                 n_calls=len(evidence))
    return InterventionPrompt(
        field_id, context["origin_date"], "readout", system, user, tool_schemas(CLOSED_FORECAST), context["max_calls"], context["top_k"],
        readout_template_sha256(), kind="readout", readout=readout, source_condition=source_condition, budget=budget,
        calls_used=len(evidence), input_sha256=hashlib.sha256(evidence_bytes).hexdigest(),
    )


def build_oracle_prompt(archive: Archive, field_id: str, origin: str | date, condition: str, block: dict) -> InterventionPrompt:
    """The exact-history prompt of one O unit for the given counts block."""
    if condition not in ORACLE_CONDITIONS:
        raise UsageProblem(f"condition {condition!r} is not one of {', '.join(ORACLE_CONDITIONS)}")
    context = unit_context(archive, field_id, origin)
    block_bytes = canonical_json(block)
    search = condition == ORACLE_SEARCH
    system, user = _render_parts(ORACLE_TEMPLATE, context, block=block_bytes.decode("utf-8"), search=search,
                                 n_windows=len(block["windows"]))
    return InterventionPrompt(
        field_id, context["origin_date"], condition, system, user, tool_schemas(condition),
        context["max_calls"], context["top_k"], oracle_template_sha256(), kind="oracle",
        input_sha256=hashlib.sha256(block_bytes).hexdigest(),
    )
