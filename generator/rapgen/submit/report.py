"""The Markdown report of ``rapgen submit check``, fit for a pull-request comment.

Deterministic: the same result renders the same bytes (no clock, sorted rows).
GitHub limits a comment to 65,536 characters, so the problem list is capped and
says how many were left out (the command's own output is never capped).
"""

from __future__ import annotations

import re
from collections import OrderedDict

from rapgen import __version__
from rapgen.submit.check import STAGES, CheckResult, Problem, _problem_order

MARKER = "<!-- rapgen-submit-check -->"
STAGE_TITLES = {
    "integrity": "Archive integrity",
    "submission": "Submission files",
    "checksums": "SHA256SUMS lines",
    "scores": "Scores with intervals",
    "replay": "Trace replay",
    "site": "Site dry-run render",
}
STATUS_ICON = {"passed": "✅ passed", "failed": "❌ failed", "skipped": "⏭️ skipped", "unavailable": "⚠️ unavailable"}
CONTEXT_NEIGHBOURS = 2
HEADLINE = {"track": "all_origin", "policy": "canonical", "metric": "spearman"}


def _md(text: str) -> str:
    """Escape what would break a Markdown table cell."""
    return str(text).replace("|", "\\|").replace("\n", " ")


def _fmt(value: str | float | None, digits: int = 3) -> str:
    if value in (None, ""):
        return "—"
    try:
        return f"{float(value):.{digits}f}"
    except (TypeError, ValueError):
        return str(value)


def render_report(result: CheckResult, *, max_problems: int | None = 200) -> str:
    """The Markdown summary: verdict, stages, leaderboard row in context, validity, problems with fixes."""
    out: list[str] = [MARKER]
    n = len(result.problems)
    if result.ok:
        out.append(f"## ✅ Submission `{result.model_id}` passes `rapgen submit check`")
    else:
        out.append(f"## ❌ Submission `{result.model_id}`: {n} problem{'s' * (n != 1)} found")
    out.append("")
    model = result.model
    facts = []
    if model is not None:
        facts.append(f"**{_md(model.display_name)}** ({_md(model.provider) or 'provider not given'}, {'proprietary' if model.proprietary else 'open'})")
        cutoff = model.knowledge_cutoff or model.release_date
        facts.append(f"cut-off {cutoff.isoformat() if cutoff else 'unknown'}" + ("" if model.knowledge_cutoff or not model.release_date else " (release date)"))
        if model.diagnostic:
            facts.append("diagnostic (A2/A4)")
    where = f"archive/models/{result.model_id}/" if result.in_archive else str(result.model_dir)
    facts.append(f"folder `{where}`")
    if result.base:
        base = result.base[:12] if re.fullmatch(r"[0-9a-f]{40}", result.base) else result.base
        facts.append(f"compared with `{base}`")
    if result.manifest_sha256:
        facts.append(f"archive `SHA256SUMS` {result.manifest_sha256[:12]}…")
    out.append(" · ".join(facts))
    out.append("")

    out += ["### Checks", "", "| stage | result | note |", "| --- | --- | --- |"]
    for stage in STAGES:
        status = result.stages.get(stage)
        if status is None:
            continue
        k = len(result.stage_problems(stage))
        note = status.note or (f"{k} problem{'s' * (k != 1)}" if k else "")
        out.append(f"| {STAGE_TITLES[stage]} | {STATUS_ICON.get(status.status, status.status)} | {_md(note)} |")
    out.append("")

    out += _leaderboard_section(result)
    out += _validity_section(result)
    out += _problems_section(result, max_problems)
    if result.sums_lines:
        title = "SHA256SUMS lines for this folder" if result.in_archive else "SHA256SUMS lines `rapgen seal` will add once the folder is in archive/models/"
        out += [f"### {title}", "", "```", *result.sums_lines, "```", ""]
    if result.notes:
        out += ["<details><summary>Notes</summary>", ""]
        out += [f"- {_md(n)}" for n in result.notes[:50]]
        out += ["", "</details>", ""]
    out.append(f"<sub>rapgen {__version__} · `rapgen submit check` · exit {0 if result.ok else 1}</sub>")
    return "\n".join(out) + "\n"


