"""HTML for the report's pages: escaping, number formatting and tables (html.py and the
sections' modules)."""

from __future__ import annotations

import html
import math
from collections.abc import Iterable, Sequence
from typing import Any


def esc(x: Any) -> str:
    return html.escape("" if x is None else str(x), quote=True)


def fmt(x: Any, digits: int = 3) -> str:
    if x is None:
        return "–"
    if isinstance(x, bool):
        return "yes" if x else "no"
    if isinstance(x, int):
        return f"{x:,}"
    if isinstance(x, float):
        if math.isnan(x):
            return "–"
        return f"{x:,.{digits}f}"
    return str(x)


def _table(headers: Sequence[str], rows: Iterable[Sequence[Any]], num: Sequence[int] = ()) -> str:
    head = "".join(
        f'<th class="num">{esc(h)}</th>' if i in num else f"<th>{esc(h)}</th>"
        for i, h in enumerate(headers)
    )
    body = []
    for row in rows:
        cells = "".join(
            f'<td class="num">{esc(fmt(c))}</td>' if i in num else f"<td>{esc(fmt(c))}</td>"
            for i, c in enumerate(row)
        )
        body.append(f"<tr>{cells}</tr>")
    return f'<div class="scroll"><table><tr>{head}</tr>{"".join(body)}</table></div>'
