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
.lock                held (fcntl) by the one process writing the run; holds its pid (removed
                     when that process is done with the run)

A run directory is untrusted input (anyone who could write it could plant links or edit its
config.yaml): opening one refuses a run file or folder that is a symbolic link and a journal
that is a hard link (nothing is written through them), and a resume takes from config.yaml only
what the run needs (run/resume_settings.py). config.yaml records every path absolute.

A new run refuses a directory that is not empty (``evotrainer run --force`` replaces a previous
run there); a resume refuses a finished run; both take the lock, so two processes never write
one run directory. The engine writes best/, archive.json, front.json and summary.json at the end
(engine/outcome.py); this module knows the directory, not the driver.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evotrainer.config import RunConfig, config_from_dict, load_yaml
from evotrainer.errors import CheckpointError, ConfigError, RunDirectoryError
from evotrainer.policy.genome import PolicyGenome
from evotrainer.run.checkpoint import atomic_write
from evotrainer.run.events import JsonlLog
from evotrainer.run.lock import LOCK_NAME, RunLock
from evotrainer.run.resume_settings import settings_for_resume

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
    def open_or_create(
        cls,
        path: Path,
        config: RunConfig,
        resuming: bool = False,
        rewrite_config: bool = False,
        reopen: bool = False,
    ) -> RunDirectory:
        """The directory of a new run (``resuming=False``: it must be new or empty) or of the
        run being resumed; locked until ``close()``. ``rewrite_config``: a resume with settings
        of its own (``resume --max-calls``, ``--more-generations`` ...): config.yaml records
        them, so a later resume continues under them. ``reopen``: a finished run continued
        (``--more-generations``): its summary.json is removed (the run_finished event keeps it)
        until the run finishes again, so a kill meanwhile leaves a resumable run."""
        if resuming:
            if path.exists() and not path.is_dir():
                raise RunDirectoryError(f"run directory {path} exists and is not a directory")
        else:
            check_new_run_dir(path)
        path.mkdir(parents=True, exist_ok=True)
        lock = RunLock(path)
        lock.acquire()
        try:
            check_no_links(path)
            cfg_file = path / "config.yaml"
            if resuming and reopen:
                (path / "summary.json").unlink(missing_ok=True)
            if rewrite_config or not cfg_file.exists():
                atomic_write(cfg_file, absolute_paths(config).to_yaml(), root=path)
            return cls(path, config, JsonlLog(path / "events.jsonl"), lock)
        except BaseException:
            lock.release()
            raise

    @classmethod
    def open(
        cls,
        path: Path,
        base_url: str | None = None,
        ray_address: str | None = None,
        operator_base_url: str | None = None,
        finished_ok: bool = False,
    ) -> RunDirectory:
        """Read a run directory to resume it (not locked yet: ``run()`` locks it). Its
        config.yaml is taken as ``settings_for_resume`` allows: ``base_url``, ``ray_address``
        and ``operator_base_url`` are the endpoints the command line named (``resume
        --base-url``, ``--ray-address``, ``--operator-base-url``). ``finished_ok``: a finished
        run is continued (``resume --more-generations``)."""
        cfg_file = path / "config.yaml"
        if not cfg_file.is_file():
            raise CheckpointError(f"{path} is not a run directory (no config.yaml)")
        if (path / "summary.json").exists() and not finished_ok:
            raise RunDirectoryError(
                f"{path} holds a finished run (summary.json is written): there is nothing to "
                f"resume. `evotrainer resume {path} --more-generations N` continues it with N "
                "more generations; `evotrainer report` rebuilds its report; a new `evotrainer "
                "run` starts another run."
            )
        if (path / LOCK_NAME).exists():
            RunLock(path).check_free()  # in use: say so before a model loads
        check_no_links(path)
        return cls(path, read_run_config(path, base_url, ray_address, operator_base_url))

    def close(self) -> None:
        """Release the lock and close the event log."""
        if self.log is not None:
            self.log.close()
        if self.lock is not None:
            self.lock.release()


