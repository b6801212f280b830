"""A results directory's settings record (``settings.json``): what every cell measures
(``compared``: refused when a rerun differs) and what only the engine cells measure
(``engine``: may change until an engine cell of the method has finished), with every
invocation of the directory."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from benchmarks import common as C
from benchmarks import engine
from benchmarks.bench import Bench
from benchmarks.cells.grid import load_cells
from benchmarks.methods import registry

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
    "distill_every",
    "distill_rounds",
    "distill_trial_pairs",
)
# profile keys that only one method's cells read: they may change until a cell of it has finished
# (sft_refs_cpu's epochs are set from the full method's measured training CPU, issue 47)
METHOD_KEYS = {"sft_cpu_epochs": "sft_refs_cpu"}
# profile keys that say where results go, not what a cell measures
LOCAL_KEYS = ("results_name",)
# what a compared setting recorded before it existed stood at (the behaviour then)
COMPARED_DEFAULTS = {"settings": {"empty_reference_items": "abstain"}}
ABSENT = "<absent>"


def git_state() -> dict[str, Any]:
    """The commit the code ran at (and whether src/ or benchmarks/, its results aside, had
    uncommitted changes)."""
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=C.REPO, capture_output=True, text=True, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            # the results being written (untracked until committed) are not the code
            ["git", "status", "--porcelain", "--", "src", "benchmarks", ":!benchmarks/results"],
            cwd=C.REPO,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return {"commit": None, "dirty": None}
    return {"commit": commit, "dirty": bool(dirty)}


def _plain(obj: Any) -> Any:
    return C.clean_json(json.loads(json.dumps(obj)))


def _ids(split: C.Split) -> dict[str, Any]:
    return {"source": split.info["source"], "ids": split.info["ids"]}


def compared_settings(args: argparse.Namespace, prof: dict[str, Any], bench: Bench) -> dict:
    """Everything that changes what every cell measures. A rerun must match it exactly."""
    data: dict[str, Any] = {
        "selection": _ids(bench.selection),
        "gepa_train": _ids(bench.gepa_train),
        "test": {name: _ids(s) for name, s in bench.tests.items()},
    }
    if bench.confirmation is not None:
        data["confirmation"] = _ids(bench.confirmation)
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


def engine_settings(args: argparse.Namespace, prof: dict[str, Any], bench: Bench) -> dict:
    """What only the engine cells measure: the profile's engine keys and the engine's resolved
    config (its defaults included), without seed, cache path and threads. The scarce, dialogue
    and distill profiles' engine methods run different harnesses: their configs are recorded
    one per method (``per_method``), and a change to one method's config is refused only once
    a cell of that method has finished (the protocol lets co-evolution's outer loop change
    after the baselines ran)."""
    keys = {k: prof[k] for k in ENGINE_KEYS if k in prof}
    keys["engine_set"] = [*prof.get("engine_set", []), *args.engine_set]
    if bench.scarce is not None or prof.get("distill"):
        methods = [m for m in registry.profile_methods(prof) if m in registry.ENGINE]
        per = {m: _engine_config(bench, m) for m in methods}
        return _plain({"profile": keys, "per_method": per})
    return _plain({"profile": keys, "config": _engine_config(bench, None)})


def _engine_config(bench: Bench, method: str | None) -> dict[str, Any]:
    try:
        outer = method is None or registry.get(method).outer
        config = engine.config(bench, 0, outer, method=method).model_dump(mode="json")
        config.pop("seed", None)
        config.pop("cache", None)
        config.get("model", {}).pop("n_threads", None)
    except Exception as exc:  # noqa: BLE001 - reported (and refused) when an engine cell runs
        config = {"unavailable": f"{type(exc).__name__}: {exc}"}
    return config


# options added with a default that changes behaviour: the value that keeps the old one (what
# a cell recorded before the option existed ran with)
OLD_BEHAVIOUR = {"distill": {"reference_targets": "text"}}


def engine_defaults() -> dict[str, Any]:
    """The engine config with every option at the value that keeps the behaviour of a cell
    that ran before the option existed: its default, or ``OLD_BEHAVIOUR``'s value."""
    from evotrainer.config import config_from_dict

    out = _plain(config_from_dict({}).model_dump(mode="json"))
    for section, values in OLD_BEHAVIOUR.items():
        out[section] = {**out[section], **values}
    return out


def diff(a: Any, b: Any, path: str = "", defaults: Any = None) -> list[str]:
    """Differences between recorded settings ``a`` and current ones ``b``. With ``defaults``
    (the engine config's defaults, same shape): a field the recording lacks that now holds its
    default is no difference (an option added since, at its default, keeps the old behaviour)."""
    if isinstance(a, dict) and isinstance(b, dict):
        out = []
        for k in sorted(set(a) | set(b)):
            d = defaults.get(k, ABSENT) if isinstance(defaults, dict) else ABSENT
            if k not in a and d != ABSENT and b.get(k) == d:
                continue
            out += diff(a.get(k, ABSENT), b.get(k, ABSENT), f"{path}.{k}" if path else k, d)
        return out
    if a != b:
        return [f"{path}: {json.dumps(a)[:120]} recorded, {json.dumps(b)[:120]} now"]
    return []


