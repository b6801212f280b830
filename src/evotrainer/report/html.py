"""The report page: one self-contained HTML file (inline CSS, PNGs as data URIs, no script, no
network: a Content-Security-Policy forbids every external load). All text is escaped."""

from __future__ import annotations

import base64
import difflib
import re
from collections.abc import Callable, Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

from evotrainer.policy.genome import PolicyGenome
from evotrainer.report.data import RunData
from evotrainer.report.defences import defences_section
from evotrainer.report.deltas import deltas_section
from evotrainer.report.distillation import distillation_section
from evotrainer.report.lineage import lineage_section
from evotrainer.report.markup import _table, esc, fmt
from evotrainer.report.meta import front_section, human_section
from evotrainer.report.plots import OP_FIELDS, operator_stats
from evotrainer.report.progress import calls_section
from evotrainer.report.ranking import ranking_section
from evotrainer.report.readability import readability_section
from evotrainer.review.pairs import reference_text

MAX_EXAMPLES = 4
CSP = "default-src 'none'; img-src data:; style-src 'unsafe-inline'; script-src 'none'"

CSS = """
:root { --fg:#111827; --muted:#6b7280; --line:#e5e7eb; --bg:#f3f4f6; --card:#fff;
  --accent:#2563eb; --good:#15803d; --bad:#b91c1c; --warn-bg:#fef3c7; --warn-line:#f59e0b; }
* { box-sizing: border-box; }
body { margin:0; background:var(--bg); color:var(--fg); line-height:1.45;
  font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; }
main { max-width: 1240px; margin: 0 auto; padding: 20px 24px 48px; }
h1 { font-size: 22px; margin: 0 0 4px; }
h2 { font-size: 16px; margin: 0 0 10px; }
h3 { font-size: 14px; margin: 14px 0 6px; }
.sub { color: var(--muted); font-size: 13px; word-break: break-all; }
.grid { display: grid; grid-template-columns: repeat(auto-fit, minmax(520px, 1fr)); gap: 16px;
  margin-top: 16px; }
.kpis { display: grid; grid-template-columns: repeat(auto-fit, minmax(140px, 1fr)); gap: 12px;
  margin-top: 16px; }
.card { background: var(--card); border: 1px solid var(--line); border-radius: 10px;
  padding: 14px 16px; box-shadow: 0 1px 2px rgba(0,0,0,.04); min-width: 0; }
.full { grid-column: 1 / -1; }
.kpi .label { color: var(--muted); font-size: 12px; text-transform: uppercase; letter-spacing: .04em; }
.kpi .value { font-size: 20px; font-weight: 600; margin-top: 2px; word-break: break-word; }
.kpi .value.small { font-size: 14px; font-weight: 500; }
.up { color: var(--good); } .down { color: var(--bad); }
.badge { display: inline-block; padding: 1px 8px; border-radius: 999px; font-size: 12px;
  font-weight: 600; background: #e0e7ff; color: #3730a3; vertical-align: middle; }
.badge.finished { background: #dcfce7; color: #166534; }
.badge.progress { background: #dbeafe; color: #1e40af; }
.badge.budget { background: #fee2e2; color: #991b1b; }
.badge.rb { background: #fee2e2; color: #991b1b; }
.warning { background: var(--warn-bg); border: 1px solid var(--warn-line); border-radius: 10px;
  padding: 10px 14px; margin-top: 16px; }
.notes { color: var(--muted); font-size: 13px; margin: 8px 0 0; padding-left: 18px; }
img.plot { width: 100%; height: auto; display: block; }
table { border-collapse: collapse; width: 100%; font-size: 13px; }
th, td { text-align: left; padding: 4px 8px; border-bottom: 1px solid var(--line); vertical-align: top; }
th { color: var(--muted); font-weight: 600; font-size: 12px; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
tr.chosen td { background: #ecfdf5; font-weight: 600; }
tr.step td { background: #f9fafb; border-top: 2px solid var(--line); }
.scroll { overflow-x: auto; }
pre { white-space: pre-wrap; word-wrap: break-word; background: #f9fafb; border: 1px solid var(--line);
  border-radius: 8px; padding: 10px; margin: 0; font-size: 12.5px; max-height: 520px; overflow: auto;
  font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, "Liberation Mono", monospace; }
.diff ins { background: #dcfce7; color: #14532d; text-decoration: none; }
.diff del { background: #fee2e2; color: #7f1d1d; }
.pair { display: grid; grid-template-columns: 1fr 1fr; gap: 12px; }
.pair .label { color: var(--muted); font-size: 12px; margin-bottom: 4px; }
.chips { display: flex; flex-wrap: wrap; gap: 6px; margin: 6px 0 10px; }
.chip { background: #f3f4f6; border: 1px solid var(--line); border-radius: 6px; padding: 1px 7px;
  font-size: 12px; font-variant-numeric: tabular-nums; }
.missing { color: var(--muted); font-style: italic; }
details summary { cursor: pointer; color: var(--accent); }
footer { color: var(--muted); font-size: 12px; margin-top: 24px; text-align: center; }
@media (max-width: 700px) { .pair { grid-template-columns: 1fr; } .grid { grid-template-columns: 1fr; } }
"""

