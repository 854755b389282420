"""Render the score outputs and the archive's descriptions into a Markdown docs folder.

``render_docs`` writes every page, the static assets (plotly.js once, tablesort,
the two small hooks) and the leaderboard downloads into a temporary sibling
folder, then swaps it into place: a failure never leaves half a site. Output is
deterministic — sorted, fixed formatting, no timestamps.
"""

from __future__ import annotations

import json
import os
import pickle
import shutil
import tempfile
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Callable

if TYPE_CHECKING:  # jinja2 is imported where a template is made or read (start-up stays light)
    import jinja2

from rapgen.archive import RapRelease, Release
from rapgen.errors import SiteError
from rapgen.resources import templates_dir as packaged_templates
from rapgen.site.env import make_environment
from rapgen.site.inputs import ScoreOutputs, load_score_outputs
from rapgen.site.cells import CONDITION_LABEL, LEADER_CONDITIONS, METRIC_LABEL, SPLIT_LABEL, SPLITS, TRACK_LABEL, SiteModel, page_url
from rapgen.site.model import build_site_model
from rapgen.site.spec import SiteSpec
from rapgen.site.pages.switch import LEADER_METRICS
from rapgen.scores import POLICIES, SCORE_FILES
from rapgen.site.inputs import read_score_table
from rapgen.io import DOCS_OUTPUT, guard_output_dir
from rapgen.site.i18n import (
    DEFAULT_LANGUAGE, LANGUAGES, Catalogue, load_catalogues, localized, merge_catalogues, page_translations, speaking, t,
)

STATIC_ASSETS = (
    "assets/javascripts/tablesort.min.js",
    "assets/javascripts/tablesort.number.min.js",
    "assets/javascripts/charts.js",
    "assets/javascripts/tables.js",
    "assets/javascripts/rap.js",
    "assets/javascripts/leaderboard.js",
    "assets/javascripts/compare.js",
    "assets/javascripts/field.js",
    "assets/javascripts/alternate.js",
    "assets/stylesheets/rap.css",
)
PLOTLY_ASSET = "assets/javascripts/plotly.min.js"


@dataclass(frozen=True)
class RenderResult:
    docs_dir: Path
    pages: tuple[str, ...]
    synthetic: bool
    manifest_sha256: str
    archive_name: str


def plotly_js_path() -> Path:
    """plotly.min.js as shipped in the installed plotly package's package_data."""
    import plotly

    path = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"
    if not path.is_file():
        raise SiteError(f"{path}: missing from the installed plotly package; reinstall plotly")
    return path


def _write(base: Path, rel: str, text: str) -> None:
    path = base / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode("utf-8"))


def _pages(site: SiteModel) -> list[tuple[str, str, dict]]:
    """(output path, template, extra context) for every page, in a fixed order."""
    pages = [
        ("index.md", "pages/index.md.j2", {}),
        ("leaderboard.md", "pages/leaderboard.md.j2", {}),
        ("fields/index.md", "pages/fields_index.md.j2", {}),
        ("models/index.md", "pages/models_index.md.j2", {}),
        ("diagnostics.md", "pages/diagnostics.md.j2", {}),
        ("paper.md", "pages/paper.md.j2", {}),
        ("archive.md", "pages/archive.md.j2", {}),
        ("submit.md", "pages/submit.md.j2", {}),
    ]
    if site.releases is not None:
        pages.insert(2, ("releases.md", "pages/releases.md.j2", {}))
    if site.compare is not None:
        pages.insert(2, ("compare.md", "pages/compare.md.j2", {}))
    pages += [(p.path, "pages/field.md.j2", {"f": p}) for p in site.field_pages]
    pages += [(p.path, "pages/model.md.j2", {"m": p}) for p in site.model_pages]
    return pages


def _downloads(outputs: ScoreOutputs, site: SiteModel) -> dict[str, str]:
    """The leaderboard as CSV (the scoring stage's file, verbatim) and JSON (its rows as records)."""
    csv_text = outputs.files["leaderboard.csv"].read_text(encoding="utf-8")
    frame = outputs.leaderboard
    records = []
    for row in frame.to_dict("records"):
        rec = {}
        for k, v in row.items():
            if isinstance(v, float) and v != v:  # NaN -> null
                v = None
            elif hasattr(v, "item"):
                v = v.item()
            rec[k] = v
        records.append(rec)
    doc = {"schema_version": 1, "manifest_sha256": site.manifest_sha256, "columns": list(frame.columns), "rows": records}
    out = {"downloads/leaderboard.csv": csv_text,
           "downloads/leaderboard.json": json.dumps(doc, indent=1, sort_keys=False, allow_nan=False) + "\n"}
    if site.releases is not None and outputs.releases is not None:
        out["downloads/releases.csv"] = (outputs.folder / "releases.csv").read_text(encoding="utf-8")
    for name in sorted(outputs.interventions):  # the interventions' files, verbatim (the page shows summaries)
        out[f"downloads/{name}"] = (outputs.folder / name).read_text(encoding="utf-8")
    if site.diagnostics_meta.get("present"):
        out["downloads/diagnostics.json"] = (outputs.folder / "diagnostics.json").read_text(encoding="utf-8")
    for section in site.diagnostics:  # the per-episode lists the Diagnostics page links to
        out.update({f"downloads/{t.download}": t.download_csv for t in section.tables if t.download})
    if site.dataset is not None:  # the manifest and the Croissant file the Archive page offers, verbatim
        out.update({rel: data.decode("utf-8") for rel, data in site.dataset.downloads.items()})
    return out


