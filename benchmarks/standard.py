"""The quality benchmark run cell by cell into a results directory (the ``standard`` profile,
or any profile with ``--results-dir``): resumable, shared test evaluation, paired comparisons.

A *cell* is one method on one seed (``random_search-seed0`` ...; the deterministic seed
policies are one cell, ``seeds``). Each cell writes its result to its own JSON file as soon as it
finishes; a rerun with the same settings skips finished cells (failed ones are retried), and
``--cells``/``--methods`` run a subset. The settings are recorded in ``settings.json``; a rerun
with different settings into the same directory is refused.

The test evaluation is shared: every distinct returned policy (and the seeds A, B, C) on every
test meeting, instance-major (all policies on meeting 1, then meeting 2 ... so llama.cpp
prefills each meeting once), through a persistent response cache; per-meeting scores are saved
as they come, so a resumed evaluation costs nothing for finished pairs.

Layout::

    RESULTS_DIR/settings.json       what the run measures (compared on every rerun) + invocations
    RESULTS_DIR/cells/CELL.json     one per finished cell: returned policy (all components),
                                    selection s_val, calls, tokens, wall time, details
    RESULTS_DIR/test/policies.json  every policy evaluated on the test sets
    RESULTS_DIR/test/scores.json    test set -> meeting -> policy -> metrics, s_val, output
    RESULTS_DIR/summary.json        means and paired differences to seed_best with 95% CIs
    WORK_DIR/                       git-ignored: per-cell caches (cache/), the test-set
                                    cache (test-cache.sqlite), engine run directories (runs/:
                                    events.jsonl, checkpoints, summary.json), cell locks
                                    (locks/), the llama_cpp.server log

Cells run seeds first, then seed by seed (seed 0 of every method, then seed 1 ...). Settings
that only the engine cells read (engine sizes, --engine-set, the engine's resolved config) may
change until an engine cell has finished; everything else must match from the first run on.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import json
import os
import shutil
import subprocess
import sys
import time
import traceback
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from benchmarks import answers, stats
from benchmarks import common as C
from benchmarks import quality as Q
from benchmarks.distill import run_weights
from evotrainer.config import CacheConfig
from evotrainer.evaluation.evaluator import Evaluator
from evotrainer.evaluation.runner import SerialRunner
from evotrainer.evaluation.validation import Validator, combine_s_val
from evotrainer.llm.base import Completion, LLMClient, SamplingParams
from evotrainer.llm.budget import Budget
from evotrainer.llm.spec import build_stack
from evotrainer.policy.genome import PolicyGenome
from evotrainer.tasks.meetings.rewards import reference_action_items
from evotrainer.tasks.meetings.seeds import seed_policies
from evotrainer.types import Instance, Message

SCORE_KEYS = ("rougeL", "action_item_f1", "rouge1", "rouge2", "decision_recall", "n_action_items")
# the two metrics summaries show beside s_val, per task: (key, label); the first gets a Δ column
COLUMNS = {
    "meetings": (("rougeL", "ROUGE-L"), ("action_item_f1", "action-item F1")),
    "dialogue": (("request_recall", "request recall"), ("grounded", "grounded")),
}


def columns(settings: dict[str, Any]) -> tuple[tuple[str, str], tuple[str, str]]:
    """The profile's two metric columns beside s_val (its task's)."""
    return COLUMNS[settings.get("task", "meetings")]  # type: ignore[return-value]


SEED_ROWS = ("seed_A", "seed_B", "seed_C", "seed_best")
BASELINE = "seed_best"
ALL = "all"  # the pooled test set


# -- cells --------------------------------------------------------------------------------
def cell_id(method: str, seed: int | None) -> str:
    return method if seed is None else f"{method}-seed{seed}"


def all_cells(
    n_seeds: int, methods: Sequence[str] = Q.METHODS
) -> list[tuple[str, str, int | None]]:
    """(cell id, method, seed) of the whole grid in run order: ``seeds`` once (deterministic),
    then seed by seed every other method, so a run stopped halfway has whole seeds to compare."""
    out: list[tuple[str, str, int | None]] = []
    if "seeds" in methods:
        out.append((cell_id("seeds", None), "seeds", None))
    for s in range(n_seeds):
        out += [(cell_id(m, s), m, s) for m in methods if m != "seeds"]
    return out


def profile_methods(settings: dict[str, Any]) -> tuple[str, ...]:
    """The methods a profile compares (``methods`` in its settings; default all of them)."""
    return tuple(settings.get("methods") or Q.METHODS)


def select_cells(
    cells: list[tuple[str, str, int | None]], methods: str | None, only: str | None
) -> list[tuple[str, str, int | None]]:
    """Filter by ``--methods a,b`` and ``--cells METHOD[:SEED],...`` (both optional)."""
    if methods:
        wanted = {m.strip() for m in methods.split(",") if m.strip()}
        unknown = sorted(wanted - set(Q.CELL_METHODS))
        if unknown:
            raise SystemExit(f"unknown method(s) {unknown}; known: {', '.join(Q.CELL_METHODS)}")
        cells = [c for c in cells if c[1] in wanted]
    if only:
        keep: set[str] = set()
        for item in (x.strip() for x in only.split(",")):
            if not item:
                continue
            method, _, seed = item.partition(":")
            hit = {
                c[0]
                for c in cells
                if c[0] == item or (c[1] == method and (not seed or str(c[2]) == seed))
            }
            if not hit:
                known = ", ".join(c[0] for c in cells)
                raise SystemExit(f"--cells {item!r} matches no cell; cells: {known}")
            keep |= hit
        cells = [c for c in cells if c[0] in keep]
    return cells


def cell_path(results: Path, cell: str) -> Path:
    return results / "cells" / f"{cell}.json"


def load_cells(results: Path) -> dict[str, dict[str, Any]]:
    out = {}
    for p in sorted((results / "cells").glob("*.json")):
        with contextlib.suppress(json.JSONDecodeError, OSError):
            out[p.stem] = json.loads(p.read_text())
    return out


@contextlib.contextmanager
def cell_lock(work: Path, cell: str) -> Iterator[bool]:
    """An exclusive lock per cell (True if got): two processes on one results directory run
    different cells instead of the same one twice."""
    path = work / "locks" / f"{cell}.lock"
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w") as fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            yield False
            return
        try:
            yield True
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def is_running(work: Path | None, cell: str) -> bool:
    """Whether some process holds the cell's lock now."""
    path = None if work is None else work / "locks" / f"{cell}.lock"
    if path is None or not path.is_file():
        return False
    with path.open("a") as fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return True
        fcntl.flock(fh, fcntl.LOCK_UN)
    return False


def git_state() -> dict[str, Any]:
    """The commit the code ran at (and whether src/ or benchmarks/ had uncommitted changes)."""
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=C.REPO, capture_output=True, text=True, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--", "src", "benchmarks"],
            cwd=C.REPO,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return {"commit": None, "dirty": None}
    return {"commit": commit, "dirty": bool(dirty)}


def run_record(r: Q.RunOut) -> dict[str, Any]:
    return {
        "best_policy": {**r.best.to_json(), "text": r.best.render()},
        "selection_s_val": r.selection_s_val,
        **C.usage(r.stack_budget),
        "wall_s": round(r.wall_s, 2),
        "details": r.details,
    }


# -- progress -----------------------------------------------------------------------------
class Progress:
    """Counts real backend calls of the current cell and logs every ``every`` of them, so a
    long cell shows it is alive in a nohup log."""

    def __init__(self, every: int) -> None:
        self.every = every
        self.label = ""
        self.calls = 0
        self.t0 = time.perf_counter()

    def reset(self, label: str) -> None:
        self.label, self.calls, self.t0 = label, 0, time.perf_counter()

    def tick(self) -> None:
        self.calls += 1
        if self.every and self.calls % self.every == 0:
            dt = time.perf_counter() - self.t0
            C.log(
                f"  {self.label}: {self.calls} backend calls, {dt:.0f} s "
                f"({dt / self.calls:.1f} s/call)"
            )


