"""The whole run's configuration: typed, validated, round-trips to YAML.

Unknown keys are errors; every field has a documented default (the defaults are SPEC's: population
10, 20 tasks per policy per generation, 20 inner generations, outer loop every 5, difficulty
0.3). What depends on the task (its reward weights and switchable components, s_val's metrics,
the data files) comes from the task's plug-in (``TaskPlugin.defaults``, tasks/registry.py; the
meeting task's: weights [0.5, 0.2, 0.3] over completeness/format/action_count ...), under
whatever the config sets; ``task`` is validated by the task's own ``TaskConfig`` subclass, so a
task adds its own keys. ``load_config`` turns any validation problem into one ConfigError that
names the key.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import (
    BaseModel,
    Field,
    SerializeAsAny,
    ValidationError,
    field_validator,
    model_validator,
)

from evotrainer.config_base import DEFAULT_TASK, TaskConfig
from evotrainer.config_base import StrictModel as _Strict
from evotrainer.errors import ConfigError
from evotrainer.tasks.registry import BUILTIN, allow_import, plugin_for

MAX_VARIANTS = 1000  # harness variants per outer step (CMA-ES's population size)
MAX_YAML_VALUES = 100_000  # a config holds hundreds; more comes from an alias bomb


class ModelConfig(_Strict):
    spec: str = Field(
        "local:smollm2",
        description=(
            "local:smollm2 | local:smollm2-q4_0 (its weights requantized: faster on x86, "
            "other answers) | local:/path/to/model.gguf | openai:<model> (with base_url)"
        ),
    )
    base_url: str | None = Field(
        None, description="endpoint of an OpenAI-compatible server; default $OPENAI_BASE_URL"
    )
    n_ctx: int = Field(8192, ge=512, description="context window of the embedded model (tokens)")
    n_threads: int | None = Field(
        None, ge=1, description="CPU threads (embedded); None = the cores not already busy"
    )
    concurrency: int = Field(
        4, ge=1, description="parallel requests (HTTP backends; with runner ray: per worker)"
    )
    batch_size: int = Field(
        4,
        ge=1,
        le=64,
        description="embedded model: up to this many prompts decoded together (batched "
        "multi-sequence decoding; instance-major, a group may span meetings, each transcript "
        "prefilled once); the answers are those of one at a time (checked at 4, 8 and 16: "
        "docs/efficiency.md); 1 = one at a time",
    )
    draft_tokens: int = Field(
        0,
        ge=0,
        le=16,
        description="embedded model, batched groups: up to this many prompt-lookup draft "
        "tokens per sequence and decoding step, taken from its own prompt and answer and kept "
        "only where the model chose them (docs/efficiency.md); 0 = no drafts",
    )
    timeout_s: float = Field(120.0, gt=0, description="HTTP request timeout")
    max_retries: int = Field(4, ge=0, description="HTTP retries on 429/5xx/timeouts")
    extra_body: dict[str, Any] = Field(
        default_factory=dict,
        description="extra JSON fields sent with every request to an HTTP backend, e.g. "
        "{repeat_penalty: 1.0} for llama_cpp.server (default 1.1) to decode like the embedded "
        "model; fields the run sets itself (model, messages, temperature, max_tokens ...) win",
    )
    temperature: float = Field(0.0, ge=0, le=2, description="sampling temperature of the agent")
    max_tokens: int = Field(320, ge=16, description="max tokens of one agent answer")
    operator_temperature: float = Field(
        0.8, ge=0, le=2, description="temperature of LLM mutation/crossover calls"
    )
    operator_max_tokens: int = Field(200, ge=16, description="max tokens of one operator call")


class OperatorModelConfig(_Strict):
    """The teacher: the model the LLM-driven operators ask (reflection, paraphrase, merge),
    when it is not the agent model (GEPA's ``reflection_lm``). Its calls count against the
    same budget and go through the same response cache; sampling is model.operator_temperature
    and model.operator_max_tokens. ``operator_model: openai:<name>`` is short for ``spec``."""

    spec: str | None = Field(
        None,
        description="model spec of the operators' model (the forms of model.spec: "
        "openai:<name> with base_url, local:...); None = the agent model (model.spec) edits "
        "the policies as well",
    )
    base_url: str | None = Field(
        None, description="its OpenAI-compatible endpoint; default $OPENAI_BASE_URL"
    )
    api_key_env: str | None = Field(
        None,
        pattern=r"^[A-Za-z_][A-Za-z0-9_]*$",
        description="environment variable holding its server's API key; None = $OPENAI_API_KEY",
    )
    concurrency: int = Field(4, ge=1, description="parallel requests (HTTP)")
    timeout_s: float = Field(120.0, gt=0, description="HTTP request timeout")
    max_retries: int = Field(4, ge=0, description="HTTP retries on 429/5xx/timeouts")
    extra_body: dict[str, Any] = Field(
        default_factory=dict, description="extra JSON fields sent with every request (HTTP)"
    )
    n_ctx: int = Field(8192, ge=512, description="context window (embedded local: model)")
    n_threads: int | None = Field(
        None, ge=1, description="CPU threads (embedded); None = the cores not busy"
    )

    @model_validator(mode="before")
    @classmethod
    def _shorthand(cls, data: Any) -> Any:
        return {"spec": data} if isinstance(data, str) else data

    def as_model(self, agent: ModelConfig) -> ModelConfig | None:
        """The ModelConfig to build the operators' backend from; None = use the agent's."""
        if self.spec is None or not self.spec.strip():
            return None
        return agent.model_copy(
            update={
                "spec": self.spec,
                "base_url": self.base_url,
                "concurrency": self.concurrency,
                "timeout_s": self.timeout_s,
                "max_retries": self.max_retries,
                "extra_body": dict(self.extra_body),
                "n_ctx": self.n_ctx,
                "n_threads": self.n_threads,
                "batch_size": 1,
                "draft_tokens": 0,
            }
        )


class CacheConfig(_Strict):
    enabled: bool = Field(True, description="persistent request-keyed LLM response cache")
    path: str | None = Field(
        None, description="SQLite file; default $EVOTRAINER_CACHE_DIR or ~/.cache/evotrainer"
    )


class BudgetConfig(_Strict):
    max_calls: int | None = Field(None, ge=1, description="hard cap on backend LLM calls")
    max_tokens: int | None = Field(None, ge=1, description="hard cap on prompt+completion tokens")
    max_wall_s: float | None = Field(
        None,
        gt=0,
        description="time limit (seconds of wall time from the start of this process's run; a "
        "resume counts from its own start): checked before every generation and outer step, "
        "the run then stops as with max_calls (summary stopped: timeout) but still validates "
        "its best policy and confirms it, so it ends a little later; `run --timeout`",
    )
    reserve_final: bool = Field(
        True,
        description="with max_calls: hold back the calls one validation costs, so that when the "
        "cap stops the run the final best policy is still validated (and can be returned)",
    )
    max_error_rate: float | None = Field(
        0.5,
        ge=0,
        lt=1,
        description="stop the run (non-zero exit) when more than this share of the last "
        "error_window agent answers failed (dead or broken server, context overflow ...); "
        "None = never stop",
    )
    error_window: int = Field(10, ge=1, description="answers the error rate is measured over")


class InnerConfig(_Strict):
    population: int = Field(10, ge=2, description="policies per generation")
    elites: int = Field(4, ge=1, description="best policies kept unchanged each generation")
    tasks_per_generation: int = Field(20, ge=1, description="training instances per policy")
    generations: int = Field(20, ge=1, description="inner generations in the whole run")
    batch: Literal["per_epoch", "per_generation"] = Field(
        "per_epoch",
        description="draw a new task batch once per harness epoch (elites keep their scores) "
        "or every generation (everyone re-evaluated)",
    )
    tournament_size: int = Field(3, ge=1, description="parent selection: tournament size")
    operators: dict[str, float] | None = Field(
        None, description="operator name -> choice weight; None = built-in defaults"
    )
    max_prompt_chars: int = Field(1500, ge=50, description="longer children are shortened")
    operator_choice: Literal["bandit", "fixed"] = Field(
        "bandit",
        description="bandit: Thompson sampling on each operator's observed success (child "
        "fitter than its best parent), with the operator weights as prior; fixed: draw by weight",
    )
    example_tokens: int = Field(
        160, ge=16, description="few-shot examples are cut to about this many tokens"
    )
    race_first: int = Field(
        2,
        ge=0,
        description="racing: a child meets this many batch instances first and only one whose "
        "paired estimate could make the elites meets the rest (0 = every child meets all)",
    )
    race_margin: float = Field(
        0.0, ge=0, description="racing slack: promote a child within this much of the cut-off"
    )
    anchor_share: float = Field(
        0.5,
        ge=0,
        le=1,
        description="parent choice: with this probability a parent is the anchor (the best "
        "validated policy, kept in the population), else a tournament on training fitness; "
        "so the search also explores around what the real validation data prefers (0 = "
        "training fitness only)",
    )
    neighbours: bool = Field(
        True,
        description="when a policy becomes the anchor, its structural neighbours (each library "
        "output template swapped in, each of the task's seed phrases added) are made one by one "
        "as the anchor's share of the next generations' children, before any random operator: "
        "the search tries every one-step structural change of the best validated policy",
    )
    reflect_examples: int = Field(3, ge=1, description="worst examples shown to reflection")
    seed_prompts: list[str] | None = Field(
        None, description="your own seed policies; None = the task's seeds (A, B, C)"
    )
    seed_components: list[dict[str, str]] | None = Field(
        None,
        description="your own seed policies as named text components, e.g. [{system: 'Write "
        "minutes.', glossary: 'PM: project manager ...'}] (system is required; examples and "
        "template are the known ones; any other name is yours: rendered after them under "
        "its name as a header, and edited like the others); with seed_prompts: both",
    )
    add_components: dict[str, str] = Field(
        default_factory=dict,
        description="named components added to every seed policy (the task's or yours) that "
        "lacks them, e.g. {glossary: '...'}; not system",
    )
    component_choice: Literal["weighted", "round_robin"] = Field(
        "weighted",
        description="which component of a parent an operator edits (one per child). weighted: "
        "the system instruction, or with a small probability (0.15-0.2) another one the "
        "operator can edit (reflection: the instruction only); round_robin: each one in turn, "
        "a parent's next component every generation (GEPA's round-robin component selection; "
        "reflection rewrites the component whose turn it is)",
    )

    @field_validator("seed_components")
    @classmethod
    def _seed_components(cls, v: list[dict[str, str]] | None) -> list[dict[str, str]] | None:
        for i, comps in enumerate(v or []):
            if not (comps.get("system") or "").strip():
                raise ValueError(f"[{i}] needs a non-empty 'system' component")
            _component_names(comps, f"[{i}]")
        return v

    @field_validator("add_components")
    @classmethod
    def _add_components(cls, v: dict[str, str]) -> dict[str, str]:
        if "system" in v:
            raise ValueError("'system' is each seed's own instruction: not added")
        _component_names(v, "")
        return v

    @model_validator(mode="after")
    def _elites_fit(self) -> InnerConfig:
        if self.elites >= self.population:
            raise ValueError(
                f"elites ({self.elites}) must be smaller than population ({self.population})"
            )
        return self


COMPONENT_NAME = re.compile(r"^[a-z][a-z0-9_]{0,31}$")


def _component_names(comps: dict[str, str], where: str) -> None:
    bad = [k for k in comps if not COMPONENT_NAME.match(k)]
    if bad:
        raise ValueError(
            f"{where} component name(s) {bad}: a component name is lower-case letters, digits "
            "and _ (at most 32, a letter first)".strip()
        )


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
        "propose: steered ones can outnumber outer.variants), skip it (the best policy is still "
        "validated) and spend the rest on the inner loop, instead of stopping mid-step with "
        "nothing decided",
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
        "task's; meetings: rougeL 0.5, action_item_f1 0.5)",
    )

    @field_validator("s_val_weights")
    @classmethod
    def _positive(cls, v: dict[str, float]) -> dict[str, float]:
        if not v or any(w < 0 for w in v.values()) or sum(v.values()) <= 0:
            raise ValueError("needs at least one metric and non-negative weights with sum > 0")
        return v


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
OBJECTIVES = ("quality", "robustness", "diversity", "conciseness", "human")
# By default the meta score is s_val, plus robustness when the probe is on and people's
# preference once there are ratings; diversity and conciseness are measured and reported, and
# count only when given a weight.
DEFAULT_OBJECTIVES = {
    "quality": 1.0,
    "robustness": 0.5,
    "diversity": 0.0,
    "conciseness": 0.0,
    "human": 0.5,
}


class MetaConfig(_Strict):
    objectives: dict[str, float] = Field(
        default_factory=lambda: dict(DEFAULT_OBJECTIVES),
        description="the meta-objective vector: objective -> weight (0 = measured and reported "
        "only; objectives you do not name keep their default weight). quality = s_val (outer.s_val_weights); robustness = the probe's share handled "
        "(defences.robustness_probe); diversity = the population's outputs; conciseness = the "
        "'conciseness' component on validation; human = people's predicted preference "
        "(evotrainer review). An objective that is not measured is left out (weights renormalised)",
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


class SurrogateConfig(_Strict):
    enabled: bool = Field(
        False,
        description="screen children with a surrogate of fitness before any LLM call "
        "(evaluation/surrogate.py); screened children keep the prediction as their fitness",
    )
    min_train: int = Field(12, ge=2, description="children evaluated before it may screen")
    min_spearman: float = Field(
        0.2,
        ge=-1,
        le=1,
        description="it screens only while its held-out rank correlation is at least this",
    )
    margin: float = Field(
        0.02, ge=0, description="screen a child predicted below the elites' cut-off by more"
    )
    explore: float = Field(
        0.25,
        ge=0,
        le=1,
        description="share of the children it would screen that are evaluated anyway "
        "(calibration on real inference)",
    )
    window: int = Field(200, ge=10, description="it learns from the last N evaluated children")


class RayConfig(_Strict):
    address: str | None = Field(
        None,
        description="ray.init(address=...) for runner ray: 'auto' or ray://head:10001 of an "
        "existing cluster; None = $RAY_ADDRESS, else a local Ray instance for the run",
    )
    workers: int = Field(
        2, ge=1, description="backend workers (Ray actors), each with its own backend"
    )
    num_cpus: float = Field(1.0, ge=0, description="CPUs each worker reserves")
    num_gpus: float = Field(0.0, ge=0, description="GPUs each worker reserves")
    spread: bool = Field(
        True, description="place the workers on as many nodes as possible (SPREAD scheduling)"
    )
    runtime_env: dict[str, Any] | None = Field(
        None, description="ray.init runtime_env, e.g. {pip: [evotrainer]} for a cluster"
    )


class DistillConfig(_Strict):
    """Distillation (docs/distillation.md): what evolution found is trained into a LoRA adapter
    that the population then carries; prompts evolve on, on the new weights."""

    enabled: bool = Field(
        False,
        description="distil the best policies' answers into a LoRA adapter (needs pip install "
        "'evotrainer[distill]' and the embedded model)",
    )
    after: int = Field(3, ge=1, description="inner generations of prompt evolution first")
    every: int = Field(0, ge=0, description="generations between further distillations (0 = once)")
    max_rounds: int = Field(1, ge=1, description="distillations in a run at most")
    top_policies: int = Field(
        3, ge=1, description="the best policies (by fitness) whose answers are candidate pairs"
    )
    keep_share: float = Field(
        0.5,
        gt=0,
        le=1,
        description="of the candidates (the best-rewarded answer per training instance), the "
        "share kept: those the current harness's reward ranks highest (reward-filtered "
        "self-training)",
    )
    fresh_instances: int = Field(
        8,
        ge=0,
        description="further training instances the best policy answers for distillation "
        "(backend calls), so the adapter sees more than the few batches evolution used",
    )
    min_pairs: int = Field(8, ge=1, description="fewer kept pairs: no adapter this round")
    max_pairs: int = Field(64, ge=1, description="the most pairs one adapter is trained on")
    validate_top: int = Field(
        3, ge=1, description="the best adapter policies validated to decide whether it is kept"
    )
    rank: int = Field(8, ge=1, description="LoRA rank")
    alpha: float = Field(16.0, gt=0, description="LoRA alpha (scale alpha / rank)")
    learning_rate: float = Field(2e-4, gt=0, description="AdamW learning rate")
    epochs: float = Field(2.0, gt=0, description="passes over the pairs")
    max_seq_len: int = Field(
        1536,
        ge=64,
        description="tokens of one pair (prompt + answer); longer ones are cut (a 1,024-token "
        "transcript, the instructions and a 256-token answer need about 1,500)",
    )
    threads: int | None = Field(
        None, ge=1, description="torch CPU threads while training; None = the free cores"
    )


class TrackingConfig(_Strict):
    """An experiment tracker that follows the run's events (run/tracking.py): the config, each
    generation's and outer step's metrics, the harness genes, and at the end the report, the
    best policy and the summary. ``tracking: mlflow`` is short for ``{kind: mlflow}``."""

    kind: Literal["none", "mlflow", "tensorboard"] = Field(
        "none",
        description="none | mlflow (pip install 'evotrainer[mlflow]') | tensorboard (pip "
        "install 'evotrainer[tensorboard]')",
    )
    uri: str | None = Field(
        None,
        description="mlflow: the tracking URI (http://host:5000, or file:/folder with "
        "MLFLOW_ALLOW_FILE_STORE=true on MLflow 3); None = MLflow's own default "
        "($MLFLOW_TRACKING_URI). tensorboard: the log folder; None = RUN_DIR/tensorboard",
    )
    experiment: str = Field("evotrainer", min_length=1, description="mlflow experiment name")
    run_name: str | None = Field(None, description="tracked run's name; None = the run folder's")
    artifacts: bool = Field(
        True,
        description="at the end, log the report, best/ (prompt, policy, validation) and "
        "summary.json (tensorboard: copied to LOGDIR/artifacts) and the policy as text",
    )

    @model_validator(mode="before")
    @classmethod
    def _shorthand(cls, data: Any) -> Any:
        return {"kind": data} if isinstance(data, str) else data


class RunConfig(_Strict):
    seed: int = Field(0, description="master seed of every random choice")
    model: ModelConfig = Field(default_factory=ModelConfig)
    operator_model: OperatorModelConfig = Field(default_factory=OperatorModelConfig)
    runner: Literal["auto", "serial", "threads", "async", "ray"] = Field(
        "auto",
        description="how evaluations run: auto = one at a time for the embedded model, "
        "concurrent coroutines for HTTP servers; ray = backend calls on Ray workers (cache "
        "and budget stay in this process)",
    )
    ray: RayConfig = Field(default_factory=RayConfig)
    surrogate: SurrogateConfig = Field(default_factory=SurrogateConfig)
    cache: CacheConfig = Field(default_factory=CacheConfig)
    budget: BudgetConfig = Field(default_factory=BudgetConfig)
    task: SerializeAsAny[TaskConfig] = Field(default_factory=TaskConfig)
    inner: InnerConfig = Field(default_factory=InnerConfig)
    outer: OuterConfig = Field(default_factory=OuterConfig)
    harness: HarnessConfig = Field(default_factory=HarnessConfig)
    validation: ValidationConfig = Field(default_factory=ValidationConfig)
    defences: DefencesConfig = Field(default_factory=DefencesConfig)
    meta: MetaConfig = Field(default_factory=MetaConfig)
    distill: DistillConfig = Field(default_factory=DistillConfig)
    init_from: str | None = Field(
        None,
        description="warm start: an earlier run directory (same task, any model or corpus) "
        "whose archive front seeds the population and whose best harness seeds the harness",
    )
    report: bool = Field(True, description="write the HTML report when the run ends")
    data_columns: dict[str, str] = Field(
        default_factory=dict,
        description="for data in a Parquet file or a Hugging Face datasets folder "
        "(save_to_disk, one split): the task's record field <- the column holding it, e.g. "
        "{id: dialogue_id, transcript: 'dialogue:turns', references.minutes: summary} "
        "(':turns' splits 'Speaker: text' lines into turns; id: '@row' numbers the rows); a "
        "field not named is read from the column of its own name (docs/data.md; pip install "
        "'evotrainer[hf]')",
    )
    tracking: TrackingConfig = Field(default_factory=TrackingConfig)

    @model_validator(mode="before")
    @classmethod
    def _task_defaults(cls, data: Any) -> Any:
        """Under the given values, the defaults of the task ``task.name`` names."""
        if not isinstance(data, dict):
            return data
        data = {"task": {"name": DEFAULT_TASK}, **data}
        task = data["task"]
        name = task.name if isinstance(task, TaskConfig) else (task or {}).get("name")
        if not isinstance(task, TaskConfig | dict) or not isinstance(name, str | None):
            return data  # the field validation reports it
        return merge_defaults(plugin_for(name or DEFAULT_TASK).defaults, data)

    @field_validator("task", mode="before")
    @classmethod
    def _task_class(cls, value: Any) -> Any:
        """Validate ``task`` with the config class of the task it names (its own keys)."""
        if isinstance(value, TaskConfig):
            value = value.model_dump()
        if isinstance(value, dict) and isinstance(value.get("name", DEFAULT_TASK), str):
            return plugin_for(value.get("name", DEFAULT_TASK)).config.model_validate(value)
        return value

    def to_yaml(self) -> str:
        return yaml.safe_dump(self.model_dump(mode="json"), sort_keys=False)


def merge_defaults(defaults: Any, data: dict[str, Any]) -> dict[str, Any]:
    """``data`` with the sections of ``defaults`` filled in where ``data`` leaves a key out
    (one level deep: a section's key that ``data`` sets replaces the default's whole value)."""
    out = dict(data)
    for section, values in (defaults or {}).items():
        given = out.get(section)
        if isinstance(values, dict) and isinstance(given, dict):
            out[section] = {**values, **given}
        elif isinstance(values, dict) and given is None and section not in out:
            out[section] = dict(values)
        elif section not in out:
            out[section] = values
    return out


def _format_errors(exc: ValidationError, source: str) -> str:
    lines = []
    for err in exc.errors():
        key = ".".join(str(p) for p in err["loc"]) or "(top level)"
        msg = err["msg"]
        if err["type"] == "extra_forbidden":
            msg = "unknown key"
        lines.append(f"{key}: {msg}")
    return f"invalid config ({source}):\n  " + "\n  ".join(lines)


def load_yaml(text: str, source: str) -> Any:
    """``yaml.safe_load`` for configs: ConfigError naming ``source`` for text that is not YAML,
    and for YAML that would blow up once used (an alias bomb, a value that contains itself):
    ``check_yaml_size``."""
    try:
        data = yaml.safe_load(text)
    except (yaml.YAMLError, ValueError, RecursionError) as exc:
        raise ConfigError(f"{source}: not valid YAML: {exc}") from None
    check_yaml_size(data, source)
    return data


def check_yaml_size(value: Any, source: str) -> None:
    """Refuse a loaded YAML value that aliases expand to more than MAX_YAML_VALUES values, or
    that refers to itself. PyYAML shares an anchored value between its aliases, so loading is
    quick, but whatever later copies or serialises the config (a run's config.yaml, the cache
    key of ``model.extra_body``) would expand it without end. Counted once per distinct value."""
    sizes: dict[int, int] = {}
    open_: set[int] = set()

    def size(v: Any) -> int:
        if not isinstance(v, dict | list):
            return 1
        if id(v) in sizes:
            return sizes[id(v)]
        if id(v) in open_:
            raise ConfigError(f"{source}: a YAML alias refers to itself (*alias inside &anchor)")
        open_.add(id(v))
        parts = [*v.keys(), *v.values()] if isinstance(v, dict) else v
        n = 1 + sum(size(x) for x in parts)
        open_.discard(id(v))
        if n > MAX_YAML_VALUES:
            raise ConfigError(
                f"{source}: the YAML expands through its aliases (&anchor / *alias) to more "
                f"than {MAX_YAML_VALUES:,} values; a config needs far fewer (an alias bomb?)"
            )
        sizes[id(v)] = n
        return n

    try:
        size(value)
    except RecursionError:
        raise ConfigError(f"{source}: the YAML is nested too deeply") from None


def _parse_value(raw: str) -> Any:
    try:
        return yaml.safe_load(raw)
    except (yaml.YAMLError, ValueError, RecursionError):
        return raw


def apply_override(data: dict[str, Any], assignment: str) -> None:
    """Apply one ``key.sub=value`` override (value parsed as YAML) to a nested dict."""
    if "=" not in assignment:
        raise ConfigError(f"--set expects key=value, got {assignment!r}")
    key, raw = assignment.split("=", 1)
    value = _parse_value(raw)
    check_yaml_size(value, f"--set {key.strip()}")
    set_value(data, key, value)


def set_value(data: dict[str, Any], key: str, value: Any) -> None:
    """Set ``key.sub`` in a nested dict to ``value`` as it is (no YAML parsing)."""
    parts = key.strip().split(".")
    if not all(parts):
        raise ConfigError(f"--set {key!r}: empty key")
    node = data
    for p in parts[:-1]:
        child = node.setdefault(p, {})
        if not isinstance(child, dict):
            raise ConfigError(f"--set {key}: {p!r} is not a section")
        node = child
    node[parts[-1]] = value


def config_from_dict(data: dict[str, Any], source: str = "config") -> RunConfig:
    try:
        return RunConfig.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(_format_errors(exc, source)) from None


# the keys that hold a file or folder name: relative values in a config file mean the config
# file's folder (``resolve_paths``); ``model.spec`` only for a ``local:`` model file
PATH_KEYS: list[tuple[str, ...]] = [
    ("validation", "data"),
    ("harness", "real_data"),
    ("defences", "terminal_data"),
    ("cache", "path"),
    ("init_from",),
    ("model", "spec"),
    ("operator_model", "spec"),
    ("tracking", "uri"),  # a folder or file: URI; a server's URL is left as it is
    ("task", "name"),  # only a plug-in named by its file: path/to/tasks.py:PLUGIN
]
LOCAL_MODEL_NAMES = re.compile(r"^smollm2(-[a-z0-9_]+)?$")  # local:<name>: a model, not a file


def resolve_paths(data: dict[str, Any], folder: Path) -> dict[str, Any]:
    """``data`` (a config file's contents) with the relative paths under PATH_KEYS made
    absolute against ``folder`` (the config file's): ``evotrainer run -c proj/exp.yaml`` reads
    the data ``exp.yaml`` names next to it, from whatever folder it is started. Values that are
    not strings are left for validation to report."""
    out = dict(data)
    for keys in PATH_KEYS:
        node: Any = out
        for k in keys[:-1]:
            child = node.get(k) if isinstance(node, dict) else None
            if not isinstance(child, dict):
                node = None
                break
            node[k] = child = dict(child)  # never change the caller's dict
            node = child
        if not isinstance(node, dict) or not isinstance(node.get(keys[-1]), str):
            continue
        value = node[keys[-1]]
        if keys[-1] == "spec":
            kind, sep, rest = value.strip().partition(":")
            if kind == "local" and sep and rest and not LOCAL_MODEL_NAMES.match(rest):
                node[keys[-1]] = f"local:{_against(rest, folder)}"
        elif keys == ("tracking", "uri"):
            if "://" not in value and value.strip():
                file = value.startswith("file:")
                where = _against(value.removeprefix("file:"), folder)
                node[keys[-1]] = f"file:{where}" if file else where
        elif keys == ("task", "name"):
            module, sep, attr = value.rpartition(":")
            if sep and (module.endswith(".py") or "/" in module):
                node[keys[-1]] = f"{_against(module, folder)}:{attr}"
        elif value.strip():
            node[keys[-1]] = _against(value, folder)
    return out


def _against(value: str, folder: Path) -> str:
    path = Path(value).expanduser()
    return str(path if path.is_absolute() else (folder / path).resolve())


def load_config(
    path: str | Path | None = None,
    overrides: list[str] | None = None,
    values: dict[str, Any] | None = None,
) -> RunConfig:
    """Read a YAML config (or start from the defaults; relative paths in the file mean its
    folder: ``resolve_paths``), apply ``--set`` overrides (values parsed as YAML; paths relative
    to the current directory, like any command-line value), then ``values``
    (``{"validation.data": "meet #2.jsonl"}``: taken as they are, for options such as
    ``--val-data`` whose value is a file name or a model name, never YAML)."""
    data: dict[str, Any] = {}
    source = "defaults"
    if path is not None:
        p = Path(path)
        if not p.is_file():
            raise ConfigError(f"config file not found: {p}")
        try:
            text = p.read_text(encoding="utf-8")
        except UnicodeDecodeError as exc:
            raise ConfigError(f"{p}: not valid YAML: {exc}") from None
        loaded = load_yaml(text, str(p)) or {}
        if not isinstance(loaded, dict):
            raise ConfigError(f"{p}: the top level must be a mapping of sections")
        data, source = resolve_paths(loaded, p.resolve().parent), str(p)
    for assignment in overrides or []:
        apply_override(data, assignment)
    if overrides:
        source += " + --set " + " ".join(overrides)
    for key, value in (values or {}).items():
        set_value(data, key, value)
        source += f" + {key}={value!r}"
    task = data.get("task")
    if isinstance(task, dict) and isinstance(task.get("name"), str):
        allow_import(task["name"])  # a module:ATTR plug-in the user named (never a run's)
    return config_from_dict(data, source)


def reference_markdown() -> str:
    """The configuration reference (docs/config.md is this text; a test keeps it current)."""
    lines = [
        "# Configuration reference",
        "",
        "Generated from `evotrainer/config.py` by `evotrainer config --markdown`. A YAML config",
        "holds any subset of these sections; `--set section.key=value` overrides one key.",
        "Unknown keys are errors. `evotrainer config` prints the full default YAML.",
        "",
        f"Defaults are those of the default task ({DEFAULT_TASK}); another task sets its own "
        "where it needs them (listed at the end, with its `task` keys).",
        "",
    ]
    defaults = RunConfig()
    top = RunConfig.model_fields
    scalars = [(n, f) for n, f in top.items() if not _is_section(f.annotation)]
    lines += ["## (top level)", "", "| key | default | meaning |", "|---|---|---|"]
    for name, f in scalars:
        lines.append(f"| `{name}` | `{_default_repr(f)}` | {_cell(f.description)} |")
    for name, f in top.items():
        if not _is_section(f.annotation):
            continue
        section = getattr(defaults, name)
        model = type(section)
        lines += ["", f"## {name}", "", "| key | default | meaning |", "|---|---|---|"]
        for sub, sf in model.model_fields.items():
            value = _value_repr(getattr(section, sub))
            lines.append(f"| `{name}.{sub}` | `{value}` | {_cell(sf.description)} |")
    for task in sorted(set(BUILTIN) - {DEFAULT_TASK}):
        plugin = plugin_for(task)
        cfg = config_from_dict({"task": {"name": task}})
        lines += ["", f"## task: {task}", "", "| key | default | meaning |", "|---|---|---|"]
        for sub, sf in plugin.config.model_fields.items():
            value = _value_repr(getattr(cfg.task, sub))
            lines.append(f"| `task.{sub}` | `{value}` | {_cell(sf.description)} |")
        for section, values in plugin.defaults.items():
            for key in values:
                value = _value_repr(getattr(getattr(cfg, section), key))
                lines.append(f"| `{section}.{key}` | `{value}` | the {task} task's default |")
    return "\n".join(lines) + "\n"


def _cell(text: str | None) -> str:
    return (text or "").replace("|", "\\|")


def _is_section(annotation: Any) -> bool:
    return isinstance(annotation, type) and issubclass(annotation, BaseModel)


def _default_repr(f: Any) -> str:
    return _value_repr(f.default_factory() if f.default_factory is not None else f.default)


def _value_repr(value: Any) -> str:
    if isinstance(value, BaseModel):
        return "{...}"
    if isinstance(value, tuple):
        value = list(value)
    return yaml.safe_dump(value, default_flow_style=True).strip().removesuffix("...").strip()