def download_tables(folder: Path) -> list[str]:
    """The score folder's tables offered as downloads (CSV and Parquet): every CSV the
    contract declares that the scorer wrote, in the declared order."""
    return [name[:-4] for name in SCORE_FILES if name.endswith(".csv") and (folder / name).is_file()]


def _write_tables(outputs: ScoreOutputs, base: Path) -> None:
    """Each table verbatim as CSV and as Parquet (read back with the declared columns,
    identifiers as text), and the per-unit scores (units.parquet) as written."""
    (base / "downloads").mkdir(parents=True, exist_ok=True)
    loaded = {"leaderboard": outputs.leaderboard, "contrasts": outputs.contrasts, "ranks": outputs.ranks,
              "field_scores": outputs.field_scores, "origin_scores": outputs.origin_scores,
              "compositions": outputs.compositions, "pairs": outputs.pairs, "releases": outputs.releases,
              "live": outputs.live}
    for name in download_tables(outputs.folder):
        src = outputs.folder / f"{name}.csv"
        shutil.copyfile(src, base / "downloads" / f"{name}.csv")
        frame = loaded.get(name)  # already parsed by load_score_outputs: don't read 27 MB twice
        if frame is None:
            frame = read_score_table(src, SCORE_FILES[f"{name}.csv"])
        frame.to_parquet(base / "downloads" / f"{name}.parquet", index=False)
    if (outputs.folder / "units.parquet").is_file():
        shutil.copyfile(outputs.folder / "units.parquet", base / "downloads" / "units.parquet")


def _template_location(exc: jinja2.TemplateError, template: str, templates_dir: Path) -> tuple[str, int | None]:
    """File and line of a template error: syntax errors carry them; runtime errors
    (e.g. StrictUndefined) are found in Jinja's rewritten traceback."""
    import jinja2
    if isinstance(exc, jinja2.TemplateSyntaxError) and exc.lineno:
        return exc.filename or template, exc.lineno
    for frame in reversed(traceback.extract_tb(exc.__traceback__)):
        if frame.filename.endswith(".j2"):
            try:
                return Path(frame.filename).relative_to(templates_dir).as_posix(), frame.lineno
            except ValueError:
                return frame.filename, frame.lineno
    return template, None


def render_pages(site: SiteModel, templates_dir: str | Path | None = None, *, repo_url: str | None = None,
                 site_folder: Path | None = None, lang: str = DEFAULT_LANGUAGE) -> dict[str, str]:
    """Every Markdown page as text, keyed by its path in the docs folder (``x.md`` in
    English, ``x.zh.md`` in Chinese). Call it inside :func:`rapgen.site.i18n.speaking`
    the same catalogue the site model was built with; outside it, English."""
    import jinja2
    templates_dir = Path(templates_dir or packaged_templates())
    env = make_environment(templates_dir)
    common = {
        "site": site, "SPLITS": SPLITS, "SPLIT_LABEL": SPLIT_LABEL, "TRACK_LABEL": TRACK_LABEL,
        "CONDITION_LABEL": CONDITION_LABEL, "LEADER_CONDITIONS": LEADER_CONDITIONS, "METRIC_LABEL": METRIC_LABEL,
        "SPLIT_TITLES": [SPLIT_LABEL[s] for s in SPLITS],
        "repo_url": repo_url.rstrip("/") if repo_url else None, "LIVE_SIMULATED": t("lb.live_simulated"), "LANG": lang,
        "LEADER_METRIC_CHOICES": [(m, METRIC_LABEL.get(m, m)) for m in LEADER_METRICS],
        "POLICY_CHOICES": list(POLICIES),
        "DOWNLOAD_TABLES": download_tables(site_folder) if site_folder else [],
        "DOWNLOAD_UNITS": bool(site_folder and (site_folder / "units.parquet").is_file()),
    }
    out: dict[str, str] = {}
    for rel, template, extra in _pages(site):
        ctx = dict(common, page=rel, url=lambda to, _rel=rel: page_url(_rel, to), **extra)
        try:
            text = env.get_template(template).render(ctx)
        except jinja2.TemplateError as exc:
            where, line = _template_location(exc, template, Path(templates_dir))
            raise SiteError(f"{where}{f':{line}' if line else ''}: template error while rendering {rel}: {exc}") from None
        except SiteError as exc:  # a label the template asks for: name the template line and the page too
            where, line = _template_location(exc, template, Path(templates_dir))  # type: ignore[arg-type]
            raise SiteError(f"{where}{f':{line}' if line else ''}: while rendering {localized(rel, lang)}: {exc}") from None
        out[localized(rel, lang)] = text
    return out