class ProgressLLM:
    """A backend wrapper (below cache and budget: it sees real backend calls only) that
    reports each call to a ``Progress``."""

    def __init__(self, inner: LLMClient, progress: Progress) -> None:
        self.inner = inner
        self.progress = progress

    @property
    def model_id(self) -> str:
        return self.inner.model_id

    @property
    def context_size(self) -> int | None:
        return self.inner.context_size

    def __getattr__(self, name: str) -> Any:  # n_threads and the like
        return getattr(self.inner, name)

    def complete(self, messages: Sequence[Message], params: SamplingParams) -> Completion:
        out = self.inner.complete(messages, params)
        self.progress.tick()
        return out

    async def acomplete(self, messages: Sequence[Message], params: SamplingParams) -> Completion:
        import asyncio

        return await asyncio.to_thread(self.complete, messages, params)

    def describe(self) -> dict[str, Any]:
        return self.inner.describe()


# -- settings -----------------------------------------------------------------------------
ENGINE_METHODS = (
    "inner_ga",
    "evotrainer",
    "fixed",
    "labels_ga",
    *Q.DIALOGUE_METHODS,
    *Q.ENGINE_DISTILL,
)
# profile keys that only the engine cells read
ENGINE_KEYS = (
    "population",
    "elites",
    "tasks_per_generation",
    "outer_every",
    "outer_variants",
    "trial_generations",
    "difficulty",
    "real_data",
    "real_share",
    "engine_set",
    "distill_after",
)


# profile keys that say where results go, not what a cell measures
LOCAL_KEYS = ("results_name",)
# what a compared setting recorded before it existed stood at (the behaviour then)
COMPARED_DEFAULTS = {"settings": {"empty_reference_items": "abstain"}}


def _plain(obj: Any) -> Any:
    return C.clean_json(json.loads(json.dumps(obj)))


def compared_settings(args: argparse.Namespace, prof: dict[str, Any], bench: Q.Bench) -> dict:
    """Everything that changes what every cell measures. A rerun must match it exactly."""
    data: dict[str, Any] = {
        "selection": {"source": bench.selection.info["source"], "ids": bench.selection.info["ids"]},
        "gepa_train": {
            "source": bench.gepa_train.info["source"],
            "ids": bench.gepa_train.info["ids"],
        },
        "test": {
            name: {"source": s.info["source"], "ids": s.info["ids"]}
            for name, s in bench.tests.items()
        },
    }
    if bench.confirmation is not None:
        data["confirmation"] = {
            "source": bench.confirmation.info["source"],
            "ids": bench.confirmation.info["ids"],
        }
    labels = (bench.scarce or {}).get("labels")
    if labels is not None:  # every meeting (dialogue) id by purpose: the label bookkeeping
        data["labels"] = labels.to_json()
    return _plain(
        {
            "profile": args.profile,
            "settings": {
                k: v for k, v in prof.items() if k not in ENGINE_KEYS and k not in LOCAL_KEYS
            },
            "model": args.model,
            "s_val_weights": bench.weights,
            "truncation": "none (dialogue)"
            if bench.domain == "dialogue"
            else f"head_tail at {prof['max_input_tokens']} estimated tokens",
            "data": data,
        }
    )


def engine_settings(args: argparse.Namespace, prof: dict[str, Any], bench: Q.Bench) -> dict:
    """What only the engine cells measure: the profile's engine keys and the engine's resolved
    config (its defaults included), without seed, cache path and threads. The scarce profile's
    engine methods run different harnesses: their configs are recorded one per method
    (``per_method``), and a change to one method's config is refused only once a cell of that
    method has finished (the protocol lets co-evolution's outer loop change after the
    baselines ran)."""
    keys = {k: prof[k] for k in ENGINE_KEYS if k in prof}
    keys["engine_set"] = [*prof.get("engine_set", []), *args.engine_set]
    if bench.scarce is not None or prof.get("distill"):
        methods = [m for m in profile_methods(prof) if m in ENGINE_METHODS]
        per = {m: _engine_config(bench, m) for m in methods}
        return _plain({"profile": keys, "per_method": per})
    return _plain({"profile": keys, "config": _engine_config(bench, None)})


def _engine_config(bench: Q.Bench, method: str | None) -> dict[str, Any]:
    try:
        outer = method in (None, "evotrainer") or Q.ENGINE_DISTILL.get(method or "", False)
        config = bench.engine_config(0, outer, method=method).model_dump(mode="json")
        config.pop("seed", None)
        config.pop("cache", None)
        config.get("model", {}).pop("n_threads", None)
    except Exception as exc:  # noqa: BLE001 - reported (and refused) when an engine cell runs
        config = {"unavailable": f"{type(exc).__name__}: {exc}"}
    return config


ABSENT = "<absent>"


def _changed_methods(diffs: list[str]) -> set[str]:
    """The engine methods a list of engine-setting differences touches: one method for a
    difference under ``per_method.<method>``, every engine method otherwise."""
    out: set[str] = set()
    for d in diffs:
        head, _, rest = d.partition(".")
        method = rest.partition(".")[0].partition(":")[0]  # "per_method.m: ..." (all of m)
        if head == "per_method" and method in ENGINE_METHODS:
            out.add(method)
        else:
            return set(ENGINE_METHODS)
    return out


def engine_defaults() -> dict[str, Any]:
    """The engine config with every option at its default (what an option added after a cell
    ran stands at when the cell's behaviour is kept)."""
    from evotrainer.config import config_from_dict

    return _plain(config_from_dict({}).model_dump(mode="json"))


def _diff(a: Any, b: Any, path: str = "", defaults: Any = None) -> list[str]:
    """Differences between recorded settings ``a`` and current ones ``b``. With ``defaults``
    (the engine config's defaults, same shape): a field the recording lacks that now holds its
    default is no difference (an option added since, at its default, keeps the old behaviour)."""
    if isinstance(a, dict) and isinstance(b, dict):
        out = []
        for k in sorted(set(a) | set(b)):
            d = defaults.get(k, ABSENT) if isinstance(defaults, dict) else ABSENT
            if k not in a and d != ABSENT and b.get(k) == d:
                continue
            out += _diff(a.get(k, ABSENT), b.get(k, ABSENT), f"{path}.{k}" if path else k, d)
        return out
    if a != b:
        return [f"{path}: {json.dumps(a)[:120]} recorded, {json.dumps(b)[:120]} now"]
    return []


def _inert_sections(engine: dict[str, Any]) -> dict[str, Any]:
    """The engine settings without the fields of a switched-off distillation section: they
    change nothing a cell measures (a scarce-labels cell never distils), so a new default there
    (distill.max_seq_len 1,024 -> 1,536) must not refuse cells that ran before it."""

    def strip(config: Any) -> Any:
        section = config.get("distill") if isinstance(config, dict) else None
        if isinstance(section, dict) and not section.get("enabled", False):
            return {**config, "distill": {"enabled": False}}
        return config

    out = dict(engine)
    if "config" in out:
        out["config"] = strip(out["config"])
    if isinstance(out.get("per_method"), dict):
        out["per_method"] = {m: strip(c) for m, c in out["per_method"].items()}
    return out


def _methods_added(recorded: dict[str, Any], now: dict[str, Any]) -> list[str]:
    """The methods the profile's list gained since it was recorded, where it only gained some
    at its end: a new method's cells measure something new and change no finished cell."""
    before = list((recorded.get("settings") or {}).get("methods") or [])
    after = list((now.get("settings") or {}).get("methods") or [])
    if before and len(after) > len(before) and after[: len(before)] == before:
        return after[len(before) :]
    return []


