"""RAP's archive: the ``rap-archive`` format, its checks and its release view (all in :mod:`rapgen.archive`)."""

from __future__ import annotations

from rapgen.archive import RAP_ARCHIVE, RAP_HISTORY

ARCHIVE = RAP_ARCHIVE
HISTORY = RAP_HISTORY
