"""The external optimisers, on their own metered stack over the OpenAI-compatible endpoint
(benchmarks/baselines.py wires them to the task, metric and budget): ``gepa`` (the gepa
package; policy A its seed, GEPA's train set its reflection data, the selection split its
valset) and ``evoprompt_ga`` (promptolution's EvoPromptGA, from A, B and C). Both return
their best text with the profile's decoding and loop-cut genes."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from benchmarks import baselines
from benchmarks.bench import Bench, RunOut, with_genes
from evotrainer.policy.genome import PolicyGenome


def gepa(bench: Bench, seed: int) -> RunOut:
    return _external(
        bench,
        "gepa",
        seed,
        baselines.run_gepa,
        bench.seed_policies()[0].render(),
        bench.gepa_train.instances,
        bench.selection.instances,
    )


def evoprompt_ga(bench: Bench, seed: int) -> RunOut:
    return _external(
        bench,
        "evoprompt_ga",
        seed,
        baselines.run_evoprompt,
        [p.render() for p in bench.seed_policies()],
        bench.selection.instances,
    )


def _external(
    bench: Bench, name: str, seed: int, optimise: Callable[..., dict[str, Any]], *inputs: Any
) -> RunOut:
    """An external optimiser (``optimise(scorer, *inputs, sampling, seed)`` -> dict with
    ``best`` and ``selection_s_val``) on its own metered endpoint stack."""
    t0 = time.perf_counter()
    stack = bench.stack(name, seed, backend=bench.endpoint(), max_calls="budget")
    scorer = baselines.Scorer(
        bench.task,
        stack,
        bench.agent_sampling(seed),
        bench.weights,
        decoding=bench.decoding,
        cut=bench.cut,
    )
    if bench.domain == "dialogue":
        from benchmarks.dialogue import feedback_text

        scorer.feedback = feedback_text
    out = optimise(scorer, *inputs, bench.operator_sampling(seed), seed)
    best = with_genes(PolicyGenome.from_text(out.pop("best"), name=name), bench.decoding, bench.cut)
    return RunOut(
        best, out.pop("selection_s_val"), scorer.stack.budget, time.perf_counter() - t0, out
    )