def inert_sections(engine_record: dict[str, Any]) -> dict[str, Any]:
    """The engine settings without the fields of a switched-off distillation section: they
    change nothing a cell measures (a scarce-labels cell never distils), so a new default there
    (distill.max_seq_len 1,024 -> 1,536) must not refuse cells that ran before it."""

    def strip(config: Any) -> Any:
        section = config.get("distill") if isinstance(config, dict) else None
        if isinstance(section, dict) and not section.get("enabled", False):
            return {**config, "distill": {"enabled": False}}
        return config

    out = dict(engine_record)
    if "config" in out:
        out["config"] = strip(out["config"])
    if isinstance(out.get("per_method"), dict):
        out["per_method"] = {m: strip(c) for m, c in out["per_method"].items()}
    return out


def methods_added(recorded: dict[str, Any], now: dict[str, Any]) -> list[str]:
    """The methods the profile's list gained since it was recorded, where it only gained some
    at its end: a new method's cells measure something new and change no finished cell."""
    before = list((recorded.get("settings") or {}).get("methods") or [])
    after = list((now.get("settings") or {}).get("methods") or [])
    if before and len(after) > len(before) and after[: len(before)] == before:
        return after[len(before) :]
    return []


def _method_keys(
    doc: dict[str, Any], results: Path, compared: dict[str, Any], invocation: dict[str, Any]
) -> None:
    """Take on a changed ``METHOD_KEYS`` setting (in ``doc``, recorded in ``invocation``)
    while no cell of the one method that reads it has finished; else leave it to be refused."""
    before = doc["compared"].get("settings") or {}
    after = compared.get("settings") or {}
    cells = load_cells(results)
    for key, method in METHOD_KEYS.items():
        if before.get(key) == after.get(key):
            continue
        done = [
            c for c, r in cells.items() if r.get("method") == method and r.get("status") == "ok"
        ]
        if done:
            continue
        C.log(
            f"{key}: {before.get(key)} recorded, {after.get(key)} now; no {method} cell has "
            "finished: recorded the new value"
        )
        invocation.setdefault("settings_changed", {})[key] = [before.get(key), after.get(key)]
        if key in after:
            before[key] = after[key]
        else:
            before.pop(key, None)


def changed_methods(diffs: list[str]) -> set[str]:
    """The engine methods a list of engine-setting differences touches: one method for a
    difference under ``per_method.<method>``, every engine method otherwise."""
    out: set[str] = set()
    for d in diffs:
        head, _, rest = d.partition(".")
        method = rest.partition(".")[0].partition(":")[0]  # "per_method.m: ..." (all of m)
        if head == "per_method" and method in registry.ENGINE:
            out.add(method)
        else:
            return set(registry.ENGINE)
    return out


def check_settings(
    results: Path,
    compared: dict[str, Any],
    engine_record: dict[str, Any],
    args: argparse.Namespace,
    work: Path | None = None,
) -> None:
    """Record the settings on the first run; refuse a rerun whose settings differ. The engine
    settings may change as long as no engine cell of the methods they touch has finished."""
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
        _recheck(doc, results, compared, engine_record, invocation)
        doc.setdefault("invocations", []).append(invocation)
    else:
        doc = {
            "benchmark": "quality (cells)",
            "created": now,
            "compared": compared,
            "engine": engine_record,
            "methods": list(registry.profile_methods(compared["settings"])),
            "machine": C.machine(),
            "invocations": [invocation],
        }
    doc["work_dir"] = str(work) if work else None  # where the locks are (running cells)
    C.write_json(path, doc)


def _recheck(
    doc: dict[str, Any],
    results: Path,
    compared: dict[str, Any],
    engine_record: dict[str, Any],
    invocation: dict[str, Any],
) -> None:
    """A rerun against the recorded settings ``doc`` (updated in place): methods appended to
    the profile are taken on, any other compared difference is refused, an engine difference
    is recorded unless a finished engine cell of a method it touches ran with the old one."""
    path = results / "settings.json"
    added = methods_added(doc["compared"], compared)
    if added:
        C.log(f"methods added to the profile: {', '.join(added)} (their cells run here)")
        doc["compared"]["settings"]["methods"] = compared["settings"]["methods"]
        doc["methods"] = list(compared["settings"]["methods"])
        invocation["methods_added"] = added
    _method_keys(doc, results, compared, invocation)
    diffs = diff(doc["compared"], compared, defaults=COMPARED_DEFAULTS)
    if diffs:
        raise SystemExit(
            f"refusing to mix results: {results} holds a run with other settings "
            f"({path}):\n  " + "\n  ".join(diffs[:20]) + "\nuse another --results-dir, or "
            "rerun with the recorded settings"
        )
    defaults = engine_defaults()
    per_defaults = {m: defaults for m in registry.ENGINE}
    ediffs = diff(
        inert_sections(doc.get("engine", {})),
        inert_sections(engine_record),
        defaults={"config": defaults, "per_method": per_defaults},
    )
    if not ediffs:
        return
    changed = changed_methods(ediffs)
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
    doc["engine"] = engine_record