# -- small helpers ------------------------------------------------------------------------------


def _img(path: Path | None, alt: str) -> str:
    if path is None or not path.is_file():
        return '<p class="missing">No data for this plot yet.</p>'
    b64 = base64.b64encode(path.read_bytes()).decode("ascii")
    return f'<img class="plot" alt="{esc(alt)}" src="data:image/png;base64,{b64}">'


def _card(title: str, body: str, cls: str = "", anchor: str = "") -> str:
    ident = f' id="{esc(anchor)}"' if anchor else ""
    return f'<section class="card {cls}"{ident}><h2>{esc(title)}</h2>{body}</section>'


def guarded(part: Callable[[], str], what: str) -> str:
    """``part()``, or a note saying it could not be shown: a run directory is untrusted input,
    and a value of the wrong shape in it (crafted or damaged) costs one part of the report, not
    the report."""
    try:
        return part()
    except Exception as exc:  # noqa: BLE001 - any malformed data: say so, show the rest
        return (
            f'<p class="missing">Could not show {esc(what)}: the run directory holds data of '
            f"a shape this version does not read ({esc(type(exc).__name__)}: "
            f"{esc(str(exc)[:200])}).</p>"
        )


def _weights(w: Mapping[str, Any] | None) -> str:
    if not w:
        return "–"
    return ", ".join(f"{k} {float(v):.2f}" for k, v in w.items() if float(v) > 0) or "all zero"


def word_diff(old: str, new: str) -> str:
    """HTML for a word-level diff of two texts (whitespace kept): <del> removed, <ins> added."""
    a, b = re.findall(r"\s+|[^\s]+", old), re.findall(r"\s+|[^\s]+", new)
    out = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if op == "equal":
            out.append(esc("".join(a[i1:i2])))
            continue
        if op in ("delete", "replace"):
            out.append(f"<del>{esc(''.join(a[i1:i2]))}</del>")
        if op in ("insert", "replace"):
            out.append(f"<ins>{esc(''.join(b[j1:j2]))}</ins>")
    return "".join(out)


# -- sections -----------------------------------------------------------------------------------


