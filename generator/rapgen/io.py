"""Crash-safe file output shared by every stage, and the one background-thread helper the stages'
read-aheads use (:class:`Background`).

Every writer here leaves either the old bytes or the new bytes on disk, never a
mixture: whole files go to a temporary sibling and are renamed over the target;
folders are built under a temporary name and swapped in; ``append_jsonl`` adds
one complete, fsync'd line per call, so a crash loses at most the line being
written and never leaves half of one.

Canonical JSON (the archive's): UTF-8, keys in the order given,
``ensure_ascii=False``, no NaN/Infinity, one object per line, final newline.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import threading
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator

from rapgen.errors import OutputError


def _umask_mode() -> int:
    """0o666 less the process umask: the mode ``open()`` would give a new file."""
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


def _fsync_dir(folder: Path) -> None:
    """Make a rename or a new directory entry durable (best effort where unsupported)."""
    try:
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


@contextmanager
def atomic_path(path: str | Path) -> Iterator[Path]:
    """Yield a temporary path next to ``path``; on success rename it over ``path``.

    For writers that want a file name rather than bytes (e.g. a parquet writer).
    On any exception the temporary file is removed and ``path`` is untouched.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    try:
        yield Path(tmp)
        os.chmod(tmp, _umask_mode())  # mkstemp creates 0600; give the file ordinary permissions
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def atomic_write_bytes(path: str | Path, data: bytes, *, fsync: bool = False) -> None:
    """Write ``data`` to ``path`` via a temporary file in the same folder and a rename."""
    with atomic_path(path) as tmp:
        with open(tmp, "wb") as handle:
            handle.write(data)
            if fsync:
                handle.flush()
                os.fsync(handle.fileno())
    if fsync:
        _fsync_dir(Path(path).parent)


def atomic_write_text(path: str | Path, text: str, *, fsync: bool = False) -> None:
    """``atomic_write_bytes`` of ``text`` encoded as UTF-8 (no newline translation)."""
    atomic_write_bytes(path, text.encode("utf-8"), fsync=fsync)


def dumps_line(obj: object) -> str:
    """One canonical JSONL line, without its newline."""
    return json.dumps(obj, ensure_ascii=False, separators=(", ", ": "), allow_nan=False)


def dumps_document(obj: object) -> str:
    """A canonical JSON document: two-space indent and a final newline."""
    return json.dumps(obj, ensure_ascii=False, indent=2, allow_nan=False) + "\n"


def write_json(path: str | Path, obj: object) -> None:
    atomic_write_bytes(path, dumps_document(obj).encode("utf-8"))


def write_jsonl(path: str | Path, rows: Iterable[object]) -> None:
    atomic_write_bytes(path, "".join(dumps_line(r) + "\n" for r in rows).encode("utf-8"))


def append_jsonl(path: str | Path, obj: object) -> None:
    """Append one canonical JSON line to ``path`` and fsync it before returning.

    The line is encoded first and handed to the kernel in one ``write()`` on a
    descriptor opened with ``O_APPEND``, so it lands whole after the current end
    even if another writer appends too. A file whose last line lacks its newline
    (a crash mid-write on a filesystem that tore it) gets one first, so the new
    line never fuses with a fragment.
    """
    data = (dumps_line(obj) + "\n").encode("utf-8")
    path = Path(path)
    created = not path.exists()
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o666)
    try:
        size = os.fstat(fd).st_size
        if size and _last_byte(path) != b"\n":
            data = b"\n" + data
        written = os.write(fd, data)
        while written < len(data):  # a short write on a regular file is rare (disk full); finish or raise
            written += os.write(fd, data[written:])
        os.fsync(fd)
    finally:
        os.close(fd)
    if created:
        _fsync_dir(path.parent)


def _last_byte(path: Path) -> bytes:
    with open(path, "rb") as handle:
        handle.seek(-1, os.SEEK_END)
        return handle.read(1)


