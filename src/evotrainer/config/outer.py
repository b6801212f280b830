"""The run config's sections of the outer loop and what it is judged by (config/run.py gathers
the sections): ``outer``, ``harness``, ``validation``, ``defences`` and ``meta``."""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from evotrainer.config.base import StrictModel as _Strict

MAX_VARIANTS = 1000  # harness variants per outer step (CMA-ES's population size)


class OuterConfig(_Strict):
    enabled: bool = Field(True, description="evolve the harness (False = inner GA alone)")
    every: int = Field(
        5,
        ge=1,
        description="an outer step every N inner generations (outer loop off: a validation of "
        "the best policy, to track s_val)",
    )
    variants: int = Field(
        3,
        ge=1,
        le=MAX_VARIANTS,
        description="harness variants proposed per outer step (CMA-ES: its population size)",
    )
    include_incumbent: bool = Field(
        True, description="also trial the unchanged harness, so change must earn its place"
    )
    trial_generations: int = Field(1, ge=1, description="inner generations per variant trial")
    trials: Literal["rerank", "rerun", "rank"] = Field(
        "rerank",
        description="how a harness variant is trialled. 'rerank': one trial run of "
        "trial_generations under the current harness on a fresh batch (the main line's "
        "generation, neighbour moves included); each variant ranks its population by its own "
        "reward weights (calls only for a raced-out child a variant would promote) and the "
        "distinct bests are validated: an outer step costs about one generation more than the "
        "GA alone. A variant's real share is trialled by weighting the batch's real and "
        "synthetic instances to it; its L and task mix take effect from the next batch if it "
        "wins, untrialled. 'rerun': each variant runs its own trial on "
        "its own batch (operators only), concurrently when the backend serves parallel "
        "requests: a full test of every gene, at variants+1 trial runs per step. 'rank': no "
        "trial run and no LLM call: each variant is judged by how its reward ranks the "
        "policies validated so far (Spearman with their s_val; answers re-scored without "
        "references when the training pool is unlabelled); rerank until 5 are validated",
    )
    skip_unaffordable: bool = Field(
        True,
        description="with budget.max_calls: when the calls left cannot pay for an outer step's "
        "trials and their validation (an upper estimate that counts every variant it may "
        "propose: steered ones can outnumber outer.variants; a rank step, trials: rank, costs "
        "only the incumbent's validation), skip it (the best policy is still "
        "validated) and spend the rest on the inner loop, instead of stopping mid-step with "
        "nothing decided; a distillation due after the same generation keeps its calls (a "
        "distillation the calls left cannot pay for is always skipped)",
    )
    optimizer: Literal["gaussian", "cma"] = Field(
        "gaussian", description="weight perturbation: smoothed Gaussian step or CMA-ES"
    )
    weight_sigma: float = Field(0.1, gt=0, le=1, description="std of weight perturbations")
    momentum: float = Field(0.5, ge=0, lt=1, description="share of the last accepted step reused")
    difficulty_step: float = Field(0.1, gt=0, le=0.5, description="how far L moves per step")
    real_share_step: float = Field(
        0.2, gt=0, le=1, description="how far the share of real training instances moves"
    )
    reference_shift: float = Field(
        0.5,
        ge=0,
        le=1,
        description="when the inner loop's best validates clearly below the best validated "
        "policy (the proxy misleads) and real training instances exist, a line search towards "
        "the reference components (ref_*, the validation metric on real training meetings): "
        "one steered variant moves this share of the other components' weight onto them, "
        "another all of it (with the real share at its upper bound); 0 = never",
    )
    rollback_patience: int = Field(2, ge=1, description="roll back after N falls of s_val")
    reinject_best: bool = Field(
        True,
        description="when the inner loop's best validates clearly below the best validated "
        "policy, put that policy back into the population (an elite the GA explores around)",
    )
    reset_every: int | None = Field(
        None, ge=1, description="reset the reward weights to the base every N outer steps"
    )
    s_val_weights: dict[str, float] = Field(
        default_factory=dict,
        description="s_val = weighted mean of these validation aggregates (default: the "
        "task's; meetings: rougeL 0.4, action_item_f1 0.4, readability 0.2)",
    )

    @field_validator("s_val_weights")
    @classmethod
    def _positive(cls, v: dict[str, float]) -> dict[str, float]:
        if not v or any(w < 0 for w in v.values()) or sum(v.values()) <= 0:
            raise ValueError("needs at least one metric and non-negative weights with sum > 0")
        return v


