"""The run config's ``inner`` section (config/run.py gathers the sections): the inner GA over
policies, and the rule for component names it shares with the seeds."""

from __future__ import annotations

import re
from typing import Literal, get_args

from pydantic import Field, field_validator, model_validator

from evotrainer.config.base import StrictModel as _Strict

TunableGene = Literal[
    "repeat_penalty", "frequency_penalty", "presence_penalty", "max_tokens", "loop_cut"
]


class DecodingConfig(_Strict):
    """Decoding genes (policy/decoding.py): how a policy's model samples its answers."""

    repeat_penalty: float = Field(
        1.0, ge=1.0, le=1.5, description="llama.cpp's repetition penalty, last 64 tokens (1 = off)"
    )
    frequency_penalty: float = Field(0.0, ge=0, le=1.5, description="OpenAI's (0 = off)")
    presence_penalty: float = Field(0.0, ge=0, le=1.5, description="OpenAI's (0 = off)")
    max_tokens: int | None = Field(
        None, ge=16, le=4096, description="longest answer; None = model.max_tokens"
    )
    stop: list[str] = Field(
        default_factory=list, max_length=4, description="strings that end an answer"
    )


class LoopCutConfig(_Strict):
    """The output post-processor's genes (policy/postprocess.py): the loop cut."""

    enabled: bool = Field(False, description="cut repetition loops out of every answer")
    collapse_runs: bool = Field(
        True, description="a phrase of 1-8 words said 3+ times in a row is kept once"
    )
    drop_repeats: bool = Field(
        True, description="drop sentences and lines that repeat what was written above them"
    )
    seen_share: float = Field(
        1.0,
        ge=0.5,
        le=1.0,
        description="drop_repeats: a sentence goes when this share of its word 4-grams was "
        "already written (1 = only word-for-word repeats)",
    )
    cut_ngram: int = Field(
        0,
        ge=0,
        le=24,
        description="end the answer before the first sentence that repeats a word n-gram of "
        "this length (0 = off; else 4-24)",
    )
    drop_blanks: bool = Field(
        False,
        description="apply the task's rule for a template's unfilled blanks last: a sentence "
        "or line that holds one goes ('- <action item 1>:'), a slot used as a label keeps its "
        "word ('- <owner>: Johno' -> '- Owner: Johno')",
    )

    @field_validator("cut_ngram")
    @classmethod
    def _cut_ngram(cls, v: int) -> int:
        if 0 < v < 4:
            raise ValueError("must be 0 (off) or 4..24")
        return v


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

    seed_decoding: DecodingConfig = Field(
        default_factory=DecodingConfig,
        description="the decoding genes every seed policy starts with (the task's defaults: "
        "docs/readability.md); the decoding operator evolves them per policy",
    )
    seed_postprocess: LoopCutConfig = Field(
        default_factory=LoopCutConfig,
        description="the loop cut every seed policy starts with (the task's defaults); the "
        "decoding operator evolves it per policy",
    )
    tunable_genes: list[TunableGene] = Field(
        default_factory=lambda: list(get_args(TunableGene)),
        description="the genes the decoding operator may change (leave repeat_penalty out for "
        "a server that rejects it, e.g. OpenAI's own)",
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