@contextmanager
def staging_dir(parent: str | Path, prefix: str = ".rapgen-") -> Iterator[Path]:
    """A fresh hidden folder inside ``parent`` that is always removed afterwards.

    Build output in it, then move pieces out with :func:`swap_dir` or ``os.replace``
    (same filesystem, so the moves are atomic renames)."""
    parent = Path(parent)
    try:
        parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=prefix, dir=parent))
    except OSError as exc:
        raise OutputError(f"{parent}: cannot create a staging folder ({exc.strerror})") from None
    try:
        yield tmp
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def swap_dir(new: str | Path, target: str | Path) -> None:
    """Put the folder ``new`` at ``target``, replacing any folder there.

    The old folder is renamed aside, the new one renamed in, then the old one
    removed: a reader sees the old tree or the new tree, never a mixture."""
    new, target = Path(new), Path(target)
    if target.exists() or target.is_symlink():
        if not target.is_dir() or target.is_symlink():
            raise OutputError(f"{target}: exists and is not a directory")
        old = target.with_name(f".{target.name}.old-{os.getpid()}")
        shutil.rmtree(old, ignore_errors=True)
        os.replace(target, old)
        try:
            os.replace(new, target)
        except BaseException:
            os.replace(old, target)
            raise
        shutil.rmtree(old, ignore_errors=True)
    else:
        target.parent.mkdir(parents=True, exist_ok=True)
        os.replace(new, target)


@contextmanager
def staged_dir(target: str | Path) -> Iterator[Path]:
    """Yield an empty folder to fill; on success it replaces ``target`` whole.

    On an exception nothing at ``target`` changes and the partial output is removed."""
    target = Path(target)
    with staging_dir(target.parent, prefix=f".{target.name}.") as tmp:
        yield tmp
        swap_dir(tmp, target)


