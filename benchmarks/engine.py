"""What an engine cell hands EvoTrainer: its RunConfig at the profile's sizes (with the
profile's and the command line's ``engine_set`` overrides, and the harness a scarce-labels or
dialogue method gets), its task, the validation list that makes the engine select on the same
meetings as every other method, and where a killed cell resumes (``resume_point``)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from benchmarks import common as C
from benchmarks import dialogue, distill, scarce
from evotrainer.config import HarnessConfig, RunConfig, ValidationConfig, apply_override
from evotrainer.types import Instance

if TYPE_CHECKING:
    from benchmarks.bench import Bench


class EngineContractError(RuntimeError):
    """The profile needs an engine config field this version of the engine does not have."""

    def __init__(self, key: str) -> None:
        super().__init__(
            f"this profile needs the engine option {key}, which this version of evotrainer does "
            "not have (issue 11's engine contract: harness.real_data, harness.real_share, "
            "validation.confirm); update the engine or run another profile"
        )


def with_overrides(cfg: RunConfig, assignments: list[str]) -> RunConfig:
    """``cfg`` with ``--engine-set KEY=VALUE`` overrides applied (validated again)."""
    if not assignments:
        return cfg
    data = cfg.model_dump(mode="json")
    for assignment in assignments:
        apply_override(data, assignment)
    return RunConfig.model_validate(data)


def _sections(bench: Bench, outer: bool) -> dict[str, Any]:
    """The ``outer``, ``harness`` and ``validation`` sections at the profile's settings."""
    p = bench.prof
    outer_cfg: dict[str, Any] = {
        "enabled": outer,
        "every": p["outer_every"],
        "variants": p["outer_variants"],
        "s_val_weights": dict(bench.weights),  # every method selects on the same s_val
    }
    if "trial_generations" in p:
        outer_cfg["trial_generations"] = p["trial_generations"]
    harness: dict[str, Any] = {"difficulty": p["difficulty"]}
    validation: dict[str, Any] = {"data": None, "limit": None}
    n_confirm = len(bench.confirmation.instances) if bench.confirmation else 0
    if "confirm" in ValidationConfig.model_fields:
        validation["confirm"] = n_confirm  # 0 for quick/full: select on every meeting
    elif n_confirm:
        raise EngineContractError("validation.confirm")
    if p.get("real_data"):
        if "real_data" not in HarnessConfig.model_fields:
            raise EngineContractError("harness.real_data")
        train = C.resolve(bench.args.train_data)
        harness["real_data"] = str(train) if train is not None and train.is_file() else None
    if p.get("real_share") is not None:
        if "real_share" not in HarnessConfig.model_fields:
            raise EngineContractError("harness.real_share")
        harness["real_share"] = p["real_share"]
    return {"outer": outer_cfg, "harness": harness, "validation": validation}


def config(
    bench: Bench, seed: int, outer: bool, cache: Path | None = None, method: str | None = None
) -> RunConfig:
    """The RunConfig of an inner_ga (``outer=False``) or evotrainer run at the profile's
    sizes, with the profile's and the command line's ``engine_set`` overrides applied.
    ``method``: the scarce or dialogue profile's engine method (fixed, evotrainer, labels_ga,
    uniform_mix), whose harness and defences benchmarks/scarce.py or dialogue.py set, or a
    distill profile's engine method, which distils."""
    p, args = bench.prof, bench.args
    model = {
        "spec": args.model if not args.model.startswith("fake") else "local:x",
        "n_ctx": p["n_ctx"],
        "n_threads": args.threads,
        "max_tokens": p["max_tokens"],
        "operator_max_tokens": p["operator_max_tokens"],
    }
    data: dict[str, Any] = {
        "seed": seed,
        "model": model,
        "cache": {"enabled": cache is not None, "path": str(cache) if cache else None},
        # reserve_final (default): the engine holds back the calls one validation costs and
        # validates its final best when the cap stops the run
        "budget": {"max_calls": bench.budget},
        "task": task_section(bench, method),
        "inner": {
            "population": p["population"],
            "elites": p["elites"],
            "tasks_per_generation": p["tasks_per_generation"],
            "generations": 10_000,  # the budget ends the run
            # the seeds start with the profile's genes, as every other method's policies
            "seed_decoding": bench.decoding.to_json(),
            "seed_postprocess": bench.cut.to_json(),
        },
        **_sections(bench, outer),
        "report": False,
    }
    if method in distill.ENGINE_DISTILL:
        data["distill"] = distill.engine_distill(
            int(p.get("distill_after", 3)), str(p.get("reference_targets", "text"))
        )
        if method in distill.WEIGHTS_FIRST:  # issue 47's methods (distill-1000.yaml)
            distill.weights_first(data, method, p)
    if bench.scarce is not None:
        domain = dialogue if bench.domain == "dialogue" else scarce
        name = method or ("evotrainer" if outer else "fixed")
        extra = domain.engine_overrides(name, bench.scarce["pool"], bench.scarce["labelled_copy"])
        data["harness"].update(extra["harness"])
        data["defences"] = extra["defences"]
        data["outer"].update(extra.get("outer", {}))
    cfg = RunConfig.model_validate(data)
    return with_overrides(cfg, [*p.get("engine_set", []), *args.engine_set])


