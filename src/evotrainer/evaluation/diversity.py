"""Population diversity: mean pairwise distance of policy texts (1 - Jaccard of word sets)."""

from __future__ import annotations

import re
from collections.abc import Sequence

_WORD = re.compile(r"[a-z0-9']+")


def mean_pairwise_distance(texts: Sequence[str]) -> float:
    sets = [set(_WORD.findall(t.lower())) for t in texts]
    pairs = [(a, b) for i, a in enumerate(sets) for b in sets[i + 1 :]]
    if not pairs:
        return 0.0
    total = 0.0
    for a, b in pairs:
        union = a | b
        total += 1 - (len(a & b) / len(union) if union else 1.0)
    return total / len(pairs)
