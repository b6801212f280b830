"""The run directory:

config.yaml          the fully resolved config
events.jsonl         one typed event per line
checkpoints/         ckpt-NNNNN.json (atomic, checksummed) + index.json
best/prompt.txt      the best policy's text
best/policy.json     its components, s_val and metrics, fitness and lineage (ancestors)
best/validation.json its per-meeting validation rows (outputs, metrics, rewards)
archive.json         every archived (policy, harness, s_val) pair with its objectives
front.json           the archive's Pareto front over the meta-objective vector
ratings.sqlite       people's ratings (evotrainer review); never removed by --force
summary.json         the run's numbers
report/              the HTML report (evotrainer report RUN_DIR)
.lock                held (fcntl) by the one process writing the run; holds its pid

A new run refuses a directory that is not empty (``evotrainer run --force`` replaces a previous
run there); a resume refuses a finished run; both take the lock, so two processes never write
one run directory. The engine writes best/, archive.json, front.json and summary.json at the end
(engine/outcome.py); this module knows the directory, not the driver.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from evotrainer.config import RunConfig, config_from_dict
from evotrainer.errors import CheckpointError, RunDirectoryError
from evotrainer.policy.genome import PolicyGenome
from evotrainer.run.checkpoint import atomic_write
from evotrainer.run.events import JsonlLog
from evotrainer.run.lock import LOCK_NAME, RunLock

# what a run writes into its directory (``--force`` removes exactly these)
RUN_FILES = (
    "config.yaml",
    "events.jsonl",
    "checkpoints",
    "best",
    "archive.json",
    "front.json",
    "summary.json",
    "report",
)


@dataclass
class RunDirectory:
    path: Path
    config: RunConfig
    log: JsonlLog | None = None
    lock: RunLock | None = field(default=None, repr=False)

    @classmethod
    def open_or_create(cls, path: Path, config: RunConfig, resuming: bool = False) -> RunDirectory:
        """The directory of a new run (``resuming=False``: it must be new or empty) or of the
        run being resumed; locked until ``close()``."""
        if resuming:
            if path.exists() and not path.is_dir():
                raise RunDirectoryError(f"run directory {path} exists and is not a directory")
        else:
            check_new_run_dir(path)
        path.mkdir(parents=True, exist_ok=True)
        lock = RunLock(path)
        lock.acquire()
        try:
            cfg_file = path / "config.yaml"
            if not cfg_file.exists():
                atomic_write(cfg_file, absolute_paths(config).to_yaml())
            return cls(path, config, JsonlLog(path / "events.jsonl"), lock)
        except BaseException:
            lock.release()
            raise

    @classmethod
    def open(cls, path: Path) -> RunDirectory:
        """Read a run directory to resume it (not locked yet: ``run()`` locks it)."""
        cfg_file = path / "config.yaml"
        if not cfg_file.is_file():
            raise CheckpointError(f"{path} is not a run directory (no config.yaml)")
        if (path / "summary.json").exists():
            raise RunDirectoryError(
                f"{path} holds a finished run (summary.json is written): there is nothing to "
                "resume. `evotrainer report` rebuilds its report; a new `evotrainer run` starts "
                "another run."
            )
        if (path / LOCK_NAME).exists():
            RunLock(path).check_free()  # in use: say so before a model loads
        try:
            data = yaml.safe_load(cfg_file.read_text(encoding="utf-8")) or {}
        except (yaml.YAMLError, UnicodeDecodeError) as exc:
            raise CheckpointError(f"{cfg_file}: not a readable config: {exc}") from None
        if not isinstance(data, dict):
            raise CheckpointError(f"{cfg_file}: the top level must be a mapping of sections")
        return cls(path, config_from_dict(data, str(cfg_file)))

    def close(self) -> None:
        """Release the lock and close the event log."""
        if self.log is not None:
            self.log.close()
        if self.lock is not None:
            self.lock.release()


def absolute_paths(config: RunConfig) -> RunConfig:
    """The config as config.yaml records it: data and cache paths that exist are made absolute,
    so a resume from another working directory reads the same files."""
    updates = {}
    for section, key in (("validation", "data"), ("defences", "terminal_data"), ("cache", "path")):
        sub = getattr(config, section)
        value = getattr(sub, key)
        if value and Path(value).exists() and not Path(value).is_absolute():
            updates[section] = sub.model_copy(update={key: str(Path(value).resolve())})
    source = config.init_from
    if source and Path(source).exists() and not Path(source).is_absolute():
        updates["init_from"] = str(Path(source).resolve())  # type: ignore[assignment]
    return config.model_copy(update=updates)


def check_new_run_dir(path: Path) -> None:
    """A new run needs a new or empty directory (never a file, never another run's)."""
    if path.exists() and not path.is_dir():
        raise RunDirectoryError(f"run directory {path} exists and is not a directory")
    if path.is_dir():
        _check_empty(path)


def _check_empty(path: Path) -> None:
    entries = [p.name for p in path.iterdir() if p.name != LOCK_NAME]
    if not entries:
        return
    if (path / "config.yaml").exists():
        raise RunDirectoryError(
            f"{path} already holds a run: `evotrainer resume {path}` continues it, "
            "`evotrainer run --force` replaces it, or choose a new --run-dir"
        )
    raise RunDirectoryError(
        f"{path} is not empty and is not a run directory ({', '.join(sorted(entries)[:5])}): "
        "choose a new or empty --run-dir"
    )


def remove_run(path: Path) -> None:
    """``run --force``: delete the run stored in ``path`` (only the files a run writes; the
    directory must hold a run and must not be in use)."""
    if not path.exists():
        return
    if not path.is_dir():
        raise RunDirectoryError(f"run directory {path} exists and is not a directory")
    if not (path / "config.yaml").exists():
        _check_empty(path)  # --force replaces a run, never other files
        return
    others = [
        p.name
        for p in path.iterdir()
        if p.name not in RUN_FILES
        and p.name != LOCK_NAME
        and not (p.name.startswith(".") and p.name.endswith(".tmp"))  # a killed atomic_write
    ]
    if others:
        raise RunDirectoryError(
            f"{path} holds a run and other files ({', '.join(sorted(others)[:5])}): --force "
            "replaces a run, never other files; choose a new or empty --run-dir"
        )
    lock = RunLock(path)
    lock.acquire()
    try:
        for p in list(path.iterdir()):
            if p.name == LOCK_NAME:
                continue
            if p.is_dir() and not p.is_symlink():
                shutil.rmtree(p)
            else:
                p.unlink(missing_ok=True)
    finally:
        lock.release()


def lineage_chain(policy: PolicyGenome, known: dict[str, PolicyGenome]) -> list[dict[str, Any]]:
    """The policy and its ancestors (first parent at each step), newest first."""
    chain, seen = [], set()
    node: PolicyGenome | None = policy
    while node is not None and node.id not in seen:
        seen.add(node.id)
        chain.append(node.to_json())
        parents = node.lineage.parents
        node = known.get(parents[0]) if parents else None
    return chain
