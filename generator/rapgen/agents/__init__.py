"""Deterministic reference agents that run the A0–A4 protocol through the Search backend.

Public surface: :data:`REFERENCE_AGENTS` (their specifications),
:func:`run_agents` (write model folders into a directory) and
:func:`add_agents_to_archive` (write them into ``archive/models/`` of a root,
never overwriting a model; seal afterwards with ``rapgen seal``).
"""

from rapgen.agents.interventions import intervention_files
from rapgen.agents.run import REFERENCE_AGENTS, AgentSpec, add_agents_to_archive, run_agents

__all__ = ["REFERENCE_AGENTS", "AgentSpec", "run_agents", "add_agents_to_archive", "intervention_files"]