def check_settings(
    results: Path,
    compared: dict[str, Any],
    engine: dict[str, Any],
    args: argparse.Namespace,
    work: Path | None = None,
) -> None:
    """Record the settings on the first run; refuse a rerun whose settings differ. The engine
    settings may change as long as no engine cell (inner_ga, evotrainer) has finished."""
    path = results / "settings.json"
    now = time.strftime("%Y-%m-%d %H:%M:%S")
    invocation = {
        "at": now,
        "command": "python " + " ".join([sys.argv[0], *args.argv]),
        "base_url": args.base_url,
        "threads": args.threads,
        "load_avg": [round(x, 2) for x in os.getloadavg()],
    }
    if path.is_file():
        doc = json.loads(path.read_text())
        added = _methods_added(doc["compared"], compared)
        if added:
            C.log(f"methods added to the profile: {', '.join(added)} (their cells run here)")
            doc["compared"]["settings"]["methods"] = compared["settings"]["methods"]
            doc["methods"] = list(compared["settings"]["methods"])
            invocation["methods_added"] = added
        diffs = _diff(doc["compared"], compared, defaults=COMPARED_DEFAULTS)
        if diffs:
            raise SystemExit(
                f"refusing to mix results: {results} holds a run with other settings "
                f"({path}):\n  " + "\n  ".join(diffs[:20]) + "\nuse another --results-dir, or "
                "rerun with the recorded settings"
            )
        defaults = engine_defaults()
        per_defaults = {m: defaults for m in ENGINE_METHODS}
        ediffs = _diff(
            _inert_sections(doc.get("engine", {})),
            _inert_sections(engine),
            defaults={"config": defaults, "per_method": per_defaults},
        )
        if ediffs:
            changed = _changed_methods(ediffs)
            done = sorted(
                c
                for c, rec in load_cells(results).items()
                if rec.get("method") in changed and rec.get("status") == "ok"
            )
            if done:
                raise SystemExit(
                    f"refusing to mix results: the engine settings differ from those the "
                    f"finished engine cells {', '.join(done)} ran with ({path}):\n  "
                    + "\n  ".join(ediffs[:20])
                    + "\nuse another --results-dir, rerun with the recorded settings, or delete "
                    f"those cells' files under {results / 'cells'} to run them again"
                )
            C.log("engine settings changed; no engine cell has finished yet: recorded the new ones")
            invocation["engine_settings_changed"] = ediffs[:20]
            doc["engine"] = engine
        doc.setdefault("invocations", []).append(invocation)
    else:
        doc = {
            "benchmark": "quality (cells)",
            "created": now,
            "compared": compared,
            "engine": engine,
            "methods": list(profile_methods(compared["settings"])),
            "machine": C.machine(),
            "invocations": [invocation],
        }
    doc["work_dir"] = str(work) if work else None  # where the locks are (running cells)
    C.write_json(path, doc)


# -- running ------------------------------------------------------------------------------
def results_dirs(args: argparse.Namespace, prof: dict[str, Any] | None = None) -> tuple[Path, Path]:
    name = (prof or {}).get("results_name") or f"quality-{args.profile}"
    results = Path(args.results_dir) if args.results_dir else C.RESULTS / name
    work = Path(args.work_dir) if args.work_dir else C.WORK / f"quality-{results.name}"
    return results, work


def _engine_runner(bench: Q.Bench, method: str, outer: bool) -> Callable[[int], Any]:
    """A distill profile engine cell: ``method``'s engine run, with the outer loop on or not."""
    return lambda seed: bench.run_engine(seed, outer=outer, method=method)


def run(args: argparse.Namespace, prof: dict[str, Any]) -> dict[str, Any]:
    results, work = results_dirs(args, prof)
    args.work_dir = str(work)
    cells = select_cells(all_cells(prof["seeds"], profile_methods(prof)), args.methods, args.cells)
    bench = Q.Bench(args, prof)
    check_settings(
        results,
        compared_settings(args, prof, bench),
        engine_settings(args, prof, bench),
        args,
        work,
    )
    C.log(f"results directory {results} (work files in {work})")
    bench.engine_runs = work / "runs"
    if any(m in ENGINE_METHODS for _, m, _ in cells) and not args.test_only:
        try:  # an engine without the profile's options fails here, not after hours
            bench.engine_config(0, True)
            bench.engine_validation()
        except Q.EngineContractError as exc:
            raise SystemExit(str(exc)) from exc
        except Exception as exc:  # noqa: BLE001 - ConfigError, ValidationError
            raise SystemExit(f"engine config for this profile is invalid: {exc}") from exc
    progress = Progress(args.log_every_calls)
    wrappers: dict[int, ProgressLLM] = {}

    def wrap(llm: LLMClient) -> LLMClient:
        if id(llm) not in wrappers:
            wrappers[id(llm)] = ProgressLLM(llm, progress)
        return wrappers[id(llm)]  # type: ignore[return-value]

    if args.log_every_calls:
        bench.wrap_backend = wrap
    jobs = {
        "seeds": bench.run_seeds,
        "random_search": bench.run_random_search,
        "inner_ga": lambda s: bench.run_engine(s, outer=False),
        "evotrainer": lambda s: bench.run_engine(s, outer=True),
        "gepa": bench.run_gepa,
        "evoprompt_ga": bench.run_evoprompt,
        "fixed": lambda s: bench.run_engine(s, outer=False, method="fixed"),
        "labels_ga": lambda s: bench.run_engine(s, outer=False, method="labels_ga"),
        "uniform_mix": lambda s: bench.run_engine(s, outer=True, method="uniform_mix"),
        **{m: _engine_runner(bench, m, outer) for m, outer in Q.ENGINE_DISTILL.items()},
        "weights_only": lambda s: run_weights(bench, s, "weights_only"),
        "sft_refs": lambda s: run_weights(bench, s, "sft_refs"),
    }
    try:
        if not args.test_only:
            done = load_cells(results)
            for cell, why in lost_adapter_cells(done, results, work).items():
                C.log(f"cell {cell}: run again: {why}")
                done.pop(cell)
            todo = [c for c in cells if done.get(c[0], {}).get("status") != "ok"]
            C.log(
                f"{len(cells)} cells asked for, {len(cells) - len(todo)} already finished, "
                f"{len(todo)} to run: {', '.join(c[0] for c in todo) or '-'}"
            )
            for n, (cell, method, seed) in enumerate(todo, 1):
                with cell_lock(work, cell) as got:
                    if not got:
                        C.log(f"cell {cell}: running in another process, skipped")
                        continue
                    if load_cells(results).get(cell, {}).get("status") == "ok":
                        continue  # another process finished it meanwhile
                    C.log(f"cell {cell} ({n}/{len(todo)}): start")
                    progress.reset(cell)
                    rec = run_cell(jobs[method], cell, method, seed, args, bench)
                    keep_adapters(rec, work, results)
                    C.write_json(cell_path(results, cell), rec)
                    C.log(f"cell {cell}: {brief(rec)}")
        if not args.skip_test:
            progress.reset("test evaluation")
            with cell_lock(work, "test-evaluation") as got:
                if got:
                    test_evaluate(bench, results, work, args)
                else:
                    C.log("test evaluation: running in another process, skipped here")
    finally:
        bench.close()
    doc = aggregate(results)
    C.write_json(results / "summary.json", doc)
    print(table(doc))
    return doc


