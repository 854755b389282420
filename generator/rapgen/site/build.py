"""Run ``mkdocs build --strict`` on a rendered docs folder.

The packaged ``mkdocs.base.yml`` (:func:`rapgen.resources.mkdocs_base_config`) holds
the theme and extensions; for each build a copy is written next to the docs folder
with absolute ``docs_dir``/``site_dir``, the theme override folder, the archive's
identity (synthetic banner, manifest digest in the footer) and, only when given,
the ``site_url`` the site will be served from (Material's instant navigation only
follows links under ``site_url``). Without it every link is relative, so the
folder can be served from anywhere, ``python -m http.server -d site`` included.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from rapgen.errors import SiteError, UsageProblem
from rapgen.io import SITE_OUTPUT, guard_output_dir
from rapgen.resources import mkdocs_base_config
from rapgen.site.i18n import DEFAULT_LANGUAGE, LANGUAGES, Catalogue, load_catalogues, merge_catalogues, page_translations
from rapgen.site.spec import SiteSpec
from rapgen.site.escape import element_text, safe_url

STDERR_TAIL_LINES = 20


@dataclass(frozen=True)
class BuildResult:
    site_dir: Path
    config_path: Path
    n_pages: int
    log: str


def check_url(option: str, url: str | None) -> str | None:
    """``--site-url``/``--repo-url``: an absolute http(s) address, or nothing."""
    if url is None or url == "":
        return None
    if safe_url(url) is None:
        raise UsageProblem(f"{option} must be an absolute http:// or https:// address, got {url!r}")
    return url


@dataclass(frozen=True)
class NavPlan:
    """A site's navigation: ``entries`` are (label, page) pairs or (label, [entries]) sections, a label
    being a catalogue key or, if no catalogue holds it, the text itself (a benchmark's name); the pages
    kept out of the navigation; the folders of further label catalogues (``i18n/<lang>.yml``); the
    label of the site's name. Only the assets the docs folder holds are loaded."""

    entries: tuple[tuple[str, Any], ...]
    not_in_nav: tuple[str, ...] = ()
    catalogues: tuple[Path, ...] = ()
    name_key: str = "site.name"


def plan_of(spec: SiteSpec | None) -> NavPlan | None:
    """A kind's own navigation (None: RAP's, from the base config)."""
    if spec is None or not spec.nav:
        return None
    return NavPlan(tuple(spec.nav), tuple(spec.not_in_nav), (Path(spec.catalogues),) if spec.catalogues else (),
                   spec.name_key or "site.name")


def base_nav(nav: list, docs_dir: Path) -> list[tuple[str, str]]:
    """RAP's navigation: the base config's entries, with Compare and Releases after the Leaderboard when rendered."""
    nav = list(nav)
    for page in ("releases.md", "compare.md"):  # after the Leaderboard, when rendered
        if (docs_dir / page).is_file():
            at = next((i + 1 for i, item in enumerate(nav)
                       if isinstance(item, dict) and "leaderboard.md" in item.values()), 2)
            nav.insert(at, {page: page})
    return [(nav_key(file), file) for item in nav for file in item.values()]


def _title(cat: Catalogue, key: str) -> str:
    return cat.text(key) if cat.has(key) else key


def _nav_items(cat: Catalogue, entries) -> list[dict]:
    return [{_title(cat, key): _nav_items(cat, value) if isinstance(value, (list, tuple)) else value} for key, value in entries]


def _nav_keys(entries) -> list[str]:
    return [k for key, value in entries for k in (key, *(_nav_keys(value) if isinstance(value, (list, tuple)) else ()))]


def write_config(docs_dir: Path, site_dir: Path, *, synthetic: bool, manifest_sha256: str, archive_name: str,
                 site_url: str | None = None, base_config: Path | None = None, spec: SiteSpec | None = None,
                 plan: NavPlan | None = None) -> Path:
    """Write the effective mkdocs config beside ``docs_dir`` and return its path. ``plan`` (or a kind's
    ``spec``): the site's own navigation, labels, unlisted pages and name (neither: RAP's, from the base config)."""
    base_config = base_config or mkdocs_base_config()
    try:
        config = yaml.safe_load(base_config.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise SiteError(f"{base_config}: cannot read the site configuration ({exc})") from None
    if not isinstance(config, dict):
        raise SiteError(f"{base_config}: line 1: expected a mapping")
    config["docs_dir"] = str(docs_dir.resolve())
    config["site_dir"] = str(site_dir.resolve())
    theme = config.setdefault("theme", {"name": "material"})
    custom = theme.get("custom_dir")
    if custom:
        theme["custom_dir"] = str((base_config.parent / custom).resolve())
    hooks = config.get("hooks") or []
    config["hooks"] = [str((base_config.parent / h).resolve()) for h in hooks]
    catalogues = load_catalogues(base_config.parent)
    nav = config.get("nav")
    plan = plan or plan_of(spec)
    entries: list[tuple[str, Any]] = []  # (label, page or section) of each navigation entry
    if plan is not None:
        for folder in plan.catalogues:
            catalogues = merge_catalogues(catalogues, folder)
        entries = list(plan.entries)
        config["not_in_nav"] = "\n".join(plan.not_in_nav) + "\n" if plan.not_in_nav else None
        for key in ("extra_javascript", "extra_css"):  # only the assets the pages ship
            config[key] = [a for a in config.get(key) or [] if (docs_dir / a).is_file()]
    elif isinstance(nav, list):
        entries = base_nav(nav, docs_dir)
    if entries or isinstance(nav, list):
        config["nav"] = _nav_items(catalogues[DEFAULT_LANGUAGE], entries)
    if config.get("not_in_nav") is None:
        config.pop("not_in_nav", None)
    if check_url("--site-url", site_url):
        config["site_url"] = site_url
    extra = config.setdefault("extra", {}) or {}
    config["extra"] = extra
    name_key = plan.name_key if plan is not None else "site.name"
    languages = [_language(catalogues[lang], catalogues[DEFAULT_LANGUAGE], _nav_keys(entries), synthetic=synthetic,
                           manifest_sha256=manifest_sha256, archive_name=archive_name, name_key=name_key)
                 for lang in LANGUAGES]
    extra["rap"] = languages[0]["extra"]["rap"]
    extra["alternate"] = [{"name": lang["name"], "lang": lang["locale"], "link": lang["link"].lstrip("/") or "./"}
                          for lang in languages]  # per page: hooks/i18n_alternate.py
    config["copyright"] = languages[0]["copyright"]
    for plugin in config.get("plugins") or []:
        if isinstance(plugin, dict) and "i18n" in plugin:
            plugin["i18n"]["languages"] = languages
    path = docs_dir.parent / "mkdocs.generated.yml"
    path.write_text(yaml.safe_dump(config, sort_keys=False, allow_unicode=True), encoding="utf-8")
    return path


def nav_key(file: str) -> str:
    """The catalogue key of a navigation entry: ``nav.home`` for index.md, ``nav.fields`` for fields/index.md."""
    stem = file[:-3] if file.endswith(".md") else file
    stem = stem[: -len("/index")] if stem.endswith("/index") else stem
    return "nav." + ("home" if stem == "index" else stem)


def _language(cat: Catalogue, default: Catalogue, keys: list[str], *, synthetic: bool, manifest_sha256: str,
              archive_name: str, name_key: str = "site.name") -> dict:
    """One ``i18n`` plugin language: its name, site name, theme language (Material's own
    strings), navigation titles, footer and synthetic banner, all from its catalogue."""
    label = f"{element_text(archive_name)} · " if archive_name else ""
    lang = {"locale": cat.lang, "name": cat.text("site.language_name"), "build": True,
            "default": cat.lang == DEFAULT_LANGUAGE, "link": "/" if cat.lang == DEFAULT_LANGUAGE else f"/{cat.lang}/",
            "site_name": _title(cat, name_key), "site_description": cat.text("site.description"),
            "theme": {"language": cat.lang},
            "copyright": f"{label}{cat.text('site.copyright_synthetic') if synthetic else ''}"
                         f"{cat.text('site.copyright_manifest')} {manifest_sha256}",
            "extra": {"rap": {"synthetic": bool(synthetic), "manifest_sha256": manifest_sha256,
                              "banner": cat.text("site.synthetic_banner"),
                              "permalink_title": cat.text("site.permalink_title")}}}
    if cat.lang != DEFAULT_LANGUAGE:
        lang["nav_translations"] = {_title(default, key): _title(cat, key) for key in keys}
    return lang


# What a build imports before it reads its configuration: imported by a started process (start_mkdocs)
# while the pages are still being rendered. A module missing here is imported by the build as usual.
_WARM_MODULES = ("click", "mkdocs.commands.build", "mkdocs.config.defaults", "mkdocs.structure.pages",
                 "material.plugins.search.plugin", "mkdocs_static_i18n.plugin", "markdown.extensions.md_in_html",
                 "markdown.extensions.toc", "markdown.extensions.tables", "markdown.extensions.attr_list",
                 "markdown.extensions.admonition", "pymdownx.superfences", "pymdownx.tabbed", "pymdownx.details")
# The started process: imports those, then waits for one line (the folder and the arguments) and runs
# mkdocs as `python -m mkdocs` would (runpy, sys.argv), or ends when told nothing.
_WARM_MAIN = """
import json, runpy, sys
for name in sys.argv[1:]:
    try:
        __import__(name)
    except Exception:
        pass
line = sys.stdin.readline()
if not line.strip():
    sys.exit(0)
request = json.loads(line)
import os
os.chdir(request["cwd"])
sys.argv = ["mkdocs", *request["args"]]
runpy.run_module("mkdocs", run_name="__main__", alter_sys=True)
"""


def _mkdocs_env() -> dict[str, str]:
    return dict(os.environ, NO_MKDOCS_2_WARNING="1", PYTHONHASHSEED="0")


class MkdocsProcess:
    """A Python process started ahead of the build (:func:`start_mkdocs`) that has imported mkdocs
    and its plugins by the time the pages are rendered; :func:`run_mkdocs` hands it the build, and
    :meth:`close` ends it when no build comes."""

    def __init__(self) -> None:
        self.proc: subprocess.Popen | None = subprocess.Popen(
            [sys.executable, "-c", _WARM_MAIN, *_WARM_MODULES], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, env=_mkdocs_env(), text=True)

    def run(self, args: list[str], cwd: str) -> subprocess.CompletedProcess | None:
        """The build's outcome, or None when the process can no longer take it."""
        proc, self.proc = self.proc, None
        if proc is None:
            return None
        if proc.poll() is not None:  # it ended early: the build runs in a new process instead
            proc.communicate()
            return None
        out, err = proc.communicate(json.dumps({"cwd": cwd, "args": args}) + "\n")
        return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)

    def close(self) -> None:
        proc, self.proc = self.proc, None
        if proc is not None:
            try:
                proc.communicate("\n", timeout=30)  # told nothing: it ends
            except (OSError, subprocess.TimeoutExpired):
                proc.kill()
                proc.communicate()


def start_mkdocs() -> MkdocsProcess:
    """Start the process of the next :func:`run_mkdocs` now, so that its imports run beside the render."""
    return MkdocsProcess()


def run_mkdocs(config_path: Path, started: MkdocsProcess | None = None) -> str:
    """``python -m mkdocs build --strict --clean`` (in ``started`` when given: :func:`start_mkdocs`);
    a failure is a SiteError with the stderr tail."""
    args = ["build", "--strict", "--clean", "--config-file", str(config_path.resolve())]
    cwd = str(config_path.resolve().parent)
    proc = started.run(args, cwd) if started is not None else None
    if proc is None:
        proc = subprocess.run([sys.executable, "-m", "mkdocs", *args], cwd=cwd, env=_mkdocs_env(), capture_output=True,
                              text=True)
    log = proc.stdout + proc.stderr
    if proc.returncode != 0:
        tail = [line for line in log.splitlines() if line.strip()][-STDERR_TAIL_LINES:]
        raise SiteError(f"{config_path}: mkdocs build --strict failed (exit {proc.returncode}):\n" + "\n".join(tail))
    return log


SITE_MARKER = SITE_OUTPUT.markers[0]  # ".rapgen-site"


def check_site_dir(site_dir: Path) -> None:
    """Refuse a folder the site may not replace (io.guard_output_dir): mkdocs empties the site folder."""
    guard_output_dir(site_dir, SITE_OUTPUT)


def build_site(docs_dir: str | Path, site_dir: str | Path, *, synthetic: bool, manifest_sha256: str,
               archive_name: str = "", site_url: str | None = None, spec: SiteSpec | None = None,
               plan: NavPlan | None = None, started: MkdocsProcess | None = None) -> BuildResult:
    """Build ``docs_dir`` into ``site_dir`` with mkdocs-material (strict); ``spec``: a kind's own site
    (navigation, labels), None for RAP's; ``started``: the process to build in (:func:`start_mkdocs`)."""
    docs_dir, site_dir = Path(docs_dir), Path(site_dir)
    check_site_dir(site_dir)
    if not (docs_dir / "index.md").is_file():
        raise SiteError(f"{docs_dir}: no rendered pages (index.md missing); run 'rapgen render' first")
    try:
        page_translations([p.relative_to(docs_dir).as_posix() for p in docs_dir.rglob("*.md")])
    except SiteError as exc:
        raise SiteError(f"{docs_dir}/{exc}") from None
    config = write_config(docs_dir, site_dir, synthetic=synthetic, manifest_sha256=manifest_sha256,
                          archive_name=archive_name, site_url=site_url, spec=spec, plan=plan)
    log = run_mkdocs(config, started)
    (site_dir / SITE_MARKER).write_text(f"Built by rapgen from archive {manifest_sha256}; rebuilding empties this folder.\n")
    n_pages = sum(1 for _ in site_dir.rglob("index.html"))
    return BuildResult(site_dir, config, n_pages, log)
