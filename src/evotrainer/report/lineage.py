"""The whole population's lineage: every policy the run made (the main line's children, the
harness trials' children, the seeds and imports), each parent -> child edge coloured by the
operator that made the child, drawn generation by generation.

The policies come from the newest checkpoint (its ``policies``: every policy ever scored, with
its lineage), else from the generation events' populations; s_val from the validation events
and the checkpoint's validation memo; the returned policy from summary.json (or the best
validated so far). Layout: one column per generation, each column ordered by its members'
parents' mean height (barycentre ordering: few crossings), so ~100 policies stay legible on a
page; the returned policy's ancestry is drawn bold."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evotrainer.errors import CheckpointError
from evotrainer.report.data import RunData
from evotrainer.report.figure import STYLE
from evotrainer.run import events as ev
from evotrainer.run.checkpoint import load_latest

if TYPE_CHECKING:  # matplotlib is imported lazily, where a figure is drawn
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure
    from matplotlib.typing import RcKeyType

# operator -> edge colour (others get the remaining colours in turn)
OPERATOR_COLORS = {
    "synonym": "#2563eb",
    "reorder": "#0891b2",
    "keyword": "#16a34a",
    "sentence_crossover": "#ca8a04",
    "llm_paraphrase": "#9333ea",
    "llm_merge": "#db2777",
    "reflective": "#dc2626",
    "template": "#f97316",
    "template_crossover": "#a16207",
    "fewshot": "#0d9488",
    "feedback_edit": "#4f46e5",
    "distill": "#111827",
}
SPARE_COLORS = ["#64748b", "#65a30d", "#be185d", "#7c3aed", "#0369a1", "#b45309"]


@dataclass(frozen=True)
class Node:
    id: str
    generation: int
    operator: str
    name: str = ""
    s_val: float | None = None
    returned: bool = False


@dataclass(frozen=True)
class Edge:
    parent: str
    child: str
    operator: str  # the operator that made the child


@dataclass
class Lineage:
    nodes: list[Node] = field(default_factory=list)
    edges: list[Edge] = field(default_factory=list)


def _policies(run: RunData) -> dict[str, dict[str, Any]]:
    """id -> policy JSON (components, lineage, name): the checkpoint's, else the events'."""
    out: dict[str, dict[str, Any]] = {}
    if (run.path / "checkpoints").is_dir():
        try:
            state, _path, _warnings = load_latest(run.path)
            for pid, p in (state.get("policies") or {}).items():
                if isinstance(p, dict):
                    out[str(pid)] = p
            for p in (state.get("inner") or {}).get("population") or []:
                if isinstance(p, dict) and isinstance(p.get("id"), str):
                    out.setdefault(p["id"], p)
        except (CheckpointError, KeyError, TypeError, ValueError, OverflowError, RecursionError):
            run.notes.append("lineage: the latest checkpoint could not be read (events used)")
    if not out:  # no checkpoint: the members of each generation's population
        for e in run.generations():
            for m in e.get("population") or []:
                if isinstance(m, dict) and isinstance(m.get("id"), str):
                    out.setdefault(
                        m["id"],
                        {
                            "id": m["id"],
                            "lineage": {
                                "parents": list(m.get("parents") or []),
                                "operator": m.get("operator") or "?",
                                "generation": int(e.get("generation", 0)),
                            },
                        },
                    )
    for entry in run.archive or []:
        p = entry.get("policy") if isinstance(entry, dict) else None
        if isinstance(p, dict) and isinstance(p.get("id"), str):
            out.setdefault(p["id"], p)
    return out


def _s_vals(run: RunData) -> dict[str, float]:
    out: dict[str, float] = {}
    for e in run.of(ev.VALIDATION):
        s = e.get("s_val")
        if isinstance(s, int | float) and not e.get("partial"):
            out[str(e.get("policy_id"))] = float(s)
    return out


def returned_id(run: RunData) -> str | None:
    if run.summary and isinstance(run.summary.get("best_policy"), str):
        return run.summary["best_policy"]
    return run.policy.get("id") if run.policy else None


def population_lineage(run: RunData) -> Lineage:
    policies = _policies(run)
    s_vals = _s_vals(run)
    returned = returned_id(run)
    nodes, edges = [], []
    for pid, p in policies.items():
        lin = p.get("lineage") or {}
        op = str(lin.get("operator") or "seed")
        try:
            gen = int(lin.get("generation") or 0)
        except (TypeError, ValueError):
            gen = 0
        nodes.append(Node(pid, gen, op, str(p.get("name") or ""), s_vals.get(pid), pid == returned))
        for parent in dict.fromkeys(lin.get("parents") or []):
            if parent in policies and parent != pid:
                edges.append(Edge(str(parent), pid, op))
    nodes.sort(key=lambda n: (n.generation, n.id))
    return Lineage(nodes, edges)


# -- drawing -------------------------------------------------------------------------------------


def _layout(tree: Lineage) -> dict[str, tuple[float, float]]:
    """id -> (generation, height): columns ordered by their members' parents' mean height."""
    parents: dict[str, list[str]] = {}
    for e in tree.edges:
        parents.setdefault(e.child, []).append(e.parent)
    columns: dict[int, list[Node]] = {}
    for n in tree.nodes:
        columns.setdefault(n.generation, []).append(n)
    tallest = max(len(c) for c in columns.values())
    pos: dict[str, tuple[float, float]] = {}
    for g in sorted(columns):
        col = columns[g]

        def key(n: Node, g: int = g) -> tuple[float, str]:
            ys = [pos[p][1] for p in parents.get(n.id, []) if p in pos and pos[p][0] < g]
            return (sum(ys) / len(ys) if ys else 0.0, n.id)

        col.sort(key=key)
        # spread over the tallest column's height, centred, in the parents' order
        step = tallest / len(col)
        for k, n in enumerate(col):
            pos[n.id] = (float(g), (k + 0.5) * step - tallest / 2)
    return pos


def _ancestry(tree: Lineage, start: str | None) -> set[tuple[str, str]]:
    parents: dict[str, list[str]] = {}
    for e in tree.edges:
        parents.setdefault(e.child, []).append(e.parent)
    out: set[tuple[str, str]] = set()
    todo = [start] if start else []
    while todo:
        child = todo.pop()
        for p in parents.get(child, []):
            if (p, child) not in out:
                out.add((p, child))
                todo.append(p)
    return out


def _colors(tree: Lineage) -> dict[str, str]:
    ops = sorted({e.operator for e in tree.edges})
    spare = iter(SPARE_COLORS * 4)
    return {op: OPERATOR_COLORS.get(op) or next(spare) for op in ops}


def draw_lineage(tree: Lineage, path: Path) -> Path:
    # lazy: start-up time (matplotlib)
    import matplotlib

    matplotlib.use("Agg", force=True)
    # lazy: start-up time (pyplot, once the backend is chosen)
    import matplotlib.pyplot as plt

    pos = _layout(tree)
    per_gen: dict[int, int] = {}
    for n in tree.nodes:
        per_gen[n.generation] = per_gen.get(n.generation, 0) + 1
    tallest = max(per_gen.values())
    height = min(14.0, max(3.0, 0.3 * tallest + 1.6))
    size = 42 if tallest <= 20 else 26 if tallest <= 40 else 14
    colors = _colors(tree)
    returned = next((n.id for n in tree.nodes if n.returned), None)
    bold = _ancestry(tree, returned)
    style: dict[RcKeyType, Any] = {**STYLE, "axes.grid": False}
    with plt.rc_context(style):
        fig, ax = plt.subplots(figsize=(7.2, height))
        try:
            _draw_edges(ax, tree, pos, colors, bold)
            _draw_nodes(fig, ax, tree, pos, size, returned)
            _draw_legend(ax, colors, height)
            _draw_axes(ax, tree)
            fig.tight_layout()
            path.parent.mkdir(parents=True, exist_ok=True)
            fig.savefig(path, format="png", bbox_inches="tight", pad_inches=0.08)
        finally:
            plt.close(fig)
    return path


Positions = dict[str, tuple[float, float]]


def _draw_edges(
    ax: Axes, tree: Lineage, pos: Positions, colors: dict[str, str], bold: set[tuple[str, str]]
) -> None:
    """Each parent -> child edge in its operator's colour; the returned policy's ancestry bold."""
    for e in tree.edges:
        (x0, y0), (x1, y1) = pos[e.parent], pos[e.child]
        on_path = (e.parent, e.child) in bold
        ax.plot(
            [x0, x1],
            [y0, y1],
            color=colors[e.operator],
            lw=2.4 if on_path else 0.9,
            alpha=1.0 if on_path else 0.55,
            zorder=3 if on_path else 1,
            solid_capstyle="round",
        )


def _draw_nodes(
    fig: Figure, ax: Axes, tree: Lineage, pos: Positions, size: int, returned: str | None
) -> None:
    """Open circles (not validated), filled ones coloured by s_val (with a colour bar), the
    returned policy's star, and the seeds' (and imports') names."""
    scored = [n for n in tree.nodes if n.s_val is not None]
    plain = [n for n in tree.nodes if n.s_val is None]
    ax.scatter(
        [pos[n.id][0] for n in plain],
        [pos[n.id][1] for n in plain],
        s=size,
        facecolor="white",
        edgecolor="#6b7280",
        linewidth=0.8,
        zorder=4,
    )
    if scored:
        pts = ax.scatter(
            [pos[n.id][0] for n in scored],
            [pos[n.id][1] for n in scored],
            s=size * 1.3,
            c=[n.s_val for n in scored if n.s_val is not None],
            cmap="viridis",
            edgecolor="#111827",
            linewidth=0.6,
            zorder=5,
        )
        bar = fig.colorbar(pts, ax=ax, fraction=0.035, pad=0.01)
        bar.set_label("s_val (validated policies)")
    if returned is not None:
        x, y = pos[returned]
        ax.scatter(
            [x],
            [y],
            marker="*",
            s=size * 7,
            color="#eab308",
            edgecolor="#854d0e",
            zorder=6,
        )
    for n in tree.nodes:
        if n.name:  # the seeds' (and imports') labels
            x, y = pos[n.id]
            ax.annotate(
                n.name,
                (x, y),
                textcoords="offset points",
                xytext=(-7, 0),
                ha="right",
                va="center",
                fontsize=8,
            )


def _draw_legend(ax: Axes, colors: dict[str, str], height: float) -> None:
    # lazy: start-up time (matplotlib)
    from matplotlib.lines import Line2D

    handles = [Line2D([], [], color=c, lw=2, label=op) for op, c in colors.items()]
    handles += [
        Line2D([], [], ls="", marker="o", mfc="white", mec="#6b7280", label="not validated"),
        Line2D([], [], ls="", marker="*", ms=12, color="#eab308", label="returned policy"),
    ]
    ax.legend(
        handles=handles,
        loc="upper left",
        bbox_to_anchor=(0.0, -0.55 / max(1.0, height - 1.0)),  # below the x label
        ncol=4,
        fontsize=7.5,
        title="edge colour: the operator that made the child",
        title_fontsize=8,
    )


def _draw_axes(ax: Axes, tree: Lineage) -> None:
    gens = sorted({n.generation for n in tree.nodes})
    ax.set_xticks(gens if len(gens) <= 25 else gens[:: max(1, len(gens) // 20)])
    ax.set_xlim(min(gens) - 0.6, max(gens) + 0.6)
    ax.set_yticks([])
    ax.spines["left"].set_visible(False)
    ax.set_xlabel("generation the policy was made in")
    ax.set_title(
        f"{len(tree.nodes)} policies, {len(tree.edges)} parent -> child edges; "
        "bold: the returned policy's ancestry"
    )


def lineage_plot(run: RunData, out: Path) -> Path | None:
    tree = population_lineage(run)
    if not tree.nodes:
        return None
    return draw_lineage(tree, out / "lineage.png")


def lineage_section(run: RunData, plot: Path | None, img: Any, table: Any, esc: Any) -> str:
    tree = population_lineage(run)
    if not tree.nodes:
        return '<p class="missing">No policy yet.</p>'
    made: dict[str, int] = {}
    for n in tree.nodes:
        made[n.operator] = made.get(n.operator, 0) + 1
    validated = sum(1 for n in tree.nodes if n.s_val is not None)
    rows = [[op, k] for op, k in sorted(made.items(), key=lambda kv: (-kv[1], kv[0]))]
    note = (
        f"Every policy the run made ({len(tree.nodes)}; {validated} validated), by the "
        "generation it was made in, linked to its parents; harness trials' children included. "
        "Filled circles: validated (colour: s_val); the star: the returned policy."
    )
    return (
        img(plot, "lineage of the whole population")
        + f'<p class="sub">{esc(note)}</p>'
        + "<details><summary>policies made, by operator</summary>"
        + table(["operator", "policies"], rows, num=(1,))
        + "</details>"
    )
