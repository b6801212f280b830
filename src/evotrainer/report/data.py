"""Load a run directory for the report: events, summary, best policy, archive, config.

Works on a finished run and on one still in progress (or killed): events.jsonl may end in a torn
line, summary.json and best/ may not exist yet. Then the current best policy and its validation
rows are taken from the newest intact checkpoint, and the budget from the last event carrying one.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evotrainer.config import DEFAULT_TASK, load_yaml
from evotrainer.errors import CheckpointError, ConfigError, EvoTrainerError
from evotrainer.policy.genome import PolicyGenome
from evotrainer.run import events as ev
from evotrainer.run.checkpoint import load_latest
from evotrainer.run.events import read_events
from evotrainer.run.rundir import lineage_chain
from evotrainer.tasks.registry import task_words


@dataclass(frozen=True)
class SValPoint:
    generation: int
    s_val: float
    policy_id: str
    outer_step: int
    kind: str  # "initial" | "outer" (incumbent at an outer step) | "trial" | "seed" | "final"


@dataclass
class RunData:
    path: Path
    config: dict[str, Any]
    config_text: str
    events: list[dict[str, Any]]
    summary: dict[str, Any] | None = None
    policy: dict[str, Any] | None = None  # best/policy.json, or the current best (checkpoint)
    policy_source: str = ""
    validation_rows: list[dict[str, Any]] | None = None
    archive: list[dict[str, Any]] | None = None
    notes: list[str] = field(default_factory=list)  # files that could not be read

    # -- events ---------------------------------------------------------------------------
    def of(self, type_: str) -> list[dict[str, Any]]:
        return [e for e in self.events if e.get("type") == type_]

    def first(self, type_: str) -> dict[str, Any] | None:
        found = self.of(type_)
        return found[0] if found else None

    def last(self, type_: str) -> dict[str, Any] | None:
        found = self.of(type_)
        return found[-1] if found else None

    def generations(self) -> list[dict[str, Any]]:
        """One generation event per generation number (the last one wins: a resumed run or an
        outer step re-emits its generation), in order."""
        by_gen: dict[int, dict[str, Any]] = {}
        for e in self.of(ev.GENERATION):
            by_gen[int(e.get("generation", 0))] = e
        return [by_gen[g] for g in sorted(by_gen)]

    def threads_used(self) -> list[tuple[int, int]]:
        """(first generation, threads) of each stretch of generations the embedded model ran
        with the same CPU threads (decided again before every generation); [] without them."""
        out: list[tuple[int, int]] = []
        for e in self.generations():
            n = e.get("threads")
            if isinstance(n, int) and not isinstance(n, bool) and (not out or out[-1][1] != n):
                out.append((int(e.get("generation", 0)), n))
        return out

    def threads_text(self) -> str:
        """ "1 thread (generations 0-1), 2 threads (generations 2-3)"; "" without threads."""
        used = self.threads_used()
        gens = self.generations()
        last = int(gens[-1].get("generation", 0)) if gens else 0
        parts = []
        for k, (g, n) in enumerate(used):
            end = used[k + 1][0] - 1 if k + 1 < len(used) else last
            span = f"generation {g}" if end == g else f"generations {g}-{end}"
            parts.append(f"{n} thread{'' if n == 1 else 's'} ({span})")
        return ", ".join(parts)

    def outer_steps(self) -> list[dict[str, Any]]:
        by_step: dict[int, dict[str, Any]] = {}
        for e in self.of(ev.OUTER_STEP):
            by_step[int(e.get("outer_step", 0))] = e
        return [by_step[s] for s in sorted(by_step)]

    def outer_steps_text(self) -> str:
        """The outer steps taken (their events), and those skipped: ``1 (2 skipped)``."""
        skipped = len(self.of(ev.OUTER_STEP_SKIPPED))
        return str(len(self.outer_steps())) + (f" ({skipped} skipped)" if skipped else "")

    def calls_text(self) -> str:
        """The backend calls (the one count, as the console and summary.json give it) and
        the cached answers: ``84 + 50 cached``."""
        b = self.budget()
        calls = b.get("backend_calls")
        if calls is None:
            return "-"
        return f"{calls}" + (f" + {b['cache_hits']} cached" if b.get("cache_hits") else "")

    def rollbacks(self) -> list[dict[str, Any]]:
        return self.of(ev.ROLLBACK)

    # -- derived facts --------------------------------------------------------------------
    @property
    def status(self) -> str:
        if self.summary is not None and self.summary.get("error"):
            return f"failed: {self.summary['error']}"
        if self.summary is not None:
            stopped = self.summary.get("stopped")
            if stopped == "interrupted":
                return "finished, then interrupted (Ctrl-C) before the report was built"
            return "stopped by budget" if stopped == "budget" else "finished"
        if self.of(ev.RUN_INTERRUPTED) and not self.of(ev.RUN_FINISHED):
            return "interrupted (Ctrl-C): not finished"
        if self.of(ev.RUN_FAILED):
            return f"failed: {self.of(ev.RUN_FAILED)[-1].get('message', '')}"
        if self.of(ev.BUDGET_EXHAUSTED):
            return "stopped by budget"
        if self.of(ev.RUN_FINISHED):
            return "finished"
        return "in progress"

    @property
    def model(self) -> str:
        started = self.last(ev.RUN_STARTED)
        described = (started or {}).get("model")
        if isinstance(described, dict):
            parts = [str(described.get("model") or "?")]
            extra = [f"{k} {v}" for k, v in described.items() if k != "model" and v is not None]
            return parts[0] + (f" ({', '.join(extra)})" if extra else "")
        if self.summary and self.summary.get("model"):
            return str(self.summary["model"])
        return str(self.config.get("model", {}).get("spec", "unknown"))

    @property
    def words(self) -> dict[str, str]:
        """How the report names the task's instances, outputs and references."""
        task = self.config.get("task") if isinstance(self.config.get("task"), dict) else {}
        words = task_words(str((task or {}).get("name", DEFAULT_TASK)))  # the plug-in's
        return {"instances": words.instances, "output": words.output, "reference": words.reference}

    @property
    def validation(self) -> dict[str, Any]:
        """source, n, synthetic, message (from summary.json or the validation_set event)."""
        out: dict[str, Any] = {"source": "unknown", "n": None, "synthetic": False, "message": ""}
        vs = self.last(ev.VALIDATION_SET)
        if vs:
            out.update(source=vs.get("source", "unknown"), n=vs.get("n"))
            out["message"] = vs.get("message") or ""
            out["synthetic"] = str(out["source"]).startswith("synthetic")
        if self.summary and isinstance(self.summary.get("validation"), dict):
            out.update(self.summary["validation"])
        return out

    @property
    def total_generations(self) -> int | None:
        gens = self.generations()
        if gens and gens[-1].get("total_generations") is not None:
            return int(gens[-1]["total_generations"])
        g = self.config.get("inner", {}).get("generations")
        return int(g) if g is not None else None

    def s_val_track(self) -> tuple[list[SValPoint], list[SValPoint]]:
        """(main line, trials). The main line is the incumbent best's s_val at the start, at
        every outer step and at the end; trials are the harness variants' trial bests, placed at
        the generation where the trial ended (the outer_step event's generation); the other seed
        policies validated at the start are in the second list too, with kind "seed"."""
        step_gen = {
            int(e.get("outer_step", 0)): int(e.get("generation", 0)) for e in self.of(ev.OUTER_STEP)
        }
        incumbent_gen: dict[int, int] = {}
        main: dict[int, SValPoint] = {}
        trials: list[SValPoint] = []
        for e in self.of(ev.VALIDATION):
            s = _float(e.get("s_val"))
            if s is None:
                continue
            k, g, pid = (
                int(e.get("outer_step", 0)),
                int(e.get("generation", 0)),
                str(e.get("policy_id", "")),
            )
            if e.get("role") == "seed":  # the other seed policies, validated at the start
                trials.append(SValPoint(g, s, pid, k, "seed"))
            elif e.get("role") == "generation":  # children validated after their generation
                trials.append(SValPoint(g, s, pid, k, "candidate"))
            elif k not in incumbent_gen:
                incumbent_gen[k] = g
                main[g] = SValPoint(g, s, pid, k, "initial" if k == 0 else "outer")
            elif g == incumbent_gen[k]:
                trials.append(SValPoint(step_gen.get(k, g), s, pid, k, "trial"))
            else:
                main[g] = SValPoint(g, s, pid, k, "final")
        return [main[g] for g in sorted(main)], trials

    def s_val_range(self) -> tuple[float | None, float | None]:
        """(initial, final) s_val: summary.json, else the first and best validated points."""
        if self.summary:
            return _float(self.summary.get("initial_s_val")), _float(
                self.summary.get("final_s_val")
            )
        main, trials = self.s_val_track()
        if not main:
            return None, None
        best = max(main + trials, key=lambda p: p.s_val)
        return main[0].s_val, best.s_val

    def budget(self) -> dict[str, Any]:
        """Counters for the budget card (summary.json, or the last event with a snapshot)."""
        if self.summary:
            s = self.summary
            out = {
                "llm_calls": s.get("llm_calls"),
                "prompt_tokens": s.get("prompt_tokens"),
                "completion_tokens": s.get("completion_tokens"),
            }
            out.update(s.get("runtime") or {})
            out["wall_s"] = s.get("wall_s")
            return out
        for e in reversed(self.events):
            if isinstance(e.get("budget"), dict):
                out = dict(e["budget"])
                if e.get("elapsed_s") is not None:
                    out["wall_s"] = e["elapsed_s"]
                return out
        return {}


