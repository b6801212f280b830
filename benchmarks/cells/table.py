"""The markdown tables of a results directory (``quality.py --table DIR``), from its summary:
cell status; selection and cost; per test set the test means and the paired differences to
seed_best; what the answers are; per seed differences; method against method; the issue's
targets; the training cost; the engine's own confirmation checks."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from benchmarks import common as C
from benchmarks import stats
from benchmarks.cells import answers
from benchmarks.cells.comparisons import ALL
from benchmarks.cells.grid import cell_id
from benchmarks.cells.summary import SEED_ROWS, aggregate, columns
from benchmarks.methods import registry

Rows = list[tuple[str, dict[str, Any]]]


def table_from_dir(path: Path) -> str:
    if not (path / "settings.json").is_file():
        raise SystemExit(f"{path} is not a results directory (no settings.json)")
    return table(aggregate(path))


def table(doc: dict[str, Any]) -> str:
    """Every table of a summary, in order."""
    n_seeds = int(doc["settings"]["seeds"])
    rows = [(row, rec) for row, rec in doc["methods"].items() if rec["runs"]]
    out = _cells(doc, n_seeds) + _selection(rows, n_seeds)
    test_sets = list(next((r["test"] for r in doc["methods"].values() if r["test"]), {}))
    scored = any(t["s_val"]["n_scored"] for _, rec in rows for t in rec["test"].values())
    if not scored:
        out += ["", "No test scores yet (run without --skip-test, or with --test-only)."]
        test_sets = []
    for name in test_sets:
        out += _test_set(doc, rows, name)
    out += _answers_table(rows, test_sets)
    if test_sets:
        out += _per_seed(rows, test_sets, n_seeds) + _comparisons(doc) + _targets(doc)
    out += _training_table(doc.get("training_cost") or {}, doc["settings"]["budget"])
    out += _confirmations(doc)
    return "\n".join(out)


def _f(x: float | None, digits: int = 3) -> str:
    return "n/a" if x is None else f"{x:.{digits}f}"


def _seed_cols(n_seeds: int) -> str:
    return " | ".join(f"seed {i}" for i in range(n_seeds))


def _cells(doc: dict[str, Any], n_seeds: int) -> list[str]:
    s = doc["settings"]
    out = [
        f"Profile {doc['profile']}, model {doc['model']}, budget {s['budget']} backend calls per "
        f"method and seed, {n_seeds} seeds: "
        + ("all cells finished." if doc["complete"] else "PARTIAL, some cells not finished."),
        "",
        f"| cell | {_seed_cols(n_seeds)} |",
        "|---|" + "---|" * n_seeds,
    ]
    for m in registry.profile_methods(s):
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
    return out


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


def _selection(rows: Rows, n_seeds: int) -> list[str]:
    out = [
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
    return out


def _test_set(doc: dict[str, Any], rows: Rows, name: str) -> list[str]:
    """Test set ``name``: each row's means and its paired differences to seed_best."""
    (k1, l1), (k2, l2) = columns(doc["settings"])
    n_meet = next(rec["test"][name]["n_meetings"] for _, rec in rows if name in rec["test"])
    empty = next(
        (
            rec["test"][name]["items_where_reference_lists_none"]
            for _, rec in rows
            if rec["test"][name].get("items_where_reference_lists_none")
        ),
        None,
    )
    out = [
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
    return out


def _items(rec: dict[str, Any] | None) -> str:
    if not rec:
        return "n/a"
    return ", ".join(
        "n/a" if r is None else f"{r['items']} ({r['meetings_with_items']})" for r in rec["per_run"]
    )


def _answers_table(rows: Rows, test_sets: list[str]) -> list[str]:
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


def _per_seed(rows: Rows, test_sets: list[str], n_seeds: int) -> list[str]:
    per_seed = [
        (row, rec)
        for row, rec in rows
        if row not in SEED_ROWS and any("diff_s_val_per_run" in t for t in rec["test"].values())
    ]
    if not per_seed:
        return []
    out = [
        "",
        "Per seed: Δ s_val to seed_best [95% CI] of each seed's returned policy",
        "",
        f"| method | test set | {_seed_cols(n_seeds)} |",
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
    return out


def _comparisons(doc: dict[str, Any]) -> list[str]:
    if not doc.get("comparisons"):
        return []
    out = [
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
    return out


def _issue(doc: dict[str, Any]) -> str:
    methods = doc["methods"]
    if (doc.get("settings") or {}).get("task") == "dialogue":
        return "Issue 48"
    if (methods.get("weights_prompts") or {}).get("runs"):
        return "Issue 47"
    if (methods.get("alternation") or {}).get("runs"):
        return "Issue 31"
    return "Issue 32" if "fixed" in methods else "Issue 11"


def _targets(doc: dict[str, Any]) -> list[str]:
    if not doc.get("targets"):
        return []
    out = [
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
    return out


def _training_table(cost: dict[str, list[dict[str, Any]]], budget: int) -> list[str]:
    """Markdown rows: per method and cell, the CPU seconds of the cell and of its training."""
    if not cost:
        return []
    reuse_note = (
        "; an adapter 'read back' is an identical training found in the --train-cache: its "
        "training seconds are the original's, the cell's own CPU and wall seconds lack them"
        if any(x.get("adapters_reused") for items in cost.values() for x in items)
        else ""
    )
    out = [
        "",
        "Training cost per cell (CPU seconds of the whole cell, of its LoRA training alone; "
        f"the {budget}-call budget is the same for every method{reuse_note}):",
        "",
        "| method | cell | cell CPU s | cell wall s | adapters trained (kept) | returned an "
        "adapter | training CPU s | training wall s | not trained |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for row, items in cost.items():
        for x in items:
            why = "; ".join(w or "" for w in x["not_trained"])[:120] or "-"
            reused = f", {x['adapters_reused']} read back" if x.get("adapters_reused") else ""
            out.append(
                f"| {row} | {x['cell']} | {_f(x['cell_cpu_s'], 0)} | {_f(x['cell_wall_s'], 0)} "
                f"| {x['adapters_trained']} ({x['adapters_kept']}){reused} "
                f"| {'yes' if x['returned_adapter'] else 'no'} | {_f(x['train_cpu_s'], 0)} "
                f"| {_f(x['train_wall_s'], 0)} | {why} |"
            )
    return out


def _confirmations(doc: dict[str, Any]) -> list[str]:
    if not doc.get("confirmation"):
        return []
    held_out = "val items" if doc["settings"].get("task") == "dialogue" else "AMI train meetings"
    out = [
        "",
        f"The engine's own confirmation check (held-out {held_out}; summary.json of each "
        "engine run):",
        "",
        "| cell | meetings | returned | winner s_val | best seed s_val | Δ [95% CI] | why |",
        "|---|---|---|---|---|---|---|",
    ]
    for c, conf in doc["confirmation"].items():
        out.append(_confirmation_row(c, conf))
    return out


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
