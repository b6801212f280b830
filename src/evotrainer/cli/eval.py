"""``evotrainer eval`` beyond its options (app.py): reading ``--prompt``, evaluating the policies,
the tables it prints and the metrics JSON it writes."""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.markup import escape

from evotrainer.cli.common import cell, err, fail, out, overrides
from evotrainer.cli.eval_progress import EvalProgress
from evotrainer.errors import DataError, EvoTrainerError
from evotrainer.policy.genome import PolicyGenome
from evotrainer.run.checkpoint import dumps_strict
from evotrainer.run.estimate import calls_text
from evotrainer.tasks.registry import build_task
from evotrainer.tasks.tabular import load_data

if TYPE_CHECKING:
    from evotrainer.config import RunConfig
    from evotrainer.evaluation.validation import Validator


def policy_text(prompt: str, seeds: dict[str, str]) -> str:
    """Policy text from --prompt. The rule: ``seed:NAME`` is one of the task's seeds; a value
    that names an existing file is that file's text; a value that looks like a file name (one
    line of one word, or ending in an extension such as .txt or .md) but names no file is an
    error; anything else is the policy text itself."""
    if prompt.startswith("seed:"):
        name = prompt.removeprefix("seed:")
        if name not in seeds:
            raise EvoTrainerError(f"--prompt {prompt}: known seeds are {sorted(seeds)}")
        return seeds[name]
    kind = _path_kind(prompt)
    if kind == "file":
        try:
            text = Path(prompt).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise DataError(f"--prompt {prompt}: cannot read the file: {exc}") from None
        if not text.strip():
            raise DataError(f"--prompt {prompt}: the file is empty")
        return text
    if kind == "other":
        raise DataError(f"--prompt {prompt}: not a file")
    if not prompt.strip():
        raise DataError("--prompt: the policy text is empty")
    if _looks_like_a_file_name(prompt):
        raise DataError(
            f"--prompt {prompt!r}: no such file (a value of one word or ending in a file "
            "extension is read as a file name). Give policy text (several words), a file that "
            "holds it, or seed:A|B|C."
        )
    return prompt


