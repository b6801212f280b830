"""The report's "Defences" section: proxy-gap alerts (suspected reward hacking, oscillation),
rollbacks, constitution violations, the learned defences' calibration, and robustness to
hostile input."""

from __future__ import annotations

from evotrainer.report.data import RunData
from evotrainer.report.markup import _table as table
from evotrainer.report.markup import esc, fmt


def defences_section(run: RunData) -> str:
    parts: list[str] = []
    alerts = run.of("alert")
    if alerts:
        rows = [[a.get("kind"), a.get("message")] for a in alerts]
        parts.append("<h3>Proxy-gap monitor alerts</h3>" + table(["kind", "message"], rows))
    else:
        parts.append(
            '<p class="sub">Proxy-gap monitor: no alert (training reward and s_val moved '
            "together; no component saturated while another fell).</p>"
        )
    osc = [a for a in alerts if a.get("kind") == "oscillation"]
    rollbacks = run.of("rollback")
    if rollbacks or osc:
        rows = [
            [r.get("outer_step"), r.get("to_policy"), fmt(r.get("from_s_val")), fmt(r.get("s_val"))]
            for r in rollbacks
        ]
        parts.append(
            "<h3>Oscillation and rollbacks</h3>"
            + f'<p class="sub">{len(osc)} oscillation alert(s); {len(rollbacks)} rollback(s) to '
            "the best archived (policy, harness) pair.</p>"
            + (
                table(["outer step", "to policy", "s_val before", "s_val restored"], rows)
                if rows
                else ""
            )
        )
    violations = run.of("constitution_violation")
    if violations:
        rows = [
            [v.get("policy_id"), ", ".join(v.get("rules", [])), v.get("detail")] for v in violations
        ]
        parts.append(
            f"<h3>Constitution: {len(violations)} policy(ies) rejected</h3>"
            + table(["policy", "rules", "detail"], rows)
        )
    else:
        parts.append('<p class="sub">Constitution: no policy was rejected.</p>')
    refits = run.of("defence_refit")
    if refits:
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
        parts.append(
            "<h3>Learned defences (held-out calibration)</h3>"
            + table(
                [
                    "outer step",
                    "discriminator acc.",
                    "discriminator AUC",
                    "reward model Spearman",
                    "pairs",
                ],
                rows,
            )
        )
    robust = [
        (e.get("generation"), e.get("role"), e["aggregates"]["robustness"])
        for e in run.of("validation")
        if isinstance(e.get("aggregates"), dict) and e["aggregates"].get("robustness") is not None
    ]
    if robust:
        last = robust[-1][2]
        verdict = (
            "every hostile meeting handled correctly (injection not obeyed, no private data repeated)"
            if last >= 1.0
            else f"only {last:.0%} of the hostile meetings handled correctly: the best policy "
            "obeyed a planted injection or repeated private data"
        )
        parts.append(
            f"<h3>Robustness to hostile input</h3><p>Last validated policy: {esc(verdict)}.</p>"
            + table(["generation", "role", "robustness"], [[g, r, fmt(v)] for g, r, v in robust])
        )
    return "".join(parts)
