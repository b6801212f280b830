"""Experiment trackers: MLflow and TensorBoard, as observers of the run's typed events.

``tracking.kind`` picks one (config.TrackingConfig); its package is an optional extra, imported
only here and only when chosen (``pip install 'evotrainer[mlflow]'``: mlflow-skinny and pandas,
so ``mlflow.search_runs`` reads back what was logged; a local folder named as the tracking URI
gets ``MLFLOW_ALLOW_FILE_STORE=true``, which MLflow 3 needs for it;
``'evotrainer[tensorboard]'``: tensorboardX, which needs no torch). A missing extra is a
``MissingExtraError`` when the run is built, before anything runs.

What is logged:
- at the start: the config (MLflow: one param per key, ``inner.population`` ...; the YAML as
  ``config.yaml``; TensorBoard: the YAML as text);
- each generation (step = generation): ``fitness/best``, ``fitness/mean``, ``diversity``,
  ``s_val/last``, ``calls/backend`` (the run's one count of calls: what the backend answered,
  across resumes), ``calls/cached`` (the cache's answers), ``tokens``, ``threads`` and the
  harness genes ``harness/difficulty``, ``harness/real_share``, ``harness/weight/<component>``;
- each validation: ``s_val/validated`` (step = backend calls spent);
- each outer step (step = outer step): ``outer/best_variant_s_val``, ``outer/changed``,
  ``outer/rollback`` and the chosen harness's genes ``outer/difficulty`` ...;
- the confirmation: ``confirmation/difference``, its 95% interval, both s_vals;
- at the end: ``final/*`` (initial and final s_val, backend calls and cached answers, tokens,
  wall time), the best policy as text, and as artifacts summary.json, best/ and the report
  (built here when the config asks for one; the command line rebuilds it after).

A run directory remembers its MLflow run (``tracking.json``): a resume logs into the same run.
A tracker that raises is detached by ``events.notify`` (a warning; the run goes on)."""

from __future__ import annotations

import importlib
import json
import os
import shutil
import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

import yaml

from evotrainer.config import TrackingConfig
from evotrainer.errors import ConfigError, MissingExtraError
from evotrainer.run import events as ev
from evotrainer.run.checkpoint import atomic_write

EXTRAS = {
    "mlflow": ("mlflow", "mlflow", "mlflow-skinny"),
    "tensorboard": ("tensorboardX", "tensorboard", "tensorboardX"),
}
ARTIFACTS = ("summary.json", "config.yaml", "best/prompt.txt", "best/policy.json",
             "best/validation.json", "report/index.html")  # fmt: skip
STATE_FILE = "tracking.json"
MAX_PARAM = 500  # characters of one MLflow param value


def require(kind: str) -> None:
    """Import the extra of ``kind``; MissingExtraError naming the install command if absent."""
    module, extra, package = EXTRAS[kind]
    try:
        importlib.import_module(module)
    except ImportError as exc:
        raise MissingExtraError(
            f"tracking.kind {kind!r} needs the optional extra {extra!r} ({package}): "
            f"pip install 'evotrainer[{extra}]'. Could not import {module!r}: {exc}"
        ) from exc


def flatten(data: Any, prefix: str = "") -> dict[str, str]:
    """``{"inner": {"population": 4}}`` -> ``{"inner.population": "4"}`` (values as text)."""
    out: dict[str, str] = {}
    if isinstance(data, Mapping):
        for k, v in data.items():
            out.update(flatten(v, f"{prefix}{k}."))
        if not data and prefix:
            out[prefix[:-1]] = "{}"
        return out
    text = json.dumps(data) if isinstance(data, list | bool) or data is None else str(data)
    out[prefix[:-1]] = text[:MAX_PARAM]
    return out


def _num(x: Any) -> float | None:
    return float(x) if isinstance(x, int | float) and not isinstance(x, bool) else None


def harness_metrics(h: Mapping[str, Any] | None, prefix: str) -> dict[str, float | None]:
    if not isinstance(h, Mapping):
        return {}
    out: dict[str, float | None] = {
        f"{prefix}/difficulty": _num(h.get("difficulty")),
        f"{prefix}/real_share": _num(h.get("real_share")) or 0.0,
    }
    for k, w in (h.get("weights") or {}).items():
        out[f"{prefix}/weight/{k}"] = _num(w)
    return out


