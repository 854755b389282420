"""The presentation model: score outputs + archive descriptions -> the records templates render.

Each page has its builder in :mod:`rapgen.site.pages`; the records are in
:mod:`rapgen.site.cells`. Nothing here computes a score: every number comes from
the score folder (:mod:`rapgen.site.inputs`), and the archive contributes only
descriptive records (fields, codebooks, blocks, models, ARCHIVE.json, the ledger,
the verified digests and file sizes), all of the release shown.
"""

from __future__ import annotations

from collections import Counter

from rapgen.archive import DEV_SPLIT, TEST_SPLIT, RapRelease
from rapgen.scores import ALL_ORIGIN_TRACK, effective_cutoff
from rapgen.site.cells import SiteModel, page_url
from rapgen.site.inputs import ScoreOutputs
from rapgen.site.pages.archive import build_artifacts, ledger_json, ledger_rows
from rapgen.site.pages.diagnostics import build_diagnostics, diagnostics_meta, paper_page_tables
from rapgen.site.pages.fields import build_field_pages
from rapgen.site.pages.interventions import build_figure3, model_interventions
from rapgen.site.pages.compare import build_compare
from rapgen.site.pages.dataset import build_dataset
from rapgen.site.pages.headline import build_headline
from rapgen.site.pages.leaderboard import build_leaderboard
from rapgen.site.pages.switch import switch_data
from rapgen.site.pages.live import live_panels, partial_rows
from rapgen.site.pages.models import build_model_pages
from rapgen.site.pages.paper_map import paper_map_rows
from rapgen.site.pages.paper_tables import provenance_table
from rapgen.site.pages.releases import build_releases, movements

__all__ = ["build_site_model", "page_url"]


def shown_origins(release: RapRelease) -> tuple[list[str], str]:
    """The resolved origins and the strict origin of the release shown (a format-1 archive's one
    release: origins.json's)."""
    return [o.isoformat() for o in release.resolved_origins], release.strict_origin.isoformat()


def build_site_model(archive: RapRelease, outputs: ScoreOutputs) -> SiteModel:
    """Assemble everything the templates need. Deterministic: every list is sorted."""
    origins, strict_origin = shown_origins(archive)
    field_pages, field_index = build_field_pages(archive, outputs)
    model_pages, model_index = build_model_pages(archive, outputs, origins)
    for page in model_pages:
        page.interventions = model_interventions(page.model_id, _extensions(archive, page.model_id), outputs)
        page.provenance = provenance_table(page.model_id, outputs)
    splits = Counter(f.split for f in archive.fields)
    panels = build_leaderboard(archive.models, outputs)
    releases = build_releases(archive, outputs)
    if releases is not None:
        _release_rows(archive, outputs, panels, releases.current)
    return SiteModel(
        info=dict(archive.info),
        synthetic=archive.synthetic,
        manifest_sha256=archive.manifest_sha256,
        scores_meta={k: outputs.scores_json.get(k) for k in ("resamples", "seed", "level") if k in outputs.scores_json},
        counts={"fields": len(archive.fields), "test_fields": splits.get(TEST_SPLIT, 0), "dev_fields": splits.get(DEV_SPLIT, 0),
                "blocks": len(archive.blocks), "models": len(archive.models), "origins": len(origins)},
        panels=panels,
        field_pages=field_pages,
        field_index=field_index,
        model_pages=model_pages,
        model_index=model_index,
        diagnostics=build_diagnostics(outputs),
        artifacts=build_artifacts(archive),
        ledger_rows=ledger_rows("", archive.ledger),
        ledger_json=ledger_json(archive.ledger),
        strict_origin=strict_origin,
        origins=origins,
        ledger_level=float(archive.ledger["bootstrap"]["level"]),
        diagnostics_meta=diagnostics_meta(outputs),
        releases=releases,
        figure3=build_figure3(outputs),
        leader_switch=switch_data(panels, outputs),
        headline=build_headline(panels, outputs),
        compare=build_compare(archive, outputs),
        paper_map=paper_map_rows(bool(outputs.interventions)),
        paper_residual=paper_page_tables(outputs),
        dataset=build_dataset(archive),
    )


def _extensions(archive: RapRelease, model_id: str) -> dict:
    """model.json's INTERVENTIONS.md keys as verify parsed them (``base_model``, ``inference``,
    ``cutoff_precision`` and the §4 effective bound c_eff it gives)."""
    records = archive.interventions(model_id)
    if records is None:
        return {}
    ext = records.extensions
    info = next((m for m in archive.models if m.model_id == model_id), None)
    c_eff = effective_cutoff(info.knowledge_cutoff, info.release_date, ext.cutoff_precision) if info is not None else None
    return {"base_model": ext.base_model or "", "inference": ext.inference, "cutoff_precision": ext.cutoff_precision,
            "c_eff": c_eff.isoformat() if c_eff is not None else ""}


def _release_rows(archive: RapRelease, outputs: ScoreOutputs, panels: dict, current: int) -> None:
    """Format 2: movement markers, All-Origin's partial models and the Live panel."""
    names = {m.model_id: m.display_name for m in archive.models}
    live = live_panels(archive, outputs, names)
    for split, split_panels in panels.items():
        for p in split_panels:
            marks = movements(outputs.releases, current, p.track, split)
            for r in p.rows + p.baselines:
                r.movement, r.movement_title = marks.get(r.entry, ("", ""))
            if p.track == ALL_ORIGIN_TRACK:
                p.partial = partial_rows(outputs, split, names)
        if split in live:
            split_panels.append(live[split])
