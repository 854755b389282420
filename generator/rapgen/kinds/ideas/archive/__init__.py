"""The Ideas archive's files (IDEAS.md §1–§4), parsed into records with findings, and their invariants.

Parsers take ``(path, bytes)`` and return ``(records, findings)``; checkers
compare a parsed file with what the rules rebuild and return findings
(``MALFORMED`` for a file that breaks its schema, ``INVARIANT`` for one that
disagrees with the rebuilt truth). :func:`check_archive` runs them all.
"""