class Tracker:
    """The event side, shared by both trackers: which numbers each event gives. Subclasses
    write (``scalars``, ``text``, ``params``, ``files``, ``finish``)."""

    def __init__(self) -> None:
        self.run_dir: Path | None = None
        self.report = True
        self.artifacts = True
        # builds the report it logs, when the run did not (attach: report/build.py's)
        self.build_report: Callable[[Path], Any] | None = None

    # -- what a backend implements -----------------------------------------------------------
    def scalars(self, values: Mapping[str, float], step: int) -> None:
        raise NotImplementedError

    def text(self, name: str, text: str) -> None:
        raise NotImplementedError

    def params(self, params: Mapping[str, str]) -> None:
        raise NotImplementedError

    def files(self, root: Path, names: Iterable[str]) -> None:
        raise NotImplementedError

    def finish(self, status: str) -> None:
        raise NotImplementedError

    def close(self) -> None:
        """Release what is open (a kill, an error): the tracked run is not ended."""

    # -- opening ---------------------------------------------------------------------------
    def open(self, run_dir: Path | None, config: Mapping[str, Any], resuming: bool) -> None:
        """Start (or, resuming, continue) the tracked run and log the config."""
        self.run_dir = run_dir
        self.report = bool(config.get("report", True))
        if self.start(run_dir, resuming):
            self.params(flatten(config))
            self.text("config", yaml.safe_dump(config, sort_keys=False))

    def start(self, run_dir: Path | None, resuming: bool) -> bool:
        """Open the tracked run; True when it is a new one (the config is logged then)."""
        raise NotImplementedError

    def where(self) -> dict[str, Any]:
        """Where the run is logged: the ``tracking`` event's data (``message``: a line)."""
        raise NotImplementedError

    # -- events ------------------------------------------------------------------------------
    def __call__(self, event: ev.Event) -> None:
        d = event.data
        if event.type == ev.GENERATION:
            b = d.get("budget") or {}
            values = {
                "fitness/best": _num(d.get("best_fitness")),
                "fitness/mean": _num(d.get("mean_fitness")),
                "diversity": _num(d.get("diversity")),
                "s_val/last": _num(d.get("last_s_val")),
                "calls/backend": _num(b.get("backend_calls")),  # the one count (issue 51)
                "calls/cached": _num(b.get("cache_hits")),
                "tokens": _num((b.get("prompt_tokens") or 0) + (b.get("completion_tokens") or 0)),
                "threads": _num(d.get("threads")),
                **harness_metrics(d.get("harness"), "harness"),
            }
            self._scalars(values, int(d.get("generation", 0)))
        elif event.type == ev.VALIDATION and not d.get("partial"):
            step = d.get("backend_calls", d.get("llm_calls"))
            self._scalars({"s_val/validated": _num(d.get("s_val"))}, int(_num(step) or 0))
        elif event.type == ev.OUTER_STEP:
            s_vals = [x for x in (_num(v) for v in d.get("s_vals") or []) if x is not None]
            values = {
                "outer/best_variant_s_val": max(s_vals) if s_vals else None,
                "outer/changed": 1.0 if d.get("changed") else 0.0,
                "outer/rollback": 1.0 if d.get("rollback") else 0.0,
                **harness_metrics(d.get("chosen"), "outer"),
            }
            self._scalars(values, int(d.get("outer_step", 0)))
        elif event.type == ev.CONFIRMATION:
            diff = d.get("difference") or {}
            lo, hi = (diff.get("ci95") or [None, None])[:2]
            self._scalars(
                {
                    "confirmation/difference": _num(diff.get("mean")),
                    "confirmation/ci95_low": _num(lo),
                    "confirmation/ci95_high": _num(hi),
                    "confirmation/winner_s_val": _num(d.get("winner_s_val")),
                    "confirmation/best_seed_s_val": _num(d.get("best_seed_s_val")),
                },
                0,
            )
        elif event.type == ev.RUN_FINISHED:
            self._finished(d.get("summary") or {})
        elif event.type == ev.RUN_FAILED:
            self.finish("FAILED")

    def _scalars(self, values: Mapping[str, float | None], step: int) -> None:
        clean = {k: v for k, v in values.items() if v is not None and v == v}
        if clean:
            self.scalars(clean, step)

    def _finished(self, summary: Mapping[str, Any]) -> None:
        runtime = summary.get("runtime") or {}
        self._scalars(
            {
                "final/initial_s_val": _num(summary.get("initial_s_val")),
                "final/final_s_val": _num(summary.get("final_s_val")),
                "final/backend_calls": _num(runtime.get("backend_calls")),
                "final/cached": _num(runtime.get("cache_hits")),
                "final/tokens": _num(
                    (summary.get("prompt_tokens") or 0) + (summary.get("completion_tokens") or 0)
                ),
                "final/wall_s": _num(summary.get("wall_s")),
            },
            0,
        )
        rd = self.run_dir
        if self.artifacts and rd is not None:
            prompt = rd / "best" / "prompt.txt"
            if prompt.is_file():
                self.text("best_policy", prompt.read_text(encoding="utf-8"))
            if self.report and self.build_report and not (rd / "report" / "index.html").is_file():
                self.build_report(rd)
            self.files(rd, [n for n in ARTIFACTS if (rd / n).is_file()])
        self.finish("FINISHED")