def _header(run: RunData) -> str:
    status = run.status
    badge = {"finished": "finished", "in progress": "progress", "stopped by budget": "budget"}
    gens = run.generations()
    done = int(gens[-1]["generation"]) if gens else 0
    total = run.total_generations
    init, final = run.s_val_range()
    delta = ""
    if init is not None and final is not None:
        d = final - init
        delta = f' <span class="{"up" if d >= 0 else "down"}">({d:+.3f})</span>'
    v = run.validation
    final_label = "final s_val" if status != "in progress" else "best s_val so far"
    kpis = [
        ("status", f'<span class="badge {badge.get(status, "")}">{esc(status)}</span>', ""),
        ("initial s_val", esc(fmt(init)), ""),
        (final_label, esc(fmt(final)) + delta, ""),
        ("generations", esc(f"{done} / {total}" if total else str(done)), ""),
        ("outer steps", esc(run.outer_steps_text()), ""),
        ("backend calls", esc(run.calls_text()), ""),
        ("model", esc(run.model), "small"),
        ("validation", esc(f"{v.get('source')} (n={fmt(v.get('n'))})"), "small"),
    ]
    cards = "".join(
        f'<div class="card kpi"><div class="label">{esc(k)}</div>'
        f'<div class="value {cls}">{val}</div></div>'
        for k, val, cls in kpis
    )
    parts = [
        "<header><h1>EvoTrainer run report</h1>",
        f'<div class="sub">run directory: {esc(run.path.resolve())} · generated '
        f"{esc(datetime.now().strftime('%Y-%m-%d %H:%M:%S'))}</div></header>",
        f'<div class="kpis">{cards}</div>',
    ]
    if v.get("synthetic"):
        msg = v.get("message") or (
            f"s_val is measured on held-out synthetic {run.words['instances']}, NOT on real, "
            "human-annotated data."
        )
        parts.append(
            f'<div class="warning"><strong>Synthetic validation fallback.</strong> {esc(msg)}</div>'
        )
    exhausted = run.last("budget_exhausted")
    if exhausted:
        parts.append(
            f'<div class="warning"><strong>Stopped by budget.</strong> '
            f"{esc(exhausted.get('message', ''))}</div>"
        )
    notes = [str(e.get("message", "")) for e in run.of("warning")]
    notes = [n for n in dict.fromkeys(notes) if n and n != v.get("message")]
    notes += run.notes
    if status == "in progress":
        last_t = run.events[-1].get("t") if run.events else None
        when = datetime.fromtimestamp(last_t).strftime("%H:%M:%S") if last_t else "unknown"
        notes.insert(
            0,
            f"Run in progress (or interrupted): last event at {when}. "
            "Rebuild this report any time with `evotrainer report RUN_DIR`.",
        )
    if notes:
        parts.append('<ul class="notes">' + "".join(f"<li>{esc(n)}</li>" for n in notes) + "</ul>")
    return "".join(parts)


def _outer_table(run: RunData) -> str:
    steps = run.outer_steps()
    if not steps:
        return '<p class="missing">No outer step yet.</p>'
    rows = []
    for e in steps:
        chosen_id = (e.get("chosen") or {}).get("id")
        rb = ' <span class="badge rb">rollback</span>' if e.get("rollback") else ""
        changed = "changed harness" if e.get("changed") else "kept incumbent"
        rows.append(
            f'<tr class="step"><td colspan="8"><strong>Step {esc(e.get("outer_step"))}</strong> '
            f"(→ generation {esc(e.get('generation'))}) · {esc(changed)} · "
            f"{esc(e.get('reason', ''))}{rb}</td></tr>"
        )
        s_vals = e.get("s_vals") or []
        metas = e.get("meta_scores") or []
        for i, var in enumerate(e.get("variants") or []):
            s = s_vals[i] if i < len(s_vals) else None
            m = metas[i] if i < len(metas) else None
            is_chosen = var.get("id") == chosen_id
            cls = ' class="chosen"' if is_chosen else ""
            rows.append(
                f"<tr{cls}><td>{i}{' ✓' if is_chosen else ''}</td><td>{esc(var.get('operator'))}</td>"
                f'<td class="num">{esc(fmt(var.get("difficulty"), 2))}</td>'
                f'<td class="num">{esc(fmt(var.get("real_share"), 2))}</td>'
                f"<td>{esc(_weights(var.get('weights')))}</td><td>{esc(var.get('note') or '')}</td>"
                f'<td class="num">{esc(fmt(s))}</td><td class="num">{esc(fmt(m))}</td></tr>'
            )
    head = (
        "<tr><th>#</th><th>operator</th><th class=num>L</th><th class=num>real share</th>"
        "<th>weights</th><th>note</th>"
        "<th class=num>s_val</th><th class=num>meta score</th></tr>"
    )
    rb_list = ""
    if run.rollbacks():
        items = "".join(
            f"<li>outer step {esc(r.get('outer_step'))}: s_val {esc(fmt(r.get('from_s_val')))} → "
            f"rolled back to policy {esc(r.get('to_policy'))} (s_val {esc(fmt(r.get('s_val')))})</li>"
            for r in run.rollbacks()
        )
        rb_list = f"<h3>Rollbacks</h3><ul>{items}</ul>"
    return f'<div class="scroll"><table>{head}{"".join(rows)}</table></div>{rb_list}'


