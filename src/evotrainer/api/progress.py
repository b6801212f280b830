"""A run's progress through ``logging`` (logger ``evotrainer``), for Python API users: one
record per step worth knowing (the model, the data, the estimate, each validation round and
result, each generation, each outer step, the confirmation, the end) at INFO; warnings,
rollbacks and alerts at WARNING; a failed run at ERROR; checkpoints and harness trials at
DEBUG. ``logging.basicConfig(level=logging.INFO)`` shows them. An observer of the run's
events, as the console is (run/console.py): the engine never prints."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from evotrainer.evaluation.paired import difference_text
from evotrainer.run import events as ev

log = logging.getLogger("evotrainer")


def _num(x: Any) -> str:
    return f"{x:.3f}" if isinstance(x, int | float) else "-"


def _started(d: dict[str, Any]) -> str:
    m = d.get("model") or {}
    where = f", run directory {d['run_dir']}" if d.get("run_dir") else ""
    return f"run started: model {m.get('model')} ({m.get('backend')}){where}"


def _generation(d: dict[str, Any]) -> str:
    b = d.get("budget") or {}
    expected = d.get("expected_calls")
    return (
        f"generation {d['generation']}/{d['total_generations']}: best fitness "
        f"{_num(d.get('best_fitness'))}, mean {_num(d.get('mean_fitness'))}, last s_val "
        f"{_num(d.get('last_s_val'))}, LLM calls {b.get('llm_calls')}"
        + (f" of ~{expected}" if expected else "")
    )


def _validation_started(d: dict[str, Any]) -> str:
    how = " (racing: a few examples first)" if d.get("race") else ""
    return f"validating {d['policies']} {d['role']} policies on {d['instances']} examples{how}"


def _validation(d: dict[str, Any]) -> str:
    part = f" (estimate from {d['n']} examples, raced out)" if d.get("partial") else ""
    return f"{d['role']} policy {d['policy_id']}: s_val {_num(d['s_val'])}{part}"


def _confirmation(d: dict[str, Any]) -> str:
    diff = d["difference"]
    lo, hi = diff["ci95"]
    return (
        f"confirmation on {diff['n']} held-out examples: winner {_num(d['winner_s_val'])} vs "
        f"best seed {_num(d['best_seed_s_val'])}, paired difference "
        f"{difference_text(diff['mean'], lo, hi, diff['n'])} -> {d['reason']}"
    )


def _finished(d: dict[str, Any]) -> str:
    s = d.get("summary") or {}
    return (
        f"run finished ({s.get('stopped')}): s_val {_num(s.get('final_s_val'))} (the best "
        f"seed's {_num(s.get('initial_s_val'))}), {s.get('generations')} generations, LLM calls "
        f"{s.get('llm_calls')}, returned policy {s.get('best_policy')}"
        + (" (a seed)" if s.get("returned_is_seed") else "")
    )


def _message(d: dict[str, Any]) -> str:
    return str(d.get("message", ""))


Line = tuple[int, Callable[[dict[str, Any]], str]]
INFO, WARNING, DEBUG = logging.INFO, logging.WARNING, logging.DEBUG
LINES: dict[str, Line] = {
    ev.RUN_STARTED: (INFO, _started),
    ev.VALIDATION_SET: (INFO, _message),
    ev.TRAINING_SET: (INFO, _message),
    ev.ESTIMATE: (INFO, _message),
    ev.VALIDATION_STARTED: (INFO, _validation_started),
    ev.VALIDATION: (INFO, _validation),
    ev.GENERATION: (INFO, _generation),
    ev.TRIAL_STARTED: (DEBUG, lambda d: f"outer step {d['outer_step']}: trial {d['trial']}"),
    ev.TRIAL_FINISHED: (DEBUG, lambda d: f"trial {d['trial']}/{d['trials']} done"),
    ev.OUTER_STEP: (INFO, lambda d: f"outer step {d['outer_step']}: {d['reason']}"),
    ev.OUTER_STEP_SKIPPED: (INFO, _message),
    ev.ROLLBACK: (WARNING, lambda d: f"rollback to {d['to_policy']} (s_val {_num(d['s_val'])})"),
    ev.ALERT: (WARNING, lambda d: f"alert ({d['kind']}): {d['message']}"),
    ev.CONFIRMATION: (INFO, _confirmation),
    ev.BUDGET_EXHAUSTED: (WARNING, lambda d: f"stopped: {d['message']}"),
    ev.WARNING: (WARNING, _message),
    ev.CHECKPOINT: (DEBUG, lambda d: f"checkpoint {d['file']}"),
    ev.RUN_FINISHED: (INFO, _finished),
    ev.RUN_FAILED: (logging.ERROR, lambda d: f"run failed: {d['message']}"),
    ev.RUN_INTERRUPTED: (WARNING, _message),
}


class LogEvents:
    """The observer: each event of LINES as one log record of its level. A new run's estimate
    is followed by what comes next, which no event announces: the first generation scored on
    a training batch and the seeds validated together (the longest stretch of a small run)."""

    def __init__(self, logger: logging.Logger = log) -> None:
        self.logger = logger
        self.validating = 0  # the selection part's size (validation_set event)
        self.resumed = False

    def __call__(self, event: ev.Event) -> None:
        line = LINES.get(event.type)
        if line is not None and self.logger.isEnabledFor(line[0]):
            self.logger.log(line[0], "%s", line[1](event.data))
        if event.type == ev.VALIDATION_SET:
            self.validating = int(event.data.get("n") or 0)
        elif event.type == ev.RUN_RESUMED:
            self.resumed = True
        elif event.type == ev.ESTIMATE and not self.resumed:
            self.resumed = True  # said once
            self.logger.info(
                "scoring the first generation (the seeds and variations of them) on a training "
                "batch, then validating the best of it and the seeds on %d examples",
                self.validating,
            )
