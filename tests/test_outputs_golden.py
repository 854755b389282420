"""RAP's outputs, held byte for byte: every score file, every rendered page and every built file.

Two archives are built with ``rapgen build --resamples 200``: the committed sample, and
``rapgen synth --scale small --seed 1`` (whose last release is errata); each as it stands
and as one past release (``--release 3`` and ``--release 9``, the release before synth1's
errata). The sample as it stands is built as the README builds it: ``rapgen build`` in a copy
of this repository's rapgen.toml and benchmarks, the portal (the ``portal_build`` fixture of
conftest.py), whose RAP part is compared at its place there: ``build/rap/scores/`` as
``scores/``, ``build/docs/rap/`` as ``docs/``, ``site/rap/`` and ``site/zh/rap/`` as ``site/``
and ``site/zh/``; the folders the benchmarks share (``docs/assets/``, ``site/assets/``) for the
files RAP's lists name (the others are Inspire's and Ideas'), and the site's ``404.html`` pages
and marker. The portal's own pages, the other benchmarks, the redirect stubs and the search
index (one for every benchmark) are tests/test_portal.py's. The past releases and synth1 are
bare archive roots (``--root``, ``--release``): one benchmark alone, at ``/``.
``golden/outputs/<name>.sha256`` lists the SHA-256 of every file under ``scores/``,
``docs/`` and ``site/`` (but the dated sitemap) as revision beabbaa wrote them; those lists are never edited.
A file whose bytes were changed on purpose since then is named in
``golden/outputs/changed.json`` with its new digest and the reason; every other file
must match the baseline exactly, and no file may appear or disappear unannounced: a file no longer
written on purpose has a null digest in changed.json, and a file written since on purpose (a new
page, a new score file) is there with its digest, each with its reason.

To record the lists again (a deliberate change of the outputs), build both archives as
the fixtures below do and run ``python tests/test_outputs_golden.py changed NAME WORK SITE
--reason TEXT`` (for the portal build add ``--portal rap``; WORK and SITE are then its build/
and site/): it adds every file that now differs from NAME.sha256, or is new, to changed.json,
a file changed again keeping its earlier reason with the new one after it.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import sys
from pathlib import Path

import pytest
from blas_kernel import BASELINE_KERNEL, BLAS_KERNEL

GOLDEN = Path(__file__).parent / "golden" / "outputs"
CHANGED = GOLDEN / "changed.json"
RESAMPLES = "200"  # the baselines were built with the same count (the ledger's 10,000 takes minutes)
REPO = Path(__file__).resolve().parent.parent
# mkdocs stamps the sitemap with the day of the build (<lastmod>): the only bytes that depend on the date
DATED = {"site/sitemap.xml", "site/sitemap.xml.gz"}


def output_digests(work: Path, site: Path) -> dict[str, str]:
    """``scores/…``, ``docs/…`` and ``site/…`` path -> SHA-256 of its bytes."""
    out = {}
    for area, folder in (("scores", work / "scores"), ("docs", work / "docs"), ("site", site)):
        for path in sorted(p for p in folder.rglob("*") if p.is_file()):
            out[f"{area}/{path.relative_to(folder).as_posix()}"] = hashlib.sha256(path.read_bytes()).hexdigest()
    return {p: d for p, d in out.items() if p not in DATED}


def portal_digests(work: Path, site: Path, slug: str, known: set[str]) -> dict[str, str]:
    """Benchmark ``slug``'s outputs in a portal build, named as its own site names them: its scores,
    docs and pages moved back from ``<slug>/``, the shared asset files that ``known`` names, the 404 pages."""
    out = {}
    for area, folder in (("scores", work / slug / "scores"), ("docs", work / "docs" / slug), ("site", site / slug),
                         ("site/zh", site / "zh" / slug)):
        for path in sorted(p for p in folder.rglob("*") if p.is_file()):
            out[f"{area}/{path.relative_to(folder).as_posix()}"] = hashlib.sha256(path.read_bytes()).hexdigest()
    for area, folder in (("docs/assets", work / "docs" / "assets"), ("site/assets", site / "assets")):
        for path in sorted(p for p in folder.rglob("*") if p.is_file()):
            name = f"{area}/{path.relative_to(folder).as_posix()}"
            if name in known:
                out[name] = hashlib.sha256(path.read_bytes()).hexdigest()
    for name in ("404.html", "zh/404.html", ".rapgen-site"):
        if (site / name).is_file():
            out[f"site/{name}"] = hashlib.sha256((site / name).read_bytes()).hexdigest()
    return out


def known_paths(name: str) -> set[str]:
    """Every output path NAME's baseline or changed.json names."""
    return set(read_list(name)) | set(changed_files().get(name, {}))


def read_list(name: str) -> dict[str, str]:
    lines = (GOLDEN / f"{name}.sha256").read_text(encoding="utf-8").splitlines()
    return {path: digest for digest, path in (line.split("  ", 1) for line in lines if line)}


def write_list(name: str, digests: dict[str, str]) -> None:
    (GOLDEN / f"{name}.sha256").write_text("".join(f"{d}  {p}\n" for p, d in sorted(digests.items())), encoding="utf-8")


def changed_files() -> dict[str, dict[str, dict[str, str]]]:
    return json.loads(CHANGED.read_text(encoding="utf-8")) if CHANGED.is_file() else {}


