"""Walk ``archive/`` without following symlinks and hash files safely (VERIFY.md steps 3–4)."""

from __future__ import annotations

import hashlib
import os
import stat
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Callable, Iterable

from rapgen.archive.layout import ARCHIVE_DIR

CHUNK = 1 << 20  # 1 MiB reads: constant memory per worker


@dataclass(frozen=True)
class Entry:
    """One thing found under archive/: ``kind`` is file, dir, symlink, other or unreadable."""

    path: str
    kind: str
    size: int = 0
    detail: str = ""


def walk(root: str, top: str = ARCHIVE_DIR) -> dict[str, Entry]:
    """Classify every entry below ``root/top`` (relative POSIX paths). Never follows symlinks."""
    found: dict[str, Entry] = {}
    stack = [top]
    while stack:
        rel = stack.pop()
        try:
            with os.scandir(os.path.join(root, rel)) as it:
                children = list(it)
        except OSError as exc:
            found[rel] = Entry(rel, "unreadable", detail=exc.strerror or str(exc))
            continue
        for child in children:
            child_rel = f"{rel}/{child.name}"
            try:
                st = child.stat(follow_symlinks=False)
            except OSError as exc:
                found[child_rel] = Entry(child_rel, "unreadable", detail=exc.strerror or str(exc))
                continue
            if stat.S_ISLNK(st.st_mode):
                found[child_rel] = Entry(child_rel, "symlink", detail=_link_target(child.path))
            elif stat.S_ISDIR(st.st_mode):
                found[child_rel] = Entry(child_rel, "dir")
                stack.append(child_rel)
            elif stat.S_ISREG(st.st_mode):
                found[child_rel] = Entry(child_rel, "file", st.st_size)
            else:
                found[child_rel] = Entry(child_rel, "other", detail=_kind_name(st.st_mode))
    return found


def _link_target(path: str) -> str:
    try:
        return "-> " + os.readlink(path)
    except OSError:
        return ""


def _kind_name(mode: int) -> str:
    for test, name in ((stat.S_ISFIFO, "FIFO"), (stat.S_ISSOCK, "socket"), (stat.S_ISCHR, "character device"), (stat.S_ISBLK, "block device")):
        if test(mode):
            return name
    return "special file"


@dataclass(frozen=True)
class HashResult:
    path: str
    digest: str | None
    size: int
    error: str = ""
    not_regular: bool = False
    data: bytearray | None = field(default=None, repr=False, compare=False)  # the bytes hashed, if kept


def hash_file(root: str, rel: str, keep: bool = False) -> HashResult:
    """SHA-256 of one file, opened so that a symlink or FIFO is never followed or blocks.

    With ``keep``, the bytes that were hashed are returned too (``data``), so a
    caller can parse exactly what it verified without reading the file again."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(os.path.join(root, rel), flags)
    except OSError as exc:
        return HashResult(rel, None, 0, exc.strerror or str(exc))
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return HashResult(rel, None, 0, _kind_name(st.st_mode), not_regular=True)
        # Back to blocking reads for the regular file.
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        if hasattr(os, "posix_fadvise"):
            try:
                os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_SEQUENTIAL)
            except OSError:
                pass
        h = hashlib.sha256()
        buf = bytearray(CHUNK)
        view = memoryview(buf)
        total = 0
        kept = bytearray() if keep else None  # grown in place: one copy of the file, never two
        while True:
            n = os.readv(fd, [buf])
            if not n:
                break
            h.update(view[:n])  # hashlib releases the GIL for large updates: threads run in parallel
            if kept is not None:
                kept += view[:n]
            total += n
        return HashResult(rel, h.hexdigest(), total, data=kept)
    except OSError as exc:
        return HashResult(rel, None, 0, exc.strerror or str(exc))
    finally:
        os.close(fd)


def hash_files(
    root: str,
    paths: Iterable[str],
    *,
    jobs: int | None = None,
    on_done: Callable[[HashResult], None] | None = None,
    keep: Callable[[str], bool] | None = None,
) -> dict[str, HashResult]:
    """Hash many files on ``jobs`` threads (default: every core), in the order given.

    ``keep(path)`` True asks for that file's bytes as well (see :func:`hash_file`)."""
    paths = list(paths)
    keep = keep or (lambda _path: False)
    jobs = jobs or os.cpu_count() or 1
    results: dict[str, HashResult] = {}
    if jobs == 1 or len(paths) < 2:
        for p in paths:
            r = hash_file(root, p, keep(p))
            results[p] = r
            if on_done:
                on_done(r)
        return results
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        for r in pool.map(lambda p: hash_file(root, p, keep(p)), paths):
            results[r.path] = r
            if on_done:
                on_done(r)
    return results
