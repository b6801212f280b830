"""Warm starts: ``evotrainer run --init-from RUN_DIR`` (config ``init_from``).

An earlier run of the same task (any model, any training corpus) hands over what it learned:

- **policies**: its archive front (``front.json``, best meta score first), else its archive by
  s_val (``archive.json``, or the newest checkpoint of a run that did not finish); they join the
  new run's seeds (lineage operator ``import``), are validated at the start like the seeds, and
  count as starting points: ``initial_s_val`` is the best of them and the hand-written seeds;
- **harness**: the harness of its best entry (difficulty, mix, reward weights; components this
  run does not have are dropped and said so; its real share only when the earlier run trained on
  real meetings, else this run's configured share);
- **ratings**: what people said in its ``evotrainer review`` (``ratings.sqlite``, read only),
  copied into the new run's ratings file: the imported policies keep their ids, so on the same
  validation meetings the new run's human objective starts from them (ratings on meetings the
  new run does not select on are kept and not used).

Refused, before the new run's directory is made: another task, a run that trained or selected
on a test set (a file named like ami-dev or ICSI: they are where claims are tested, never where
anything is chosen), and an archive that is not plain data of the expected shape (an entry
without a policy text or a harness, a string where a number belongs, JSON nested too deeply):
the source is untrusted input, and its message names the file and the entry. A policy text over
``MAX_POLICY_CHARS`` (policy/genome.py) is refused the same way.
"""

from __future__ import annotations

import json
import math
from collections.abc import Collection
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from evotrainer.config import load_yaml
from evotrainer.errors import CheckpointError, ConfigError, RunDirectoryError
from evotrainer.harness.genome import HarnessGenome
from evotrainer.policy.decoding import DecodingGenes
from evotrainer.policy.genome import PolicyGenome, checked_components
from evotrainer.policy.postprocess import LoopCut
from evotrainer.run.checkpoint import load_latest
from evotrainer.run.ratings import Rating, read_ratings
from evotrainer.types import Lineage

TEST_SETS = ("ami-dev", "icsi")  # file-name stems of the benchmarks' test data


@dataclass
class WarmStart:
    source: Path
    policies: list[PolicyGenome]
    harness: HarnessGenome | None
    notes: list[str] = field(default_factory=list)
    ratings: list[Rating] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "source": str(self.source),
            "policies": [p.id for p in self.policies],
            "harness": self.harness.to_json() if self.harness else None,
            "notes": list(self.notes),
            "ratings": len(self.ratings),
        }


@dataclass(frozen=True)
class Entry:
    """One archived (policy, harness, s_val) pair of the source, checked."""

    policy: PolicyGenome
    harness: HarnessGenome
    s_val: float | None


def _config(run_dir: Path) -> dict[str, Any]:
    cfg_file = run_dir / "config.yaml"
    if not run_dir.is_dir() or not cfg_file.is_file():
        raise RunDirectoryError(
            f"--init-from {run_dir}: not a run directory (no config.yaml); give the --run-dir of "
            "an earlier run"
        )
    try:  # load_yaml: no alias bombs either
        data = load_yaml(cfg_file.read_text(encoding="utf-8"), str(cfg_file)) or {}
    except (ConfigError, UnicodeDecodeError, OSError) as exc:
        raise RunDirectoryError(f"--init-from {cfg_file}: not a readable config: {exc}") from None
    if not isinstance(data, dict):
        raise RunDirectoryError(f"--init-from {cfg_file}: not a config")
    return data


def _test_data_used(cfg: dict[str, Any]) -> list[str]:
    used = []
    for section, key in (
        ("validation", "data"),
        ("harness", "real_data"),
        ("defences", "terminal_data"),
    ):
        part = cfg.get(section)
        value = part.get(key) if isinstance(part, dict) else None
        if isinstance(value, str) and any(t in Path(value).name.lower() for t in TEST_SETS):
            used.append(f"{section}.{key}={value}")
    return used


def _raw_entries(run_dir: Path) -> tuple[Any, str, bool]:
    """The archived pairs as stored, the file they came from, and whether they are already
    best first (the front is)."""
    front = run_dir / "front.json"
    if front.is_file():
        doc = json.loads(front.read_text(encoding="utf-8"))
        if isinstance(doc, dict) and isinstance(doc.get("front"), list) and doc["front"]:
            return doc["front"], "front.json", True
    archive_file = run_dir / "archive.json"
    if archive_file.is_file():
        return json.loads(archive_file.read_text(encoding="utf-8")), "archive.json", False

    state, path, _warnings = load_latest(run_dir)
    outer = state.get("outer")
    return (outer.get("archive") if isinstance(outer, dict) else None) or [], path.name, False


def _entries(run_dir: Path) -> list[Entry]:
    """Archived pairs, best first: the front, else the archive by s_val."""
    raw, where, ranked = _raw_entries(run_dir)
    if not isinstance(raw, list):
        raise ValueError(f"{where}: the archive is not a list")
    entries = []
    for i, item in enumerate(raw):
        try:
            entries.append(_entry(item))
        except (KeyError, TypeError, ValueError, AttributeError, OverflowError) as exc:
            raise ValueError(f"{where}: entry {i} is not an archived pair: {exc}") from None
    if ranked:
        return entries
    return sorted(entries, key=lambda e: -(e.s_val if e.s_val is not None else -1.0))