def render_languages(archive: RapRelease, outputs: ScoreOutputs, catalogues: dict[str, Catalogue],
                     templates_dir: Path, *, repo_url: str | None = None) -> tuple[SiteModel, dict[str, str]]:
    """The site model and pages of every language (the model is rebuilt in each, so plot
    titles, notes and the scripts' data are in that language); the default language's
    model is returned. A page rendered in one language only is an error."""
    def language(lang: str) -> tuple[SiteModel, dict[str, str]]:
        with speaking(catalogues[lang]):
            model = build_site_model(archive, outputs)
            return model, render_pages(model, templates_dir, repo_url=repo_url, site_folder=outputs.folder, lang=lang)

    others = [lang for lang in LANGUAGES if lang != DEFAULT_LANGUAGE]
    forked = {lang: _beside(lambda lang=lang: language(lang)[1]) for lang in others}  # each other language in a child
    try:
        site, pages = language(DEFAULT_LANGUAGE)
    except BaseException:
        for wait in forked.values():  # the children are not left behind
            try:
                wait()
            except BaseException:  # noqa: BLE001 - the default language's error is the one reported
                pass
        raise
    pages = dict(pages)
    for lang in others:
        pages.update(forked[lang]())
    page_translations(pages)
    return site, pages


def _beside(work: Callable[[], object]) -> Callable[[], object]:
    """Run ``work`` in a forked child while the caller goes on; the returned call waits and gives its
    result (or raises its exception). Where ``os.fork`` is missing, ``work`` runs when asked. Each
    language's pages depend only on the archive, the scores and its catalogue, so a language
    rendered in a child gives the same text as one rendered after another."""
    if not hasattr(os, "fork"):
        return work
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: do the work, send the outcome, never return into the caller
        os.close(read)
        status = 0
        try:
            try:
                outcome = pickle.dumps(("ok", work()), protocol=pickle.HIGHEST_PROTOCOL)
            except BaseException as exc:  # noqa: BLE001 - raised again in the parent
                status = 1
                try:
                    outcome = pickle.dumps(("error", exc), protocol=pickle.HIGHEST_PROTOCOL)
                except Exception:  # noqa: BLE001 - an exception that does not pickle
                    outcome = pickle.dumps(("error", SiteError(f"{type(exc).__name__}: {exc}")))
            with os.fdopen(write, "wb") as pipe:
                pipe.write(outcome)
        finally:
            os._exit(status)
    os.close(write)

    def wait() -> object:
        with os.fdopen(read, "rb") as pipe:
            data = pipe.read()
        _, status = os.waitpid(pid, 0)
        if not data:
            raise SiteError(f"rendering in a child process ended without a result (status {status})")
        kind, value = pickle.loads(data)
        if kind == "error":
            raise value
        return value

    return wait


def render_docs(archive: RapRelease, scores_dir: str | Path, docs_dir: str | Path,
                templates_dir: str | Path | None = None, *, repo_url: str | None = None) -> RenderResult:
    """Render the whole docs folder of one release (``open_verified(root).release(n)``) from its
    scores in ``scores_dir``; replace ``docs_dir`` atomically. Every description, model and origin
    comes from the release shown. ``repo_url`` (the project's repository, e.g.
    ``https://github.com/OWNER/rapgen``) adds links to its documents; without it the site names
    them but links nowhere outside itself."""
    from rapgen.site.build import check_url

    check_url("--repo-url", repo_url)
    guard_output_dir(docs_dir, DOCS_OUTPUT)  # before any work: the docs folder is replaced whole
    templates_dir = Path(templates_dir or packaged_templates())
    catalogues = load_catalogues(templates_dir)
    outputs = load_score_outputs(scores_dir, manifest_sha256=archive.manifest_sha256)
    site, pages = render_languages(archive, outputs, catalogues, templates_dir, repo_url=repo_url)

    def fill(tmp: Path) -> None:
        for rel, text in pages.items():
            _write(tmp, rel, text)
        _write_tables(outputs, tmp)
        for rel, text in _downloads(outputs, site).items():
            _write(tmp, rel, text)
        for rel in STATIC_ASSETS:
            src = Path(templates_dir) / rel
            if not src.is_file():
                raise SiteError(f"{src}: static asset missing from the templates folder")
            (tmp / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src, tmp / rel)
        (tmp / PLOTLY_ASSET).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(plotly_js_path(), tmp / PLOTLY_ASSET)

    docs_dir = replace_folder(Path(docs_dir), fill)
    return RenderResult(docs_dir, tuple(sorted(pages)), site.synthetic, site.manifest_sha256, str(site.info.get("name", "")))