def read_run_config(
    path: Path,
    base_url: str | None = None,
    ray_address: str | None = None,
    operator_base_url: str | None = None,
) -> RunConfig:
    """A run directory's config.yaml as a resume, or ``evotrainer eval --run``, may use it
    (``settings_for_resume``: no code-running setting, endpoints only where the command line
    names them); CheckpointError when it cannot be read."""
    cfg_file = path / "config.yaml"
    if not cfg_file.is_file():
        raise CheckpointError(f"{path} is not a run directory (no config.yaml)")
    try:  # load_yaml: no alias bombs either
        data = load_yaml(cfg_file.read_text(encoding="utf-8"), str(cfg_file)) or {}
    except (ConfigError, UnicodeDecodeError) as exc:
        raise CheckpointError(f"{cfg_file}: not a readable config: {exc}") from None
    if not isinstance(data, dict):
        raise CheckpointError(f"{cfg_file}: the top level must be a mapping of sections")
    config = config_from_dict(data, str(cfg_file))
    return settings_for_resume(config, cfg_file, base_url, ray_address, operator_base_url)


PATHS = (
    ("harness", "real_data"),
    ("defences", "terminal_data"),
    ("cache", "path"),
    ("model", "spec"),
    ("validation", "data"),
    ("distill", "cache_dir"),
)


def absolute_paths(config: RunConfig) -> RunConfig:
    """The config as config.yaml records it: every path absolute (data, cache, a local model
    file, the warm-start source), so a resume from another working directory reads the same
    files. A data file that is not there is the task's default the run fell back from (a file
    the user names must exist): it is recorded as null, the synthetic data it used."""
    updates: dict[str, object] = {}
    for section, key in PATHS:
        sub = updates.get(section) or getattr(config, section)
        value = getattr(sub, key)
        fixed = _ABSOLUTE[(section, key)](value) if value else value
        if fixed != value:
            updates[section] = sub.model_copy(update={key: fixed})  # type: ignore[union-attr]
    if config.init_from:
        updates["init_from"] = _absolute(config.init_from)
    return config.model_copy(update=updates)


def _absolute(path: str) -> str:
    return str(Path(path).expanduser().resolve())


def _absolute_model(spec: str) -> str:
    kind, _, rest = spec.strip().partition(":")
    if kind != "local" or not rest or rest == "smollm2" or rest.startswith("smollm2-"):
        return spec
    return f"local:{_absolute(rest)}"


def _absolute_data(path: str) -> str | None:
    return _absolute(path) if Path(path).exists() else None


_ABSOLUTE: dict[tuple[str, str], Callable[[str], str | None]] = {
    ("harness", "real_data"): _absolute_data,
    ("defences", "terminal_data"): _absolute_data,
    ("cache", "path"): _absolute,
    ("model", "spec"): _absolute_model,
    ("validation", "data"): _absolute_data,
    ("distill", "cache_dir"): _absolute,
}


def check_no_links(path: Path) -> None:
    """Refuse a run directory whose run files or folders (or the files in its checkpoints/ and
    best/) are symbolic links, or whose appended files (events.jsonl, the journals) are hard
    links: a run writes through none of them."""
    for p in _run_entries(path):
        if p.is_symlink():
            raise RunDirectoryError(
                f"{p} is a symbolic link: nothing is written through a link in a run "
                "directory. Remove it, or start a new run."
            )
        if p.suffix == ".jsonl" and p.is_file() and p.stat().st_nlink > 1:
            raise RunDirectoryError(
                f"{p} is a hard link: a run appends only to its own files. Remove it, or "
                "start a new run."
            )


def _run_entries(path: Path) -> list[Path]:
    entries = [path / name for name in RUN_FILES]
    for folder in ("checkpoints", "best"):
        sub = path / folder
        if sub.is_dir() and not sub.is_symlink():
            entries += sorted(sub.iterdir())
    return entries


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