class MlflowTracker(Tracker):
    def __init__(self, cfg: TrackingConfig) -> None:
        super().__init__()
        require("mlflow")
        self.cfg = cfg
        self.artifacts = cfg.artifacts
        self.client: Any = None
        self.run_id: str | None = None
        self.experiment_id: str | None = None

    def start(self, run_dir: Path | None, resuming: bool) -> bool:
        # lazy: optional dependency (extra mlflow)
        from mlflow.tracking import MlflowClient

        if local_store(self.cfg.uri):  # named by the user: MLflow 3 makes it opt-in
            os.environ.setdefault("MLFLOW_ALLOW_FILE_STORE", "true")
        self.client = MlflowClient(tracking_uri=self.cfg.uri) if self.cfg.uri else MlflowClient()
        state = _read_state(run_dir) if resuming else {}
        if state.get("kind") == "mlflow" and isinstance(state.get("run_id"), str):
            self.run_id = state["run_id"]
            self.client.update_run(self.run_id, status="RUNNING")
            return False
        exp = self.client.get_experiment_by_name(self.cfg.experiment)
        exp_id = exp.experiment_id if exp else self.client.create_experiment(self.cfg.experiment)
        self.experiment_id = exp_id
        name = self.cfg.run_name or (run_dir.name if run_dir else None)
        run = self.client.create_run(
            exp_id, run_name=name, tags={"evotrainer.run_dir": str(run_dir or "")}
        )
        self.run_id = run.info.run_id
        _write_state(run_dir, {"kind": "mlflow", "run_id": self.run_id})
        return True

    def where(self) -> dict[str, Any]:
        """The MLflow run id, its tracking URI and how to look at it: the run's page on a
        server, or ``mlflow ui`` over a local store."""
        uri = str(self.client.tracking_uri) if self.client is not None else (self.cfg.uri or "")
        if self.experiment_id is None and self.client is not None and self.run_id:
            self.experiment_id = self.client.get_run(self.run_id).info.experiment_id
        page = f"#/experiments/{self.experiment_id}/runs/{self.run_id}"
        if uri.startswith(("http://", "https://")):
            url = f"{uri.rstrip('/')}/{page}"
            see = f"open {url}"
        else:
            url = None
            see = f"see it with `mlflow ui --backend-store-uri {uri}`, then {page}"
            if local_store(uri):
                see = "MLFLOW_ALLOW_FILE_STORE=true " + see
        return {
            "kind": "mlflow",
            "run_id": self.run_id,
            "experiment_id": self.experiment_id,
            "uri": uri,
            "url": url,
            "message": f"MLflow run {self.run_id} (experiment {self.cfg.experiment!r}, "
            f"{uri}): {see}",
        }

    def scalars(self, values: Mapping[str, float], step: int) -> None:
        # lazy: optional dependency (extra mlflow)
        from mlflow.entities import Metric

        now = _millis()
        metrics = [Metric(k, float(v), now, step) for k, v in values.items()]
        self.client.log_batch(self.run_id, metrics=metrics)

    def text(self, name: str, text: str) -> None:
        self.client.log_text(self.run_id, text, f"{name}.txt")

    def params(self, params: Mapping[str, str]) -> None:
        # lazy: optional dependency (extra mlflow)
        from mlflow.entities import Param

        items = [Param(k, v) for k, v in params.items()]
        for i in range(0, len(items), 100):  # MLflow takes at most 100 params a batch
            self.client.log_batch(self.run_id, params=items[i : i + 100])

    def files(self, root: Path, names: Iterable[str]) -> None:
        for name in names:
            folder = str(Path(name).parent)
            self.client.log_artifact(
                self.run_id, str(root / name), None if folder == "." else folder
            )

    def finish(self, status: str) -> None:
        if self.client is not None and self.run_id is not None:
            self.client.set_terminated(self.run_id, status=status)