def replace_folder(folder: Path, fill: Callable[[Path], None]) -> Path:
    """``fill`` a temporary sibling of ``folder``, then swap it into place: a failure leaves ``folder`` as it was."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", dir=folder.parent))
    try:
        fill(tmp)
        if folder.exists():
            old = folder.with_name(f".{folder.name}.old-{os.getpid()}")
            os.replace(folder, old)
            os.replace(tmp, folder)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.replace(tmp, folder)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return folder


def render_release(spec: SiteSpec, release: Release, scores_dir: str | Path, docs_dir: str | Path, *,
                   repo_url: str | None = None) -> RenderResult:
    """The docs folder of one release of any kind: the kind's own renderer when it has one (RAP),
    else each of its pages, ``template`` filled with ``build(release, scores_dir)``, in English."""
    import jinja2
    if spec.render is not None:
        return spec.render(release, scores_dir, docs_dir, repo_url=repo_url)
    if spec.catalogues is not None:
        return _render_languages(spec, release, Path(scores_dir), Path(docs_dir), repo_url=repo_url)
    templates = Path(spec.templates) if spec.templates else packaged_templates()
    env = make_environment(templates)
    pages: dict[str, str] = {}
    for page in spec.pages:
        try:
            pages[page.path] = env.get_template(page.template).render(dict(page.build(release, Path(scores_dir))))
        except jinja2.TemplateError as exc:
            where, line = _template_location(exc, page.template, templates)
            raise SiteError(f"{where}{f':{line}' if line else ''}: template error while rendering {page.path}: {exc}") from None
    folder = replace_folder(Path(docs_dir), lambda tmp: [_write(tmp, rel, text) for rel, text in pages.items()])
    return RenderResult(folder, tuple(sorted(pages)), release.synthetic, release.manifest_sha256, str(release.info.get("name", "")))


def _render_languages(spec: SiteSpec, release: Release, scores_dir: Path, docs_dir: Path, *, repo_url: str | None) -> RenderResult:
    """A kind's pages in every language (``x.md``, ``x.zh.md``), each page's context built inside the
    language's catalogue (the engine's merged with the kind's), and the ``assets`` beside them."""
    import jinja2
    from rapgen.site.build import check_url

    check_url("--repo-url", repo_url)
    guard_output_dir(docs_dir, DOCS_OUTPUT)  # before any work: the docs folder is replaced whole
    packaged = packaged_templates()
    folders = [Path(spec.templates), packaged] if spec.templates else [packaged]
    env = make_environment(folders)
    catalogues = merge_catalogues(load_catalogues(packaged), Path(spec.catalogues))  # type: ignore[arg-type]
    pages: dict[str, str] = {}
    for lang in LANGUAGES:
        with speaking(catalogues[lang]):
            specs = list(spec.pages) + list(spec.entity_pages(release, scores_dir) if spec.entity_pages else ())
            for page in specs:
                rel = localized(page.path, lang)
                try:
                    ctx = dict(page.build(release, scores_dir), page=page.path, LANG=lang,
                               repo_url=repo_url.rstrip("/") if repo_url else None,
                               url=lambda to, _rel=page.path: page_url(_rel, to))
                    pages[rel] = env.get_template(page.template).render(ctx)
                except jinja2.TemplateError as exc:
                    where, line = _template_location(exc, page.template, folders[0])
                    raise SiteError(f"{where}{f':{line}' if line else ''}: template error while rendering {rel}: {exc}") from None
    page_translations(pages)
    files = dict(spec.files(release, scores_dir)) if spec.files else {}

    def fill(tmp: Path) -> None:
        _write(tmp, DOCS_OUTPUT.markers[1], "Rendered by rapgen; rendering again replaces this folder.\n")  # mkdocs skips dotfiles
        for rel, text in pages.items():
            _write(tmp, rel, text)
        for rel, data in sorted(files.items()):
            (tmp / rel).parent.mkdir(parents=True, exist_ok=True)
            (tmp / rel).write_bytes(data)
        for rel in spec.assets:
            src = packaged / rel
            if not src.is_file():
                raise SiteError(f"{src}: static asset missing from the templates folder")
            (tmp / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src, tmp / rel)

    folder = replace_folder(docs_dir, fill)
    return RenderResult(folder, tuple(sorted(pages)), release.synthetic, release.manifest_sha256, str(release.info.get("name", "")))