def run_cell(
    fn: Any, cell: str, method: str, seed: int | None, args: argparse.Namespace, bench: Q.Bench
) -> dict[str, Any]:
    started = time.strftime("%Y-%m-%d %H:%M:%S")
    t0, cpu0 = time.perf_counter(), time.process_time()
    rec: dict[str, Any] = {
        "cell": cell,
        "method": method,
        "seed": seed,
        "started": started,
        **git_state(),
        "model": args.model,
        "threads": args.threads,
    }
    try:
        got = fn(0 if seed is None else seed)
    except Exception as exc:  # noqa: BLE001 - a failing method is a result
        rec.update(
            status="failed",
            error=f"{type(exc).__name__}: {exc}",
            traceback=traceback.format_exc(limit=8),
        )
    else:
        rows = got if isinstance(got, dict) else {method: got}
        rec["status"] = "ok"
        rec["rows"] = {row: run_record(r) for row, r in rows.items()}
    rec["finished"] = time.strftime("%Y-%m-%d %H:%M:%S")
    rec["wall_s"] = round(time.perf_counter() - t0, 2)
    rec["process_cpu_s"] = round(time.process_time() - cpu0, 1)
    if method in ("gepa", "evoprompt_ga") and bench.endpoint_info:
        rec["endpoint"] = bench.endpoint_info
    return rec


def find_adapter(sha: str, *roots: Path) -> Path | None:
    """The GGUF file of the adapter with this hash under any of the roots, or None."""
    for root in roots:  # "**" also matches no directory: adapters/<sha>.gguf included
        found = sorted(root.glob(f"**/adapters/**/{sha}.gguf"))
        if found:
            return found[0]
    return None


def keep_adapters(rec: dict[str, Any], work: Path, results: Path) -> None:
    """Copy the adapters a finished cell's policies carry from the (git-ignored) work
    directory into ``results/adapters/``, so the test evaluation can run in a later session
    on a fresh checkout. A missing file is recorded in the cell, not raised."""
    for r in (rec.get("rows") or {}).values():
        sha = r["best_policy"].get("adapter")
        if not sha or (results / "adapters" / f"{sha}.gguf").is_file():
            continue
        src = find_adapter(sha, work)
        if src is None:
            rec.setdefault("missing_adapters", []).append(sha)
            continue
        (results / "adapters").mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, results / "adapters" / f"{sha}.gguf")


def lost_adapter_cells(
    cells: dict[str, dict[str, Any]], results: Path, work: Path
) -> dict[str, str]:
    """Finished cells whose returned policy carries an adapter that is neither on disk (the
    results directory's adapters/, git-ignored: ~10 MB each, or the work directory) nor
    scored on every test meeting already: such a cell cannot be tested and runs again."""
    spath = results / "test" / "scores.json"
    scores = json.loads(spath.read_text()) if spath.is_file() else {}
    settings = results / "settings.json"
    tests = (
        json.loads(settings.read_text())["compared"]["data"]["test"] if settings.is_file() else {}
    )
    meetings = [(name, mid) for name, t in tests.items() for mid in t["ids"]]
    out = {}
    for c, rec in cells.items():
        if rec.get("status") != "ok":
            continue
        for r in rec["rows"].values():
            pid, sha = r["best_policy"].get("id"), r["best_policy"].get("adapter")
            if not sha or find_adapter(sha, results, work) is not None:
                continue
            scored = bool(meetings) and all(
                pid in scores.get(name, {}).get(mid, {}) for name, mid in meetings
            )
            if not scored:
                out[c] = f"its adapter {sha[:12]} is gone and it has no complete test score"
    return out


def brief(rec: dict[str, Any]) -> str:
    if rec.get("status") != "ok":
        return f"FAILED {rec.get('error', '?')}"
    parts = []
    for row, r in rec["rows"].items():
        s = r["selection_s_val"]
        parts.append(
            f"{row}: selection s_val {'n/a' if s is None else f'{s:.3f}'}, {r['calls']} calls, "
            f"policy {r['best_policy']['id']}"
        )
    return "; ".join(parts) + f" ({rec['wall_s']:.0f} s)"


# -- test evaluation ----------------------------------------------------------------------
def test_policies(
    cells: dict[str, dict[str, Any]], seeds: Sequence[PolicyGenome] | None = None
) -> dict[str, PolicyGenome]:
    """The seeds A, B, C (the task's with the profile's genes; default the meeting task's) and
    every policy a finished cell returned (deduplicated by id)."""
    pols = {p.id: p for p in (seed_policies() if seeds is None else seeds)}
    for rec in cells.values():
        if rec.get("status") != "ok":
            continue
        for r in rec["rows"].values():
            p = PolicyGenome.from_json(r["best_policy"])
            pols.setdefault(p.id, p)
    return pols


def test_evaluate(bench: Q.Bench, results: Path, work: Path, args: argparse.Namespace) -> None:
    """Every policy of the finished cells on every test meeting, instance-major, through the
    persistent test-set cache; scores saved every ``--log-every`` meetings and at the end."""
    cells = load_cells(results)
    lost = lost_adapter_cells(cells, results, work)
    for cell, why in lost.items():
        C.log(f"test evaluation leaves out cell {cell}: {why}; run the cell again")
    pols = test_policies({c: rec for c, rec in cells.items() if c not in lost}, bench.seeds())
    C.write_json(results / "test" / "policies.json", {pid: p.to_json() for pid, p in pols.items()})
    path = results / "test" / "scores.json"
    scores: dict[str, dict[str, dict[str, Any]]] = (
        json.loads(path.read_text()) if path.is_file() else {}
    )
    meetings = [(name, inst) for name, s in bench.tests.items() for inst in s.instances]
    todo_pairs = sum(
        1
        for name, inst in meetings
        for pid in pols
        if pid not in scores.get(name, {}).get(inst.id, {})
    )
    C.log(
        f"test evaluation: {len(pols)} policies x {len(meetings)} meetings "
        f"({', '.join(f'{n} {len(s.instances)}' for n, s in bench.tests.items())}); "
        f"{todo_pairs} pairs to score"
    )
    if todo_pairs == 0:
        return
    cache_cfg = (
        CacheConfig(enabled=False)
        if args.no_test_cache
        else CacheConfig(enabled=True, path=str(work / "test-cache.sqlite"))
    )
    stack = build_stack(bench.backend, cache_cfg, Budget())
    ev = Evaluator(bench.task, stack.client, bench.agent_sampling(0), SerialRunner())
    ev.adapters = adapter_clients(bench, (results, work), cache_cfg, stack.budget)
    t0 = time.perf_counter()
    dirty = False
    for k, (name, inst) in enumerate(meetings, 1):
        have = scores.setdefault(name, {}).setdefault(inst.id, {})
        todo = [p for pid, p in pols.items() if pid not in have]
        if todo:  # all policies on this meeting back to back: one prefill of the transcript
            val = Validator(bench.task, ev, [inst], bench.weights, bench.tests[name].info["source"])
            res = val.validate(todo)
            for p in todo:
                row = res[p.id].per_instance[0]
                have[p.id] = {
                    # s_val of one meeting: the engine's combiner with the row as aggregates
                    # (the profile's weights; those of keys a row lacks renormalised away)
                    "s_val": combine_s_val(row, bench.weights),
                    **{key: row.get(key) for key in score_keys(bench)},
                    "reference_items": reference_items(inst)
                    if bench.domain != "dialogue"
                    else None,
                    "error": row.get("error"),
                    "truncated": row.get("truncated"),
                    "output": row.get("output"),
                    answers.DEDUP_KEY: None
                    if row.get("error") or "rougeL" not in bench.task.validation_metric().keys
                    else answers.rouge_l_dedup(bench.task, inst, str(row.get("output") or "")),
                }
            dirty = True
        if dirty and (k % max(1, args.log_every) == 0 or k == len(meetings)):
            C.write_json(path, scores)
            dirty = False
            dt = time.perf_counter() - t0
            b = stack.budget.snapshot()
            eta = dt / k * (len(meetings) - k)
            C.log(
                f"  test: {k}/{len(meetings)} meetings ({name} {inst.id}), "
                f"{b['backend_calls']} backend calls, {b['cache_hits']} cache hits, {dt:.0f} s, "
                f"about {eta / 60:.0f} min left"
            )
    C.write_json(path, scores)
    b = stack.budget.snapshot()
    C.log(
        f"test evaluation done: {b['backend_calls']} backend calls, {b['cache_hits']} cache hits, "
        f"{time.perf_counter() - t0:.0f} s"
    )