def write_folder(out_dir: str | Path, files: dict[str, bytes], *, prefix: str = ".rapgen-out-") -> list[Path]:
    """Write ``files`` (name → bytes) into ``out_dir``, which may hold other files.

    Every file is first written in full and fsync'd in a temporary folder inside
    ``out_dir``; only then is each renamed into place. A failure before the renames
    leaves the folder as it was; files not named in ``files`` are never touched.
    Raises :class:`OutputError` if ``out_dir`` cannot be a folder."""
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise OutputError(f"{out}: exists and is not a directory")
    with staging_dir(out, prefix=prefix) as tmp:
        for name, data in sorted(files.items()):
            (tmp / name).parent.mkdir(parents=True, exist_ok=True)
            with open(tmp / name, "wb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
        for name in sorted(files):
            (out / name).parent.mkdir(parents=True, exist_ok=True)
            os.replace(tmp / name, out / name)
    return [out / name for name in sorted(files)]


# ---------------------------------------------------------------- where a command may write a folder
PROJECT_DIRS = ("docs", "generator", "templates", "tests", "bench", ".git", ".github", ".ci")


@dataclass(frozen=True)
class OutputKind:
    """A kind of output folder, and so the places it may go (:func:`guard_output_dir`)."""

    what: str  # "site", "docs folder", ... as the refusal names it
    markers: tuple[str, ...] = ()  # files that only a previous output of this kind holds
    replaces: bool = False  # written as a whole, replacing the folder: a non-empty one must carry a marker
    archive_root: bool = False  # the folder becomes an archive root (sample build, synth)
    inside_archive: str | None = None  # the one folder of archive/ it may go into, e.g. "models" (a model folder)


SITE_OUTPUT = OutputKind("site", (".rapgen-site",), replaces=True)
DOCS_OUTPUT = OutputKind("docs folder", ("assets/javascripts/rap.js", ".rapgen-docs"), replaces=True)  # RAP's; a kind's pages
SCORES_OUTPUT = OutputKind("score folder")  # score, replay: writes its own files, keeps any others
WORK_OUTPUT = OutputKind("work folder")
CACHE_OUTPUT = OutputKind("cache folder")
CACHE_ENV = "RAPGEN_CACHE"
DEFAULT_CACHE = ".rapgen-cache"
ARCHIVE_OUTPUT = OutputKind("archive", archive_root=True)
MODEL_OUTPUT = OutputKind("model folder", inside_archive="models")
FOLDER_OUTPUT = OutputKind("output folder")  # any other folder a command fills with files of its own
COMMITMENT_OUTPUT = OutputKind("commitment", archive_root=True, inside_archive="commitments")  # the folder of a commitment file


def cache_root(root: str | Path, cache_dir: str | Path | None = None) -> Path:
    """The cache of derived files for the archive at ``root`` (Search indexes, kept draws):
    ``cache_dir``, else ``$RAPGEN_CACHE``, else ``<root>/.rapgen-cache`` — never an archive or
    the project's own folders (:func:`guard_output_dir`)."""
    if cache_dir is None:
        cache_dir = os.environ.get(CACHE_ENV) or Path(root) / DEFAULT_CACHE
    return Path(guard_output_dir(cache_dir, CACHE_OUTPUT))


def is_archive_root(folder: Path) -> bool:
    """A folder holding SHA256SUMS or an archive (archive/ARCHIVE.json): the repository root."""
    return (folder / "SHA256SUMS").is_file() or (folder / "archive" / "ARCHIVE.json").is_file()


def guard_output_dir(path: str | Path, kind: OutputKind) -> Path:
    """Refuse (:class:`UsageProblem`, exit 2) a folder ``kind`` must not be written into; return ``path``.

    The one rule for every command that writes a folder: never an archive root (unless
    the output *is* an archive), never inside an archive's ``archive/`` (a model folder
    may go into ``archive/models/``), never the project's own folders beside it
    (docs/, generator/, .git/, …), followed through symbolic links; and an output
    that replaces its folder never replaces a non-empty one that is not a previous
    output of its kind (which carries one of ``kind.markers``)."""
    from rapgen.errors import UsageProblem

    target = Path(path)

    def refuse(why: str) -> UsageProblem:
        return UsageProblem(f"{target}: refusing to write the {kind.what} there: {why}")

    if target.exists() and not target.is_dir():
        raise refuse("it exists and is not a folder")
    real = target.resolve()
    for folder in (real, *real.parents):
        if not is_archive_root(folder):
            continue
        parts = real.relative_to(folder).parts
        if not parts:
            if not kind.archive_root:
                raise refuse("it is an archive root (it holds SHA256SUMS or archive/); choose a folder of its own")
        elif parts[0] == "archive":
            if len(parts) == 1:
                raise refuse(f"it is the archive of {folder}")
            if not (kind.inside_archive and len(parts) >= 3 and parts[1] == kind.inside_archive):
                raise refuse(f"it lies inside the archive {folder / 'archive'}, which only the archive's own commands change")
        elif parts[0] in PROJECT_DIRS and len(parts) == 1:
            raise refuse(f"it is the project's own {parts[0]}/ folder")
    if kind.replaces and real.is_dir() and any(real.iterdir()) and not any((real / m).is_file() for m in kind.markers):
        raise UsageProblem(f"{target}: refusing to build into a non-empty folder that rapgen did not build "
                           f"(the {kind.what} replaces the whole folder); choose a new or empty folder")
    return target


class Background:
    """``fn()`` started in a daemon thread at once; :meth:`result` waits for it and returns its value,
    or raises what it raised, so a failure surfaces where the caller would have met it."""

    def __init__(self, fn: Callable[[], Any], *, name: str | None = None):
        self._value: Any = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, args=(fn,), daemon=True, name=name)
        self._thread.start()

    def _run(self, fn: Callable[[], Any]) -> None:
        try:
            self._value = fn()
        except BaseException as exc:  # noqa: BLE001 - raised again by result(), in the caller
            self._error = exc

    def join(self) -> None:
        """Wait for ``fn`` to end, however it ends."""
        self._thread.join()

    def result(self) -> Any:
        self.join()
        if self._error is not None:
            raise self._error
        return self._value
