"""Behaviour unchanged (issue 34): run ``configs/demo.yaml`` with the fake model
``fake:minutes`` and a fixed seed under two source trees (a git commit's ``src/`` and this
working tree's) and compare their summary.json, minus what a machine's clock or cache decides
(``wall_s``, ``runtime``, timings), and the rest of the run directory the same way: the best
policy, the archive, the front, every event (without its time) and every checkpoint. Prints the
differences; exits 1 when there are any.

    python benchmarks/demo_identity.py                # against 1bf3bd4 (issue 46's drop_blanks)
    python benchmarks/demo_identity.py --base HEAD~3 --generations 2
    python benchmarks/demo_identity.py --set outer.trials=rerun --set surrogate.enabled=true

Each run has its own empty LLM cache, so both make the same calls. The data is the demo's:
``../shared/data/meetings/ami-train.jsonl`` when it is there (run from the repository's root),
else synthetic meetings (the run says so); both runs see the same.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tarfile
import tempfile
from io import BytesIO
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
if __package__ in (None, ""):  # run as a script: the repository root on the path
    sys.path.insert(0, str(REPO))

from benchmarks.json_diff import differences  # noqa: E402

# main after issue 46's drop_blanks gene changed the demo's behaviour on purpose (on in the
# meeting seeds: their ids change, and the decoding operator's step of an enabled loop cut has
# one more move to draw); before, 5d3286c (issue 46's decoding and loop-cut defaults) and
# f0e5cab (main before issue 34's refactor)
BASE = "1bf3bd4"
# defaults changed on purpose since BASE, set to today's value in both runs (each one its
# commit); none since BASE
SINCE_BASE: tuple[str, ...] = ()
# config keys added since BASE (BASE refuses them as unknown) at a default that keeps the old
# behaviour: dropped from the config the branch's run records. distill.reference_targets
# (issue 47; its default "answer" changes what a distillation trains on, and the demo does not
# distil); distill.cache_dir (a cache of trainings, none by default)
ADDED_SINCE_BASE: tuple[str, ...] = ("distill.reference_targets", "distill.cache_dir")
# result keys changed on purpose since BASE, left out of both runs' files; none since BASE
CHANGED_SINCE_BASE: set[str] = set()
# summary.json keys added since BASE, dropped from the branch's summary; none since BASE
SUMMARY_ADDED_SINCE_BASE: tuple[str, ...] = ()
# what a clock or a cache decides, not the engine
VOLATILE = {
    "wall_s",
    "runtime",
    "timings",
    "elapsed_s",
    "cpu_s",  # the process's CPU seconds (a summary's, a checkpoint's)
    "seconds",
    "s_per_call",
    "eta_s",
    "t",  # an event's time
    "llm_seconds",  # the backend's measured seconds
    "sha256",  # a checkpoint's checksum (its state holds elapsed_s)
}
# the files compared besides summary.json (JSONL: one value per line)
FILES = (
    "summary.json",
    "archive.json",
    "front.json",
    "best/policy.json",
    "best/validation.json",
    "best/prompt.txt",
    "events.jsonl",
)


def strip(value: Any) -> Any:
    """``value`` without the volatile keys and those changed since BASE, at any depth."""
    if isinstance(value, dict):
        return {k: strip(v) for k, v in value.items() if k not in VOLATILE | CHANGED_SINCE_BASE}
    if isinstance(value, list):
        return [strip(v) for v in value]
    return value


def export_src(commit: str, into: Path) -> Path:
    """The ``src/`` tree of ``commit`` (git archive), unpacked under ``into``."""
    data = subprocess.run(
        ["git", "-C", str(REPO), "archive", commit, "src"], check=True, capture_output=True
    ).stdout
    with tarfile.open(fileobj=BytesIO(data)) as tar:
        tar.extractall(into, filter="data")
    return into / "src"


def read_run(run_dir: Path) -> dict[str, Any]:
    """The files of a run directory that the engine decides, as JSON values (the run
    directory's own path replaced by ``RUN_DIR``)."""
    out: dict[str, Any] = {}
    names = [*FILES, *sorted(str(p.relative_to(run_dir)) for p in run_dir.glob("checkpoints/*"))]
    for name in names:
        path = run_dir / name
        if not path.is_file():
            out[name] = None
            continue
        text = path.read_text().replace(str(run_dir), "RUN_DIR")
        if name.endswith(".jsonl"):
            out[name] = [json.loads(line) for line in text.splitlines() if line.strip()]
        elif name.endswith(".json"):
            out[name] = json.loads(text)
        else:
            out[name] = text
    return out


def run_demo(
    src: Path, work: Path, generations: int | None, seed: int, sets: tuple[str, ...] = ()
) -> dict[str, Any]:
    """The run directory of the demo run with ``src`` first on the path (its own cache)."""
    run_dir = work / "run"
    env = {
        **os.environ,
        "PYTHONPATH": str(src),
        "EVOTRAINER_CACHE_DIR": str(work / "cache"),
    }
    cmd = [
        sys.executable,
        "-m",
        "evotrainer.cli",
        "run",
        "-c",
        str(REPO / "configs" / "demo.yaml"),
        "--model",
        "fake:minutes",
        "--run-dir",
        str(run_dir),
        "--set",
        f"seed={seed}",
    ]
    if generations is not None:
        cmd += ["--set", f"inner.generations={generations}"]
    for setting in sets:
        cmd += ["--set", setting]
    subprocess.run(cmd, check=True, cwd=REPO, env=env, capture_output=True)
    return read_run(run_dir)


def compare(
    base: str = BASE,
    generations: int | None = None,
    seed: int = 0,
    sets: tuple[str, ...] = SINCE_BASE,
) -> list[str]:
    """The differences between the demo's run directory under ``base``'s src/ and this
    tree's (both with ``sets``: by default the deliberate default changes since BASE)."""
    with tempfile.TemporaryDirectory(prefix="demo-identity-") as tmp:
        t = Path(tmp)
        old_src = export_src(base, t / "base")
        old = run_demo(old_src, t / "run-base", generations, seed, sets)
        new = run_demo(REPO / "src", t / "run-branch", generations, seed, sets)
    return differences(strip(old), strip(without_added(new)))


def without_added(run: dict[str, Any]) -> dict[str, Any]:
    """``run`` (read_run's) with ADDED_SINCE_BASE taken out of every config its events
    record, and SUMMARY_ADDED_SINCE_BASE out of its summary (and the run_finished event's)."""
    summaries = [run.get("summary.json")]
    summaries += [e.get("summary") for e in run.get("events.jsonl") or [] if isinstance(e, dict)]
    for summary in summaries:
        for key in SUMMARY_ADDED_SINCE_BASE if isinstance(summary, dict) else ():
            summary.pop(key, None)
    for event in run.get("events.jsonl") or []:
        config = event.get("config") if isinstance(event, dict) else None
        for key in ADDED_SINCE_BASE if isinstance(config, dict) else ():
            *parents, last = key.split(".")
            node = config
            for part in parents:
                node = node.get(part) if isinstance(node, dict) else None
            if isinstance(node, dict):
                node.pop(last, None)
    return run


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--base", default=BASE, help="the commit to compare against")
    ap.add_argument("--generations", type=int, default=None, help="inner.generations")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument(
        "--set",
        action="append",
        default=[],
        help="key=value (repeatable), besides SINCE_BASE's",
    )
    args = ap.parse_args()
    diffs = compare(args.base, args.generations, args.seed, (*SINCE_BASE, *args.set))
    for d in diffs:
        print(d)
    print("identical" if not diffs else f"{len(diffs)} differences")
    return 1 if diffs else 0


if __name__ == "__main__":
    sys.exit(main())