def _operators(run: RunData, plot: Path | None) -> str:
    stats = operator_stats(run)
    if not stats:
        return '<p class="missing">No operator statistics yet.</p>'
    rows = []
    for name, s in stats.items():
        rate = s["improved"] / s["produced"] if s["produced"] else None
        posterior = (1 + s["improved"]) / (2 + s["tried"])
        rows.append([name, *(s[f] for f in OP_FIELDS), rate, posterior])
    table = _table(
        ["operator", *OP_FIELDS, "improved / produced", "bandit: posterior success"],
        rows,
        num=(1, 2, 3, 4, 5, 6),
    )
    note = (
        '<p class="sub">"improved": the child was fitter than its best parent. With '
        "<code>inner.operator_choice: bandit</code> (default) each operator is chosen by "
        "Thompson sampling on its success (Beta(1 + improved, 1 + tried - improved), times its "
        "configured weight), so operators that keep helping are drawn more often.</p>"
    )
    return _img(plot, "operator statistics") + table + note


def _confirmation(run: RunData) -> str:
    c = (run.summary or {}).get("confirmation") or run.last("confirmation")
    if not c:
        return (
            '<p class="missing">No confirmation (validation.confirm = 0, or the run has not '
            "finished).</p>"
        )
    d = c.get("difference") or {}
    lo, hi = (d.get("ci95") or [None, None])[:2]
    returned = "best seed" if c.get("returned") == c.get("best_seed") else "selection winner"
    if c.get("winner") == c.get("best_seed"):
        returned = "best seed (it won the selection too)"
    rows = [
        ["selection winner", c.get("winner"), c.get("winner_s_val")],
        ["best seed", c.get("best_seed"), c.get("best_seed_s_val")],
    ]
    noun = run.words["instances"]
    table = _table(["policy", "id", f"s_val on the confirmation {noun}"], rows, num=(2,))
    interval = (  # one instance gives no interval (its bootstrap is that one value)
        f"95% bootstrap interval [{esc(fmt(lo))}, {esc(fmt(hi))}]"
        if (d.get("n") or 0) > 1
        else "no interval from a single one"
    )
    return (
        f"<p>On <strong>{esc(d.get('n'))}</strong> validation {esc(noun)} that selection never "
        f"saw, the selection winner minus the best seed (paired, per {esc(noun[:-1])}, "
        f"{esc(c.get('measure') or 's_val')}): "
        f"<strong>{esc(fmt(d.get('mean')))}</strong>, {interval}. Rule <code>{esc(c.get('rule'))}</code>: returned the "
        f"<strong>{esc(returned)}</strong> ({esc(c.get('reason'))}).</p>"
        + table
        + '<p class="sub">The selection score of the winner is optimistic (it is the maximum '
        "of noisy estimates); this difference is the one to trust. Meetings: "
        f"{esc(', '.join(c.get('instance_ids') or []))}.</p>"
    )


def _lineage(run: RunData) -> str:
    p = run.policy
    if not p:
        return '<p class="missing">No best policy yet (no validation has finished).</p>'

    ancestors = p.get("ancestors") or []
    rows = []
    for a in ancestors:
        lin = a.get("lineage") or {}
        rows.append(
            [
                a.get("id"),
                a.get("name") or "",
                lin.get("operator"),
                lin.get("generation"),
                lin.get("note") or "",
            ]
        )
    parts = [
        f'<div class="chips"><span class="chip">id {esc(p.get("id"))}</span>'
        f'<span class="chip">s_val {esc(fmt(p.get("s_val")))}</span>'
        f'<span class="chip">train fitness {esc(fmt(p.get("train_fitness")))}</span>'
        f'<span class="chip">source: {esc(run.policy_source)}</span></div>'
    ]
    if rows:
        parts.append("<h3>Lineage (newest first)</h3>")
        parts.append(_table(["id", "name", "operator", "generation", "note"], rows, num=(3,)))
    text = p.get("text") or ""
    parts.append(f"<h3>Final text</h3><pre>{esc(text)}</pre>")
    if len(ancestors) > 1:
        seed = ancestors[-1]
        try:
            seed_text = PolicyGenome.from_json(seed).render()
        except (ValueError, KeyError, TypeError):
            seed_text = ""
        label = f"{seed.get('id')}" + (f" ({seed.get('name')})" if seed.get("name") else "")
        parts.append(
            f"<h3>Diff against the seed policy {esc(label)}</h3>"
            f'<pre class="diff">{word_diff(seed_text, text)}</pre>'
        )
    elif ancestors:
        parts.append('<p class="missing">The best policy is a seed policy: nothing to diff.</p>')
    return "".join(parts)


SKIP_KEYS = {
    "instance_id",
    "output",
    "raw_output",
    "rewards",
    "reference",
    "length_bucket",
    "truncated",
    "error",
}


