"""Every method of the quality benchmark by name, in the order the tables list them: what it
runs (``run(bench, seed)``), the rows it writes (row -> description), whether it is an engine
cell (its settings are the engine's: benchmarks/cells/settings.py) with the outer loop on.

The first six are the methods of a profile that names none (quick, full, standard); the others
belong to the profiles that name them (scarce, dialogue, distill)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

from benchmarks.bench import Bench, RunOut
from benchmarks.distill import ENGINE_DISTILL
from benchmarks.methods import evotrainer, external, random_search, seeds, weights


@dataclass(frozen=True)
class Method:
    name: str
    run: Callable[[Bench, int], RunOut | dict[str, RunOut]]
    rows: dict[str, str]  # row -> what it is (the tables' rows; most methods: one, their name)
    engine: bool = False  # an EvoTrainer run (its cells read the engine settings)
    outer: bool = False  # the engine's outer loop on
    # its rows are in every results directory's summary; False: only where the profile runs
    # the method (the scarce and dialogue methods; the distill methods came before the rule)
    always_listed: bool = True


def _engine(name: str, outer: bool, what: str, harness: str | None, listed: bool) -> Method:
    run = partial(evotrainer.run, name=name, outer=outer, harness=harness)
    return Method(name, run, {name: what}, engine=True, outer=outer, always_listed=listed)


def _distilling(name: str, what: str, listed: bool = True) -> Method:
    return _engine(name, ENGINE_DISTILL[name], what, name, listed)


SEED_ROWS = {
    "seed_A": "seed policy A unchanged",
    "seed_B": "seed policy B unchanged",
    "seed_C": "seed policy C unchanged",
    "seed_best": "best of A, B, C on the selection data",
}
REGISTRY: tuple[Method, ...] = (
    Method("seeds", seeds.run, SEED_ROWS),
    Method(
        "random_search",
        random_search.run,
        {"random_search": "random search over prompt variations of the seeds"},
    ),
    _engine("inner_ga", False, "EvoTrainer inner GA alone (outer.enabled=false)", None, True),
    _engine("evotrainer", True, "EvoTrainer with co-evolution (outer.enabled=true)", None, True),
    Method(
        "gepa", external.gepa, {"gepa": "GEPA (gepa package), adapter on the same task and metric"}
    ),
    Method(
        "evoprompt_ga", external.evoprompt_ga, {"evoprompt_ga": "EvoPromptGA from promptolution"}
    ),
    _engine(
        "fixed",
        False,
        "fixed harness: the seed's R on unlabelled meetings, GA alone (scarce profile)",
        "fixed",
        False,
    ),
    _engine(
        "labels_ga",
        False,
        "just use your labels: the GA trains on the labelled selection meetings",
        "labels_ga",
        False,
    ),
    _engine(
        "uniform_mix",
        True,
        "co-evolution with every simulated persona alike (dialogue profile: the persona mix "
        "ablated)",
        "uniform_mix",
        False,
    ),
    Method(
        "weights_only",
        partial(weights.run, method="weights_only"),
        {
            "weights_only": "the best seed with a LoRA adapter trained on its answers the harness kept"
        },
    ),
    Method(
        "sft_refs",
        partial(weights.run, method="sft_refs"),
        {"sft_refs": "the best seed with a LoRA adapter trained on the human references (SFT)"},
    ),
    _distilling("alternation", "EvoTrainer with distillation: prompts -> weights -> prompts"),
    _distilling("alternation_frozen", "the GA alone with distillation (the harness frozen)"),
    _distilling(
        "alternation_per_scale",
        "alternation, its pairs ranked against answers on the same reward components (added "
        "after the five)",
    ),
    # issue 47 (distill-1000.yaml): weights first, prompts on them, the harness choosing the
    # later distillations' data mix; and its ablations
    Method(
        "sft_refs_cpu",
        partial(weights.run, method="sft_refs_cpu"),
        {"sft_refs_cpu": "sft_refs trained for more epochs (the full method's training CPU)"},
        always_listed=False,
    ),
    _distilling(
        "weights_prompts",
        "weights first (SFT on the references), prompts evolved on them, later distillations "
        "under the harness's data-mix genes",
        False,
    ),
    _distilling("weights_prompts_once", "weights -> prompts, no later distillation", False),
    _distilling(
        "weights_prompts_frozen",
        "weights_prompts with the harness frozen (the data mix at its initial value)",
        False,
    ),
    _distilling(
        "weights_prompts_refs", "weights_prompts, later distillations on references only", False
    ),
    _distilling(
        "weights_prompts_own", "weights_prompts, later distillations on own answers only", False
    ),
)
BY_NAME = {m.name: m for m in REGISTRY}
DEFAULT = tuple(m.name for m in REGISTRY[:6])  # the methods of a profile that names none
NAMES = tuple(BY_NAME)
ENGINE = tuple(m.name for m in REGISTRY if m.engine)
DISTILL = (
    "weights_only",
    "sft_refs",
    "sft_refs_cpu",
    *ENGINE_DISTILL,
)  # the methods that train an adapter
DESCRIPTIONS = {row: what for m in REGISTRY for row, what in m.rows.items()}
ROWS = tuple(row for name in DEFAULT for row in BY_NAME[name].rows)  # a result file's rows
ALL_ROWS = tuple(DESCRIPTIONS)  # a results directory's rows


def get(name: str) -> Method:
    return BY_NAME[name]


def profile_methods(settings: dict) -> tuple[str, ...]:
    """The methods a profile compares (``methods`` in its settings; default ``DEFAULT``)."""
    return tuple(settings.get("methods") or DEFAULT)
