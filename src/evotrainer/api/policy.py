"""``Policy``: what ``evotrainer.optimize`` returns, a program you call.

``policy(example)`` answers one input as the run's evaluator does (api/examples.py reads the
input): the policy's text rendered with the input by the task, the run's model and sampling, the
policy's decoding genes and its loop cut (``Evaluator.answering``); ``policy.save(path)`` writes
it and ``Policy.load(path)`` reads it back. The file is the policy JSON a run writes
(``RUN_DIR/best/policy.json``: the genome's JSON, its text and s_val) with the settings it is
answered under (``settings``: the task's config, the model's without its endpoint, the seed) and
the run's ``summary``; ``Policy.load`` also reads a run's own ``best/policy.json`` (or the run
directory), taking the settings from its config.yaml and the summary from its summary.json.

A policy file is data from wherever it came: loading never runs code (a task named by a module
to import is refused, as are a task's less-confined settings) and never sends anything to an
endpoint the file names (a model server's ``base_url`` is not saved; give ``base_url=`` to
``load``, or set ``$OPENAI_BASE_URL``).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from evotrainer.api.examples import instance_of
from evotrainer.config import CacheConfig, RunConfig, config_from_dict, load_yaml
from evotrainer.errors import ConfigError, DataError, EvoTrainerError
from evotrainer.evaluation.evaluator import Evaluator
from evotrainer.evaluation.from_config import bind_environment, evaluator_from_config
from evotrainer.llm.base import LLMClient, batch_size_of, parallel_requests_of
from evotrainer.llm.spec import build_backend, build_stack
from evotrainer.policy.genome import PolicyGenome
from evotrainer.run.checkpoint import atomic_write, dumps_strict
from evotrainer.tasks.base import Task
from evotrainer.tasks.registry import build_task
from evotrainer.types import Instance, Rollout

# what ``settings`` keeps of a run's config: enough to answer as the run did
SETTINGS = ("task", "model", "seed")


class Policy:
    """An evolved policy: its genome (text components, decoding genes, loop cut), the settings
    it answers under and the summary of the run that made it."""

    def __init__(
        self,
        genome: PolicyGenome,
        settings: Mapping[str, Any] | None = None,
        summary: Mapping[str, Any] | None = None,
        run_dir: str | Path | None = None,
    ) -> None:
        self.genome = genome
        self.settings: dict[str, Any] = dict(settings or {})
        self.summary: dict[str, Any] = dict(summary or {})
        self.run_dir = Path(run_dir) if run_dir else None
        self._parts: tuple[Task, LLMClient] | None = None  # a run's task and model, to reuse
        self._evaluator: Evaluator | None = None

    # -- what it is ------------------------------------------------------------------------
    @property
    def text(self) -> str:
        """The instruction text the model receives (all components rendered)."""
        return self.genome.render()

    @property
    def config(self) -> RunConfig:
        """The settings as a config (the task's defaults filled in)."""
        return settings_config(self.settings)

    def __repr__(self) -> str:
        s_val = self.summary.get("s_val")
        shown = f", s_val={s_val:.4f}" if isinstance(s_val, float) else ""
        return f"Policy({self.genome.id}{shown}, {self.text[:60]!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Policy):
            return NotImplemented
        return (self.genome, self.settings, self.summary) == (
            other.genome,
            other.settings,
            other.summary,
        )

    __hash__ = None  # type: ignore[assignment]

    # -- answering -------------------------------------------------------------------------
    def __call__(self, example: Any) -> str:
        """The policy's answer to one input: a text the task reads (a meeting's transcript of
        "Speaker: text" lines), a mapping of the task's fields, or an Instance. EvoTrainerError
        when the model gives no answer."""
        evaluator = self.evaluator()
        r = evaluator.rollout(self.genome, instance_of(evaluator.task, example))
        if r.error is not None:
            raise EvoTrainerError(f"policy {self.genome.id}: no answer: {r.error}")
        return r.output

    def answers(self, instances: Sequence[Instance]) -> Iterator[Rollout]:
        """Its rollouts on ``instances``, in order, as many at a time as the model answers
        together (prompts decoded in one batch, requests served at once); a failed one carries
        its error."""
        evaluator = self.evaluator()
        llm = evaluator.llm
        chunk = max(batch_size_of(llm), parallel_requests_of(llm))
        for i in range(0, len(instances), chunk):
            part = instances[i : i + chunk]
            records = evaluator.evaluate([self.genome], part)
            yield from (records[(self.genome.id, inst.id)].rollout for inst in part)

    def evaluator(self) -> Evaluator:
        """The evaluator that answers for it (built once): the run's task and model when it
        came from ``optimize``, else those of its settings; the response cache, no budget."""
        if self._evaluator is None:
            cfg = self.config
            task, backend = self._parts or (
                build_task(cfg.task),
                build_backend(cfg.model, cfg.seed),
            )
            stack = build_stack(backend, CacheConfig())
            bind_environment(cfg, task, stack)
            self._evaluator = evaluator_from_config(cfg, task, stack.client)
        return self._evaluator

    # -- files -----------------------------------------------------------------------------
    def to_json(self) -> dict[str, Any]:
        """The policy file's JSON (a model server's ``base_url`` is never written)."""
        settings = dict(self.settings)
        if isinstance(settings.get("model"), dict):
            settings["model"] = {k: v for k, v in settings["model"].items() if k != "base_url"}
        return {
            **self.genome.to_json(),
            "text": self.text,
            "s_val": self.summary.get("s_val"),
            "settings": settings,
            "summary": self.summary,
        }

    def save(self, path: str | Path) -> Path:
        """Write it as a policy JSON file (parent folders made); returns the path."""
        p = Path(path)
        p.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(p, dumps_strict(self.to_json()) + "\n")
        return p

    @classmethod
    def load(
        cls, path: str | Path, model: str | None = None, base_url: str | None = None
    ) -> Policy:
        """A policy from a file ``save`` wrote, a run's ``best/policy.json`` or a run directory.
        ``model`` (a model spec) and ``base_url`` replace what it was answered with. DataError
        or ConfigError saying what is wrong with the file."""
        file = _policy_file(Path(path))
        data = _read_json(file)
        try:
            genome = PolicyGenome.from_json(data)
        except (TypeError, ValueError, KeyError) as exc:
            raise DataError(f"{file}: not a valid policy: {exc}") from None
        run_dir = file.parent.parent if file.parent.name == "best" else None
        settings = data.get("settings")
        if not isinstance(settings, dict):
            settings = run_settings(run_dir) if run_dir else {}
        summary = data.get("summary")
        if not isinstance(summary, dict):
            summary = run_summary(run_dir) if run_dir else {}
        settings = with_model(settings, model, base_url)
        settings_config(settings, str(file))  # refused now, not at the first call
        return cls(genome, settings, summary, run_dir)


def _policy_file(path: Path) -> Path:
    if path.is_dir():
        for candidate in (path / "best" / "policy.json", path / "policy.json"):
            if candidate.is_file():
                return candidate
        raise DataError(f"{path}: a folder with no best/policy.json (not a finished run)")
    if not path.is_file():
        raise DataError(f"policy file not found: {path}")
    return path


def _read_json(file: Path) -> dict[str, Any]:
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise DataError(f"{file}: not a readable policy JSON file: {exc}") from None
    if not isinstance(data, dict) or not isinstance(data.get("components"), dict):
        raise DataError(
            f"{file}: a policy JSON file holds an object with 'components' (what "
            "Policy.save and a run's best/policy.json write)"
        )
    return data


def settings_of(cfg: RunConfig) -> dict[str, Any]:
    """What a policy keeps of a run's config: the task's settings, the model's without its
    endpoint (``base_url`` is never saved), the seed."""
    dumped = cfg.model_dump(mode="json")
    model = {k: v for k, v in dumped["model"].items() if k != "base_url"}
    return {"task": dumped["task"], "model": model, "seed": dumped["seed"]}


def settings_config(settings: Mapping[str, Any], source: str = "policy settings") -> RunConfig:
    """The config a policy answers under; ConfigError for settings a file may not set."""
    if not isinstance(settings, Mapping) or set(settings) - set(SETTINGS):
        raise ConfigError(f"{source}: settings hold only {', '.join(SETTINGS)}")
    try:
        cfg = config_from_dict({k: v for k, v in settings.items() if v is not None}, source)
    except ConfigError as exc:
        raise ConfigError(f"{source}: {exc}" if source not in str(exc) else str(exc)) from None
    unsafe = cfg.task.executable_settings()
    if unsafe:
        raise ConfigError(
            f"{source}: {', '.join(unsafe)}: a policy file never sets what lets code run with "
            "less confinement"
        )
    return cfg


def with_model(
    settings: Mapping[str, Any], model: str | None, base_url: str | None
) -> dict[str, Any]:
    """``settings`` answered by ``model`` at ``base_url`` (each only when given)."""
    out = dict(settings)
    m = dict(out.get("model") or {})
    if model:
        m["spec"] = model
    if base_url:
        m["base_url"] = base_url
    if m:
        out["model"] = m
    return out


def run_settings(run_dir: Path) -> dict[str, Any]:
    """A run directory's settings, from its config.yaml (untrusted: only SETTINGS' keys, the
    model's endpoint left out)."""
    cfg_file = run_dir / "config.yaml"
    try:
        data = load_yaml(cfg_file.read_text(encoding="utf-8"), str(cfg_file))
    except (OSError, UnicodeDecodeError) as exc:
        raise DataError(f"{cfg_file}: cannot read the run's config: {exc}") from None
    if not isinstance(data, dict):
        raise DataError(f"{cfg_file}: not a run's config")
    picked = {k: data[k] for k in SETTINGS if k in data}
    return settings_of(settings_config(picked, str(cfg_file)))


def run_summary(run_dir: Path) -> dict[str, Any]:
    """``summary_of`` a run directory's summary.json ({} when it has none)."""
    try:
        data = json.loads((run_dir / "summary.json").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError):
        return {}
    return summary_of(data, run_dir) if isinstance(data, dict) else {}


def summary_of(full: Mapping[str, Any], run_dir: Path | None) -> dict[str, Any]:
    """The run's numbers a policy carries: its s_val and the best seed's, whether it is a
    seed, the confirmation on held-out examples, the LLM calls, how the run stopped."""
    c = full.get("confirmation")
    confirmation = None
    if isinstance(c, Mapping):
        diff = c.get("difference") or {}
        confirmation = {
            "n": c.get("n"),
            "difference": _number(diff.get("mean")),
            "ci95": list(diff.get("ci95") or []),
            "returned": c.get("returned"),
            "reason": c.get("reason"),
        }
    return {
        "s_val": _number(full.get("final_s_val")),
        "seed_s_val": _number(full.get("initial_s_val")),
        "returned_is_seed": full.get("returned_is_seed"),
        "confirmation": confirmation,
        "calls": full.get("llm_calls"),
        "generations": full.get("generations"),
        "stopped": full.get("stopped"),
        "run_dir": str(run_dir) if run_dir else None,
    }


def _number(x: Any) -> float | None:
    return float(x) if isinstance(x, int | float) and math.isfinite(x) else None