def _leaderboard_section(result: CheckResult) -> list[str]:
    rows = [r for r in result.leaderboard if all(r.get(k) == v for k, v in HEADLINE.items())]
    if not rows:
        if result.leaderboard:
            return ["### Leaderboard", "", "No headline rows (all_origin, canonical, spearman) were produced.", ""]
        return []
    out = [f"### Leaderboard in context ({HEADLINE['track']}, {HEADLINE['policy']} counting, {HEADLINE['metric']})", ""]
    for split in sorted({r["split"] for r in rows}, key=lambda s: (s != "test", s)):
        ranked = [r for r in rows if r["split"] == split and r.get("estimate") not in (None, "")]
        ranked.sort(key=lambda r: (-float(r["estimate"]), r["entry"], r["condition"]))
        mine = [i for i, r in enumerate(ranked) if r["entry"] == result.model_id]
        if not mine:
            continue
        keep = sorted({j for i in mine for j in range(max(0, i - CONTEXT_NEIGHBOURS), min(len(ranked), i + CONTEXT_NEIGHBOURS + 1))})
        out += [f"**{split}** split", "", "| rank | entry | condition | estimate | 95% interval | fields | valid / expected |", "| ---: | --- | --- | ---: | --- | ---: | ---: |"]
        previous = -1
        if keep and keep[0] > 0:
            out.append("| … | | | | | | |")
        for j in keep:
            if previous >= 0 and j != previous + 1:
                out.append("| … | | | | | | |")
            r = ranked[j]
            bold = "**" if r["entry"] == result.model_id else ""
            interval = f"[{_fmt(r.get('ci_low'))}, {_fmt(r.get('ci_high'))}]" if r.get("ci_low") not in (None, "") else "—"
            valid = f"{r.get('n_valid', '')} / {r.get('n_episodes', '')}"
            out.append(f"| {j + 1} | {bold}{_md(r['entry'])}{bold} | {r['condition']} | {bold}{_fmt(r['estimate'])}{bold} | {interval} | {r.get('n_fields', '')} | {valid} |")
            previous = j
        out.append("")
        undefined = [r for r in rows if r["split"] == split and r["entry"] == result.model_id and r.get("estimate") in (None, "")]
        if undefined:
            out += [f"Undefined for {', '.join(sorted(r['condition'] for r in undefined))} (no defined field score).", ""]
    return out


def _validity_section(result: CheckResult) -> list[str]:
    if not result.accounting:
        return []
    out = ["### Validity", "", "| condition | expected | present | valid | invalid | why invalid |", "| --- | ---: | ---: | ---: | ---: | --- |"]
    for c in result.accounting:
        reasons = "; ".join(f"{_md(r)} ×{k}" for r, k in c.reasons) or "—"
        out.append(f"| {c.condition} | {c.expected} | {c.present} | {c.valid} | {c.invalid} | {reasons} |")
    out += ["", "Invalid units are kept, counted and excluded from every mean, never scored as zero.", ""]
    return out


def _problems_section(result: CheckResult, max_problems: int | None) -> list[str]:
    if result.ok:
        return []
    problems = sorted(result.problems, key=_problem_order)
    shown = problems if max_problems is None else problems[:max_problems]
    groups: "OrderedDict[tuple[str, str, str], list[Problem]]" = OrderedDict()
    for p in shown:
        groups.setdefault((p.stage, p.keyword, p.fix), []).append(p)
    out = [f"### Problems ({len(problems)})", ""]
    for (stage, keyword, fix), items in groups.items():
        out.append(f"**{keyword}** ({STAGE_TITLES.get(stage, stage)}) — fix: {fix or 'see the message.'}")
        out.append("")
        out += [f"- `{p.location()}`: {_md(p.detail)}" for p in items]
        out.append("")
    if len(shown) < len(problems):
        out += [f"… and {len(problems) - len(shown)} more; run `rapgen submit check` locally for the full list.", ""]
    return out
