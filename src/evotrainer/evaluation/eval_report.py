"""What ``evotrainer eval`` prints: tables that fit the console's width (80 columns in a pipe)
without cutting a header, s_val always, and with several policies each one's paired difference
to the first on the same instances with its 95% bootstrap interval (evaluation/paired.py).

- one policy: its rows (instance, s_val and as many metrics as fit, s_val's own first), a mean
  row, then every metric's mean;
- several: one row per policy (s_val, difference to #1, interval), then every metric's mean per
  policy (as many policies side by side as fit, the rest in a further table);
- always: how degenerate the answers are (``degeneracy_table``: the mean share of distinct word
  4-grams, the loop share, the mean share of repeated sentences, the mean words per answer;
  policy/repetition.py), so a score is never read without knowing whether it scores loops.

Text from the data (instance ids, policy labels) is escaped and written out by the caller's
``cell`` function; long labels wrap, never cut."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from rich import box
from rich.table import Table

from evotrainer.evaluation.paired import PairedDifference, paired_difference
from evotrainer.evaluation.validation import Validator
from evotrainer.policy.genome import PolicyGenome
from evotrainer.policy.repetition import Degeneracy, degeneracy
from evotrainer.types import ValidationResult

NUMBER = 6  # "-0.123"
COLUMN_COST = 3  # a column's padding and rule in the default box
ID_MAX = 36  # an instance id wraps beyond this
LABEL_MAX = 160  # characters of an inline policy text shown as its label (wrapped)


def paired_to_first(
    validator: Validator,
    results: Mapping[str, ValidationResult],
    policies: Sequence[PolicyGenome],
    seed: int = 0,
) -> list[PairedDifference | None]:
    """Each policy's paired difference in per-instance s_val to the first policy (None for the
    first), on the instances both were scored on."""
    first = validator.row_s_vals(results[policies[0].id])
    out: list[PairedDifference | None] = [None]
    for p in policies[1:]:
        out.append(paired_difference(validator.row_s_vals(results[p.id]), first, seed=seed))
    return out


def instance_means(
    validator: Validator, results: Mapping[str, ValidationResult]
) -> dict[str, float]:
    """Each policy's mean per-instance s_val (the quantity ``paired_to_first`` pairs)."""
    out = {}
    for pid, res in results.items():
        rows = validator.row_s_vals(res)
        if rows:
            out[pid] = sum(rows.values()) / len(rows)
    return out


def label(text: str) -> str:
    """A policy's label: the --prompt value; an inline text longer than LABEL_MAX is shown by
    its start and its length."""
    one_line = " ".join(text.split())
    if len(one_line) <= LABEL_MAX:
        return one_line
    start = one_line[: LABEL_MAX - 30].rstrip()
    return f"{start} (+{len(one_line) - len(start)} more characters)"


def _fmt(x: float | None) -> str:
    return "-" if x is None else f"{x:.3f}"


def _table(title: str | None = None) -> Table:
    return Table(title=title, box=box.SQUARE, title_justify="left")


# how eval's columns are computed, said under its table and in --out (issue 51: the s_val
# column and "vs #1" did not subtract, and nothing said why)
PAIRED_NOTE = (
    "s_val: the metrics averaged over the instances, then weighted (as a run's s_val); "
    "mean/inst.: the mean of each instance's own s_val; vs #1: the mean over the instances "
    "both have of (this policy's s_val - #1's) on each, with its 95% bootstrap CI, so it is "
    "mean/inst. minus #1's mean/inst. The s_val column need not subtract the same way: a "
    "metric an instance lacks (no action items) is averaged over the others."
)


def policies_table(
    policies: Sequence[PolicyGenome],
    results: Mapping[str, ValidationResult],
    diffs: Sequence[PairedDifference | None],
    width: int,
    cell: Callable[[str], str],
    means: Mapping[str, float] | None = None,
) -> Table:
    """#, policy (wrapped), s_val, the mean of its per-instance s_vals (``means``: policy id
    -> it), the mean paired difference to #1 and its 95% interval, n (``PAIRED_NOTE``)."""
    t = _table()
    fixed = [("#", 2), ("s_val", NUMBER), ("mean/inst.", 10), ("vs #1", NUMBER)]
    fixed += [("95% CI", 16), ("n", 3)]
    room = width - sum(w for _, w in fixed) - COLUMN_COST * (len(fixed) + 1) - 1
    t.add_column("#", justify="right", no_wrap=True)
    t.add_column("policy", min_width=6, max_width=max(6, room), overflow="fold")
    t.add_column("s_val", justify="right", no_wrap=True)
    t.add_column("mean/inst.", justify="right", no_wrap=True)
    t.add_column("vs #1", justify="right", no_wrap=True)
    t.add_column("95% CI", justify="left", no_wrap=True, min_width=6)
    t.add_column("n", justify="right", no_wrap=True)
    for i, (p, d) in enumerate(zip(policies, diffs, strict=True), 1):
        res = results[p.id]
        if d is None:
            vs, ci, n = "", "", str(res.n)
        else:
            ci = f"[{d.lo:+.3f}, {d.hi:+.3f}]" if d.n > 1 else "none (n 1)"
            vs, n = f"{d.mean:+.3f}", str(d.n)
        mean = _fmt((means or {}).get(p.id))
        t.add_row(str(i), cell(label(p.name)), f"{res.s_val:.3f}", mean, vs, ci, n)
    return t