def _float(x: Any) -> float | None:
    try:
        f = float(x)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(f) else f


def _read_json(path: Path, notes: list[str]) -> Any:
    if not path.is_file():
        return None
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError) as exc:
        why = "JSON nested too deeply" if isinstance(exc, RecursionError) else exc
        notes.append(f"could not read {path.name}: {why}")
        return None


def load_run(run_dir: Path) -> RunData:
    run_dir = Path(run_dir)
    cfg_file, events_file = run_dir / "config.yaml", run_dir / "events.jsonl"
    if not run_dir.is_dir():
        raise EvoTrainerError(f"{run_dir} does not exist or is not a directory")
    if not cfg_file.is_file() and not events_file.is_file():
        raise EvoTrainerError(
            f"{run_dir} is not a run directory (no config.yaml and no events.jsonl); "
            "pass the directory given to `evotrainer run --run-dir`"
        )
    notes: list[str] = []
    config_text = ""
    config: dict[str, Any] = {}
    if cfg_file.is_file():
        config_text = cfg_file.read_bytes().decode("utf-8", errors="replace")
        try:  # load_yaml: no alias bombs either
            loaded = load_yaml(config_text, "config.yaml")
            config = loaded if isinstance(loaded, dict) else {}
        except ConfigError as exc:
            notes.append(f"could not parse config.yaml: {exc}")
    events = [e for e in read_events(events_file) if isinstance(e, dict)]
    data = RunData(run_dir, config, config_text, events, notes=notes)
    summary = _read_json(run_dir / "summary.json", notes)
    data.summary = summary if isinstance(summary, dict) else None
    archive = _read_json(run_dir / "archive.json", notes)
    data.archive = archive if isinstance(archive, list) else None
    policy = _read_json(run_dir / "best" / "policy.json", notes)
    if isinstance(policy, dict):
        data.policy, data.policy_source = policy, "best/policy.json"
        rows = _read_json(run_dir / "best" / "validation.json", notes)
        data.validation_rows = rows if isinstance(rows, list) else None
    else:
        _from_checkpoint(data)
    return data