def _build(root: Path, base: Path, release: int | None = None) -> dict[str, str]:
    from click.testing import CliRunner

    from rapgen.cli import cli

    work, site = base / "work", base / "site"
    more = [] if release is None else ["--release", str(release)]
    result = CliRunner().invoke(cli, ["build", "--root", str(root), "--site-dir", str(site), "--work-dir", str(work),
                                      "--resamples", RESAMPLES, *more], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return output_digests(work, site)


@pytest.fixture(scope="module")
def sample_root(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("golden-sample") / "repo"
    root.mkdir()
    shutil.copytree(REPO / "archive", root / "archive")
    shutil.copy2(REPO / "SHA256SUMS", root / "SHA256SUMS")
    return root


@pytest.fixture(scope="module")
def portal_sample(portal_build) -> dict[str, str]:
    repo, _ = portal_build
    return portal_digests(repo / "build", repo / "site", "rap", known_paths("sample"))


@pytest.fixture(scope="module")
def synth_root(tmp_path_factory) -> Path:
    from click.testing import CliRunner

    from rapgen.cli import cli

    root = tmp_path_factory.mktemp("golden-synth1") / "synth1"
    result = CliRunner().invoke(cli, ["synth", "--scale", "small", "--seed", "1", "--out", str(root)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return root


# name -> (archive, --release): the latest state of each, and one past release of each (for synth1 the
# release before its errata release, so it is rebuilt from the bytes the errata replaced); the sample as
# it stands is RAP's part of the portal build
BUILDS = {"sample": ("portal_sample", None), "sample-release3": ("sample_root", 3),
          "synth1": ("synth_root", None), "synth1-release9": ("synth_root", 9)}


def _compare(name: str, actual: dict[str, str]) -> list[str]:
    baseline = read_list(name)
    changed = changed_files().get(name, {})
    removed = {p for p, entry in changed.items() if entry["sha256"] is None}  # no longer written, on purpose
    added = {p for p, entry in changed.items() if p not in baseline}  # written since beabbaa, on purpose
    problems = [f"{p}: new file (not in {name}.sha256 nor changed.json)" for p in sorted(set(actual) - set(baseline) - added)]
    problems += [f"{p}: changed.json names it as a new file, but it is not written" for p in sorted(added - set(actual))]
    problems += [f"{p}: no longer written" for p in sorted(set(baseline) - set(actual) - removed)]
    problems += [f"{p}: changed.json says it is no longer written, but it is" for p in sorted(removed & set(actual))]
    for path in sorted(set(actual) & (set(baseline) | added)):
        want = changed[path]["sha256"] if path in changed else baseline[path]
        if actual[path] != want:
            problems.append(f"{path}: bytes differ from " + ("changed.json" if path in changed else f"{name}.sha256 (beabbaa)"))
    problems += [f"{p}: listed in changed.json but equal to the baseline" for p in sorted(changed)
                 if p in baseline and changed[p]["sha256"] == baseline[p]]
    return problems


@pytest.mark.skipif(BLAS_KERNEL != BASELINE_KERNEL, reason=f"the baselines hold OpenBLAS's {BASELINE_KERNEL} kernel's last bits, "
                    "and this CPU cannot run it (no AVX-512); see tests/blas_kernel.py")
@pytest.mark.parametrize("name", list(BUILDS))
def test_outputs_are_the_baselines(name, request, tmp_path):
    fixture, release = BUILDS[name]
    built = request.getfixturevalue(fixture)
    problems = _compare(name, built if isinstance(built, dict) else _build(built, tmp_path, release))
    assert not problems, f"{len(problems)} output files differ:\n" + "\n".join(problems[:40])


def test_every_changed_file_says_why():
    for name, files in changed_files().items():
        baseline = read_list(name)
        for path, entry in files.items():
            assert path in baseline or entry.get("sha256"), f"{name}: {path} is neither a baseline output nor a new file"
            assert set(entry) == {"sha256", "reason"} and entry["reason"].strip(), f"{name}: {path} needs a digest and a reason"


def _reason(entry: dict | None, digest: str | None, reason: str) -> str:
    """An entry's reason: the earlier one while its digest stands, the new one after it when it changes again."""
    if entry is None:
        return reason
    if entry["sha256"] == digest or reason in entry["reason"]:
        return entry["reason"]
    return f"{entry['reason'].rstrip('.')}; then: {reason}"


def _main(argv: list[str]) -> int:
    """``record NAME WORK SITE`` writes NAME.sha256 (the baseline); ``changed NAME WORK SITE --reason TEXT``
    adds every file that differs from it, or is new, to changed.json; ``--portal SLUG``: WORK and SITE
    are a portal build's, whose benchmark SLUG is compared (:func:`portal_digests`)."""
    command, name, work, site = argv[:4]
    if "--portal" in argv:
        digests = portal_digests(Path(work), Path(site), argv[argv.index("--portal") + 1], known_paths(name))
    else:
        digests = output_digests(Path(work), Path(site))
    if command == "record":
        write_list(name, digests)
        return 0
    reason = argv[argv.index("--reason") + 1]
    baseline = read_list(name)
    changed = changed_files()
    mine = changed.setdefault(name, {})
    for path in [p for p in mine if p not in baseline and p not in digests]:
        del mine[path]  # a new file that is no longer written
    for path, digest in sorted(digests.items()):
        if baseline.get(path) != digest:  # changed, or new
            mine[path] = {"sha256": digest, "reason": _reason(mine.get(path), digest, reason)}
        elif path in mine:
            del mine[path]
    for path in sorted(set(baseline) - set(digests)):
        mine[path] = {"sha256": None, "reason": _reason(mine.get(path), None, reason)}
    CHANGED.write_text(json.dumps(changed, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
