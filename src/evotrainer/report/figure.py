"""The report's figures: one style (``STYLE``, ``COLORS``) and ``_figure``, a matplotlib
figure (Agg backend, imported lazily) saved as a PNG when its block ends; every plot of the
report (plots.py and the sections' modules) draws in one."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # matplotlib is imported lazily, where a figure is drawn
    from matplotlib.typing import RcKeyType

COLORS = ["#2563eb", "#f97316", "#16a34a", "#dc2626", "#9333ea", "#0891b2", "#ca8a04", "#db2777"]
STYLE: dict[RcKeyType, Any] = {
    "figure.dpi": 110,
    "savefig.dpi": 110,
    "font.size": 9,
    "axes.titlesize": 10,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.color": "#e5e7eb",
    "grid.linewidth": 0.8,
    "axes.edgecolor": "#9ca3af",
    "legend.frameon": False,
    "legend.fontsize": 8,
}


@contextmanager
def _figure(
    path: Path,
    nrows: int = 1,
    height: float = 3.2,
    sharex: bool = True,
    ncols: int = 1,
    integer_x: bool = True,
) -> Iterator[Any]:
    # lazy: start-up time (matplotlib)
    import matplotlib

    matplotlib.use("Agg", force=True)
    # lazy: start-up time (pyplot, once the backend is chosen)
    import matplotlib.pyplot as plt
    from cycler import cycler
    from matplotlib.ticker import MaxNLocator

    style: dict[RcKeyType, Any] = {**STYLE, "axes.prop_cycle": cycler(color=COLORS)}
    with plt.rc_context(style):
        fig, axes = plt.subplots(nrows, ncols, figsize=(7.2, height), sharex=sharex, squeeze=False)
        try:
            flat = [a for row in axes for a in row]
            yield fig, flat
            for ax in flat if integer_x else ():  # generations and counts are whole numbers
                ax.xaxis.set_major_locator(MaxNLocator(integer=True))
            fig.tight_layout()
            path.parent.mkdir(parents=True, exist_ok=True)
            fig.savefig(path, format="png", bbox_inches="tight", pad_inches=0.08)
        finally:
            plt.close(fig)