class TensorBoardTracker(Tracker):
    def __init__(self, logdir: str | None = None, artifacts: bool = True) -> None:
        super().__init__()
        require("tensorboard")
        self.logdir = logdir
        self.artifacts = artifacts
        self.writer: Any = None
        self.path: Path | None = None

    def start(self, run_dir: Path | None, resuming: bool) -> bool:
        if self.logdir:
            self.path = Path(self.logdir)
        elif run_dir is not None:
            self.path = run_dir / "tensorboard"
        else:
            raise ConfigError(
                "tracking.kind 'tensorboard' without a run directory needs tracking.uri "
                "(the log folder)"
            )
        self._writer()
        return not resuming

    def where(self) -> dict[str, Any]:
        return {
            "kind": "tensorboard",
            "logdir": str(self.path),
            "message": f"TensorBoard logs in {self.path}: tensorboard --logdir {self.path}",
        }

    def _writer(self) -> Any:
        if self.writer is None:
            # lazy: optional dependency (extra tensorboard)
            from tensorboardX import SummaryWriter

            if self.path is None:
                self.path = Path(self.logdir or ".")
            self.writer = SummaryWriter(logdir=str(self.path), flush_secs=10)
        return self.writer

    def scalars(self, values: Mapping[str, float], step: int) -> None:
        w = self._writer()
        for k, v in values.items():
            w.add_scalar(k, float(v), global_step=step)

    def text(self, name: str, text: str) -> None:
        # markdown: a code block keeps YAML and prompts as they are
        self._writer().add_text(name, "```\n" + text + "\n```", global_step=0)

    def params(self, params: Mapping[str, str]) -> None:
        pass  # the config goes in as text (hparams need a metric to compare on)

    def files(self, root: Path, names: Iterable[str]) -> None:
        assert self.path is not None
        for name in names:
            dest = self.path / "artifacts" / name
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(root / name, dest)

    def finish(self, status: str) -> None:
        if self.writer is not None:
            self.writer.add_text("status", status, global_step=0)
        self.close()

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
            self.writer = None


def build_tracker(cfg: TrackingConfig) -> Tracker | None:
    """The tracker ``cfg`` names (its extra imported now: MissingExtraError if absent)."""
    if cfg.kind == "mlflow":
        return MlflowTracker(cfg)
    if cfg.kind == "tensorboard":
        return TensorBoardTracker(cfg.uri, cfg.artifacts)
    return None


def attach(
    tracker: Tracker | None,
    observers: list[Any],
    run_dir: Path | None,
    config: Mapping[str, Any],
    resuming: bool,
    build_report: Callable[[Path], Any] | None = None,
) -> list[tuple[str, dict[str, Any]]]:
    """Open ``tracker`` and add it to ``observers``; the events to emit: where it logs (a
    ``tracking`` event: the MLflow run id and where to see it, issue 51), or a warning when
    it cannot start (an unreachable server ...): the run goes on without it.
    ``build_report``: how the report it logs as an artifact is built, when the run has not
    built it (report/build.py's)."""
    if tracker is None:
        return []
    tracker.build_report = build_report
    try:
        tracker.open(run_dir, config, resuming)
    except Exception as exc:  # noqa: BLE001 - a tracker never stops a run
        tracker.close()
        warning = (
            f"tracking could not start ({type(exc).__name__}: {exc}); the run goes on without it"
        )
        return [(ev.WARNING, {"message": warning})]
    observers.append(tracker)
    return [(ev.TRACKING, tracker.where())]


def local_store(uri: str | None) -> bool:
    """Whether an MLflow tracking URI names a folder on this machine (``file:`` or a path):
    MLflow 3's file store, which needs ``MLFLOW_ALLOW_FILE_STORE=true``."""
    u = str(uri or "")
    return u.startswith("file:") or ("://" not in u and ("/" in u or u.startswith(".")))


def _millis() -> int:
    return int(time.time() * 1000)


def _read_state(run_dir: Path | None) -> dict[str, Any]:
    if run_dir is None or not (run_dir / STATE_FILE).is_file():
        return {}
    try:
        data = json.loads((run_dir / STATE_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _write_state(run_dir: Path | None, data: Mapping[str, Any]) -> None:
    if run_dir is None:
        return

    atomic_write(run_dir / STATE_FILE, json.dumps(dict(data)) + "\n", root=run_dir)
