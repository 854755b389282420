"""RAP's reference agents as steps of ``rapgen reference-agents`` (the agents live in :mod:`rapgen.agents`)."""

from __future__ import annotations

from pathlib import Path


def reference_list() -> list[tuple[str, str, str]]:
    """(model id, the policies it answers, display name) of each reference agent."""
    from rapgen.agents import REFERENCE_AGENTS

    return [(spec.model_id, " ".join(sorted(spec.policies)), spec.display_name) for spec in REFERENCE_AGENTS]


def reference_run(root: Path, out: Path | None, *, agent_ids, into_archive: bool, cache_dir, submitted, release=None) -> list[dict]:
    """The reference agents on every field x origin, into ``out``/<id>/ or the archive's models/."""
    from rapgen.agents import add_agents_to_archive, run_agents

    if into_archive:
        return add_agents_to_archive(root, agent_ids=agent_ids, cache_dir=cache_dir, submitted=submitted)
    return run_agents(root, out, agent_ids=agent_ids, cache_dir=cache_dir, submitted=submitted)