class GeneConfig(_Strict):
    """An override of one declared harness gene (harness/genes.py); keys left out keep the
    declaration's value."""

    initial: float | None = Field(None, description="its value in the first harness")
    low: float | None = Field(None, description="hard lower bound no variant may leave")
    high: float | None = Field(None, description="hard upper bound no variant may leave")
    step: float | None = Field(None, ge=0, description="how far a random step moves it (0: never)")
    trial: str | None = Field(None, description="which trial measures it (generation, ...)")


class HarnessConfig(_Strict):
    difficulty: float = Field(0.3, ge=0, le=1, description="initial generator difficulty L")
    weights: dict[str, float] = Field(
        default_factory=dict,
        description="initial reward weights by component (others start off; default: the "
        "task's); a component that does not apply to an instance (ref_* on synthetic ones) is "
        "left out of its reward",
    )
    real_data: str | None = Field(
        None,
        description="JSONL file of real training instances with human references, mixed into "
        "every batch (validation instances are removed from it); null = synthetic only. A file "
        "named must exist; only the task's default, when absent, falls back to synthetic",
    )
    real_share: float = Field(
        0.5, ge=0, le=1, description="initial share of real instances in a training batch"
    )
    real_share_bounds: tuple[float, float] = Field(
        (0.0, 1.0), description="hard bounds on the real share no harness variant may leave"
    )
    reference_components: list[str] = Field(
        default_factory=list,
        description="validation-metric keys offered as reward components ref_<key> on real "
        "training instances",
    )
    task_mix: dict[str, float] | None = Field(
        None, description="initial mix of task kinds; None = uniform"
    )
    switchable: list[str] = Field(
        default_factory=list, description="extra reward components the outer loop may switch on"
    )
    difficulty_bounds: tuple[float, float] = Field(
        (0.0, 1.0), description="hard bounds no harness variant may leave"
    )
    weight_max: float = Field(1.0, gt=0, le=1, description="hard cap on one normalised weight")
    genes: dict[str, GeneConfig] = Field(
        default_factory=dict,
        description="overrides of declared harness genes by name (initial, low, high, step, "
        "trial): the engine's difficulty and real_share, the task's and the features' own "
        "(docs/design.md, 'the gene table'); difficulty and real_share also take the keys above",
    )

    @field_validator("weights")
    @classmethod
    def _weights_ok(cls, v: dict[str, float]) -> dict[str, float]:
        bad = {k: w for k, w in v.items() if w < 0}
        if bad:
            raise ValueError(f"weights must be >= 0, got {bad}")
        if sum(v.values()) <= 0:
            raise ValueError("at least one weight must be > 0")
        return v

    @model_validator(mode="after")
    def _bounds_ok(self) -> HarnessConfig:
        lo, hi = self.difficulty_bounds
        if not 0 <= lo <= hi <= 1:
            raise ValueError(f"difficulty_bounds must satisfy 0 <= lo <= hi <= 1, got {lo, hi}")
        if not lo <= self.difficulty <= hi:
            raise ValueError(f"difficulty {self.difficulty} is outside difficulty_bounds")
        lo, hi = self.real_share_bounds
        if not 0 <= lo <= hi <= 1:
            raise ValueError(f"real_share_bounds must satisfy 0 <= lo <= hi <= 1, got {lo, hi}")
        if not lo <= self.real_share <= hi:
            raise ValueError(f"real_share {self.real_share} is outside real_share_bounds")
        return self


