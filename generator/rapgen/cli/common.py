"""Shared option decorators and the one place errors become exit codes.

Exit codes for every command: 0 success, 1 a failed check or bad data,
2 a usage error, 3 an unexpected internal error (traceback only with --debug).
"""

from __future__ import annotations

import functools
import json
import sys
import traceback
from pathlib import Path
from typing import Any, Callable

import click

from rapgen.errors import RapgenError

EPILOG = "Exit codes: 0 success, 1 failed check or bad data, 2 usage error, 3 internal error."


def root_option(f: Callable) -> Callable:
    """``--root DIR``: the repository root holding SHA256SUMS and archive/."""
    return click.option(
        "--root",
        type=click.Path(file_okay=False, path_type=Path),
        default=Path("."),
        show_default=True,
        help="Repository root that holds SHA256SUMS and archive/.",
    )(f)


def json_option(f: Callable) -> Callable:
    return click.option("--json", "as_json", is_flag=True, help="Print machine-readable JSON on stdout.")(f)


def debug_option(f: Callable) -> Callable:
    return click.option("--debug", is_flag=True, help="Show a traceback on an internal error.")(f)


def echo_json(obj: Any) -> None:
    click.echo(json.dumps(obj, indent=2, ensure_ascii=False, default=str))


def fail(message: str, code: int = 1) -> None:
    """Print ``Error: message`` on stderr and exit with ``code``."""
    click.echo(f"Error: {message}", err=True)
    sys.exit(code)


def handle_errors(f: Callable) -> Callable:
    """Map RapgenError to its exit code and anything unexpected to exit 3.

    The wrapped command may take a ``debug`` keyword (from :func:`debug_option`).
    """

    @functools.wraps(f)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        debug = kwargs.get("debug", False)
        try:
            return f(*args, **kwargs)
        except RapgenError as exc:
            fail(str(exc), exc.exit_code)
        except (click.exceptions.Exit, click.ClickException, click.Abort, SystemExit, BrokenPipeError):
            raise  # click reports these itself (a closed pipe becomes a quiet exit 1)
        except KeyboardInterrupt:
            fail("interrupted", 130)
        except Exception as exc:  # noqa: BLE001 - the boundary of the program
            if debug:
                traceback.print_exc()
            fail(f"internal error: {type(exc).__name__}: {exc} (rerun with --debug for a traceback)", 3)

    return wrapper


def progress(iterable, *, length: int | None = None, label: str = ""):
    """A progress bar on a terminal; silent otherwise (CI logs, pipes)."""
    return click.progressbar(iterable, length=length, label=label, file=sys.stderr if sys.stderr.isatty() else _Null())


class _Null:
    def write(self, *_: Any) -> None:
        pass

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return False


def benchmark_kinds():
    """The benchmark kinds the commands choose from (:func:`rapgen.kinds.registry`, looked up on each call)."""
    import rapgen.kinds

    return rapgen.kinds.registry()


def open_release(root: Path, number: int | None = None):
    """Verify ``root`` among the known kinds; return (its kind, the release ``number`` view)."""
    from rapgen.archive import open_verified
    from rapgen.search import validate_call

    kinds = benchmark_kinds()
    verified = open_verified(root, validate_call=validate_call, kinds=kinds.formats)
    return kinds.for_format(verified.format), verified.release(number)
