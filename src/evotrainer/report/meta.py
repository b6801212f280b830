"""The report's meta-objective sections: the archive's Pareto front (a plot and a table) and what
people said in ``evotrainer review`` (Bradley-Terry scores, agreement with the automatic
metric, what the ratings reward, the latest comments)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from evotrainer.config import OBJECTIVES, MetaConfig
from evotrainer.evaluation.objectives import MetaObjective
from evotrainer.evaluation.pareto import non_dominated
from evotrainer.report.data import RunData
from evotrainer.report.figure import _figure
from evotrainer.review.agreement import agreement
from evotrainer.review.bradley_terry import policy_scores
from evotrainer.review.human_model import fit_human_model
from evotrainer.review.pairs import ReviewSource
from evotrainer.run.checkpoint import load_latest
from evotrainer.run.ratings import RatingStore

MAX_COMMENTS = 8


def front_data(run: RunData) -> dict[str, Any] | None:
    """front.json (finished run), else the front of the newest checkpoint's archive over the
    stored objectives (a run in progress; no human objective, no front without pymoo)."""
    path = run.path / "front.json"
    if path.is_file():
        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
            return doc if isinstance(doc, dict) else None
        except (OSError, ValueError, RecursionError):
            return None
    try:
        state, _p, _w = load_latest(run.path)
        entries = (state.get("outer") or {}).get("archive") or []
        meta_cfg = MetaConfig.model_validate(run.config.get("meta") or {})
    except Exception:  # noqa: BLE001 - no checkpoint or an old config: nothing to draw
        return None

    obj = MetaObjective(meta_cfg.model_copy(update={"selection": "weighted"}))
    vectors = [e.get("objectives") or {"quality": e.get("s_val") or 0.0} for e in entries]
    axes = obj.axes(vectors) if vectors else ["quality"]
    try:
        members: list[int] | None = non_dominated([[v[k] for k in axes] for v in vectors])
    except Exception:  # noqa: BLE001 - pymoo missing
        members = None
    return {
        "axes": axes,
        "selection": meta_cfg.selection,
        "weights": dict(obj.weights),
        "front": None
        if members is None
        else [
            {**entries[i], "objectives": vectors[i], "meta_score": obj.score(vectors[i])}
            for i in members
        ],
        "entries": [
            {"policy_id": e["policy"]["id"], "objectives": v, "meta_score": obj.score(v)}
            for e, v in zip(entries, vectors, strict=True)
        ],
    }


def front_plot(run: RunData, out: Path) -> Path | None:
    """Quality against each other measured objective: every archived pair (grey), the front
    (blue), the returned policy (star)."""
    doc = front_data(run)
    if not doc or not doc.get("entries"):
        return None
    # lazy: start-up time (matplotlib)
    from matplotlib.ticker import MaxNLocator

    entries = doc["entries"]
    others = [
        k for k in OBJECTIVES if k != "quality" and any(k in e["objectives"] for e in entries)
    ]
    if not others:
        return None
    front_ids = {f["policy"]["id"] for f in doc.get("front") or []}
    best = (run.summary or {}).get("best_policy")
    path = out / "front.png"
    with _figure(path, height=2.9, ncols=len(others), integer_x=False) as (fig, axes):
        for ax, k in zip(axes, others, strict=True):
            pts = [e for e in entries if k in e["objectives"]]
            ax.scatter(
                [e["objectives"]["quality"] for e in pts],
                [e["objectives"][k] for e in pts],
                s=14,
                color="#9ca3af",
                label="archived pair",
            )
            on = [e for e in pts if e["policy_id"] in front_ids]
            ax.scatter(
                [e["objectives"]["quality"] for e in on],
                [e["objectives"][k] for e in on],
                s=40,
                color="#2563eb",
                label=f"Pareto front over {', '.join(doc.get('axes') or [])}",
            )
            chosen = [e for e in pts if e["policy_id"] == best]
            if chosen:
                ax.scatter(
                    [chosen[0]["objectives"]["quality"]],
                    [chosen[0]["objectives"][k]],
                    marker="*",
                    s=180,
                    color="#f97316",
                    label="returned policy",
                    zorder=5,
                )
            ax.set_title(k)
            ax.set_xlabel("quality (s_val)")
            ax.xaxis.set_major_locator(MaxNLocator(nbins=4))
        handles, labels = axes[0].get_legend_handles_labels()
        fig.legend(handles, labels, loc="lower center", ncol=3, bbox_to_anchor=(0.5, -0.08))
    return path


def front_section(run: RunData, plot: Path | None, img: Any, table: Any, esc: Any) -> str:
    doc = front_data(run)
    if not doc:
        return '<p class="missing">No archive yet.</p>'
    weights = ", ".join(f"{k} {w:g}" for k, w in (doc.get("weights") or {}).items() if w > 0)
    intro = (
        f"<p>Selection <code>{esc(doc.get('selection'))}</code>; weights {esc(weights)}. "
        f"The front is over the weighted objectives measured for every archived pair: "
        f"<strong>{esc(', '.join(doc.get('axes') or []))}</strong>. The run returns the archived "
        "pair with the highest meta score (after confirmation against the best seed).</p>"
    )
    front = doc.get("front")
    if front is None:
        return (
            intro
            + img(plot, "front")
            + ("<p class=\"missing\">The front needs pymoo: pip install 'evotrainer[moo]'.</p>")
        )
    shown = [k for k in OBJECTIVES if any(k in (f.get("objectives") or {}) for f in front)]
    rows = [
        [
            (f.get("policy") or {}).get("id"),
            (f.get("policy") or {}).get("name") or "",
            *((f.get("objectives") or {}).get(k) for k in shown),
            f.get("meta_score"),
        ]
        for f in sorted(front, key=lambda f: -(f.get("meta_score") or 0.0))
    ]
    n = len(shown)
    return (
        intro
        + img(plot, "Pareto front")
        + table(["policy", "name", *shown, "meta score"], rows, num=tuple(range(2, 3 + n)))
    )


def human_section(run: RunData, table: Any, esc: Any) -> str:
    try:
        ratings = RatingStore(run.path).all()
    except Exception as exc:  # noqa: BLE001 - a damaged ratings file must not break the report
        return f'<p class="missing">Ratings not readable: {esc(exc)}</p>'
    if not ratings:
        return (
            '<p class="missing">No ratings yet. <code>evotrainer review RUN_DIR</code> serves a '
            "page where people compare two policies' minutes blind; a running or resumed run "
            "uses the ratings at its next outer step.</p>"
        )

    prior = float((run.config.get("meta") or {}).get("human_prior", 1.0))
    weights = (run.config.get("outer") or {}).get("s_val_weights") or {}
    concise = (run.config.get("meta") or {}).get("concise_component")
    components = [concise] if isinstance(concise, str) else []
    rows: dict[str, Any] = {}
    try:
        source = ReviewSource(run.path)
        source.refresh()
        rows = source.rows
    except Exception:  # noqa: BLE001 - no rows: scores without agreement
        pass
    scores = policy_scores(ratings, prior)
    parts = [
        f"<p><strong>{len(ratings)}</strong> ratings. Bradley-Terry scores (0 = an average rated "
        "policy) with 95% Laplace intervals:</p>",
        table(
            [
                "policy",
                "score",
                "95% low",
                "95% high",
                "preferred to average",
                "won",
                "lost",
                "tied",
            ],
            [
                [s.policy_id, s.score, *s.ci95, s.win_probability, s.wins, s.losses, s.ties]
                for s in scores
            ],
            num=(1, 2, 3, 4, 5, 6, 7),
        ),
    ]
    agree = agreement(ratings, rows.get, weights, components)
    if agree:
        parts.append("<h3>Agreement between people and the automatic metric</h3>")
        parts.append(
            table(
                ["metric", "agrees with people", "decisive ratings"],
                [[k, a["agreement"], a["n"]] for k, a in agree.items()],
                num=(1, 2),
            )
        )
        parts.append(
            '<p class="sub">Share of ratings (ties left out) where the metric scores the '
            "preferred minutes higher; 0.5 is a coin.</p>"
        )
    model = fit_human_model(ratings, rows.get, prior, components)
    if model is not None:
        fw = sorted(model.feature_weights().items(), key=lambda kv: -abs(kv[1]))
        parts.append("<h3>What the ratings reward (human model, standardised features)</h3>")
        parts.append(table(["feature", "weight"], fw, num=(1,)))
    comments = [r for r in ratings if r.comment][-MAX_COMMENTS:]
    if comments:
        items = "".join(
            f"<li><code>{esc(r.meeting_id)}</code>: {esc(r.comment)}"
            + (f" ({esc(r.reviewer)})" if r.reviewer else "")
            + "</li>"
            for r in comments
        )
        parts.append(f"<h3>Latest comments</h3><ul>{items}</ul>")
    return "".join(parts)