class ValidationConfig(_Strict):
    data: str | None = Field(
        None,
        description="JSONL file of real instances with references (default: the task's); a "
        "file named must exist; if the task's default file is absent, a held-out synthetic set "
        "is used instead (and the run says so); relative paths in a config file mean its folder",
    )
    limit: int | None = Field(
        16, ge=1, description="use N meetings spread evenly over the file (None = all)"
    )
    confirm: int = Field(
        6,
        ge=0,
        description="of the validation meetings, hold out this many as the confirmation part: "
        "selection never sees them; the returned policy and the best seed are compared on them "
        "(paired, with a bootstrap interval) at the end (0 = no confirmation)",
    )
    return_rule: Literal["better_mean", "ci_above_zero", "selection"] = Field(
        "better_mean",
        description="what the run returns: the selection winner if it beats the best seed on "
        "the confirmation meetings (better_mean: mean paired difference > 0; ci_above_zero: the "
        "95% interval's lower end > 0), else the best seed; selection: the winner regardless",
    )
    refuse_loopier: bool = Field(
        True,
        description="better_mean and ci_above_zero also return the best seed when the winner's "
        "loop share on the confirmation meetings (answers whose distinct word 4-grams are under "
        "half: repetition loops) is higher than the seed's",
    )
    race_first: int = Field(
        4,
        ge=0,
        description="racing: a candidate meets this many selection meetings first and the rest "
        "only if its paired difference to the best so far is above -race_margin (0 = off)",
    )
    race_margin: float = Field(
        0.03, ge=0, description="racing slack on the paired s_val difference"
    )
    each_generation: int = Field(
        2,
        ge=0,
        description="after every inner generation, validate (racing against the best so far) "
        "the N fittest population members not validated yet, so the archive the run returns "
        "from sees more than the outer steps' few candidates (0 = only at outer steps)",
    )
    synthetic_size: int = Field(8, ge=1, description="size of the synthetic fallback set")
    validate_seeds: bool = Field(
        True,
        description="validate every seed policy at the start (not only the proxy-best one), so "
        "a seed that is best on the real data is archived and can be returned",
    )


class DefencesConfig(_Strict):
    example_copy_share: float = Field(
        0.25,
        gt=0,
        le=1,
        description="constitution: an output whose share of 6-word spans copied from the "
        "policy's few-shot examples (and absent from the input) reaches this breaks the rule "
        "'copies_example' (1 = only a full copy)",
    )
    constitution: bool = Field(
        True, description="reject policies whose text or outputs break the constitution"
    )
    allow_private_data: bool = Field(
        False, description="let outputs repeat e-mails/phones/IBANs found in the input"
    )
    extra_patterns: list[str] = Field(
        default_factory=list, description="more regexes of content no policy/output may contain"
    )
    monitor: bool = Field(True, description="proxy-gap monitor: flag suspected reward hacking")
    monitor_window: int = Field(3, ge=2, description="generations / outer steps it looks back")
    terminal_share: float = Field(
        0.0,
        ge=0,
        le=1,
        description="share of fitness from the validation metric on a rotating "
        "meta-validation sample (sparse terminal reward)",
    )
    terminal_data: str | None = Field(
        None,
        description="pool of real meetings for the terminal reward and the discriminator's "
        "human references (never the validation set); null = synthetic (a file named must "
        "exist; only the task's default, when absent, falls back to synthetic)",
    )
    terminal_sample: int = Field(2, ge=1, description="meetings per terminal-reward sample")
    discriminator: bool = Field(
        False, description="adversarial discriminator as a reward component the harness may weight"
    )
    learned_reward: bool = Field(
        False, description="learned reward model (predicts s_val) as a reward component"
    )
    learned_reward_data: Literal["training", "selection"] = Field(
        "training",
        description="what the learned reward model learns from: training = the policies' "
        "scores on a rotating sample of terminal_data (real training meetings with "
        "references); selection = the per-meeting scores of the policies validated on the "
        "selection part (for unlabelled training data: the only labels; never the "
        "confirmation part), their answers scored as in training",
    )
    robustness_probe: int = Field(
        0,
        ge=0,
        description="hostile synthetic meetings (injections, private data) checked at "
        "every validation; the share handled correctly is the 'robustness' metric",
    )

    @field_validator("extra_patterns")
    @classmethod
    def _patterns_compile(cls, v: list[str]) -> list[str]:
        for i, pattern in enumerate(v):
            try:
                re.compile(pattern)
            except (re.error, RecursionError, OverflowError) as exc:
                raise ValueError(
                    f"[{i}] {pattern!r} is not a valid regular expression: {exc}"
                ) from None
        return v


