"""``rapgen evaluate``: one model's evaluator files from a verified Ideas release (IDEAS.md §4).

What is read: the release's papers, pools, ledger and ``judges.jsonl``, and the
model's predictions — those of ``archive/models/<id>/`` or, with ``out``, the
``predictions.jsonl`` of that folder (a submission being prepared; without one
there, the archive's model is evaluated into ``out``).

- **Judges** are the lines of ``judges.jsonl``, named by id: a line with a
  lexical ``rule`` is the lexical judge it records; any other line is served
  by an OpenAI-compatible chat endpoint (``base_url``) and must record this
  rapgen's prompt (``prompt_sha256``). Every cache key is made with the line's
  own bytes, so the files verify against the archive.
- **Embedding** is the ledger's: ``tfidf-sample-v1`` is computed here; any other
  name is sent as the model of an OpenAI-compatible ``/embeddings`` endpoint.
- **Caches.** An endpoint judge's verdicts and an endpoint's vectors go to
  durable journals under ``<cache>/ideas/`` (``cache_dir``, else
  ``$RAPGEN_CACHE``, else ``<root>/.rapgen-cache``), keyed by cache key, so a
  rerun pays for nothing and an interrupted run resumes. Verdicts already in
  the folder's (or the archive's) ``judgments.parquet`` are reused as well.
- **Output.** ``features.parquet`` and ``eval/<judge>/{candidates,judgments}.parquet``
  are computed whole, then only the files whose bytes change are written,
  together, through a temporary folder and renames. A file that SHA256SUMS
  lists (a released evaluation) is never changed unless ``force``: a
  re-judgment is an errata release.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shlex
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import date
from pathlib import Path

from rapgen.errors import SubmissionError, UsageProblem
from rapgen.io import CACHE_OUTPUT, MODEL_OUTPUT, guard_output_dir, write_folder
from rapgen.kinds.ideas.archive.check import JUDGES_JSONL, IdeasArchive
from rapgen.kinds.ideas.archive.evaluation import parse_judgments
from rapgen.kinds.ideas.archive.predictions import Predictions, parse_predictions
from rapgen.kinds.ideas.archive.topics import Judge as JudgeLine
from rapgen.kinds.ideas.kit.embedding import TFIDF, EmbeddingsClient, EndpointEmbedder, TfidfEmbedder
from rapgen.kinds.ideas.kit.evaluate import episodes_to_retrieve, eval_files, features_file, judge_candidates, retrieve
from rapgen.kinds.ideas.kit.journal import Journal
from rapgen.kinds.ideas.kit.judges import LEXICAL, PROMPT_SHA256, ChatJudge, lexical_from_rule
from rapgen.kit import ChatClient

CACHE_ENV = "RAPGEN_CACHE"
DEFAULT_CACHE = ".rapgen-cache"
Bar = Callable[[str, int], "contextlib.AbstractContextManager[Callable[[int], None]]"]


@contextlib.contextmanager
def _no_bar(label: str, total: int) -> Iterator[Callable[[int], None]]:
    yield lambda n: None


def _safe_name(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]", "_", name)


def cache_folder(root: Path, cache_dir: str | Path | None) -> Path:
    """``<cache>/ideas``: ``cache_dir``, else $RAPGEN_CACHE, else ``<root>/.rapgen-cache`` (never the archive)."""
    folder = cache_dir if cache_dir is not None else os.environ.get(CACHE_ENV) or Path(root) / DEFAULT_CACHE
    return Path(guard_output_dir(folder, CACHE_OUTPUT)) / "ideas"


def make_judge(recorded: JudgeLine, base_url: str | None, api_key: str | None, timeout: float, retries: int):
    """The judge a judges.jsonl line records (a usage error if this rapgen cannot serve it)."""
    if recorded.rule is not None:
        try:
            return lexical_from_rule(recorded.judge_id, recorded.rule)
        except ValueError as exc:
            raise UsageProblem(f"{JUDGES_JSONL}: {exc}") from None
    if recorded.serving_model == LEXICAL:
        raise UsageProblem(f"{JUDGES_JSONL}: judge {recorded.judge_id!r} is {LEXICAL} but records no 'rule'")
    if recorded.prompt_sha256 != PROMPT_SHA256:
        raise UsageProblem(f"{JUDGES_JSONL}: judge {recorded.judge_id!r} records prompt_sha256 {recorded.prompt_sha256[:12]}…, "
                           f"not this rapgen's judge prompt ({PROMPT_SHA256[:12]}…); its verdicts cannot be reproduced here")
    if base_url is None:
        raise UsageProblem(f"--judge {recorded.judge_id}: it is served by an endpoint ({recorded.serving_model}); give --base-url")
    return ChatJudge(recorded.judge_id, ChatClient(base_url, api_key, timeout, retries), recorded.serving_model,
                     server_version=recorded.server_version, alias=recorded.alias, temperature=recorded.temperature)


@dataclass(frozen=True)
class Group:
    """One unit group of the model evaluated: its predictions and where its files go, relative to the model
    folder ("" for the cutoffs of predictions.jsonl, ``origins/<t>/`` for a later cutoff t)."""

    prefix: str
    predictions: Predictions


def _model_source(archive: IdeasArchive, root: Path, model: str, out: Path | None) -> tuple[Path, list[Group], str]:
    """(the folder written, its unit groups whose cutoffs are resolved, where the predictions were read).

    An archived model is evaluated group by group: the evaluator files of a later cutoff t go in
    ``origins/<t>/`` beside its predictions, and a group whose cutoff is not resolved yet is left out."""
    listed = archive.models.get(model)
    known = ", ".join(sorted(m for m, f in archive.models.items() if f.predictions is not None)) or "none"
    if out is not None and (out / "predictions.jsonl").is_file():
        groups = _prepared_groups(archive, out, model)
        later = len(groups) - 1
        return out, groups, str(out / "predictions.jsonl") + (f" and {later} later cutoff{'s' * (later > 1)}" if later else "")
    if listed is None or listed.predictions is None:
        where = f" and {out} has no predictions.jsonl" if out is not None else ""
        raise UsageProblem(f"--model {model!r}: the archive has no such model{where} (models: {known})")
    folder = out if out is not None else root / "archive" / "models" / model
    base = f"archive/models/{model}"
    resolved = set(archive.resolved)
    groups = []
    for path, part in sorted(listed.parts.items()) or [(base, listed)]:
        prefix = path[len(base) + 1:] + "/" if path != base else ""
        if prefix and date.fromisoformat(prefix.split("/")[1]) not in resolved:
            continue  # its future is not known yet: judged once a roll resolves it
        assert part.predictions is not None
        groups.append(Group(prefix, part.predictions))
    sources = [f"{base}/{g.prefix}predictions.jsonl" for g in groups]
    return folder, groups, sources[0] if len(sources) == 1 else f"{sources[0]} and {len(sources) - 1} later cutoff{'s' * (len(sources) > 2)}"


def _prepared_groups(archive: IdeasArchive, folder: Path, model: str) -> list[Group]:
    """A prepared folder's unit groups: predictions.jsonl for the cutoffs of config.json, then each
    ``origins/<t>/predictions.jsonl`` whose cutoff the archive has resolved (a later one is left for later,
    as for an archived model); a group folder not named by a date is a usage error."""
    assert archive.config is not None
    groups = [Group("", _read_predictions(archive, folder, model))]
    resolved = set(archive.resolved)
    origins = folder / "origins"
    for sub in sorted(origins.iterdir()) if origins.is_dir() else ():
        if not (sub / "predictions.jsonl").is_file():
            continue
        try:
            t = date.fromisoformat(sub.name)
        except ValueError:
            raise UsageProblem(f"{sub}: a cutoff group is named by its cutoff date (origins/YYYY-MM-DD/)") from None
        if t in resolved and t not in set(archive.config.cutoffs):
            groups.append(Group(f"origins/{sub.name}/", _read_predictions(archive, folder, model, sub / "predictions.jsonl", {t})))
    return groups


def _read_predictions(archive: IdeasArchive, folder: Path, model: str, path: Path | None = None,
                      cutoffs: set[date] | None = None) -> Predictions:
    """A prepared folder's predictions (``path``, default its predictions.jsonl), checked against the archive's
    episodes of ``cutoffs`` (default config.json's) — exit 1 on the first problem."""
    info = folder / "model.json"
    if info.is_file():
        try:
            found_id = json.loads(info.read_bytes()).get("model_id")
        except (ValueError, AttributeError, OSError):
            found_id = None
        if found_id is not None and found_id != model:
            raise UsageProblem(f"{info}: model_id {found_id!r} is not --model {model!r}")
    assert archive.pools is not None and archive.config is not None
    cutoffs = set(archive.config.cutoffs) if cutoffs is None else cutoffs
    episodes = {e.episode_id: e for e in archive.pools.episodes if e.cutoff in cutoffs}
    path = folder / "predictions.jsonl" if path is None else path
    predictions, found = parse_predictions(str(path), path.read_bytes(), episodes, archive.config.top_k)
    if found:
        f = found[0]
        more = f" (and {len(found) - 1} more problems)" if len(found) > 1 else ""
        raise SubmissionError(f"{f.path}{f':{f.line}' if f.line else ''}: {f.detail}{more}")
    return predictions


def _embedder(archive: IdeasArchive, url: str | None, api_key: str | None, timeout: float, retries: int, cache: Path | None,
              batch: int):
    """The ledger's embedding (``cache`` is None only for ``tfidf-sample-v1``)."""
    assert archive.ledger is not None
    name, dims = archive.ledger.embedding, archive.ledger.dimensions
    if name == TFIDF:
        return TfidfEmbedder()
    if url is None:
        raise UsageProblem(f"the ledger's embedding {name!r} is served by an endpoint; give --base-url (or --embeddings-url)")
    client = EmbeddingsClient(url, api_key, timeout, retries)
    assert cache is not None
    return EndpointEmbedder(client, name, cache=cache / "embeddings" / f"{_safe_name(name)}.jsonl", batch=batch, dimensions=dims)


def _earlier(paths: Sequence[Path]) -> list:
    """Judgments of earlier runs (unreadable files are ignored: they are recomputed)."""
    out = []
    for path in paths:
        if path.is_file():
            judgments, found = parse_judgments(str(path), path.read_bytes())
            if not found:
                out.extend(judgments)
    return out


def _relative(path: Path, root: Path) -> str | None:
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return None


def evaluate(release, *, model: str, judges: Sequence[str], out: str | Path | None = None, base_url: str | None = None,
             embeddings_url: str | None = None, api_key: str | None = None, cache_dir: str | Path | None = None,
             force: bool = False, reuse: bool = True, timeout: float = 120.0, retries: int = 2, batch: int = 64,
             bar: Bar | None = None) -> dict:
    """Retrieve, judge and write ``model``'s evaluator files for each of ``judges``; a summary.
    ``reuse`` False: judge every pair again (an audit of the recorded verdicts; new verdicts are
    still journaled)."""
    archive: IdeasArchive = release.archive
    root = Path(release.root)
    bar = bar or _no_bar
    out = Path(out) if out is not None else None
    if archive.ledger is None or archive.pools is None or archive.config is None:
        raise UsageProblem(f"{root}: the archive's ledger, config or episodes did not parse")
    unknown = [j for j in judges if j not in archive.judges]
    if unknown:
        raise UsageProblem(f"--judge {unknown[0]!r}: {JUDGES_JSONL} lists no such judge "
                           f"(judges: {', '.join(archive.judges) or 'none'}); record its line there first")
    made = {j: make_judge(archive.judges[j], base_url, api_key, timeout, retries) for j in dict.fromkeys(judges)}
    url = embeddings_url or base_url
    endpoint_judges = [j for j, judge in made.items() if isinstance(judge, ChatJudge)]
    if archive.ledger.embedding == TFIDF and not endpoint_judges and (base_url or embeddings_url):
        raise UsageProblem(f"--base-url/--embeddings-url: nothing here calls an endpoint (judges {', '.join(made)} are lexical, "
                           f"the embedding is {TFIDF})")
    folder, groups, source = _model_source(archive, root, model, out)
    guard_output_dir(folder, MODEL_OUTPUT)
    cache = cache_folder(root, cache_dir) if endpoint_judges or archive.ledger.embedding != TFIDF else None
    embedder = _embedder(archive, url, api_key, timeout, retries, cache, batch)
    depth = archive.ledger.retrieval_depth
    files: dict[str, bytes] = {}
    runs: dict[str, list] = {j: [] for j in made}
    counts = {"episodes": 0, "ideas": 0, "candidates": 0}
    archived = root / "archive" / "models" / model
    for group in groups:
        where = f" {group.prefix.rstrip('/')}" if group.prefix else ""
        n_episodes = episodes_to_retrieve(archive.pools, group.predictions)
        with bar(f"retrieval ({embedder.name}){where}", n_episodes) as tick:
            retrieval = retrieve(archive.papers, archive.pools, group.predictions, embedder, depth, tick=tick)
        counts["episodes"] += n_episodes
        counts["ideas"] += len(retrieval.nn_distance)
        counts["candidates"] += len(retrieval.candidates)
        files.update({group.prefix + n: b for n, b in features_file(retrieval).items()})
        for judge_id, judge in made.items():
            names = [folder / group.prefix / "eval" / judge_id / "judgments.parquet",
                     archived / group.prefix / "eval" / judge_id / "judgments.parquet"]
            journal = Journal(cache / "judgments" / f"{_safe_name(judge_id)}.jsonl") if judge_id in endpoint_judges else None
            with bar(f"judging ({judge_id}){where}", len(retrieval.candidates)) as tick:
                run = judge_candidates(retrieval.candidates, group.predictions, archive.papers, judge, journal,
                                       _earlier(list(dict.fromkeys(names))) if reuse else [], line=archive.judges[judge_id].line,
                                       tick=tick, reuse_journal=reuse)
            runs[judge_id].append(run)
            files.update({group.prefix + n: b for n, b in eval_files(judge_id, retrieval.candidates, run.judgments).items()})
    changed, unchanged = _changes(files, folder, root, release, force)
    if changed:
        write_folder(folder, changed, prefix=".rapgen-eval-")
    inside = _relative(folder, root)
    summary = {
        "model": model, "folder": str(folder), "predictions": source, "embedding": embedder.name, "depth": depth,
        **counts, "cutoff_groups": [g.prefix.rstrip("/") or "predictions.jsonl" for g in groups],
        "judges": {j: {"judged": sum(r.judged for r in rs), "reused": sum(r.reused for r in rs),
                       "failed": sum(1 for r in rs for x in r.judgments if x.status == "failed")}
                   for j, rs in runs.items()},
        "chat_requests": sum(getattr(judge, "calls", 0) for judge in made.values()),
        "embedding_requests": getattr(embedder, "calls", 0),
        "written": sorted(changed), "unchanged": sorted(unchanged), "cache": str(cache) if cache is not None else None,
        "seal": bool(changed) and inside is not None and inside.startswith("archive/"),
        "next": next_steps(sorted(changed), inside, root, bool(release.is_history)),
    }
    summary["text"] = _text(summary, root)
    return summary


def _changes(files: dict[str, bytes], folder: Path, root: Path, release, force: bool) -> tuple[dict[str, bytes], list[str]]:
    """The files whose bytes change, and those already as computed; a listed file that would change is refused."""
    changed, unchanged = {}, []
    for name, data in sorted(files.items()):
        target = folder / name
        if target.is_file() and target.read_bytes() == data:
            unchanged.append(name)
            continue
        rel = _relative(target, root)
        if target.is_file() and rel in release.files and not force:
            raise UsageProblem(f"{rel}: SHA256SUMS lists it and this evaluation would change it (a released evaluation never "
                               "changes; a re-judgment is an errata release); --force replaces it")
        changed[name] = data
    return changed, unchanged


def _text(s: dict, root: Path) -> list[str]:
    lines = [f"{s['model']}: {s['ideas']:,} ideas in {s['episodes']} episodes, {s['candidates']:,} candidates "
             f"({s['embedding']}, depth {s['depth']}), predictions from {s['predictions']}"]
    for judge_id, r in s["judges"].items():
        lines.append(f"  {judge_id}: {r['judged']:,} judged now, {r['reused']:,} reused (cached or already in judgments.parquet), "
                     f"{r['failed']:,} failed")
    if s["chat_requests"] or s["embedding_requests"]:
        lines.append(f"  endpoint requests: {s['chat_requests']:,} chat, {s['embedding_requests']:,} embeddings (cache {s['cache']})")
    if s["written"]:
        lines.append(f"Wrote {len(s['written'])} files to {s['folder']} ({len(s['unchanged'])} already up to date).")
    else:
        lines.append(f"Nothing to write: the {len(s['unchanged'])} files in {s['folder']} are up to date.")
    lines.extend(s["next"])
    return lines


def next_steps(written: Sequence[str], inside: str | None, root: Path, history: bool) -> list[str]:
    """What to run after files were written into the archive: seal lists them, and in a history a models
    release releases them (until then verify reports them unlisted, and after seal, unreleased)."""
    if not written or inside is None or not inside.startswith("archive/"):
        return []
    shown = shlex.quote(str(root))
    out = [f"SHA256SUMS does not list the {len(written)} new files yet. Next:",
           f"  rapgen seal --root {shown}            # lists them (verify reports them as unlisted until then)"]
    if history:
        out.append(f"  rapgen release cut --root {shown} --kind models --date YYYY-MM-DD   # releases them "
                   "(until then scores mark them unreleased and --release N leaves them out)")
    out.append(f"  rapgen verify --root {shown} && rapgen score --root {shown}")
    return out
