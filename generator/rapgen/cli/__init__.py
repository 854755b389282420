"""The ``rapgen`` command line: a thin click layer over the stage libraries.

Each module of this package registers the commands of one stage in ``COMMANDS``;
this file only gathers them into one group.
"""

from __future__ import annotations

import click

from rapgen import __version__
from rapgen.cli import archive_cmds, evaluate_cmds, kit_cmds, release_cmds, sample_cmds, score_cmds, search_cmds, site_cmds, submit_cmds
from rapgen.cli.common import EPILOG


@click.group(epilog=EPILOG, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="rapgen")
def cli() -> None:
    """rapgen: verify, score and publish the RAP benchmark's frozen archive.

    A typical run on the committed sample archive:

    \b
      rapgen verify          # integrity and structural invariants
      rapgen score --out out/scores
      rapgen build           # verify -> score -> render -> site/
    """


for _module in (archive_cmds, release_cmds, sample_cmds, score_cmds, evaluate_cmds, search_cmds, site_cmds, submit_cmds, kit_cmds):
    for _command in _module.COMMANDS:
        cli.add_command(_command)


def main() -> None:
    # click already turns a closed pipe (``rapgen prompt ... | head``) into a quiet exit 1.
    cli(prog_name="rapgen")
