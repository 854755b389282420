"""The Markdown report of ``rapgen submit check``, fit for a pull-request comment.

Deterministic: the same result renders the same bytes (no clock, sorted rows).
Every text that comes from the submission goes through :mod:`rapgen.text`
(:func:`~rapgen.text.escape_markdown`, :func:`~rapgen.text.markdown_code`), so a
submission cannot add a heading, a link, HTML or a terminal escape sequence to
the report. GitHub limits a comment to 65,536 characters, so the problem list is
capped and says how many were left out (``--json`` is never capped).
"""

from __future__ import annotations

import re
from collections import OrderedDict

from rapgen import __version__
from rapgen.archive import TEST_SPLIT
from rapgen.scores import PRIMARY
from rapgen.submit.review.cells import fmt_cell as _fmt, ranked_table
from rapgen.submit.review.result import SECTIONS, CheckResult, Problem, problem_order
from rapgen.text import escape_markdown as md_text, escape_terminal, markdown_code as md_code

MARKER = "<!-- rapgen-submit-check -->"
SECTION_TITLES = {
    "integrity": "Archive integrity",
    "submission": "Submission files",
    "checksums": "SHA256SUMS lines",
    "live": "Live deadline and reveals",
    "scores": "Scores with intervals",
    "replay": "Trace replay",
    "site": "Site dry-run render",
}
STATUS_ICON = {"passed": "✅ passed", "failed": "❌ failed", "skipped": "⏭️ skipped"}
MAX_NOTES = 50


def md_fence(lines: list[str]) -> list[str]:
    """Lines (controls escaped) as a fenced code block whose fence no line can close."""
    shown = [escape_terminal(line) for line in lines]
    longest = max((len(run) for line in shown for run in re.findall(r"`{3,}", line)), default=0)
    fence = "`" * max(3, longest + 1)
    return [fence, *shown, fence]



def render_report(result: CheckResult, *, max_problems: int | None = 200) -> str:
    """The Markdown summary: verdict, sections, leaderboard row in context, validity, warnings, problems with fixes."""
    n = len(result.problems)
    mid = md_code(result.model_id)
    verdict = f"## ✅ Submission {mid} passes `rapgen submit check`" if result.ok else f"## ❌ Submission {mid}: {n} problem{'s' * (n != 1)} found"
    out: list[str] = [MARKER, verdict, "", " · ".join(_facts(result)), ""]
    out += _sections_table(result)
    if result.kind is not None:
        from rapgen.submit.review.kind_report import kind_sections

        out += kind_sections(result)
    else:
        out += _leaderboard_section(result)
        out += _validity_section(result)
        out += _origins_section(result)
        out += _live_section(result)
    out += _warnings_section(result)
    out += _problems_section(result, max_problems)
    if result.sums_lines:
        title = "SHA256SUMS lines for this folder" if result.in_archive else "SHA256SUMS lines `rapgen seal` will add once the folder is in archive/models/"
        out += [f"### {title}", "", *md_fence(result.sums_lines), ""]
    if result.notes:
        out += ["<details><summary>Notes</summary>", ""]
        out += [f"- {md_text(n)}" for n in result.notes[:MAX_NOTES]]
        if len(result.notes) > MAX_NOTES:
            out.append(f"- … and {len(result.notes) - MAX_NOTES} more")
        out += ["", "</details>", ""]
    out.append(f"<sub>rapgen {__version__} · `rapgen submit check` · exit {0 if result.ok else 1}</sub>")
    return "\n".join(out) + "\n"


def _facts(result: CheckResult) -> list[str]:
    facts = []
    model = result.model
    if model is not None:
        provider = md_text(model.provider) if model.provider else "provider not given"
        facts.append(f"**{md_text(model.display_name)}** ({provider}, {'proprietary' if model.proprietary else 'open'})")
        cutoff = model.effective_cutoff
        from_release = model.knowledge_cutoff is None and model.release_date is not None
        facts.append(f"cut-off {cutoff.isoformat() if cutoff else 'unknown'}" + (" (release date)" if from_release else ""))
        if model.diagnostic:
            facts.append("diagnostic (A2/A4)")
    where = f"archive/models/{result.model_id}/" if result.in_archive else str(result.model_dir)
    facts.append(f"folder {md_code(where)}")
    if result.base:
        base = result.base[:12] if re.fullmatch(r"[0-9a-f]{40}", result.base) else result.base
        facts.append(f"compared with {md_code(base)}")
    if result.manifest_sha256:
        facts.append(f"archive `SHA256SUMS` {md_code(result.manifest_sha256[:12])}…")
    return facts


def _table_section(title: str, header: str, rule: str, rows: list[str], note: str = "") -> list[str]:
    """A report section of one table: its heading, the table and, under it, ``note``."""
    return [f"### {title}", "", header, rule, *rows, "", *([note, ""] if note else [])]


def _sections_table(result: CheckResult) -> list[str]:
    rows = []
    for section in SECTIONS:
        status = result.stages.get(section)
        if status is None:
            continue
        k = len(result.stage_problems(section))
        note = md_text(status.note) if status.note else (f"{k} problem{'s' * (k != 1)}" if k else "")
        rows.append(f"| {SECTION_TITLES[section]} | {STATUS_ICON.get(status.status, md_text(status.status))} | {note} |")
    return _table_section("Checks", "| stage | result | note |", "| --- | --- | --- |", rows)


