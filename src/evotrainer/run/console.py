"""The rich console observer (issue 51: progress you can trust, a console you can read).

What it prints, one line per event: the model, the estimate (and what a cap buys), the harness
whenever it changes (every key by its full name), the start of each stretch of work (seeds'
validation, a validation round, a harness trial, the confirmation), each validated policy once
(a policy validated for several trials is one line), the raced-out estimates of a round as one
line (each one with ``verbose``), outer steps, rollbacks, alerts and the end. Every count of
calls is the backend's (what ``budget.max_calls`` caps, counted once across resumes), with the
answers the cache gave beside it as "cached".

On a terminal two bars run below the lines: the generations (fitness, the best validated s_val,
the calls and the ETA) and the stretch of work under way (its calls answered of those it may
make), fed by the engine's transient ``progress`` events at most once a second, so the display
never stands still while calls are answered. In a log file (not a terminal) the output stays
line-based: a line per generation, and a progress line whenever ``HEARTBEAT_S`` seconds passed
without one (no silent stretch of more than about 30 s while calls are answered).

Everything that comes from the run (model answers quoted in a verdict, file names, messages,
policy ids) is escaped before it reaches rich, so text such as ``[/b]`` prints as it is, and every
line goes through ``terminal.printable``, so control sequences in it are written out, never
obeyed."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from rich.console import Console
from rich.markup import escape

from evotrainer.config.base import DEFAULT_TASK
from evotrainer.evaluation.paired import difference_text
from evotrainer.run import events as ev
from evotrainer.run.console_bars import Bars
from evotrainer.run.estimate import calls_text, format_duration
from evotrainer.tasks.registry import task_words
from evotrainer.terminal import SafeConsole, printable

HEARTBEAT_S = 20.0  # in a log file: a progress line when nothing was printed for this long


def _num(x: float | None) -> str:
    return "-" if x is None else f"{x:.3f}"


def harness_text(h: dict[str, Any]) -> str:
    """Every gene of a harness by its full name: ``difficulty 0.15, real share 0.50, reward
    weights action_items 0.13, completeness 0.22``."""
    genes = [f"difficulty {h.get('difficulty', 0.0):.2f}"]
    genes.append(f"real share {h.get('real_share') or 0.0:.2f}")
    weights = ", ".join(f"{k} {v:.2f}" for k, v in (h.get("weights") or {}).items() if v > 0)
    genes += [f"{k} {v}" for k, v in (h.get("genes") or {}).items()]
    return ", ".join(genes) + (f"; reward weights {weights}" if weights else "")


def harness_change(old: dict[str, Any] | None, new: dict[str, Any]) -> str:
    """What ``new`` changes of ``old``, gene by gene (``completeness 0.22 -> 0.30``); the
    whole harness when there is no ``old``."""
    if old is None:
        return harness_text(new)
    changes = []
    for key, label in (("difficulty", "difficulty"), ("real_share", "real share")):
        a, b = old.get(key) or 0.0, new.get(key) or 0.0
        if abs(a - b) > 1e-9:
            changes.append(f"{label} {a:.2f} -> {b:.2f}")
    wa, wb = old.get("weights") or {}, new.get("weights") or {}
    for k in sorted(set(wa) | set(wb)):
        a, b = wa.get(k, 0.0), wb.get(k, 0.0)
        if abs(a - b) > 1e-9:
            changes.append(f"weight {k} {a:.2f} -> {b:.2f}")
    ga, gb = old.get("genes") or {}, new.get("genes") or {}
    changes += [
        f"{k} {ga.get(k)} -> {gb.get(k)}"
        for k in sorted(set(ga) | set(gb))
        if ga.get(k) != gb.get(k)
    ]
    return ", ".join(changes) or "the incumbent harness"


def _threads(n: Any) -> str:
    return f"{n} thread" + ("" if n == 1 else "s")


def _e(value: Any) -> str:
    return escape(printable(str(value)))


class ConsoleProgress:
    """``verbose``: every raced-out estimate on a line of its own."""

    def __init__(self, console: Console | None = None, verbose: bool = False) -> None:
        self.console = console or SafeConsole(stderr=True)
        self.verbose = verbose
        self.bars: Bars | None = None  # on a terminal, once there is progress to show
        self.noun = "meetings"  # what the task's instances are called (set at run_started)
        self.paced = False  # the pace line was printed
        self.said: set[str] = set()  # messages printed (a warning repeating a notice is not)
        self.round: set[tuple[Any, Any]] = set()  # (role, policy) printed in this round
        self.raced: list[dict[str, Any]] = []  # raced-out estimates not yet summed up
        self.best: tuple[str, float] | None = None  # the best validated policy seen
        self.harness: dict[str, Any] | None = None  # the harness last shown
        self.phase: dict[str, Any] = {}
        self.last_progress: dict[str, Any] = {}
        self.last_line = time.monotonic()
        self._beat: threading.Event | None = None  # set: the log file's heartbeat stops
        self.handlers: dict[str, Callable[[dict[str, Any]], None]] = {
            ev.RUN_STARTED: self._run_started,
            ev.RUN_RESUMED: self._resumed,
            ev.THREADS: self._threads_changed,
            ev.ESTIMATE: lambda d: self._line(d["message"]),
            ev.TRACKING: lambda d: self._line(d["message"]),
            ev.VALIDATION_SET: self._notice,
            ev.TRAINING_SET: self._notice,
            ev.OUTER_STEP_SKIPPED: self._notice,
            ev.WARNING: lambda d: self._notice(d, warn=True),
            ev.GENERATION: self._generation,
            ev.VALIDATION_STARTED: self._validation_started,
            ev.VALIDATION: self._validation,
            ev.DISTILL_STARTED: self._distill_started,
            ev.DISTILL_PROGRESS: self._distill_progress,
            ev.DISTILL_FINISHED: self._distill_finished,
            ev.TRIAL_STARTED: self._trial_started,
            ev.TRIAL_FINISHED: self._trial_finished,
            ev.CONFIRMATION: self._confirmation,
            ev.OUTER_STEP: self._outer_step,
            ev.ALERT: lambda d: self._print(
                f"[bold red]alert ({_e(d['kind'])}):[/] {_e(d['message'])}"
            ),
            ev.CONSTITUTION: lambda d: self._print(
                f"[red]rejected[/] policy {_e(d['policy_id'])}: {_e(d['detail'])}"
            ),
            ev.ROLLBACK: lambda d: self._print(
                f"[magenta]rollback[/] to {_e(d['to_policy'])} (s_val {d['s_val']:.3f})"
            ),
            ev.BUDGET_EXHAUSTED: lambda d: self._print(f"[red]stopped:[/] {_e(d['message'])}"),
            ev.RUN_FAILED: self._failed,
            ev.OBSERVER_DETACHED: lambda d: self._print(
                f"[yellow]warning:[/] observer {_e(d['observer'])} detached: {_e(d['error'])}"
            ),
            ev.RUN_FINISHED: lambda d: self.close(),
            # the command line says it was interrupted, once the bars are gone
            ev.RUN_INTERRUPTED: lambda d: self.close(),
            ev.PHASE: self._phase,
            ev.PROGRESS: self._progress,
        }

    def __call__(self, event: ev.Event) -> None:
        if event.type != ev.VALIDATION and event.type not in ev.TRANSIENT:
            self._sum_up_raced()  # a round of validation lines ends
            self.round.clear()
        handler = self.handlers.get(event.type)
        if handler is not None:
            handler(event.data)

    # -- the run's start ---------------------------------------------------------------------
    def _run_started(self, d: dict[str, Any]) -> None:
        """The model (and the operator model, if another): the task's noun noted."""
        task = (d.get("config") or {}).get("task") or {}
        self.noun = task_words(str(task.get("name", DEFAULT_TASK))).instances
        m = d["model"]
        threads = f", {_threads(m['threads'])}" if m.get("threads") else ""
        self._print(
            f"[bold]EvoTrainer[/] model: {_e(m.get('model'))} ({_e(m.get('backend'))}{threads})"
        )
        teacher = d.get("operator_model")
        if teacher:
            self._line(
                f"operator model (mutation, reflection, paraphrase): {teacher.get('model')} "
                f"({teacher.get('backend')})"
            )

    def _resumed(self, d: dict[str, Any]) -> None:
        if d.get("best_policy") and d.get("best_s_val") is not None:
            self.best = (str(d["best_policy"]), float(d["best_s_val"]))
        self._line(f"resumed from {d.get('checkpoint')} after generation {d.get('generation')}")

    def _threads_changed(self, d: dict[str, Any]) -> None:
        self._line(
            f"llama.cpp threads: {d['previous']} -> {d['threads']} from generation "
            f"{d['generation']} (decided again from the cores free now)"
        )

    def _notice(self, d: dict[str, Any], warn: bool = False) -> None:
        """A notice or warning, once (the synthetic-validation notice comes twice)."""
        message = str(d["message"])
        if message in self.said:
            return
        self.said.add(message)
        self._print(("[yellow]warning:[/] " if warn else "") + _e(message))

    def _failed(self, d: dict[str, Any]) -> None:
        self.close()
        self._print(f"[bold red]run failed:[/] {_e(d['message'])}")

    # -- generations -------------------------------------------------------------------------
    def _generation(self, d: dict[str, Any]) -> None:
        """The generations bar's status (a plain line per generation in a log file); the
        harness on a line of its own when it changed."""
        h = d.get("harness")
        if isinstance(h, dict) and h != self.harness:
            self._line(f"harness: {harness_text(h)}")
            self.harness = h
        b = d["budget"]
        best = f"{self.best[1]:.3f} ({self.best[0]})" if self.best else _num(d.get("last_s_val"))
        status = (
            f"fitness best {_num(d['best_fitness'])} mean {_num(d['mean_fitness'])} | "
            f"best s_val {best} | "
            f"{calls_text(b.get('backend_calls'), b.get('cache_hits'), d.get('expected_calls'))}"
            f" | ETA {format_duration(d.get('eta_s'))}"
        )
        self._pace(d)
        if not self.console.is_terminal:  # a log file: one plain line per generation
            self._line(
                f"gen {d['generation']}/{d['total_generations']} | {status} | {d['elapsed_s']:.0f}s"
            )
            return
        self._bars().generation(d["generation"], d["total_generations"], _e(status))

    def _pace(self, d: dict[str, Any]) -> None:
        """Once the backend's pace is measured (generation events carry it): one line with the
        seconds per backend call and the time the run is expected to take."""
        per_call = d.get("s_per_call")
        if self.paced or per_call is None or d.get("eta_s") is None:
            return
        self.paced = True
        b = d["budget"]
        self._line(
            f"pace: {per_call:.2f} s per backend call so far ({b.get('backend_calls')} backend "
            f"calls): about {format_duration(d['eta_s'])} left for the ~{d['expected_calls']} "
            "calls expected"
        )

    # -- validation --------------------------------------------------------------------------
    def _validation_started(self, d: dict[str, Any]) -> None:
        how = f"racing: a few {self.noun} first" if d.get("race") else f"all {self.noun}"
        self._line(
            f"validating {d['policies']} {d['role']} policies on {d['instances']} "
            f"{self.noun} ({how})"
        )

    def _validation(self, d: dict[str, Any]) -> None:
        """A validated policy, once a round; a raced-out estimate kept for the round's line."""
        if d.get("partial") and not self.verbose:
            self.raced.append(d)
            return
        key = (d.get("role"), d.get("policy_id"))
        if key in self.round:  # the same best of several trials: one line
            return
        self.round.add(key)
        if d.get("partial"):
            self._line(f"  {d['role']} {d['policy_id']}: {self._raced_text([d])}")
            return
        s_val = float(d["s_val"])
        if self.best is None or s_val > self.best[1]:
            self.best = (str(d["policy_id"]), s_val)
        self._line(f"  {d['role']} {d['policy_id']}: s_val {s_val:.3f}")

    def _raced_text(self, raced: list[dict[str, Any]]) -> str:
        n = raced[0].get("n")
        estimates = ", ".join(f"{float(r['s_val']):.3f}" for r in raced)
        best = f" ({self.best[0]}, {self.best[1]:.3f})" if self.best else ""
        return (
            f"raced out after {n} {self.noun}: estimate{'s' * (len(raced) > 1)} {estimates}, "
            f"below the best validated policy{best}"
        )

    def _sum_up_raced(self) -> None:
        """The round's raced-out policies on one line a role (a lone one named, as the
        incumbent is: its estimate is not its score)."""
        raced, self.raced = self.raced, []
        by_role: dict[str, list[dict[str, Any]]] = {}
        for r in raced:
            by_role.setdefault(str(r.get("role")), []).append(r)
        for role, items in by_role.items():
            if len(items) == 1:
                who = f"{role} {items[0].get('policy_id')}"
            else:
                who = f"{len(items)} {role} policies"
            self._line(f"  {who}: {self._raced_text(items)}")

    def _confirmation(self, d: dict[str, Any]) -> None:
        diff = d["difference"]
        lo, hi = diff["ci95"]
        self._line(
            f"confirmation on {diff['n']} held-out {self.noun}: winner {d['winner_s_val']:.3f} "
            f"vs best seed {d['best_seed_s_val']:.3f}, paired difference "
            f"{difference_text(diff['mean'], lo, hi, diff['n'])} -> {d['reason']}"
        )

    # -- the outer loop ----------------------------------------------------------------------
    def _trial_started(self, d: dict[str, Any]) -> None:
        self._line(
            f"outer step {d['outer_step']}: trial {d['trial']}/{d['trials']}: "
            f"{harness_change(self.harness, d['harness'])}"
        )

    def _trial_finished(self, d: dict[str, Any]) -> None:
        b = d.get("budget") or {}
        self._line(
            f"  trial {d['trial']}/{d['trials']} done: best fitness "
            f"{_num(d['best_fitness'])}, {calls_text(b.get('backend_calls'), b.get('cache_hits'))}"
        )

    def _outer_step(self, d: dict[str, Any]) -> None:
        s = ", ".join(f"{x:.3f}" if x is not None else "-" for x in d["s_vals"])
        self._print(
            f"[cyan]outer step {d['outer_step']}[/]: s_val of the trials' best "
            f"{_e(f'[{s}]')} -> {_e(d['reason'])}"
        )

    # -- distillation --------------------------------------------------------------------------
    def _distill_started(self, d: dict[str, Any]) -> None:
        refs = f" + {d['references']} human references" if d.get("references") else ""
        self._line(
            f"distillation {d['round']}: {d['from_policies']} answers kept of "
            f"{d['from_policies'] + len(d.get('dropped') or [])} (reward >= "
            f"{_num(d.get('threshold'))}){refs}; training a LoRA adapter"
        )

    def _distill_progress(self, d: dict[str, Any]) -> None:
        """About ten lines a training."""
        step, steps = d["step"], d["steps"]
        if step == steps or step % max(1, steps // 10) == 0:
            self._line(
                f"  adapter step {step}/{steps}: loss {d['loss']:.3f}, "
                f"{d['tokens_per_s']:.0f} tokens/s, {d['eta_s']:.0f}s left"
            )

    def _distill_finished(self, d: dict[str, Any]) -> None:
        what = "kept" if d["kept"] else "set aside"
        self._line(f"distillation {d['round']}: adapter {what}: {_e(d['why'])}")

    # -- progress ------------------------------------------------------------------------------
    def _phase(self, d: dict[str, Any]) -> None:
        """A stretch of work starts: its line when no recorded event announces it; the second
        bar on a terminal."""
        self.phase = d
        self.last_progress = {"phase": d.get("phase"), "phase_calls": d.get("calls")}
        if d.get("message"):
            self._line(str(d["message"]))
        if self.console.is_terminal:
            self._bars().phase(_e(d.get("phase") or ""), d.get("calls"))
        elif self._beat is None:
            self._start_heartbeat()

    def _progress(self, d: dict[str, Any]) -> None:
        """Calls answered: the bars move; in a log file, a line when none came for a while."""
        self.last_progress = d
        if self.console.is_terminal:
            calls = calls_text(d.get("backend_calls"), d.get("cached"), d.get("expected_calls"))
            eta = f"ETA {format_duration(d.get('eta_s'))}"
            self._bars().progress(d.get("phase_answered") or 0, f"{calls} | {eta}")
        elif time.monotonic() - self.last_line >= HEARTBEAT_S:
            self._progress_line()

    def _progress_line(self, waiting: float | None = None) -> None:
        """``  ... seeds' validation: 7/24 answered | backend calls 25/~161 | ETA 5m 00s``;
        ``waiting``: the seconds since the last answer, when one call is taking long."""
        d = self.last_progress
        total = d.get("phase_calls")
        done = f"{d.get('phase_answered') or 0}" + (f"/{total}" if total else "")
        text = f"  ... {d.get('phase') or 'working'}: {done} answered"
        if d.get("backend_calls") is not None:
            calls = calls_text(d.get("backend_calls"), d.get("cached"), d.get("expected_calls"))
            text += f" | {calls} | ETA {format_duration(d.get('eta_s'))}"
        if waiting is not None:
            text += f" | waiting on the model ({waiting:.0f} s without a line)"
        self._line(text)

    def _start_heartbeat(self) -> None:
        """In a log file: a thread that prints the progress line when nothing was printed for
        ``HEARTBEAT_S`` seconds, even while one long call is answered (no silent stretch)."""
        stop = self._beat = threading.Event()

        def beat() -> None:
            while not stop.wait(max(0.05, HEARTBEAT_S / 4)):
                quiet = time.monotonic() - self.last_line
                if quiet >= HEARTBEAT_S and not stop.is_set():
                    self._progress_line(waiting=quiet)

        threading.Thread(target=beat, name="evotrainer-heartbeat", daemon=True).start()

    def _bars(self) -> Bars:
        if self.bars is None:
            self.bars = Bars(self.console)
        return self.bars

    # -- printing ------------------------------------------------------------------------------
    def _line(self, text: str) -> None:
        """A plain line (no markup: run text prints as it is)."""
        self._print(text, markup=False, highlight=False, soft_wrap=True)

    def _print(self, text: str, **kwargs: Any) -> None:
        self.last_line = time.monotonic()
        self.console.print(printable(text), **kwargs)

    def close(self) -> None:
        self._sum_up_raced()
        if self._beat is not None:
            self._beat.set()
            self._beat = None
        if self.bars is not None:
            self.bars.close()
            self.bars = None
