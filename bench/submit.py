"""Benchmark: ``rapgen submit check`` of one new RAP model on a full-scale archive.

The archive (e.g. ``rapgen synth --scale full``) is linked file by file into a scratch root
(SHA256SUMS copied, never linked), a new model folder is made there from an existing model's
model.json, predictions.jsonl and traces.jsonl under a new id, and its SHA256SUMS lines are
added, as a pull request would. The whole ``rapgen submit check`` (integrity, submission,
scores, replay of the new traces, the dry-run render) of this checkout and of the reference
revision then run alternately on it, each warmed once (the Search index cache is filled by the
warm-up), and the best wall, CPU and peak memory and their ratios are printed. The two
reports must be the same bytes.

    python bench/submit.py --archive DIR [--model synth-beta] [--reference main] [--repeat 2]
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from reference import ratio, run_tree, source_tree  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
NEW_ID = "bench-new"


def make_root(archive: Path, model: str, target: Path) -> Path:
    """``archive`` linked into ``target`` plus a new model folder copied from ``model``, sealed."""
    shutil.copytree(archive / "archive", target / "archive", copy_function=os.link)
    shutil.copy2(archive / "SHA256SUMS", target / "SHA256SUMS")
    src, dst = target / "archive" / "models" / model, target / "archive" / "models" / NEW_ID
    dst.mkdir()
    for name in ("predictions.jsonl", "traces.jsonl"):
        shutil.copyfile(src / name, dst / name)
    (dst / "model.json").write_text((src / "model.json").read_text().replace(f'"{model}"', f'"{NEW_ID}"'))
    lines = [line for line in (target / "SHA256SUMS").read_text().splitlines() if line]
    for name in ("model.json", "predictions.jsonl", "traces.jsonl"):
        rel = f"archive/models/{NEW_ID}/{name}"
        lines.append(f"{hashlib.sha256((target / rel).read_bytes()).hexdigest()}  {rel}")
    lines.sort(key=lambda line: line[66:].encode())
    (target / "SHA256SUMS").write_text("\n".join(lines) + "\n")
    return target


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--archive", type=Path, required=True)
    parser.add_argument("--model", default="synth-beta", help="the model whose files the new folder copies")
    parser.add_argument("--reference", default="main", help="revision or source tree to compare with (default main)")
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()
    print(f"cores: {os.cpu_count()}, load {os.getloadavg()[0]:.1f}")
    with tempfile.TemporaryDirectory(prefix="rapgen-bench-submit-") as tmp:
        root = make_root(args.archive, args.model, Path(tmp) / "root")
        trees = {"this checkout": REPO, "reference": source_tree(args.reference, Path(tmp))}
        cmd = ["-m", "rapgen", "submit", "check", "--root", str(root), str(root / "archive" / "models" / NEW_ID)]
        reports = {name: run_tree(tree, cmd).stdout for name, tree in trees.items()}  # warm-up: page cache, Search index
        runs: dict[str, list] = {name: [] for name in trees}
        for i in range(args.repeat):
            for name in (trees if i % 2 == 0 else reversed(list(trees))):
                run = run_tree(trees[name], cmd)
                runs[name].append(run)
                print(f"  run {i + 1} {name:14s} {run.wall:6.2f} s wall, {run.cpu:6.2f} s CPU, peak {run.peak_kib / 2**20:.2f} GiB "
                      f"(load {run.load:.1f})", flush=True)
    same = reports["this checkout"] == reports["reference"]
    best = {name: (min(r.wall for r in rs), min(r.cpu for r in rs), min(r.peak_kib for r in rs)) for name, rs in runs.items()}
    (mw, mc, mp), (rw, rc, rp) = best["this checkout"], best["reference"]
    print(f"rapgen submit check of one new model (best of {args.repeat}): this checkout {mw:.2f} s wall / {mc:.2f} s CPU / "
          f"{mp / 2**20:.2f} GiB, {args.reference} {rw:.2f} s / {rc:.2f} s / {rp / 2**20:.2f} GiB; ratio {ratio(mw, rw)} wall, "
          f"{ratio(mc, rc)} CPU; reports {'identical' if same else 'DIFFER'}")


if __name__ == "__main__":
    main()
