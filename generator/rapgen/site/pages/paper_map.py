"""The "Paper ↔ site" table: each table and figure of the RAP paper, the score file and
columns that hold it, the page that shows it and the caption's semantics.

The rows are declared once here (:data:`PAPER_MAP`): the item, the files and columns (code,
the same in every language), the page and anchor. What the item is and its caption
semantics are catalogue entries (``pm.<key>.what``, ``pm.<key>.semantics``), so both
editions carry them; docs/paper.md lists the same rows (a test keeps the two together).
"""

from __future__ import annotations

from dataclasses import dataclass

from rapgen.site.i18n import Labels, t


@dataclass(frozen=True)
class PaperItem:
    key: str  # catalogue key under pm.
    kind: str  # "figure" or "table" (catalogue pm.figure / pm.table)
    number: str  # the paper's numbering: "3 (b)", "21"
    files: str  # score files and columns, as Markdown code
    page: str  # page (Markdown path relative to the Paper page) and anchor, "" when not shown
    page_key: str  # catalogue key of the page's name under pm.page.


# "" in page: nothing on the site (n/a, or not computed: the archive has no slot for it).
PAPER_MAP: tuple[PaperItem, ...] = (
    PaperItem("fig1", "figure", "1", "—", "index.md", "home"),
    PaperItem("fig2", "figure", "2", "`codebooks.jsonl`; `compositions.csv` (`n_total`, `D0`–`D7`); `rapgen prompt`",
              "fields/index.md", "fields"),
    PaperItem("fig3a", "figure", "3 (a)", "`contrasts.csv`: `A2-A1`, `A4-A3`, `spearman`, `all_origin`, `canonical`",
              "diagnostics.md#fig3-a", "fig3"),
    PaperItem("fig3b", "figure", "3 (b)", "`interventions/contrasts.csv`: `replay`, `acquisition:matched`, `readout:matched`, "
              "`pipeline:matched`, `spearman`, `fc_low`/`fc_high`", "diagnostics.md#fig3-b", "fig3"),
    PaperItem("fig3c", "figure", "3 (c)", "`interventions/signature.csv`: `expanding`, `recent_share`; "
              "`interventions/option_counterfactual.csv`: `matched`, `align_future` (`forecast`/`gain`, `delta`/`common`)",
              "diagnostics.md#fig3-c", "fig3"),
    PaperItem("fig3d", "figure", "3 (d)", "`interventions/contrasts.csv`: `oracle`, `Ok-ewma`, `O3-O2`; "
              "`interventions/cells.csv`: `oracle`, `direct_spearman_corrected`", "diagnostics.md#fig3-d", "fig3"),
    PaperItem("t1", "table", "1", "—", "", "none"),
    PaperItem("t2", "table", "2", "`leaderboard.csv` (`all_origin`, `forecast_strict`; `spearman`), `ranks.csv`",
              "leaderboard.md", "leaderboard"),
    PaperItem("t3", "table", "3", "`diagnostics.json` `sampling_frame.fields`", "diagnostics.md#sampling-frame", "diagnostics"),
    PaperItem("t4", "table", "4", "`diagnostics.json` `sampling_frame.rows` (`estimate`, `estimate_all_fields`)",
              "diagnostics.md#sampling-frame", "diagnostics"),
    PaperItem("t5", "table", "5", "`diagnostics.json` `policy_sensitivity`: `rows` (`estimates`, `max_change`), "
              "`orderings` (`order_stable`), `contrast_signs` (`signs`, `sign_kept`)", "diagnostics.md#policy-sensitivity", "diagnostics"),
    PaperItem("t6", "table", "6", "—", "", "none"),
    PaperItem("t7", "table", "7", "—", "", "none"),
    PaperItem("t8", "table", "8", "—", "", "none"),
    PaperItem("t9", "table", "9", "SUBMISSION.md; `leaderboard.csv` `condition`", "index.md", "home"),
    PaperItem("t10", "table", "10", "`interventions/strict_masks.csv`; `model.json` `knowledge_cutoff`, `release_date`, "
              "`cutoff_source`, `cutoff_precision`", "models/index.md", "models"),
    PaperItem("t11", "table", "11", "`model.json` `inference`; `diagnostics.json` `unit_provenance`", "models/index.md", "models"),
    PaperItem("t12", "table", "12", "—", "", "none"),
    PaperItem("t13", "table", "13", "`diagnostics.json` `residual_alignment.rows` (`estimate`, `raw`, `null`; `tv_gain`), "
              "`residual_alignment.subsets`", "diagnostics.md#residual-alignment", "diagnostics"),
    PaperItem("t14", "table", "14", "`diagnostics.json` `residual_alignment.contrasts` (`partial_residual`)",
              "#residual-cuts", "paper"),
    PaperItem("t15", "table", "15", "`leaderboard.csv` `BASE`; `field_clustered.csv` (`leaderboard`); `pairs.csv` (`BASE`, `ewma`)",
              "diagnostics.md#baseline-family", "diagnostics"),
    PaperItem("t16", "table", "16", "`model.json` `diagnostic`; `leaderboard.csv` `condition`", "models/index.md", "models"),
    PaperItem("t17", "table", "17", "`origin_scores.csv` (`A1`, `A3`, `spearman`); `interventions/strict_masks.csv`",
              "models/index.md", "models"),
    PaperItem("t18", "table", "18", "`interventions/exposure.csv` (`mask`, `stratum`)", "#strict-vs-exposed", "paper"),
    PaperItem("t19", "table", "19", "`leaderboard.csv` (`A0`–`A4`, `spearman`, `all_origin`)", "models/index.md", "models"),
    PaperItem("t20", "table", "20", "`interventions/signature.csv` (every metric; `forecast`, `state`, `delta`, `pair`)",
              "#t20", "tables"),
    PaperItem("t21", "table", "21", "`interventions/option_counterfactual.csv` (`align_recent`, `align_future`; "
              "`native`, `common`, `gain`)", "#t21", "tables"),
    PaperItem("t22", "table", "22", "`interventions/contrasts.csv` (`oracle`: `Ok-ewma`, `O3-O2`); `interventions/cells.csv` "
              "(`oracle`: `direct_spearman_corrected`)", "#t22", "tables"),
    PaperItem("t23", "table", "23", "`interventions/contrasts.csv` and `cells.csv` (`oracle`: `tv`, `tv_gain`, `adapt_6`; "
              "`forecast_strict`)", "#t22", "tables"),
    PaperItem("t24", "table", "24", "`interventions/contrasts.csv` (`replay`: `:all`, `:matched`); `interventions/signature.csv` "
              "(`matched_calls`, `distinct`, `jaccard`)", "#t24", "tables"),
    PaperItem("t25", "table", "25", "`interventions/cells.csv` (`replay`: `X->Y:b`)", "#t25", "tables"),
    PaperItem("t26", "table", "26", "`interventions/contrasts.csv` and `cells.csv` (`panel`: `c:model-base`, "
              "`pooled:model-base`)", "#t26", "tables"),
    PaperItem("t27", "table", "27", "`SHA256SUMS`; `archive/releases/`", "archive.md", "archive"),
)


