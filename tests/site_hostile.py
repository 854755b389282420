"""A valid archive whose every text field carries markup (the site's injection tests).

``make_hostile_archive`` builds the factory archive, then rewrites each text an
archive or a submission can carry — ARCHIVE.json, field names and definitions,
codebook directions, every model.json text field and ``url``, invalid-unit
reasons — to ``<original> <payload>``. Keeping the original text in front keeps
every value distinct, so the built site has the same pages, rows and charts as
the benign build and the two DOMs can be compared element by element.

Every payload that could run sets ``window.__pwned``; every element it could
create carries ``pwn`` somewhere in its name, class, id or attributes.
"""

from __future__ import annotations

import json
from pathlib import Path

from factory import make_archive, reseal

PAYLOAD = (
    '<script>window.__pwned=1</script><img src=x onerror="window.__pwned=2" class=pwn> '
    "[pwn-link](javascript:window.__pwned=3) <a href=\"javascript:window.__pwned=4\">pwn-a</a> "
    "![pwn-img](x){: onerror=\"window.__pwned=5\"} *pwn-em*{: onclick=\"window.__pwned=6\" .pwn #pwn} "
    "_pwn-u_ **pwn-b** `pwn-code` <https://pwn.example/> <svg onload=window.__pwned=7> "
    "</title></span></td></table><iframe src=\"javascript:window.__pwned=8\"></iframe> "
    "{{ 7*7 }} {% raw %}{% endraw %} {# c #} &lt;b class=pwn&gt; &amp;amp; &#60;i&#62; <!-- pwn --> "
    "\n---\ntitle: pwn\n---\n\n!!! danger \"pwn-adm\"\n    body\n\n??? note \"pwn-det\"\n\n=== \"pwn-tab\"\n\n"
    "~~~\npwn-fence\n~~~\n\n1. pwn-ol\n- pwn-ul\n> pwn-quote\n# pwn-h {: #pwn-id onmouseover=\"window.__pwned=9\"}\n"
    "| pwn | cell |\n|---|---|\n<div markdown=\"1\">*pwn-md*</div> \\ \x02wzxhzdk:0\x03 \x7f\x85\u2028\u2029 "
    "%{x} <b>pwn-plotly</b><br><a href=\"javascript:window.__pwned=10\">pwn-pa</a>"
)
EVIL_URLS = ("javascript:window.__pwned=11", 'https://example.org/"onmouseover="window.__pwned=12')
# The benign twin: the same rewrite with plain words, and URLs that give the same
# page structure (the first is not a link, the second is).
PLAIN = "plain words"
PLAIN_URLS = ("mailto-like text", "https://example.org/model")


def _rewrite_jsonl(path: Path, edit) -> None:
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    path.write_text("".join(json.dumps(edit(obj), ensure_ascii=False) + "\n" for obj in lines), encoding="utf-8")


def make_hostile_archive(root: str | Path, payload: str = PAYLOAD, urls: tuple[str, str] = EVIL_URLS) -> Path:
    """The factory archive with ``payload`` after every text field, resealed (it verifies)."""

    def hostile(text: str) -> str:
        return f"{text} {payload}"

    def field(obj: dict) -> dict:
        return {**obj, "name": hostile(obj["name"]), "definition": hostile(obj["definition"])}

    def codebook(obj: dict) -> dict:
        keys = ("name", "definition", "include", "exclude")
        return {**obj, "directions": [{**d, **{k: hostile(d[k]) for k in keys}} for d in obj["directions"]]}

    def unit(obj: dict) -> dict:
        return {**obj, "reason": hostile(obj["reason"])} if obj.get("reason") else obj

    tiny = make_archive(root)
    arch = Path(tiny.root) / "archive"
    info_path = arch / "ARCHIVE.json"
    info = json.loads(info_path.read_text(encoding="utf-8"))
    for key in ("name", "description", "source", "license"):
        info[key] = hostile(info[key])
    info_path.write_text(json.dumps(info, ensure_ascii=False), encoding="utf-8")
    _rewrite_jsonl(arch / "benchmark" / "fields.jsonl", field)
    _rewrite_jsonl(arch / "benchmark" / "codebooks.jsonl", codebook)
    for i, model_id in enumerate(tiny.model_ids):
        path = arch / "models" / model_id / "model.json"
        model = json.loads(path.read_text(encoding="utf-8"))
        for key in ("display_name", "provider", "cutoff_source", "contact"):
            model[key] = hostile(model[key])
        model["notes"] = hostile("notes")
        model["url"] = urls[i]
        path.write_text(json.dumps(model, ensure_ascii=False), encoding="utf-8")
        _rewrite_jsonl(arch / "models" / model_id / "predictions.jsonl", unit)
    reseal(tiny.root)
    return Path(tiny.root)
