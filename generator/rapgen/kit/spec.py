"""What the kit's commands read of a benchmark kind (KINDS.md §7): :class:`KitSpec`.

``rapgen prompt``, ``rapgen serve-search``, ``rapgen agent run`` and ``rapgen
reference-agents`` are one command each for every kind. A command collects the
options it was given, finds the root's kind, and hands them to that kind's
:class:`KitCommand`; an option the kind does not take is a usage error naming
the options it does take. A kind without a step (Ideas has no Search server)
leaves it None, and the command says so.

Each step's signature (``root`` is the benchmark root; the options arrive as
keywords under their parameter names, only those the user gave):

- ``prompt(root, **options)`` -> an object with ``system``, ``user``, ``tools``,
  ``prompt_sha256``, ``template_sha256`` and ``to_dict()``;
- ``serve(root, *, host, port, traces, mcp, mcp_port, cache_dir, announce, **options)``;
- ``run(root, out_dir, config, *, on_unit, **options)`` with ``config`` a
  :class:`~rapgen.kit.runner.AgentConfig`, returning a summary with ``to_dict()``
  and ``lines()`` (what the command prints);
- ``reference_list()`` -> ``[(model_id, what it answers, display name)]`` and
  ``reference_run(root, out, *, agent_ids, into_archive, cache_dir, submitted)``
  -> a list of summaries (``model_id``, ``units``, ``calls``, ``max_calls_per_unit``, ``path``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from rapgen.errors import UsageProblem


@dataclass(frozen=True)
class KitCommand:
    """One kit step of a kind and the options it takes (parameter names, e.g. ``instance_id``)."""

    step: Callable[..., Any] = field(repr=False, compare=False)
    options: tuple[str, ...] = ()

    def __call__(self, *args: Any, **options: Any) -> Any:
        return self.step(*args, **options)


@dataclass(frozen=True)
class KitSpec:
    """A kind's kit: each command's step (None: the kind has no such command)."""

    prompt: KitCommand | None = None
    serve: KitCommand | None = None
    run: KitCommand | None = None
    reference_list: Callable[[], list[tuple[str, str, str]]] | None = field(default=None, repr=False, compare=False)
    reference_run: Callable[..., list[dict]] | None = field(default=None, repr=False, compare=False)


def given_options(command: str, kind_name: str, step: KitCommand | None, given: dict[str, tuple[str, Any]]) -> dict[str, Any]:
    """The options of ``given`` (parameter name -> (flag, value), value None when not given) that
    ``step`` takes; a usage error for a command the kind lacks or an option it does not take."""
    if step is None:
        raise UsageProblem(f"rapgen {command} has nothing to do for a benchmark of kind {kind_name!r}")
    chosen = {name: value for name, (_, value) in given.items() if value is not None and value != ()}
    foreign = [given[name][0] for name in chosen if name not in step.options]
    if foreign:
        takes = [given[name][0] for name in given if name in step.options]
        raise UsageProblem(f"{foreign[0]} is not an option of rapgen {command} for a benchmark of kind {kind_name!r}"
                           + (f" (it takes {', '.join(takes)})" if takes else ""))
    return chosen
