"""Where two JSON values differ, one line per differing leaf (dotted paths): what
bench_identity.py and demo_identity.py report between a base commit's output and this tree's."""

from __future__ import annotations

from typing import Any


def differences(a: Any, b: Any, path: str = "") -> list[str]:
    """Where two JSON values differ (dotted paths), one line per leaf."""
    if isinstance(a, dict) and isinstance(b, dict):
        out = []
        for k in sorted(set(a) | set(b)):
            where = f"{path}.{k}" if path else str(k)
            if k not in a or k not in b:
                out.append(f"{where}: only in {'base' if k in a else 'this tree'}")
            else:
                out += differences(a[k], b[k], where)
        return out
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [
            d
            for i, (x, y) in enumerate(zip(a, b, strict=True))
            for d in differences(x, y, f"{path}[{i}]")
        ]
    if isinstance(a, str) and isinstance(b, str) and "\n" in a + b:
        return _text_differences(a, b, path)
    return [] if a == b else [f"{path}: {str(a)[:160]!r} != {str(b)[:160]!r}"]


def _text_differences(a: str, b: str, path: str) -> list[str]:
    """The first differing lines of two texts (a table)."""
    x, y = a.splitlines(), b.splitlines()
    out = [
        f"{path}:{i + 1}: {p!r} != {q!r}"
        for i, (p, q) in enumerate(zip(x, y, strict=False))
        if p != q
    ]
    if len(x) != len(y):
        out.append(f"{path}: {len(x)} lines != {len(y)} lines")
    return out[:12]