KEYS = tuple(item.key for item in PAPER_MAP)
# Catalogue groups read whole: what each item is, its caption semantics, the pages' names.
WHAT, SEMANTICS = Labels("pm.what", KEYS), Labels("pm.sem", KEYS)
PAGE = Labels("pm.page", ("home", "fields", "fig3", "tables", "paper", "leaderboard", "diagnostics", "models", "archive", "none"))


# Items whose anchor exists only when the score folder has interventions/ (Figure 3 and the Paper page's tables).
NEEDS_INTERVENTIONS: frozenset[str] = frozenset(
    {"fig3a", "fig3b", "fig3c", "fig3d", "t18", "t20", "t21", "t22", "t23", "t24", "t25", "t26"})


def paper_map_rows(interventions: bool = True) -> list[dict]:
    """The table's rows in the current language: item, what, files, page link (Markdown), semantics.
    Without ``interventions`` (no Figure 3 on the site) the items that need them name their page unlinked."""
    rows = []
    for item in PAPER_MAP:
        page = PAGE[item.page_key]
        linked = item.page and (interventions or item.key not in NEEDS_INTERVENTIONS)
        label = t("pm.figure", n=item.number) if item.kind == "figure" else t("pm.table", n=item.number)
        rows.append({"item": label, "what": WHAT[item.key], "files": item.files,
                     "page": f"[{page}]({item.page})" if linked else (page if item.page else PAGE["none"]),
                     "semantics": SEMANTICS[item.key]})
    return rows
