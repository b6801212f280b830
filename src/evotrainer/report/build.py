"""``evotrainer report RUN_DIR``: write RUN_DIR/report/index.html (and the plots as PNGs beside
it). Safe on a run in progress: it only reads the run directory, and writes atomically; a
report/ folder that is a symbolic link is refused (nothing is written through it)."""

from __future__ import annotations

from pathlib import Path

from evotrainer.report.data import load_run
from evotrainer.report.html import render_page
from evotrainer.report.plots import all_plots
from evotrainer.run.checkpoint import atomic_write, real_dir


def build_report(run_dir: Path) -> Path:
    """Build the report; return the path of index.html. Raises EvoTrainerError when run_dir is
    not a run directory."""
    run = load_run(Path(run_dir))
    out = real_dir(run.path, run.path / "report")
    for old in out.glob("*.png"):  # a plot that has no data any more must not linger
        old.unlink(missing_ok=True)
    plots = all_plots(run, out)
    index = out / "index.html"
    atomic_write(index, render_page(run, plots), root=run.path)
    return index