def adapter_clients(
    bench: Q.Bench, roots: tuple[Path, ...], cache_cfg: CacheConfig, budget: Budget
):
    """The clients of the LoRA adapters the distill profile's policies carry: each adapter
    file found by its hash under the roots (the results directory's adapters/, then the work
    directory's engine run dirs and weights methods' adapters/), loaded once, verified by hash
    before llama.cpp reads it."""
    clients: dict[str, LLMClient] = {}

    def client(sha: str) -> LLMClient:
        if sha not in clients:
            from evotrainer.distill.serve import embedded_with_adapter

            found = find_adapter(sha, *roots)
            if found is None:
                where = ", ".join(str(r) for r in roots)
                raise FileNotFoundError(f"LoRA adapter {sha} not found under {where}")
            backend = embedded_with_adapter(found, sha, bench.model_config(), 0)
            clients[sha] = build_stack(backend, cache_cfg, budget).client
        return clients[sha]

    return client


def score_keys(bench: Q.Bench) -> tuple[str, ...]:
    """The metric keys a test score keeps, per task."""
    if bench.domain == "dialogue":
        from benchmarks.dialogue import SCORE_KEYS as DIALOGUE_KEYS

        return DIALOGUE_KEYS
    return SCORE_KEYS


def reference_items(inst: Instance) -> int | None:
    """How many action items the meeting's reference lists, as the metric reads them (0 is
    where ``skip`` leaves action-item F1 undefined); None without annotation (ICSI)."""
    truth = reference_action_items(inst.payload)
    return None if truth is None else len(truth)


# -- aggregation ----------------------------------------------------------------------------
def items_where_reference_lists_none(
    scores: dict, meetings: list[tuple[str, str]], pids: list[str]
) -> dict[str, Any] | None:
    """On the meetings whose reference lists no action item (where ``skip`` leaves action-item
    F1 undefined): the items each run's policy wrote there, in total and the meetings with any.
    None when no such meeting is known (ICSI, or scores recorded before the field)."""
    empty = [
        (name, mid)
        for name, mid in meetings
        if any(r.get("reference_items") == 0 for r in scores.get(name, {}).get(mid, {}).values())
    ]
    if not empty:
        return None
    per_run = []
    for pid in pids:
        counts = [c for c in _vector(scores, empty, pid, "n_action_items") if c is not None]
        per_run.append(
            {"items": int(sum(counts)), "meetings_with_items": sum(c > 0 for c in counts)}
            if counts
            else None
        )
    return {"meetings": len(empty), "per_run": per_run}


def _runs_by_row(
    cells: dict[str, dict[str, Any]], n_seeds: int
) -> dict[str, list[tuple[int | None, dict[str, Any]]]]:
    """row -> [(seed, run record)] over the finished cells (the seeds cell stands for every
    seed; its rows are listed once, seed None)."""
    out: dict[str, list[tuple[int | None, dict[str, Any]]]] = {row: [] for row in Q.CELL_ROWS}
    for rec in cells.values():
        if rec.get("status") != "ok":
            continue
        for row, r in rec["rows"].items():
            out.setdefault(row, []).append((rec.get("seed"), r))
    for runs in out.values():
        runs.sort(key=lambda t: -1 if t[0] is None else t[0])
    return out


def _vector(scores: dict, meetings: list[tuple[str, str]], pid: str, key: str) -> list:
    return [scores.get(name, {}).get(mid, {}).get(pid, {}).get(key) for name, mid in meetings]


def _mean(xs: Sequence[float | None]) -> float | None:
    v = [x for x in xs if x is not None]
    return sum(v) / len(v) if v else None


def aggregate(results: Path) -> dict[str, Any]:
    """summary.json: per test set (and pooled) each method's mean test scores and its paired
    difference to seed_best with a 95% bootstrap interval over meetings; cell status."""
    settings = json.loads((results / "settings.json").read_text())
    comp = settings["compared"]
    n_seeds = int(comp["settings"]["seeds"])
    cells = load_cells(results)
    spath = results / "test" / "scores.json"
    scores = json.loads(spath.read_text()) if spath.is_file() else {}
    grid = all_cells(n_seeds, profile_methods(comp["settings"]))
    work = Path(settings["work_dir"]) if settings.get("work_dir") else None
    status = {
        c: (
            "running"
            if cells.get(c, {}).get("status") != "ok" and is_running(work, c)
            else "missing"
            if c not in cells
            else cells[c].get("status", "?")
            + ("" if cells[c].get("status") == "ok" else f": {cells[c].get('error', '')[:100]}")
        )
        for c, _, _ in grid
    }
    runs = _runs_by_row(cells, n_seeds)
    sets: dict[str, list[tuple[str, str]]] = {
        name: [(name, mid) for mid in t["ids"]] for name, t in comp["data"]["test"].items()
    }
    if len(sets) > 1:
        sets[ALL] = [m for v in list(sets.values()) for m in v]
    base = runs.get(BASELINE) or []
    base_pid = base[0][1]["best_policy"]["id"] if base else None
    doc: dict[str, Any] = {
        "benchmark": "quality (cells)",
        "results_dir": str(results),
        "aggregated": time.strftime("%Y-%m-%d %H:%M:%S"),
        "profile": comp["profile"],
        "model": comp["model"],
        "settings": comp["settings"],
        "engine": settings.get("engine"),
        "data": comp["data"],
        "cells": status,
        "complete": all(v == "ok" for v in status.values()),
        "commits": sorted({str(c.get("commit")) for c in cells.values()}),
        "bootstrap": {
            "resamples": stats.N_RESAMPLES,
            "seed": stats.SEED,
            "level": stats.LEVEL,
            "what": "mean over meetings of (method's score averaged over its seeds' returned "
            "policies - seed_best's score), meetings resampled with replacement",
        },
        "methods": {},
        "confirmation": {},
    }
    methods = profile_methods(comp["settings"])
    optional = (*Q.SCARCE_METHODS, *Q.DIALOGUE_METHODS)
    rows = [r for r in Q.CELL_ROWS if r not in optional or r in methods]
    for row in rows:
        rr = runs.get(row) or []
        rec: dict[str, Any] = {
            "description": Q.DESCRIPTIONS.get(row, ""),
            "runs": [
                {
                    "seed": seed,
                    "policy": r["best_policy"]["id"],
                    "name": r["best_policy"].get("name"),
                    "components": sorted(r["best_policy"].get("components", {})),
                    "adapter": r["best_policy"].get("adapter"),
                    "selection_s_val": r["selection_s_val"],
                    "calls": r["calls"],
                    "tokens": r["tokens"],
                    "wall_s": r["wall_s"],
                }
                for seed, r in rr
            ],
            "selection_s_val": C.mean_std([r["selection_s_val"] for _, r in rr]),
            "calls": C.mean_std([r["calls"] for _, r in rr]),
            "tokens": C.mean_std([r["tokens"] for _, r in rr]),
            "wall_s": C.mean_std([r["wall_s"] for _, r in rr]),
            "test": {},
        }
        pids = [r["best_policy"]["id"] for _, r in rr]
        for name, meetings in sets.items():
            if not pids:
                continue
            t: dict[str, Any] = {"n_meetings": len(meetings)}
            (first, _), (second, _) = columns(comp["settings"])
            for key in ("s_val", first, second):
                vecs = [_vector(scores, meetings, pid, key) for pid in pids]
                per_run = [_mean(v) for v in vecs]
                seed_avg = [_mean([v[m] for v in vecs]) for m in range(len(meetings))]
                t[key] = {
                    "mean": _mean(seed_avg),
                    "per_run": per_run,
                    "over_runs": C.mean_std(per_run),
                    "n_scored": sum(x is not None for x in seed_avg),
                }
                if key == second or base_pid is None:
                    continue
                bvec = _vector(scores, meetings, base_pid, key)
                t[f"diff_{key}"] = stats.paired_difference(vecs, bvec)
                t[f"diff_{key}_per_run"] = [stats.paired_difference([v], bvec) for v in vecs]
                if key == "s_val":
                    t["diff_s_val_seeds_meetings"] = stats.seeds_and_meetings_difference(
                        vecs, [bvec]
                    )
            t["items_where_reference_lists_none"] = items_where_reference_lists_none(
                scores, meetings, pids
            )
            t["answers"] = answers.columns(scores, meetings, pids)  # minutes or loops?
            rec["test"][name] = t
        doc["methods"][row] = rec
    doc["comparisons"] = compare_methods(runs, scores, sets)
    doc["targets"] = targets(doc, n_seeds)
    doc["training_cost"] = training_cost(cells)
    for c, rec in sorted(cells.items()):
        if rec.get("status") != "ok":
            continue
        for row, r in rec["rows"].items():
            conf = (r.get("details") or {}).get("confirmation")
            if conf is not None:
                doc["confirmation"][f"{c}" if row == rec["method"] else f"{c}/{row}"] = conf
    return doc