def _leaderboard_section(result: CheckResult) -> list[str]:
    headline = f"{PRIMARY.track}, {PRIMARY.policy} counting, {PRIMARY.metric}"
    rows = [r for r in result.leaderboard if (r.get("track"), r.get("policy"), r.get("metric")) == (PRIMARY.track, PRIMARY.policy, PRIMARY.metric)]
    if not rows:
        if result.leaderboard:
            return ["### Leaderboard", "", f"No headline rows ({headline}) were produced.", ""]
        return []
    out = [f"### Leaderboard in context ({headline})", ""]
    for split in sorted({r["split"] for r in rows}, key=lambda s: (s != TEST_SPLIT, s)):
        out += _split_table(result, [r for r in rows if r["split"] == split], split)
    return out


def _split_table(result: CheckResult, rows: list[dict], split: str) -> list[str]:
    out, keep = ranked_table(rows, result.model_id, f"**{md_text(split)}** split", ("fields", "valid / expected"), lambda r: (
        _fmt(r.get("n_fields", ""), 0), f"{_fmt(r.get('n_valid', ''), 0)} / {_fmt(r.get('n_episodes', ''), 0)}"))
    undefined = [r for r in rows if r["entry"] == result.model_id and r.get("estimate") in (None, "")]
    if undefined and keep:
        out += [f"Undefined for {', '.join(sorted(md_text(r['condition']) for r in undefined))} (no defined field score).", ""]
    return out


def _validity_section(result: CheckResult) -> list[str]:
    if not result.accounting:
        return []
    rows = []
    for c in result.accounting:
        reasons = "; ".join(f"{md_text(r)} ×{k}" for r, k in c.reasons) or "—"
        rows.append(f"| {c.condition} | {c.expected} | {c.present} | {c.valid} | {c.invalid} | {reasons} |")
    return _table_section("Validity", "| condition | expected | present | valid | invalid | why invalid |",
                          "| --- | ---: | ---: | ---: | ---: | --- |", rows,
                          "Invalid units are kept, counted and excluded from every mean, never scored as zero.")


def _origins_section(result: CheckResult) -> list[str]:
    """Coverage per origin: every origin the model claims, where its units are, and whether it is complete."""
    if not result.origins:
        return []
    rows = []
    for row in result.origins:
        conditions = ", ".join(f"{md_text(c)} {v['present']}/{v['expected']}" for c, v in row["conditions"].items()) or "—"
        status = "✅ complete" if row["complete"] else "❌ incomplete"
        listed = " (listed)" if row["listed"] else ""
        rows.append(f"| {md_text(row['origin'])} | {md_code(row['file'])}{listed} | {conditions} | {status} |")
    return _table_section("Coverage per origin", "| origin | file | conditions (present / expected) | coverage |",
                          "| --- | --- | --- | --- |", rows,
                          "Every origin a model claims is complete: all fields × every claimed condition, with A0, A1 and A3.")


def _live_section(result: CheckResult) -> list[str]:
    """The model's Live entries (sealed digest and receipt, on time or late) and every unrevealed entry."""
    if not result.live and not result.unrevealed:
        return []
    out = ["### Live", "", f"Deadlines judged on {md_text(result.now)} ({md_text(result.now_source)}).", ""]
    if result.live:
        out += ["| origin | entry | sha256 | receipt | closes | timing | status |", "| --- | --- | --- | --- | --- | --- | --- |"]
        for row in result.live:
            receipt = (f"release {row['receipt']} ({md_text(row['receipt_date'])})" if row.get("receipt")
                       else f"this pull request ({md_text(row.get('judged_on') or result.now)})")
            timing = "—" if row.get("on_time") is None else ("✅ on time" if row["on_time"] else "❌ late")
            out.append(f"| {md_text(row['origin'])} | {row['kind']} {md_code(row['path'])} | {md_code(row['sha256'][:16])}… | {receipt} "
                       f"| {md_text(row.get('closes') or '—')} | {timing} | {md_text(row['status'])} |")
        out.append("")
    if result.unrevealed:
        out += [f"**Unrevealed sealed entries in the archive ({len(result.unrevealed)})** — listed, never dropped:", ""]
        for row in result.unrevealed:
            out.append(f"- {md_code(row['model_id'])} for {md_text(row['origin'])}: committed {md_code(row['sha256'][:16])}… "
                       f"in release {row['receipt']} ({md_text(row['receipt_date'] or '—')})")
        out.append("")
    return out


def _warnings_section(result: CheckResult) -> list[str]:
    if not result.warnings:
        return []
    out = [f"### ⚠️ Warnings ({len(result.warnings)})", "", "Not a failure; the reviewer decides.", ""]
    for p in sorted(result.warnings, key=problem_order):
        out.append(f"- **{p.keyword}** {md_code(p.location())}: {md_text(p.detail)}" + (f" — {p.fix}" if p.fix else ""))
    out.append("")
    return out


def _problems_section(result: CheckResult, max_problems: int | None) -> list[str]:
    if result.ok:
        return []
    problems = sorted(result.problems, key=problem_order)
    shown = problems if max_problems is None else problems[:max_problems]
    groups: "OrderedDict[tuple[str, str, str], list[Problem]]" = OrderedDict()
    for p in shown:
        groups.setdefault((p.stage, p.keyword, p.fix), []).append(p)
    out = [f"### Problems ({len(problems)})", ""]
    for (stage, keyword, fix), items in groups.items():
        out.append(f"**{keyword}** ({SECTION_TITLES.get(stage, stage)}) — fix: {fix or 'see the message.'}")
        out.append("")
        out += [f"- {md_code(p.location())}: {md_text(p.detail)}" for p in items]
        out.append("")
    if len(shown) < len(problems):
        out += [f"… and {len(problems) - len(shown)} more; run `rapgen submit check` locally for the full list.", ""]
    return out