# the objectives of the meta-objective vector (evaluation/objectives.py says how each is measured)
QUALITY, ROBUSTNESS, DIVERSITY, CONCISENESS, READABILITY, HUMAN = OBJECTIVES = (
    "quality",
    "robustness",
    "diversity",
    "conciseness",
    "readability",
    "human",
)
# By default the meta score is s_val, plus robustness when the probe is on and people's
# preference once there are ratings; diversity, conciseness and readability are measured and
# reported, and count only when given a weight.
DEFAULT_OBJECTIVES = {
    "quality": 1.0,
    "robustness": 0.5,
    "diversity": 0.0,
    "conciseness": 0.0,
    "readability": 0.0,
    "human": 0.5,
}


class MetaConfig(_Strict):
    objectives: dict[str, float] = Field(
        default_factory=lambda: dict(DEFAULT_OBJECTIVES),
        description="the meta-objective vector: objective -> weight (0 = measured and reported "
        "only; objectives you do not name keep their default weight). quality = s_val (outer.s_val_weights); robustness = the probe's share handled "
        "(defences.robustness_probe); diversity = the population's outputs; conciseness = the "
        "'conciseness' component on validation; readability = the task metric's 'readability' "
        "(minutes free of repetition loops; already part of the meeting task's s_val); human = people's predicted preference "
        "(evotrainer review). An objective that is not measured is left out (weights renormalised)",
    )
    concise_component: str | None = Field(
        None,
        description="the reward component the conciseness objective averages over the "
        "validation answers, also a feature of people's preferences (default: the task's; "
        "meetings: conciseness; None: no conciseness objective)",
    )
    selection: Literal["weighted", "pareto"] = Field(
        "weighted",
        description="how the outer loop picks a harness variant: weighted = the highest weighted "
        "mean of the vector (meta score); pareto = non-dominated sorting of the variants over the "
        "objectives with weight > 0, ties on the front broken by the largest hypervolume "
        "contribution, then the meta score, then the earlier variant (needs pymoo: evotrainer[moo])",
    )
    human_min_ratings: int = Field(
        3, ge=1, description="ratings needed before the human objective is fitted and used"
    )
    human_prior: float = Field(
        1.0,
        gt=0,
        description="prior precision (L2) of the Bradley-Terry fits of people's ratings; larger = "
        "more ratings needed before a preference moves the meta-objective",
    )

    @field_validator("objectives", mode="before")
    @classmethod
    def _over_defaults(cls, v: Any) -> Any:
        return {**DEFAULT_OBJECTIVES, **v} if isinstance(v, dict) else v

    @field_validator("objectives")
    @classmethod
    def _known(cls, v: dict[str, float]) -> dict[str, float]:
        unknown = sorted(set(v) - set(OBJECTIVES))
        if unknown:
            raise ValueError(f"unknown objective(s) {unknown}; known: {list(OBJECTIVES)}")
        if any(w < 0 for w in v.values()) or sum(v.values()) <= 0:
            raise ValueError("weights must be >= 0 with at least one > 0")
        return v