def _entry(item: Any) -> Entry:
    if not isinstance(item, dict):
        raise TypeError(f"expected an object, got {type(item).__name__}")
    return Entry(_policy(item.get("policy")), _harness(item.get("harness")), _s_val(item))


def _policy(data: Any) -> PolicyGenome:
    components = data.get("components") if isinstance(data, dict) else None
    try:
        checked = checked_components(components)  # ValueError: over MAX_POLICY_CHARS
    except TypeError:
        raise TypeError("its policy needs components: an object of texts") from None
    # ValueError without a 'system' text, or with malformed decoding/post-processing genes
    return PolicyGenome(
        checked,
        decoding=DecodingGenes.from_json(data.get("decoding") or {}, "its policy's decoding"),
        postprocess=LoopCut.from_json(data.get("postprocess") or {}, "its policy's postprocess"),
    )


def _harness(data: Any) -> HarnessGenome:
    if not isinstance(data, dict):
        raise TypeError("its harness must be an object")
    weights, mix = data.get("weights"), data.get("task_mix")
    if not isinstance(weights, dict) or not all(map(_number, weights.values())):
        raise TypeError("its harness weights must be an object of numbers")
    if mix is not None and (not isinstance(mix, dict) or not all(map(_number, mix.values()))):
        raise TypeError("its harness task_mix must be an object of numbers")
    if not _number(data.get("difficulty")) or not _number(data.get("real_share", 0.0)):
        raise TypeError("its harness difficulty and real_share must be numbers")
    genes = data.get("genes")
    if genes is not None and (not isinstance(genes, dict) or not all(map(_number, genes.values()))):
        raise TypeError("its harness genes must be an object of numbers")
    return HarnessGenome.from_json(data)


def _s_val(item: dict[str, Any]) -> float | None:
    s = item.get("s_val")
    if s is not None and not _number(s):
        raise TypeError(f"its s_val must be a number, got {s!r:.40}")
    return None if s is None or not math.isfinite(s) else float(s)


def _number(x: Any) -> bool:
    return isinstance(x, int | float) and not isinstance(x, bool) and math.isfinite(x)


def check_source(run_dir: Path, task_name: str) -> list[Entry]:
    """Refuse a source that is not a usable earlier run (before any model loads); its
    archived pairs, best first."""
    cfg = _config(run_dir)
    task = cfg.get("task")
    source_task = task.get("name", "meetings") if isinstance(task, dict) else "meetings"
    if source_task != task_name:
        raise RunDirectoryError(
            f"--init-from {run_dir}: that run is task {source_task!r}, this one {task_name!r}"
        )
    tainted = _test_data_used(cfg)
    if tainted:
        raise RunDirectoryError(
            f"--init-from {run_dir}: that run trained or selected on test data "
            f"({', '.join(tainted)}); ami-dev and ICSI are held out for testing, so nothing "
            "chosen on them may seed another run"
        )
    try:
        entries = _entries(run_dir)
    except (OSError, ValueError, CheckpointError, RecursionError) as exc:
        why = "JSON nested too deeply" if isinstance(exc, RecursionError) else exc
        raise RunDirectoryError(
            f"--init-from {run_dir}: its archive cannot be read: {why}"
        ) from None
    if not entries:
        raise RunDirectoryError(f"--init-from {run_dir}: its archive is empty (nothing validated)")
    return entries


def load_warm_start(
    path: str | Path,
    task_name: str,
    components: Collection[str],
    limit: int,
    real_pool: bool,
    real_share: float,
) -> WarmStart:
    """What the run at ``path`` hands over (at most ``limit`` policies)."""
    run_dir = Path(path)
    entries = check_source(run_dir, task_name)
    ratings = read_ratings(run_dir)
    notes: list[str] = []
    policies: list[PolicyGenome] = []
    for e in entries:
        p = e.policy
        if p.id in {q.id for q in policies}:
            continue
        s = e.s_val
        note = f"warm start from {run_dir.name}: {p.id}" + (f" (s_val {s:.4f})" if s else "")
        policies.append(
            replace(p, lineage=Lineage(operator="import", note=note), name=f"W{len(policies)}")
        )
        if len(policies) >= limit:
            break
    h = entries[0].harness
    weights = {k: v for k, v in h.weights.items() if k in components}
    dropped = sorted(set(h.weights) - set(weights))
    if dropped:
        notes.append(f"reward components this run does not have were dropped: {dropped}")
    if not any(v > 0 for v in weights.values()):
        notes.append("none of its reward components exist here: the configured harness is kept")
        return WarmStart(run_dir, policies, None, notes, ratings)
    share = h.real_share
    if not real_pool:
        share = 0.0
    elif share == 0.0:
        share = real_share
        notes.append(f"it trained on synthetic meetings only: real share {real_share} (config)")
    harness = h.evolve(
        "import",
        note=f"warm start from {run_dir.name}: harness {h.id}",
        weights=weights,
        genes={"real_share": share},
    )
    return WarmStart(run_dir, policies, harness, notes, ratings)