def policy_json(prompt: str) -> PolicyGenome | None:
    """The policy a ``.json`` file holds (a run's ``best_policy.json``, an archive entry's
    ``policy``: its text with its own decoding and loop-cut genes), or None when ``prompt``
    names no JSON file."""
    if not prompt.endswith(".json") or _path_kind(prompt) != "file":
        return None
    try:
        data = json.loads(Path(prompt).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise DataError(f"--prompt {prompt}: not a readable policy JSON file: {exc}") from None
    data = data.get("policy", data) if isinstance(data, dict) else data
    if not isinstance(data, dict) or not isinstance(data.get("components"), dict):
        raise DataError(f"--prompt {prompt}: a policy JSON file holds an object with 'components'")
    try:
        return PolicyGenome.from_json(data)
    except (TypeError, ValueError, KeyError) as exc:
        raise DataError(f"--prompt {prompt}: not a valid policy: {exc}") from None


def _path_kind(value: str) -> str | None:
    """``file``, ``other`` (a directory ...) or None when ``value`` names nothing: policy text
    longer than a file name may be (ENAMETOOLONG) or holding a NUL names nothing."""
    try:
        path = Path(value)
        if path.is_file():
            return "file"
        return "other" if path.exists() else None
    except (OSError, ValueError):
        return None


_EXTENSION = re.compile(r"\.[A-Za-z][A-Za-z0-9]{0,7}$")
NAME_MAX, PATH_MAX = 255, 4096  # bytes in a file name and in a path (Linux)


def _looks_like_a_file_name(value: str) -> bool:
    """One line that a path may be (no part over NAME_MAX bytes) of one word or ending in an
    extension: ``prompt.txt``, ``my prompt.txt``, ``prompts/best``."""
    one_line = value.strip()
    if "\n" in one_line or len(one_line.encode()) > PATH_MAX:
        return False
    if any(len(part.encode()) > NAME_MAX for part in one_line.split("/")):
        return False
    return len(one_line.split()) == 1 or _EXTENSION.search(one_line) is not None


@dataclass
class _Evaluation:
    """What one ``eval`` evaluated: the config, task, policies and instances, the model stack,
    the validator with its results, the truncation note and the wall time."""

    cfg: RunConfig
    task: Any
    policies: list[PolicyGenome]
    instances: list[Any]
    stack: Any
    validator: Validator
    results: dict[str, Any]
    trunc: str
    wall: float


@dataclass(frozen=True)
class EvalSettings:
    """Where ``eval``'s settings come from: ``config`` (-c) or ``run_dir`` (--run: the run's
    config.yaml, read as a resume reads it), then the options. ``timeout``: model.timeout_s
    (a server's answer)."""

    config: Path | None = None
    run_dir: Path | None = None
    model: str | None = None
    base_url: str | None = None
    set_: list[str] | None = None
    task_name: str | None = None
    timeout: float | None = None

    def load(self) -> RunConfig:
        """The config to evaluate under (issue 51: the run's input cut, task options, s_val
        weights and seed genes, not the defaults')."""
        # lazy: start-up time
        from evotrainer.config import load_config
        from evotrainer.run.rundir import read_run_config

        if self.config is not None and self.run_dir is not None:
            raise EvoTrainerError("eval: give -c CONFIG or --run RUN_DIR, not both")
        values: dict[str, object] = {**overrides(self.model, self.base_url, None, self.task_name)}
        if self.timeout is not None:
            values["model.timeout_s"] = self.timeout
        base = read_run_config(self.run_dir, self.base_url) if self.run_dir else None
        return load_config(self.config, self.set_ or [], values, base=base)


def run_eval(
    data: Path | None,
    prompt: list[str],
    out_file: Path | None,
    limit: int | None,
    settings: EvalSettings,
) -> None:
    """``evotrainer eval``: evaluate, print the tables, write ``--out``; exit 2 on an error or
    when every answer failed."""
    try:
        cfg = settings.load()
        data = data if data is not None else _default_data(cfg, settings)
        ev = _evaluate(data, prompt, out_file, limit, cfg)
    except (EvoTrainerError, OSError) as exc:
        fail(exc)
        return
    # lazy: start-up time
    from evotrainer.evaluation import eval_report

    keys = ev.task.validation_metric().keys
    diffs = eval_report.paired_to_first(ev.validator, ev.results, ev.policies, ev.cfg.seed)
    _print_tables(ev, data, keys, diffs)
    failed = _failures(ev)
    n_failed = sum(len(v) for v in failed.values())
    n_total = sum(len(ev.results[p.id].per_instance) for p in ev.policies)
    try:
        if out_file:
            _write_metrics(ev, data, out_file, keys, diffs, failed)
    except OSError as exc:
        fail(DataError(f"--out {out_file}: cannot write it: {exc.strerror or exc}"))
    if n_total and n_failed == n_total:
        fail(DataError(f"every answer failed ({n_failed} of {n_total}): the scores mean nothing"))


def _default_data(cfg: RunConfig, settings: EvalSettings) -> Path:
    """--data left out: the validation data of the config or run named, else an error."""
    if cfg.validation.data and (settings.config or settings.run_dir):
        return Path(cfg.validation.data)
    raise DataError("eval: give --data FILE (or -c / --run naming a config with validation.data)")


def _evaluate(
    data: Path,
    prompt: list[str],
    out_file: Path | None,
    limit: int | None,
    cfg: RunConfig,
) -> _Evaluation:
    # lazy: start-up time
    from evotrainer.evaluation.from_config import bind_environment, evaluator_from_config
    from evotrainer.evaluation.validation import Validator
    from evotrainer.llm.budget import Budget
    from evotrainer.llm.spec import build_backend, build_stack
    from evotrainer.policy.seeds import seed_genes
    from evotrainer.run.validation_set import check_references, check_s_val_weights

    if out_file is not None and out_file.is_dir():
        raise DataError(f"--out {out_file}: is a directory; give a file name (metrics JSON)")
    task = build_task(cfg.task)
    seeds = {s.name: s.render() for s in task.seed_policies()}
    decoding, cut = seed_genes(cfg.inner)  # a text policy decodes and cuts like a run's seeds
    policies = [
        policy_json(p)
        or replace(
            PolicyGenome.from_text(policy_text(p, seeds), name=p),
            decoding=decoding,
            postprocess=cut,
        )
        for p in prompt
    ]
    instances = load_data(task, data, cfg.data_columns)
    instances = instances[:limit] if limit else instances
    for warning in check_references(task, instances, str(data)):
        err.print(f"[yellow]warning:[/] {escape(warning)}", soft_wrap=True)
    check_s_val_weights(cfg.outer.s_val_weights, task, instances)
    ray = cfg.ray if cfg.runner == "ray" else None
    budget = Budget()
    stack = build_stack(build_backend(cfg.model, cfg.seed, ray=ray), cfg.cache, budget)
    bind_environment(cfg, task, stack)  # an environment's own model: same budget and cache
    evaluator = evaluator_from_config(cfg, task, stack.client)
    trunc = cfg.task.truncation_note() or "none"
    validator = Validator(task, evaluator, instances, cfg.outer.s_val_weights, str(data), trunc)
    t0 = time.perf_counter()
    answers = len(policies) * len(instances) * task.max_calls_per_rollout()
    what = f"evaluating {len(policies)} policies on {len(instances)} instances ({trunc})"
    with EvalProgress(budget, answers, err, what):
        results = validator.validate(policies)
    wall = time.perf_counter() - t0
    return _Evaluation(cfg, task, policies, instances, stack, validator, results, trunc, wall)


def _print_tables(ev: _Evaluation, data: Path, keys: Any, diffs: list[Any]) -> None:
    """The instances table (one policy) or the policies table, the means, and the totals."""
    # lazy: start-up time
    from evotrainer.evaluation import eval_report

    results, policies, instances, trunc = ev.results, ev.policies, ev.instances, ev.trunc
    width = out.width
    out.print(
        f"{data.name}: {len(instances)} instances, truncation {trunc}, model "
        f"{ev.stack.backend.model_id}",
        markup=False,
        highlight=False,
    )
    n_cut = sum(1 for r in results[policies[0].id].per_instance if r.get("truncated"))
    if len(policies) == 1:
        res = results[policies[0].id]
        weighted = [k for k, w in ev.cfg.outer.s_val_weights.items() if w > 0]
        s_vals = ev.validator.row_s_vals(res)
        out.print(eval_report.instances_table(res, keys, weighted, s_vals, width, cell))
        tables = eval_report.means_tables(keys, [("mean", res.aggregates)], width)
    else:
        means = eval_report.instance_means(ev.validator, results)
        out.print(eval_report.policies_table(policies, results, diffs, width, cell, means))
        out.print(eval_report.PAIRED_NOTE, markup=False, highlight=False)
        columns = [(f"#{i}", results[p.id].aggregates) for i, p in enumerate(policies, 1)]
        tables = eval_report.means_tables(keys, columns, width)
    for t in tables:
        out.print(t)
    out.print(eval_report.degeneracy_table(policies, results, width, cell))
    if n_cut:
        note = "(* = input truncated) " if len(policies) == 1 else ""
        out.print(
            f"{note}inputs truncated: {n_cut} of {len(instances)} ({trunc})",
            markup=False,
            highlight=False,
        )
    b = ev.stack.budget
    out.print(
        f"wall {ev.wall:.0f}s, {calls_text(b.backend_calls, b.cache_hits)}",
        markup=False,
        highlight=False,
    )


def _failures(ev: _Evaluation) -> dict[str, list[Any]]:
    """Each policy's failed answers' errors; a warning when there are any."""
    failed = {
        p.id: [r["error"] for r in ev.results[p.id].per_instance if r.get("error")]
        for p in ev.policies
    }
    n_failed = sum(len(v) for v in failed.values())
    n_total = sum(len(ev.results[p.id].per_instance) for p in ev.policies)
    if n_failed:
        first = next(e for v in failed.values() for e in v)
        err.print(
            f"[yellow]warning:[/] {n_failed} of {n_total} answers failed and scored 0 "
            f"(first error: {escape(first)})",
            soft_wrap=True,
        )
    return failed


def _write_metrics(
    ev: _Evaluation,
    data: Path,
    out_file: Path,
    keys: Any,
    diffs: list[Any],
    failed: dict[str, list[Any]],
) -> None:
    """The metrics JSON of ``--out``: the first policy's at the top, every policy's under
    ``policies``."""
    # lazy: start-up time
    from evotrainer.evaluation import eval_report

    docs: list[dict[str, Any]] = []
    for p in ev.policies:
        res = ev.results[p.id]
        diff = diffs[len(docs)]
        s_vals = ev.validator.row_s_vals(res)
        docs.append(
            {
                "prompt": p.render(),
                "label": p.name,
                "s_val": res.s_val,
                "s_val_instance_mean": (sum(s_vals.values()) / len(s_vals) if s_vals else None),
                "vs_first": diff.to_json() if diff is not None else None,
                **{k: res.aggregates.get(k) for k in keys},
                "aggregates": dict(res.aggregates),
                "errors": len(failed[p.id]),
                "degeneracy": eval_report.answers_degeneracy(res).to_json(),
                "decoding": p.decoding.to_json(),
                "postprocess": p.postprocess.to_json(),
                # each instance's row with its own s_val (what vs_first pairs)
                "per_meeting": [
                    {**r, "s_val": s_vals.get(r["instance_id"])} for r in res.per_instance
                ],
            }
        )
    doc = {
        "data": str(data),
        "model": ev.stack.backend.model_id,
        "truncation": ev.trunc,
        "how": eval_report.PAIRED_NOTE.replace("mean/inst.", "s_val_instance_mean").replace(
            "vs #1", "vs_first"
        ),
        **docs[0],
        "policies": docs,
        "budget": ev.stack.budget.snapshot(),
        "wall_s": round(ev.wall, 2),
    }
    out_file.parent.mkdir(parents=True, exist_ok=True)
    out_file.write_text(dumps_strict(doc), encoding="utf-8")