def _from_checkpoint(data: RunData) -> None:
    """A run without best/ yet: the best validated policy so far, from the newest checkpoint."""
    if not (data.path / "checkpoints").is_dir():
        return
    try:
        state, path, _warnings = load_latest(data.path)
        known = {pid: PolicyGenome.from_json(p) for pid, p in state.get("policies", {}).items()}
        for p in state.get("inner", {}).get("population", []):
            g = PolicyGenome.from_json(p)
            known.setdefault(g.id, g)
        memo = state.get("validation_memo") or {}
        scored = [
            (r.get("s_val"), pid) for pid, r in memo.items() if _float(r.get("s_val")) is not None
        ]
        if scored:
            best_id = max(scored)[1]
        else:
            pop = state.get("inner", {}).get("population") or []
            if not pop:
                return
            best_id = PolicyGenome.from_json(pop[0]).id
        best = known.get(best_id)
        if best is None:
            return
        v = memo.get(best_id) or {}
        data.policy = {
            **best.to_json(),
            "text": best.render(),
            "s_val": v.get("s_val"),
            "validation": v.get("aggregates") or {},
            "ancestors": lineage_chain(best, known),
        }
        data.policy_source = f"checkpoint {path.name} (best validated so far)"
        rows = v.get("per_instance")
        data.validation_rows = list(rows) if rows else None
    except (
        CheckpointError,
        KeyError,
        TypeError,
        ValueError,
        AttributeError,
        OverflowError,
        RecursionError,
    ) as exc:
        data.notes.append(f"could not read the latest checkpoint: {exc}")