def _examples(run: RunData) -> str:
    rows = run.validation_rows
    words = run.words
    if not rows:
        return '<p class="missing">No validation rows stored for the best policy yet.</p>'
    parts = [
        f'<p class="sub">Showing {min(len(rows), MAX_EXAMPLES)} of {len(rows)} validation '
        f"{esc(words['instances'])}.</p>"
    ]
    for row in rows[:MAX_EXAMPLES]:
        metrics = [
            (k, v)
            for k, v in row.items()
            if k not in SKIP_KEYS and isinstance(v, int | float) and not isinstance(v, bool)
        ]
        chips = "".join(f'<span class="chip">{esc(k)} {esc(fmt(v))}</span>' for k, v in metrics)
        rewards = row.get("rewards") or {}
        chips += "".join(
            f'<span class="chip">reward {esc(k)} {esc(fmt(v))}</span>' for k, v in rewards.items()
        )
        flags = []
        if row.get("length_bucket"):
            flags.append(f"length {row['length_bucket']}")
        if row.get("truncated"):
            flags.append("transcript truncated")
        if row.get("error"):
            flags.append(f"error: {row['error']}")
        ref = (
            f"<pre>{esc(reference_text(row['reference']))}</pre>"
            if row.get("reference") not in (None, "", [], {})
            else '<p class="missing">reference not stored</p>'
        )
        parts.append(
            f'<div class="card" style="margin-top:12px"><h3>{esc(row.get("instance_id"))}'
            f' <span class="sub">{esc(" · ".join(flags))}</span></h3>'
            f'<div class="chips">{chips}</div><div class="pair">'
            f'<div><div class="label">best policy\'s {esc(words["output"])}</div>'
            f"<pre>{esc(row.get('output'))}</pre>{_raw(row)}</div>"
            f'<div><div class="label">{esc(words["reference"])}</div>{ref}</div></div>'
            f"{_turns(row)}</div>"
        )
    return "".join(parts)


def _raw(row: Mapping[str, Any]) -> str:
    """What the model wrote before the policy's loop cut, when the cut changed it."""
    raw = row.get("raw_output")
    if not isinstance(raw, str) or raw == row.get("output"):
        return ""
    return f"<details><summary>before the loop cut</summary><pre>{esc(raw)}</pre></details>"


def _turns(row: Mapping[str, Any]) -> str:
    """A multi-turn episode: each answer and what the environment said back."""
    turns = row.get("turns")
    if not isinstance(turns, list) or len(turns) < 2:
        return ""
    items = []
    for k, t in enumerate(turns, 1):
        if not isinstance(t, Mapping):
            continue
        said = t.get("observation") or "(nothing: the episode ended)"
        items.append(
            f'<div class="label">turn {k}: answer</div><pre>{esc(t.get("output"))}</pre>'
            f'<div class="label">turn {k}: environment</div><pre>{esc(said)}</pre>'
        )
    return f"<details><summary>{len(turns)} turns</summary>{''.join(items)}</details>"


BUDGET_LABELS = [  # backend calls: the one count of calls (console, summary, trackers)
    ("backend_calls", "backend calls (what budget.max_calls caps)"),
    ("cache_hits", "cached answers"),
    ("llm_calls", "requests (backend calls and cached answers, as of the last checkpoint)"),
    ("cache_misses", "cache misses"),
    ("prompt_tokens", "prompt tokens"),
    ("completion_tokens", "completion tokens"),
    ("backend_tokens", "backend tokens"),
    ("llm_seconds", "LLM seconds"),
    ("llm_errors", "LLM errors"),
    ("wall_s", "wall time (s)"),
]


def _budget(run: RunData) -> str:
    b = run.budget()
    if not b:
        return '<p class="missing">No budget numbers yet.</p>'
    rows = [[label, b.get(k)] for k, label in BUDGET_LABELS if k in b]
    known = {k for k, _ in BUDGET_LABELS}
    rows += [[k, v] for k, v in b.items() if k not in known and isinstance(v, int | float)]
    src = "summary.json" if run.summary else "last event (run in progress)"
    threads = run.threads_text()
    used = f'<p class="sub">embedded model CPU threads: {esc(threads)}</p>' if threads else ""
    return (
        _table(["counter", "value"], rows, num=(1,)) + f'<p class="sub">from {esc(src)}</p>' + used
    )