def means_tables(
    keys: Sequence[str],
    columns: Sequence[tuple[str, Mapping[str, Any]]],
    width: int,
) -> list[Table]:
    """Every metric's mean (rows) for each policy (columns: ``(header, aggregates)``), as many
    policies side by side as ``width`` allows; the rest in further tables."""
    key_w = max([len("metric"), *map(len, keys)])
    per = max(1, (width - key_w - COLUMN_COST * 2) // (NUMBER + COLUMN_COST))
    tables = []
    for start in range(0, len(columns), per):
        chunk = columns[start : start + per]
        t = _table()
        t.add_column("metric", no_wrap=True, min_width=key_w)
        for header, _ in chunk:
            t.add_column(header, justify="right", no_wrap=True, min_width=len(header))
        for k in keys:
            t.add_row(k, *(_fmt(agg.get(k)) for _, agg in chunk))
        tables.append(t)
    return tables


def instances_table(
    result: ValidationResult,
    keys: Sequence[str],
    weighted: Sequence[str],
    s_vals: Mapping[str, float],
    width: int,
    cell: Callable[[str], str],
) -> Table:
    """One policy's rows: instance (``*`` when its input was cut), s_val, then the metrics that
    fit in ``width`` (those s_val weighs first); a mean row."""
    ids = [r["instance_id"] + (" *" if r.get("truncated") else "") for r in result.per_instance]
    id_w = min(max([len("instance"), *map(len, ids)]), ID_MAX)
    used = id_w + NUMBER + COLUMN_COST * 2 + 1
    order = [k for k in weighted if k in keys] + [k for k in keys if k not in weighted]
    shown = []
    for k in order:
        w = max(len(k), NUMBER) + COLUMN_COST
        if used + w > width:
            break
        shown.append(k)
        used += w
    t = _table()
    t.add_column("instance", overflow="fold", min_width=len("instance"), max_width=id_w)
    t.add_column("s_val", justify="right", no_wrap=True)
    for k in shown:
        t.add_column(k, justify="right", no_wrap=True, min_width=len(k))
    for row, shown_id in zip(result.per_instance, ids, strict=True):
        t.add_row(
            cell(shown_id),
            _fmt(s_vals.get(row["instance_id"])),
            *("-" if row.get(k) is None else f"{row[k]:.3f}" for k in shown),
        )
    t.add_row("[bold]mean", f"{result.s_val:.3f}", *(_fmt(result.aggregates.get(k)) for k in shown))
    return t


def answers_degeneracy(result: ValidationResult) -> Degeneracy:
    """The degeneracy columns of one policy's answers (a failed answer counts as empty)."""
    return degeneracy(
        "" if r.get("error") else str(r.get("output") or "") for r in result.per_instance
    )


def degeneracy_table(
    policies: Sequence[PolicyGenome],
    results: Mapping[str, ValidationResult],
    width: int,
    cell: Callable[[str], str],
) -> Table:
    """#, policy, distinct-4, loop share, repeated sentences, words: is it minutes or a loop?"""
    t = _table("answers: distinct word 4-grams (human minutes 0.99), loops (distinct-4 < 0.5)")
    fixed = [("#", 2), ("distinct-4", 10), ("loops", 6), ("repeated", 8), ("words", 6)]
    room = width - sum(w for _, w in fixed) - COLUMN_COST * (len(fixed) + 1) - 1
    t.add_column("#", justify="right", no_wrap=True)
    t.add_column("policy", min_width=6, max_width=max(6, room), overflow="fold")
    for header, _ in fixed[1:]:
        t.add_column(header, justify="right", no_wrap=True)
    for i, p in enumerate(policies, 1):
        d = answers_degeneracy(results[p.id])
        t.add_row(
            str(i),
            cell(label(p.name)),
            f"{d.distinct4:.2f}",
            f"{d.loop_share:.0%}",
            f"{d.repeated_units:.2f}",
            f"{d.words:.0f}",
        )
    return t
