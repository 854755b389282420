"""Citing: CITATION.cff for the software (valid Citation File Format 1.2.0) and the BibTeX entry of a
release (its number, date and manifest digest, every special character escaped)."""

from __future__ import annotations

import json
import tomllib
from datetime import date
from pathlib import Path

import jsonschema
import pytest
import yaml

from rapgen.archive.croissant import ReleaseCitation, bibtex, bibtex_text

REPO = Path(__file__).resolve().parent.parent
SCHEMA = json.loads((Path(__file__).parent / "schemas" / "citation-file-format-1.2.0.json").read_text())


def cff_errors(doc: dict) -> list[str]:
    validator = jsonschema.Draft7Validator(SCHEMA, format_checker=jsonschema.FormatChecker())
    return sorted(e.message for e in validator.iter_errors(doc))


def citation() -> dict:
    return yaml.safe_load((REPO / "CITATION.cff").read_text(encoding="utf-8"))


def test_citation_cff_is_valid_under_the_cff_1_2_0_schema():
    assert cff_errors(citation()) == []


def test_citation_cff_names_the_package_as_pyproject_does():
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    doc = citation()
    assert doc["cff-version"] == "1.2.0" and doc["type"] == "software"
    assert doc["version"] == project["version"] and doc["license"] == project["license"]["text"] == "MIT"
    paper = doc["references"][0]
    assert paper["url"] == "https://arxiv.org/abs/2609.10092" and [a["family-names"] for a in paper["authors"]][:2] == ["Liang", "Wang"]


@pytest.mark.parametrize("edit", [
    lambda d: d.pop("authors"),
    lambda d: d.update({"cff-version": "9.9"}),
    lambda d: d.update(license="not-a-licence"),
    lambda d: d.update(type="novel"),
    lambda d: d["references"][0]["authors"][0].update(email="not an address"),
])
def test_the_schema_check_rejects_an_invalid_citation(edit):
    doc = citation()
    edit(doc)
    assert cff_errors(doc)


# ---------------------------------------------------------------- a release's BibTeX entry
RELEASE = ReleaseCitation("RAP sample archive — not the RAP release", 3, date(2024, 7, 1), "roll",
                          "archive/releases/0003.SHA256SUMS", "ab" * 32)


def test_bibtex_names_the_release_number_date_and_manifest_digest():
    assert bibtex(RELEASE) == (
        "@misc{rap-release-3,\n"
        "  title = {{RAP sample archive — not the RAP release}, release 3},\n"
        "  year = {2024},\n"
        "  month = jul,\n"
        "  version = {3},\n"
        f"  note = {{Release 3 (roll) of 2024-07-01; manifest archive/releases/0003.SHA256SUMS, SHA-256 {'ab' * 32}}}\n"
        "}\n"
    )


def test_bibtex_without_a_digest_or_with_a_url():
    from dataclasses import replace

    text = bibtex(replace(RELEASE, digest=None, url="https://example.org/rap?x={y}"))
    assert "SHA-256" not in text and "manifest archive/releases/0003.SHA256SUMS}" in text
    assert "  url = {https://example.org/rap?x=%7By%7D}\n" in text


@pytest.mark.parametrize("raw, escaped", [
    ("50% & more_data #1", r"50\% \& more\_data \#1"),
    ("{braces} $x$", r"\{braces\} \$x\$"),
    ("back\\slash ~ ^", r"back\textbackslash{}slash \textasciitilde{} \textasciicircum{}"),
    ("two\n lines\t here", "two lines here"),
])
def test_bibtex_text_escapes_what_bibtex_would_read(raw, escaped):
    assert bibtex_text(raw) == escaped
