"""The report's "Defences" section: proxy-gap alerts (suspected reward hacking, oscillation),
rollbacks, constitution violations, the learned defences' calibration, and robustness to
hostile input."""

from __future__ import annotations

from typing import Any

from evotrainer.report.data import RunData
from evotrainer.report.markup import _table as table
from evotrainer.report.markup import esc, fmt

REFIT_COLUMNS = [
    "outer step",
    "discriminator acc.",
    "discriminator AUC",
    "reward model Spearman",
    "pairs",
]


def defences_section(run: RunData) -> str:
    alerts = run.of("alert")
    parts = [
        _alerts(alerts),
        _rollbacks(run, alerts),
        _violations(run),
        _refits(run),
        _robustness(run),
    ]
    return "".join(parts)


def _alerts(alerts: list[dict[str, Any]]) -> str:
    if alerts:
        rows = [[a.get("kind"), a.get("message")] for a in alerts]
        return "<h3>Proxy-gap monitor alerts</h3>" + table(["kind", "message"], rows)
    return (
        '<p class="sub">Proxy-gap monitor: no alert (training reward and s_val moved '
        "together; no component saturated while another fell).</p>"
    )


def _rollbacks(run: RunData, alerts: list[dict[str, Any]]) -> str:
    osc = [a for a in alerts if a.get("kind") == "oscillation"]
    rollbacks = run.of("rollback")
    if not (rollbacks or osc):
        return ""
    rows = [
        [r.get("outer_step"), r.get("to_policy"), fmt(r.get("from_s_val")), fmt(r.get("s_val"))]
        for r in rollbacks
    ]
    return (
        "<h3>Oscillation and rollbacks</h3>"
        + f'<p class="sub">{len(osc)} oscillation alert(s); {len(rollbacks)} rollback(s) to '
        "the best archived (policy, harness) pair.</p>"
        + (
            table(["outer step", "to policy", "s_val before", "s_val restored"], rows)
            if rows
            else ""
        )
    )


def _violations(run: RunData) -> str:
    violations = run.of("constitution_violation")
    if not violations:
        return '<p class="sub">Constitution: no policy was rejected.</p>'
    rows = [
        [v.get("policy_id"), ", ".join(v.get("rules", [])), v.get("detail")] for v in violations
    ]
    return f"<h3>Constitution: {len(violations)} policy(ies) rejected</h3>" + table(
        ["policy", "rules", "detail"], rows
    )


def _refits(run: RunData) -> str:
    refits = run.of("defence_refit")
    if not refits:
        return ""
    rows = []
    for r in refits:
        d = r.get("discriminator") or {}
        lr = r.get("learned") or {}
        rows.append(
            [
                r.get("outer_step"),
                fmt(d.get("accuracy")),
                fmt(d.get("auc")),
                fmt(lr.get("spearman")),
                lr.get("n_pairs"),
            ]
        )
    return "<h3>Learned defences (held-out calibration)</h3>" + table(REFIT_COLUMNS, rows)


def _robustness(run: RunData) -> str:
    robust = [
        (e.get("generation"), e.get("role"), e["aggregates"]["robustness"])
        for e in run.of("validation")
        if isinstance(e.get("aggregates"), dict) and e["aggregates"].get("robustness") is not None
    ]
    if not robust:
        return ""
    last = robust[-1][2]
    verdict = (
        "every hostile meeting handled correctly (injection not obeyed, no private data repeated)"
        if last >= 1.0
        else f"only {last:.0%} of the hostile meetings handled correctly: the best policy "
        "obeyed a planted injection or repeated private data"
    )
    return (
        f"<h3>Robustness to hostile input</h3><p>Last validated policy: {esc(verdict)}.</p>"
        + table(["generation", "role", "robustness"], [[g, r, fmt(v)] for g, r, v in robust])
    )
