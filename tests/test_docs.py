"""Every command explains itself, and the README names every top-level command."""

from __future__ import annotations

from pathlib import Path

import click
import pytest

from rapgen.cli import cli

README = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")


def _commands(group: click.Group, prefix: tuple[str, ...] = ()):
    for name, command in sorted(group.commands.items()):
        path = prefix + (name,)
        yield path, command
        if isinstance(command, click.Group):
            yield from _commands(command, path)


COMMANDS = list(_commands(cli))


@pytest.mark.parametrize("path,command", COMMANDS, ids=[" ".join(p) for p, _ in COMMANDS])
def test_command_and_options_have_help(path, command):
    assert (command.help or "").strip(), f"rapgen {' '.join(path)} has no help text"
    for param in command.params:
        if isinstance(param, click.Option) and not param.hidden:
            assert (param.help or "").strip(), f"rapgen {' '.join(path)} {param.opts[0]} has no help text"


@pytest.mark.parametrize("name", sorted(cli.commands))
def test_readme_names_every_command(name):
    assert f"rapgen {name}" in README, f"README does not mention 'rapgen {name}'"
