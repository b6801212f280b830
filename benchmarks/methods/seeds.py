"""``seeds``: the task's hand-written seed policies A, B, C unchanged, and the best of the
three on the selection data (``seed_best``). Greedy decoding: one cell stands for every seed."""

from __future__ import annotations

import time

from benchmarks.bench import Bench, RunOut


def run(bench: Bench, seed: int) -> dict[str, RunOut]:
    t0 = time.perf_counter()
    stack = bench.stack("seeds", seed)
    seeds = bench.seeds()
    res = bench.validator(stack, seed).validate(seeds)
    wall = time.perf_counter() - t0
    out = {f"seed_{p.name}": RunOut(p, res[p.id].s_val, stack.budget, wall) for p in seeds}
    best = max(seeds, key=lambda p: (res[p.id].s_val, -ord(p.name)))
    out["seed_best"] = RunOut(best, res[best.id].s_val, stack.budget, wall, {"chosen": best.name})
    return out