def training_cost(cells: dict[str, dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """Per method, per finished cell: the cell's process CPU seconds (inference, operators and
    training together) and what its LoRA training cost (CPU and wall seconds, adapters trained
    and kept). A weights method trains once (details.training) and keeps its adapter when it
    returns it; an engine cell trains once per distillation round (summary.distillations; a
    round skipped for want of calls or pairs trains nothing and says why). Methods that
    train nothing are left out."""
    out: dict[str, list[dict[str, Any]]] = {}
    for c, rec in sorted(cells.items()):
        if rec.get("status") != "ok":
            continue
        for row, r in rec["rows"].items():
            d = r.get("details") or {}
            returned = bool(r["best_policy"].get("adapter"))
            if d.get("training"):  # weights_only, sft_refs
                t = d["training"]
                rounds = [{"adapter": t.get("sha256"), "kept": returned, "training": t}]
                cpu_key = "process_cpu_s"
            elif rec.get("method") in Q.DISTILL_METHODS and "summary" in d:
                rounds = d["summary"].get("distillations") or []
                cpu_key = "cpu_seconds"
            else:
                continue
            trained = [x for x in rounds if x.get("adapter")]
            runs = [x.get("training") or {} for x in trained]
            cpus = [t.get(cpu_key) for t in runs]
            out.setdefault(row, []).append(
                {
                    "cell": c,
                    "seed": rec.get("seed"),
                    "cell_cpu_s": rec.get("process_cpu_s"),
                    "cell_wall_s": rec.get("wall_s"),
                    "adapters_trained": len(trained),
                    "adapters_kept": sum(1 for x in trained if x.get("kept")),
                    "returned_adapter": returned,
                    "train_cpu_s": None if not cpus or None in cpus else round(sum(cpus), 1),
                    "train_wall_s": round(
                        sum(t.get("seconds", 0) + t.get("load_seconds", 0) for t in runs), 1
                    )
                    if runs
                    else None,
                    "not_trained": [x.get("why") for x in rounds if not x.get("adapter")],
                }
            )
    return out


# Method against method on s_val: the issue's targets compare EvoTrainer with GEPA and with the
# GA alone (the ablation of co-evolution); the others put those in context.
PAIRS = (
    ("evotrainer", "inner_ga"),
    ("evotrainer", "gepa"),
    ("evotrainer", "random_search"),
    ("evotrainer", "evoprompt_ga"),
    ("inner_ga", "gepa"),
    ("inner_ga", "random_search"),
    ("evotrainer", "fixed"),  # the scarce profile (issue 32)
    ("evotrainer", "labels_ga"),
    ("fixed", "labels_ga"),
    ("fixed", "gepa"),
    ("evotrainer", "uniform_mix"),  # the dialogue profile (issue 48): the persona mix ablated
    ("alternation", "evotrainer"),  # the distill profile (issue 31)
    ("alternation", "sft_refs"),
    ("alternation", "alternation_frozen"),
    ("alternation", "weights_only"),
    ("alternation_per_scale", "evotrainer"),  # tried after the protocol's five (2026-12-05)
    ("alternation_per_scale", "alternation"),
    ("alternation_per_scale", "sft_refs"),
    ("weights_only", "evotrainer"),
    ("sft_refs", "evotrainer"),
)


def compare_methods(
    runs: dict[str, list[tuple[int | None, dict[str, Any]]]],
    scores: dict,
    sets: dict[str, list[tuple[str, str]]],
) -> list[dict[str, Any]]:
    """Each pair of PAIRS with runs on both sides, per test set: the s_val difference with the
    meeting-only interval (each side averaged over its seeds per meeting) and the interval that
    resamples seeds too; the seeds each side has so far."""
    out = []
    for a, b in PAIRS:
        ra, rb = runs.get(a) or [], runs.get(b) or []
        if not ra or not rb:
            continue
        rec: dict[str, Any] = {
            "a": a,
            "b": b,
            "seeds": [[s for s, _ in ra], [s for s, _ in rb]],
            "test": {},
        }
        for name, meetings in sets.items():
            va = [_vector(scores, meetings, r["best_policy"]["id"], "s_val") for _, r in ra]
            vb = [_vector(scores, meetings, r["best_policy"]["id"], "s_val") for _, r in rb]
            if not any(x is not None for v in va + vb for x in v):
                continue
            b_avg = [_mean([v[m] for v in vb]) for m in range(len(meetings))]
            rec["test"][name] = {
                "meetings": stats.paired_difference(va, b_avg),
                "seeds_and_meetings": stats.seeds_and_meetings_difference(va, vb),
            }
        if rec["test"]:
            out.append(rec)
    return out


def targets(doc: dict[str, Any], n_seeds: int) -> list[dict[str, Any]]:
    """Issue 11's three targets on the pooled test set: EvoTrainer's returned policy beats
    seed_best (interval above 0), its mean is at least GEPA's, co-evolution is at least the GA
    alone. ``met`` is None until the methods involved have a test score; ``final`` says whether
    every seed of them has run (before that a target is a reading, not a result)."""
    names = [n for r in doc["methods"].values() for n in r["test"]]
    pooled = ALL if ALL in names else next(iter(names), "")  # one test set: that one
    out = []

    def test_of(row: str) -> dict[str, Any] | None:
        return doc["methods"].get(row, {}).get("test", {}).get(pooled)

    def n_runs(row: str) -> int:
        return len(doc["methods"].get(row, {}).get("runs", []))

    evo = test_of("evotrainer")
    ci = (evo or {}).get("diff_s_val") or {}
    out.append(
        {
            "target": "EvoTrainer's returned policy beats seed_best, 95% interval above 0",
            "met": None if ci.get("lo") is None else stats.significant(ci) == "+",
            "value": stats.fmt_ci(ci) if ci else "n/a",
            "also": "seeds and meetings resampled: "
            + stats.fmt_ci((evo or {}).get("diff_s_val_seeds_meetings")),
            "final": n_runs("evotrainer") == n_seeds,
        }
    )
    if n_runs("alternation"):  # the distill profile: issue 31's targets
        out.append(
            _pair_target(doc, pooled, "alternation", "evotrainer", n_seeds, margin=0.03, ci=True)
        )
        for other in ("sft_refs", "alternation_frozen"):
            out.append(_pair_target(doc, pooled, "alternation", other, n_seeds))
        return out
    if n_runs("fixed"):  # the scarce and dialogue profiles: issues 32 and 48's targets
        out.append(_beats(doc, pooled, "fixed", n_seeds))
        if n_runs("uniform_mix"):  # the dialogue profile's ablation of the persona mix
            out.append(_pair_target(doc, pooled, "evotrainer", "uniform_mix", n_seeds))
        others = (
            ("labels_ga", "co-evolution is at least 'just use your labels'"),
            ("gepa", "co-evolution is at least GEPA with the same labels"),
        )
    else:
        others = (
            ("gepa", "its mean is at least GEPA's"),
            ("inner_ga", "co-evolution is at least the GA alone"),
        )
    for other, what in others:
        mine = ((evo or {}).get("diff_s_val") or {}).get("mean")
        theirs = ((test_of(other) or {}).get("diff_s_val") or {}).get("mean")
        pair = next(
            (c for c in doc.get("comparisons", []) if c["a"] == "evotrainer" and c["b"] == other),
            None,
        )
        pt = pair["test"].get(pooled, {}) if pair else {}
        out.append(
            {
                "target": what,
                "met": None if mine is None or theirs is None else mine >= theirs,
                "value": "n/a"
                if mine is None or theirs is None
                else f"{mine:+.3f} vs {theirs:+.3f} (Δ to seed_best)",
                "also": f"paired EvoTrainer - {other}: {stats.fmt_ci(pt.get('meetings'))}; "
                f"seeds and meetings resampled: {stats.fmt_ci(pt.get('seeds_and_meetings'))}",
                "final": n_runs("evotrainer") == n_seeds and n_runs(other) == n_seeds,
            }
        )
    return out


# -- table --------------------------------------------------------------------------------
def _beats(doc: dict[str, Any], pooled: str, other: str, n_seeds: int) -> dict[str, Any]:
    """Co-evolution beats ``other``: the paired difference over the pooled test meetings has
    its 95% interval above 0 (reported with the seeds resampled too)."""
    return {
        **_pair_target(doc, pooled, "evotrainer", other, n_seeds, ci=True),
        "target": f"co-evolution beats {other}, paired 95% interval above 0",
    }


def _pair_target(
    doc: dict[str, Any],
    pooled: str,
    a: str,
    b: str,
    n_seeds: int,
    margin: float = 0.0,
    ci: bool = False,
) -> dict[str, Any]:
    """``a`` beats ``b`` on the pooled test meetings: the paired mean difference above
    ``margin`` (at least ``margin`` when one is given), and with ``ci`` the 95% interval over
    meetings above 0 too; the interval with the seeds resampled is reported beside it."""
    pair = next((c for c in doc.get("comparisons", []) if c["a"] == a and c["b"] == b), None)
    pt = pair["test"].get(pooled, {}) if pair else {}
    m = pt.get("meetings") or {}
    mean = m.get("mean")
    if mean is None or (ci and m.get("lo") is None):
        met = None
    else:
        met = (mean >= margin if margin else mean > 0) and (not ci or stats.significant(m) == "+")
    what = f"{a} beats {b}" + (f" by at least {margin:+.2f} s_val" if margin else "")
    runs = {x: len(doc["methods"].get(x, {}).get("runs", [])) for x in (a, b)}
    return {
        "target": what + (", paired 95% interval above 0" if ci else " (paired mean above 0)"),
        "met": met,
        "value": stats.fmt_ci(m) if m else "n/a",
        "also": "seeds and meetings resampled: " + stats.fmt_ci(pt.get("seeds_and_meetings")),
        "final": all(n == n_seeds for n in runs.values()),
    }


def _f(x: float | None, digits: int = 3) -> str:
    return "n/a" if x is None else f"{x:.{digits}f}"


def _returned(rec: dict[str, Any]) -> str:
    """What each run returned: a seed's name, or 'new' (with the components beyond system)."""
    out = []
    for run in rec["runs"]:
        extra = [c for c in run["components"] if c != "system"]
        label = run["name"] if run.get("name") in ("A", "B", "C") else "new"
        if run.get("adapter"):
            extra.append(f"adapter {run['adapter'][:8]}")
        out.append(label + (f" (+{'+'.join(extra)})" if extra else ""))
    return ", ".join(out)


def table(doc: dict[str, Any]) -> str:
    """Markdown: cell status; selection and cost; per test set the test means and the paired
    differences to seed_best; per seed differences; the engine's confirmation blocks."""
    s = doc["settings"]
    n_seeds = int(s["seeds"])
    seed_cols = " | ".join(f"seed {i}" for i in range(n_seeds))
    out = [
        f"Profile {doc['profile']}, model {doc['model']}, budget {s['budget']} backend calls per "
        f"method and seed, {n_seeds} seeds: "
        + ("all cells finished." if doc["complete"] else "PARTIAL, some cells not finished."),
        "",
        f"| cell | {seed_cols} |",
        "|---|" + "---|" * n_seeds,
    ]
    for m in profile_methods(s):
        if m == "seeds":
            st = doc["cells"].get("seeds", "missing")
            out.append(
                f"| seeds | {st} (one deterministic cell for all seeds) |" + " |" * (n_seeds - 1)
            )
            continue
        cols = [doc["cells"].get(cell_id(m, i), "missing") for i in range(n_seeds)]
        out.append(f"| {m} | " + " | ".join(c[:70] for c in cols) + " |")
    if len(doc.get("commits", [])) > 1:
        out += ["", f"Note: the cells ran at {len(doc['commits'])} different commits."]
    rows = [(row, rec) for row, rec in doc["methods"].items() if rec["runs"]]
    out += [
        "",
        "Selection (mean ± std over seeds) and cost per run:",
        "",
        "| method | runs | returned | selection s_val | calls | tokens | wall s |",
        "|---|---|---|---|---|---|---|",
    ]
    for row, rec in rows:
        n_runs = 1 if row in SEED_ROWS else n_seeds
        out.append(
            f"| {row} | {len(rec['runs'])}/{n_runs} | {_returned(rec)} "
            f"| {C.fmt(rec['selection_s_val'])} | {_f(rec['calls']['mean'], 0)} "
            f"| {_f(rec['tokens']['mean'], 0)} | {_f(rec['wall_s']['mean'], 0)} |"
        )
    test_sets = list(next((r["test"] for r in doc["methods"].values() if r["test"]), {}))
    scored = any(t["s_val"]["n_scored"] for _, rec in rows for t in rec["test"].values())
    if not scored:
        out += ["", "No test scores yet (run without --skip-test, or with --test-only)."]
        test_sets = []
    (k1, l1), (k2, l2) = columns(s)
    for name in test_sets:
        n_meet = next(rec["test"][name]["n_meetings"] for _, rec in rows if name in rec["test"])
        empty = next(
            (
                rec["test"][name]["items_where_reference_lists_none"]
                for _, rec in rows
                if rec["test"][name].get("items_where_reference_lists_none")
            ),
            None,
        )
        out += [
            "",
            f"Test set {name} ({n_meet} meetings). Δ: paired difference to seed_best, mean over "
            "meetings (a method's score first averaged over its seeds) with a 95% bootstrap "
            "interval; * = the interval excludes 0."
            + (
                f" Items: action items written on the {empty['meetings']} meetings whose "
                "reference lists none (not in s_val there), per seed: total (meetings with any)."
                if empty
                else ""
            ),
            "",
            f"| method | test s_val | test {l1} | test {l2} | Δ s_val [95% CI] "
            f"| Δ s_val, seeds resampled too | Δ {l1} [95% CI] |"
            + (" items written where the reference lists none |" if empty else ""),
            "|---|---|---|---|---|---|---|" + ("---|" if empty else ""),
        ]
        for row, rec in rows:
            t = rec["test"][name]
            k = t["s_val"]["n_scored"]
            partial = "" if k == t["n_meetings"] else f" ({k}/{t['n_meetings']} meetings)"
            out.append(
                f"| {row} | {_f(t['s_val']['mean'])}{partial} | {_f(t[k1]['mean'])} "
                f"| {_f(t[k2]['mean'])} | {stats.fmt_ci(t.get('diff_s_val'))} "
                f"| {stats.fmt_ci(t.get('diff_s_val_seeds_meetings'))} "
                f"| {stats.fmt_ci(t.get('diff_' + k1))} |"
                + (f" {_items(t.get('items_where_reference_lists_none'))} |" if empty else "")
            )
    out += _answers_table(rows, test_sets)
    per_seed = [
        (row, rec)
        for row, rec in rows
        if row not in SEED_ROWS and any("diff_s_val_per_run" in t for t in rec["test"].values())
    ]
    if test_sets and per_seed:
        out += [
            "",
            "Per seed: Δ s_val to seed_best [95% CI] of each seed's returned policy",
            "",
            f"| method | test set | {seed_cols} |",
            "|---|---|" + "---|" * n_seeds,
        ]
        for row, rec in per_seed:
            for name in test_sets:
                cis = rec["test"][name].get("diff_s_val_per_run", [])
                by_seed = {run["seed"]: ci for run, ci in zip(rec["runs"], cis, strict=False)}
                out.append(
                    f"| {row} | {name} | "
                    + " | ".join(
                        stats.fmt_ci(by_seed[i]) if i in by_seed else "-" for i in range(n_seeds)
                    )
                    + " |"
                )
    if test_sets and doc.get("comparisons"):
        out += [
            "",
            "Method against method, Δ s_val (a - b; each side averaged over its seeds per "
            "meeting): the interval over meetings, and the one that resamples each side's seeds "
            "too (which policy a run returns is random as well; with 2-3 seeds it is coarse)",
            "",
            "| a - b | seeds (a; b) | test set | Δ s_val [95% CI, meetings] "
            "| [95% CI, seeds and meetings] |",
            "|---|---|---|---|---|",
        ]
        for c in doc["comparisons"]:
            seeds = "; ".join(",".join(str(x) for x in side) for side in c["seeds"])
            for name, t in c["test"].items():
                out.append(
                    f"| {c['a']} - {c['b']} | {seeds} | {name} "
                    f"| {stats.fmt_ci(t['meetings'])} | {stats.fmt_ci(t['seeds_and_meetings'])} |"
                )
    if test_sets and doc.get("targets"):
        out += [
            "",
            f"{_issue(doc)}'s targets (pooled test "
            "set; 'reading' until every seed of the methods involved has run):",
            "",
            "| target | met | value | also |",
            "|---|---|---|---|",
        ]
        for t in doc["targets"]:
            met = "n/a" if t["met"] is None else "yes" if t["met"] else "no"
            state = "" if t["final"] else " (reading)"
            out.append(f"| {t['target']} | {met}{state} | {t['value']} | {t['also']} |")
    out += _training_table(doc.get("training_cost") or {})
    if doc.get("confirmation"):
        out += [
            "",
            "The engine's own confirmation check (held-out "
            + ("val items" if s.get("task") == "dialogue" else "AMI train meetings")
            + "; summary.json of each engine run):",
            "",
            "| cell | meetings | returned | winner s_val | best seed s_val | Δ [95% CI] | why |",
            "|---|---|---|---|---|---|---|",
        ]
        for c, conf in doc["confirmation"].items():
            out.append(_confirmation_row(c, conf))
    return "\n".join(out)


def _answers_table(rows: list[tuple[str, dict[str, Any]]], test_sets: list[str]) -> list[str]:
    """Per method, on the pooled test set (or the only one): what its answers are (issue 46):
    distinct word 4-grams, loop share, words, ROUGE-L and ROUGE-L with repeats dropped."""
    name = ALL if ALL in test_sets else (test_sets[0] if test_sets else None)
    have = [(row, rec["test"][name]) for row, rec in rows if name in rec["test"]] if name else []
    have = [(row, t) for row, t in have if t.get("answers") and t["answers"]["n"]]
    if not have:
        return []
    out = [
        "",
        f"Answers on test set {name} (every seed's returned policy on every meeting): mean "
        "share of distinct word 4-grams (human minutes 0.99), loop share (answers under 0.5), "
        "mean words, ROUGE-L, and ROUGE-L with repeated sentences dropped",
        "",
        "| method | distinct-4 | loop share | words | ROUGE-L | ROUGE-L dedup |",
        "|---|---|---|---|---|---|",
    ]
    for row, t in have:
        a = t["answers"]
        out.append(
            f"| {row} | {a['distinct4']:.2f} | {a['loop_share']:.0%} | {a['words']:.0f} "
            f"| {_f((t.get('rougeL') or {}).get('mean'))} | {_f(a.get(answers.DEDUP_KEY))} |"
        )
    return out


def _issue(doc: dict[str, Any]) -> str:
    methods = doc["methods"]
    if (doc.get("settings") or {}).get("task") == "dialogue":
        return "Issue 48"
    if (methods.get("alternation") or {}).get("runs"):
        return "Issue 31"
    return "Issue 32" if "fixed" in methods else "Issue 11"


def _training_table(cost: dict[str, list[dict[str, Any]]]) -> list[str]:
    """Markdown rows: per method and cell, the CPU seconds of the cell and of its training."""
    if not cost:
        return []
    out = [
        "",
        "Training cost per cell (CPU seconds of the whole cell, of its LoRA training alone; "
        "the 300-call budget is the same for every method):",
        "",
        "| method | cell | cell CPU s | cell wall s | adapters trained (kept) | returned an "
        "adapter | training CPU s | training wall s | not trained |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for row, items in cost.items():
        for x in items:
            why = "; ".join(w or "" for w in x["not_trained"])[:120] or "-"
            out.append(
                f"| {row} | {x['cell']} | {_f(x['cell_cpu_s'], 0)} | {_f(x['cell_wall_s'], 0)} "
                f"| {x['adapters_trained']} ({x['adapters_kept']}) "
                f"| {'yes' if x['returned_adapter'] else 'no'} | {_f(x['train_cpu_s'], 0)} "
                f"| {_f(x['train_wall_s'], 0)} | {why} |"
            )
    return out


def _items(rec: dict[str, Any] | None) -> str:
    if not rec:
        return "n/a"
    return ", ".join(
        "n/a" if r is None else f"{r['items']} ({r['meetings_with_items']})" for r in rec["per_run"]
    )


def _confirmation_row(cell: str, conf: Any) -> str:
    if not isinstance(conf, dict):
        return f"| {cell} | {json.dumps(conf)[:200]} | | | | | |"
    d = conf.get("difference") or {}
    ci = d.get("ci95") or [None, None]
    diff = (
        f"{d['mean']:+.3f} [{ci[0]:+.3f}, {ci[1]:+.3f}]"
        if d.get("mean") is not None and None not in ci
        else "n/a"
    )
    ret = conf.get("returned")
    returned = (
        "the best seed"
        if ret is not None and ret == conf.get("best_seed")
        else "the winner"
        if ret is not None and ret == conf.get("winner")
        else str(ret)
    )
    return (
        f"| {cell} | {conf.get('n', '?')} | {returned} "
        f"| {_f(conf.get('winner_s_val'))} | {_f(conf.get('best_seed_s_val'))} | {diff} "
        f"| {str(conf.get('reason', ''))[:80]} |"
    )


def table_from_dir(path: Path) -> str:
    if not (path / "settings.json").is_file():
        raise SystemExit(f"{path} is not a results directory (no settings.json)")
    return table(aggregate(path))


def estimate_calls(prof: dict[str, Any], n_test_total: int) -> dict[str, int]:
    """Backend calls of a whole run: the seeds cell, the budgeted cells, the test evaluation
    (at most: every cell returning a different policy)."""
    n_budgeted = len([m for m in profile_methods(prof) if m != "seeds"])
    return {
        "seeds": 3 * prof["n_selection"],
        "budgeted": n_budgeted * prof["seeds"] * prof["budget"],
        "test_at_most": n_test_total * (3 + n_budgeted * prof["seeds"]),
    }
