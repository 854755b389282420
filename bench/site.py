"""Benchmark the site stage at full scale: render + `mkdocs build --strict`, and field-page sizes.

Goal (issue 7): render + mkdocs build <= 60 s for the full-scale archive (278 field
pages) and every field page <= 80 KiB of its own HTML (shared assets excluded). Since
issue 16 the site has two editions (English at /, Chinese under /zh/): the figures cover
both, and the largest pages are listed per language with the zh/en size ratio.

Usage:
    python bench/site.py --root DIR [--scores DIR]   # a real archive (e.g. from `rapgen synth --scale full`)
    python bench/site.py                             # no archive given: a generated stand-in with
                                                     # 278 fields and 10 models (tests/test_site_support.py)

With --root but no --scores, the archive is scored first (`rapgen.scores`, not timed
as part of the site figure). The reference measured in the same run is a bare
`mkdocs build --strict` of a one-page site with the same theme: the fixed cost every
build pays, so the ratio shows what the pages themselves cost.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
GOAL_SECONDS = 60.0
GOAL_FAST = 10.0  # "Full scale, 2.5 times faster": render + mkdocs on 2 cores
GOAL_FIELD_PAGE = 80 * 1024
GOAL_PAGE = 400 * 1000  # issue 16: no page over 400 KB of HTML, embedded data included


def _stand_in(base: Path, n_fields: int, n_models: int) -> tuple[Path, Path]:
    sys.path.insert(0, str(REPO / "tests"))
    from test_site_support import make_score_outputs, make_site_archive, scaled

    from rapgen.archive import Archive

    fields, models = scaled(n_fields, n_models)
    root = make_site_archive(base / "repo", fields=fields, models=models)
    scores = make_score_outputs(base / "scores", Archive(root).manifest_sha256, fields=fields, models=models)
    return root, scores


def _reference_build(base: Path) -> float:
    from rapgen.site.build import write_config, run_mkdocs

    docs = base / "ref" / "docs"
    (docs / "fields").mkdir(parents=True)
    (docs / "models").mkdir(parents=True)
    import yaml

    from rapgen.resources import mkdocs_base_config

    nav = yaml.safe_load(mkdocs_base_config().read_text(encoding="utf-8"))["nav"]  # every page the navigation names
    for rel in [page for item in nav for page in item.values()]:
        (docs / rel).write_text("# Page\n\nText.\n")
    for rel in ("assets/javascripts/plotly.min.js", "assets/javascripts/tablesort.min.js", "assets/javascripts/tablesort.number.min.js",
                "assets/javascripts/tables.js", "assets/javascripts/charts.js", "assets/stylesheets/rap.css"):
        (docs / rel).parent.mkdir(parents=True, exist_ok=True)
        (docs / rel).write_text("")
    config = write_config(docs, base / "ref" / "site", synthetic=True, manifest_sha256="0" * 64, archive_name="ref")
    t0 = time.perf_counter()
    run_mkdocs(config)
    return time.perf_counter() - t0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--root", type=Path, help="archive root (default: generate a stand-in)")
    parser.add_argument("--scores", type=Path, help="existing 'rapgen score' output folder for --root")
    parser.add_argument("--fields", type=int, default=278, help="stand-in size (default 278 fields)")
    parser.add_argument("--models", type=int, default=10, help="stand-in models (default 10)")
    parser.add_argument("--resamples", type=int, default=1000, help="resamples when scoring --root (default 1000)")
    args = parser.parse_args()

    from rapgen.archive import open_verified
    from rapgen.site import build_site, render_docs, start_mkdocs

    with tempfile.TemporaryDirectory(prefix="rapgen-bench-site-") as tmp:
        base = Path(tmp)
        if args.root is None:
            t0 = time.perf_counter()
            root, scores = _stand_in(base, args.fields, args.models)
            print(f"stand-in archive: {args.fields} fields, {args.models} models, generated in {time.perf_counter() - t0:.1f} s")
        else:
            root = args.root
            scores = args.scores
            if scores is None:
                from rapgen.scores import compute_scores, write_scores
                from rapgen.search import call_is_malformed, validate_call

                t0 = time.perf_counter()
                scores = base / "scores"
                # As rapgen score: with the Search-call validator, so the intervention sections are built and measured.
                archive = open_verified(root, validate_call=validate_call).release()
                write_scores(compute_scores(archive, resamples=args.resamples, malformed=call_is_malformed), scores)
                print(f"scored {root} with {args.resamples} resamples in {time.perf_counter() - t0:.1f} s (not part of the site figure)")
        archive = open_verified(root).release()  # verified outside the timed region, as rapgen build has it
        t0 = time.perf_counter()
        started = start_mkdocs()  # as rapgen build does: mkdocs' imports beside the render
        try:
            rendered = render_docs(archive, scores, base / "work" / "docs")
            t_render = time.perf_counter() - t0
            t0 = time.perf_counter()
            built = build_site(rendered.docs_dir, base / "site", synthetic=rendered.synthetic,
                               manifest_sha256=rendered.manifest_sha256, archive_name=rendered.archive_name,
                               started=started)
        finally:
            started.close()
        t_build = time.perf_counter() - t0
        t_ref = _reference_build(base)
        field_pages = [*sorted((base / "site" / "fields").glob("*/index.html")),
                       *sorted((base / "site" / "zh" / "fields").glob("*/index.html"))]
        sizes = [p.stat().st_size for p in field_pages]
        site_bytes = sum(p.stat().st_size for p in (base / "site").rglob("*") if p.is_file())
        md_bytes = sum(p.stat().st_size for p in rendered.docs_dir.rglob("*.md"))
        other = {rel: (base / "site" / rel).stat().st_size for rel in
                 ("index.html", "leaderboard/index.html", "fields/index.html", "diagnostics/index.html",
                  "zh/index.html", "zh/leaderboard/index.html", "zh/diagnostics/index.html", "search/search_index.json")
                 if (base / "site" / rel).is_file()}
        model_sizes = [p.stat().st_size for p in (base / "site" / "models").glob("*/index.html")]
        total = t_render + t_build
        print(f"pages built: {built.n_pages} ({len(field_pages)} field pages, {len(model_sizes)} model pages)")
        print(f"render (Markdown + assets): {t_render:6.2f} s")
        print(f"mkdocs build --strict:      {t_build:6.2f} s")
        print(f"render + build:             {total:6.2f} s   goal <= {GOAL_SECONDS:.0f} s -> {'OK' if total <= GOAL_SECONDS else 'OVER'}, "
              f"<= {GOAL_FAST:.0f} s -> {'OK' if total <= GOAL_FAST else 'OVER'}")
        print(f"reference bare build:       {t_ref:6.2f} s   ratio full/bare = {t_build / t_ref:.1f}x")
        print(f"field page HTML: max {max(sizes) / 1024:.1f} KiB, median {statistics.median(sizes) / 1024:.1f} KiB, "
              f"min {min(sizes) / 1024:.1f} KiB   goal <= 80 KiB -> {'OK' if max(sizes) <= GOAL_FIELD_PAGE else 'OVER'}")
        if model_sizes:
            print(f"model page HTML: max {max(model_sizes) / 1024:.1f} KiB")
        for rel, size in other.items():
            print(f"{rel}: {size / 1024:.1f} KiB")
        print(f"Markdown: {md_bytes / 1e6:.1f} MB; site total: {site_bytes / 1e6:.1f} MB")
        pages = sorted(((p.stat().st_size, p.relative_to(base / "site").as_posix()) for p in (base / "site").rglob("*.html")),
                       reverse=True)
        print(f"largest HTML pages (goal every page <= {GOAL_PAGE // 1000} KB -> {'OK' if pages[0][0] <= GOAL_PAGE else 'OVER'}):")
        # the two editions side by side: the Chinese page's size as a ratio of its English original
        for lang, keep in (("en", lambda rel: not rel.startswith("zh/")), ("zh", lambda rel: rel.startswith("zh/"))):
            print(f"  {lang}:")
            for size, rel in [p for p in pages if keep(p[1])][:6]:
                twin = base / "site" / (rel[3:] if lang == "zh" else f"zh/{rel}")
                ratio = f"   zh/en {size / twin.stat().st_size:.2f}" if lang == "zh" and twin.is_file() else ""
                print(f"    {rel}: {size / 1000:.1f} KB{ratio}")
        en_bytes = sum(sz for sz, rel in pages if not rel.startswith("zh/"))
        zh_bytes = sum(sz for sz, rel in pages if rel.startswith("zh/"))
        if zh_bytes:
            print(f"HTML: en {en_bytes / 1e6:.1f} MB, zh {zh_bytes / 1e6:.1f} MB (zh/en {zh_bytes / en_bytes:.2f}); "
                  f"pages en {sum(1 for _, r in pages if not r.startswith('zh/'))}, zh {sum(1 for _, r in pages if r.startswith('zh/'))}")
        load = os.getloadavg()
        print(f"load average: {load[0]:.2f}, {load[1]:.2f}, {load[2]:.2f}")


if __name__ == "__main__":
    main()