# -- the page -----------------------------------------------------------------------------------


S_VAL_NOTE = (
    '<p class="sub">Line: s_val of the incumbent best at the start, at each outer step and at '
    "the end; crosses: the trial best of each harness variant; diamonds: the other seed "
    "policies, validated at the start. Every validated (policy, "
    "harness) pair is archived; the star is the best archived pair, dashed red lines mark "
    "rollbacks.</p>"
)
HARNESS_NOTE = (
    '<p class="sub">One panel per reward weight (a shared scale), then the '
    "generator's difficulty L and the share of real training instances in the batch; "
    "dotted lines: outer steps.</p>"
)

# (title, the part's HTML, card class, anchor)
Part = tuple[str, Callable[[], str], str, str]


def _progress_parts(run: RunData, plots: Mapping[str, Path]) -> list[Part]:
    """The page's first cards: the confirmation and the run's progress, mostly plots."""
    return [
        (
            f"Confirmation on held-out {run.words['instances']}",
            lambda: _confirmation(run),
            "full",
            "confirmation",
        ),
        (
            "Per-meeting difference: returned policy vs best seed",
            lambda: deltas_section(run, plots.get("deltas"), _img, _table, esc),
            "full",
            "deltas",
        ),
        ("s_val per outer step", lambda: _img(plots.get("s_val"), "s_val") + S_VAL_NOTE, "", ""),
        (
            "Score against calls",
            lambda: calls_section(run, plots.get("calls"), _img, esc),
            "",
            "calls",
        ),
        ("Fitness per generation", lambda: _img(plots.get("fitness"), "fitness"), "", ""),
        (
            "Harness trajectory",
            lambda: _img(plots.get("harness"), "harness") + HARNESS_NOTE,
            "",
            "",
        ),
        (
            "Readable answers: minutes or loops?",
            lambda: readability_section(run, plots.get("readability"), _img, _table, esc),
            "full",
            "readability",
        ),
        ("Population diversity", lambda: _img(plots.get("diversity"), "diversity"), "", ""),
        ("Outer steps: harness variants", lambda: _outer_table(run), "full", "outer"),
    ]


def _detail_parts(run: RunData, plots: Mapping[str, Path]) -> list[Part]:
    """The cards after the progress: judgements, defences, the policies, the config."""
    return [
        (
            "Distillation: the adapter the population carries",
            lambda: distillation_section(run, plots.get("distill_loss"), _img, _table, esc),
            "full",
            "distillation",
        ),
        (
            "Rank judgement: does the reward order policies as s_val does?",
            lambda: ranking_section(run, _table),
            "full",
            "ranking",
        ),
        (
            "Meta-objective: the front",
            lambda: front_section(run, plots.get("front"), _img, _table, esc),
            "full",
            "front",
        ),
        ("Human review", lambda: human_section(run, _table, esc), "full", "human"),
        ("Defences", lambda: defences_section(run), "full", "defences"),
        (
            "Operator statistics",
            lambda: _operators(run, plots.get("operators")),
            "",
            "operators",
        ),
        ("Budget", lambda: _budget(run), "", "budget"),
        ("Best policy: lineage and text", lambda: _lineage(run), "full", "lineage"),
        (
            "Lineage of the whole population",
            lambda: lineage_section(run, plots.get("lineage"), _img, _table, esc),
            "full",
            "population",
        ),
        (
            f"Best policy on validation {run.words['instances']}",
            lambda: _examples(run),
            "full",
            "examples",
        ),
        (
            "Config",
            lambda: (
                "<details><summary>config.yaml</summary>"
                f"<pre>{esc(run.config_text)}</pre></details>"
            ),
            "full",
            "",
        ),
    ]


def render_page(run: RunData, plots: Mapping[str, Path]) -> str:
    parts = _progress_parts(run, plots) + _detail_parts(run, plots)
    sections = [
        _card(title, guarded(part, f"“{title}”"), cls, anchor) for title, part, cls, anchor in parts
    ]
    title = f"EvoTrainer report – {run.path.name}"
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{esc(title)}</title><style>{CSS}</style></head>"
        f"<body><main>{guarded(lambda: _header(run), 'the header')}"
        f'<div class="grid">{"".join(sections)}</div>'
        "<footer>Generated by evotrainer report · self-contained file, no network access"
        "</footer></main></body></html>\n"
    )