def task_section(bench: Bench, method: str | None) -> dict[str, Any]:
    """The engine config's ``task`` section: the profile's cut (meetings) or the dialogue
    task's settings (the uniform_mix method's persona mix)."""
    if bench.domain == "dialogue":
        return dialogue.task_section(bench.prof, bench.args, method)
    return {
        "max_input_tokens": bench.prof["max_input_tokens"],
        "truncation": "head_tail",
        "empty_reference_items": bench.task.empty_reference_items,
    }


def task(bench: Bench, cfg: RunConfig) -> Any:
    """The task an engine cell runs: the profile's, or (dialogue) the one its config's
    ``task`` section builds (the uniform_mix method's persona mix differs)."""
    if bench.domain != "dialogue":
        return bench.task
    from evotrainer.tasks.registry import build_task

    return build_task(cfg.task)


def validation(bench: Bench) -> list[Instance]:
    """The validation list handed to the engine: the selection meetings, plus (standard
    profile) the confirmation meetings placed where the engine's own split
    (``validation.confirm``) takes its confirmation part from, so the engine selects on
    exactly the meetings every other method selects on. Checked with the engine's split."""
    sel = list(bench.selection.instances)
    conf = list(bench.confirmation.instances) if bench.confirmation else []
    if not conf:
        return sel
    try:
        from evotrainer.run.validation_set import split_confirmation
    except ImportError as exc:
        raise EngineContractError("validation.confirm (split_confirmation)") from exc
    n = len(sel) + len(conf)
    slots = set(C.spread(list(range(n)), len(conf), offset=1))
    it_sel, it_conf = iter(sel), iter(conf)
    order = [next(it_conf) if i in slots else next(it_sel) for i in range(n)]
    got_sel, got_conf = split_confirmation(order, len(conf))
    if [i.id for i in got_sel] != [i.id for i in sel] or {i.id for i in got_conf} != {
        i.id for i in conf
    }:
        raise RuntimeError(
            "the engine's confirmation split does not take the benchmark's confirmation "
            f"meetings ({[i.id for i in got_conf]} vs {[i.id for i in conf]}): "
            "benchmarks/engine.py's validation must follow evotrainer.run.validation_set"
        )
    return order


def resume_point(run_dir: Path, cfg: RunConfig, cache: Path) -> dict[str, Any] | None:
    """Where a killed engine cell can go on from: its run directory's last checkpoint, when the
    directory holds an unfinished run of the same config (threads aside) and its cache is there.
    The answers the cache stored after that checkpoint (the generation in progress at the kill)
    are deleted, so the resumed cell pays for them again and spends its budget exactly as an
    uninterrupted cell does (greedy decoding: the answers are the same). None: start afresh."""
    from evotrainer.llm.cache import ResponseCache
    from evotrainer.run.checkpoint import load_latest
    from evotrainer.run.rundir import RunDirectory, absolute_paths

    if not (run_dir / "checkpoints").is_dir() or not cache.is_file():
        return None
    try:
        stored = RunDirectory.open(run_dir).config
        state, path, _ = load_latest(run_dir)
    except Exception as exc:  # noqa: BLE001 - finished, foreign or damaged: start afresh
        C.log(f"{run_dir}: not resumable ({type(exc).__name__}: {exc}); starting afresh")
        return None

    def plain(c: RunConfig) -> dict[str, Any]:
        d = absolute_paths(c).model_dump(mode="json")
        d["model"].pop("n_threads", None)
        d.get("distill", {}).pop("cache_dir", None)  # where trainings are cached, not what
        return d

    if plain(stored) != plain(cfg):
        C.log(f"{run_dir}: its config differs from this cell's; starting afresh")
        return None
    rc = ResponseCache(cache)
    try:
        forgotten = rc.forget_after(path.stat().st_mtime)
    finally:
        rc.close()
    return {
        "checkpoint": path.name,
        "generation": int(state["inner"]["generation"]),
        "calls_at_checkpoint": state["budget"].get("backend_calls"),
        "forgotten": forgotten,
        "at": time.strftime("%Y-%m-%d %H:%M:%S"),
    }
