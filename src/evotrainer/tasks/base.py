"""What a task plugs into EvoTrainer: a generator, an environment (``Task.rollout``: the episode
of one policy on one instance, one turn or several), a way to prompt, parse and score, a
validation metric, a loader for real data, seed policies, and what the engine's generic parts
need to know about the domain (the operators' vocabulary, which reward component stands for
which validation metric, which constitution rules apply). Everything a task may provide is
declared here; ``BaseTask`` gives the optional parts a default. The meeting-minutes task
(tasks/meetings) and the code gym (tasks/code) implement it; docs/write-your-own-task.md walks
through a small one.

Failure rules, shared by every plug-in:
- a RewardComponent or ValidationMetric must not raise on bad model output: it scores 0 and says
  why in its feedback. (The evaluator still guards against bugs: an exception is caught, the
  example scores 0 and the exception text becomes the feedback.)
- a loader raises DataError naming the file and line of the first malformed record.
- a generator is a pure function of (n, difficulty, mix, rng): same rng state, same instances.
- ``Task.rollout`` raises EvoTrainerError (LLMError, ContextOverflowError ...) when the first
  answer cannot be had: the evaluator records the error on the rollout and scores it 0.
  BudgetExceeded always propagates. A failure in a later turn ends the episode with the answer
  so far (the turn's observation says what happened).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, cast, runtime_checkable

from evotrainer.llm.base import LLMClient, SamplingParams
from evotrainer.llm.postprocessed import raw_text
from evotrainer.operators.base import FeedbackEdit  # defined with the operator applying it
from evotrainer.operators.vocabulary import GENERAL, InstructionVocabulary
from evotrainer.policy.genome import PolicyGenome
from evotrainer.types import (
    ComponentScore,
    GeneSpec,
    Instance,
    Message,
    Rollout,
    Trajectory,
    Turn,
)

# the constitution's rules on outputs (defences/constitution.py); a task names those that make
# sense for its outputs (a code answer that repeats a long number literal leaks nothing)
OUTPUT_RULES = frozenset({"harmful_content", "private_data", "copies_example"})


@runtime_checkable
class TaskGenerator(Protocol):
    """Produces training instances with ground truth. ``kinds`` lists the task types whose mix the
    harness may evolve; ``difficulty`` is L in [0, 1]."""

    kinds: tuple[str, ...]

    def sample(
        self,
        n: int,
        difficulty: float,
        rng: random.Random,
        mix: Mapping[str, float] | None = None,
    ) -> list[Instance]: ...


@runtime_checkable
class SamplesWithGenes(Protocol):
    """A generator that reads the harness's genes (its task's own, declared with
    ``HasHarnessGenes``, besides ``difficulty``): the batch source hands it every gene by name
    instead of the difficulty alone. Same purity rule as ``TaskGenerator.sample``."""

    def sample_with_genes(
        self,
        n: int,
        genes: Mapping[str, float],
        rng: random.Random,
        mix: Mapping[str, float] | None = None,
    ) -> list[Instance]: ...


@runtime_checkable
class RewardComponent(Protocol):
    """One term of the training reward: a score in [0, 1] and a short feedback text. ``parsed`` is
    whatever ``Task.parse`` returned for ``output``."""

    name: str
    description: str

    def score(self, instance: Instance, output: str, parsed: Any) -> ComponentScore: ...


@runtime_checkable
class ValidationMetric(Protocol):
    """Judges outputs against human references. ``score`` returns one row per instance; a value
    of None means "not applicable" (e.g. no reference action items) and is left out of the mean.
    ``aggregate`` turns rows into the named aggregates that s_val combines."""

    keys: tuple[str, ...]

    def score(self, instance: Instance, output: str, parsed: Any) -> dict[str, float | None]: ...

    def aggregate(self, rows: Sequence[Mapping[str, Any]]) -> dict[str, float]: ...


@runtime_checkable
class HasHarnessGenes(Protocol):
    """A task with numeric harness genes of its own (harness/genes.py: the gene table), e.g.
    how patient its simulated users are. Each is one ``GeneSpec`` declaration; the task reads
    its value from the harness it is handed (``harness.genes[name]``)."""

    def harness_genes(self) -> Sequence[GeneSpec]: ...


def task_harness_genes(task: object) -> list[GeneSpec]:
    """The genes ``task`` declares (none when it declares none)."""
    return list(task.harness_genes()) if isinstance(task, HasHarnessGenes) else []


@runtime_checkable
class HasReferenceFreeKeys(Protocol):
    """A validation metric some of whose keys need no reference (they describe the answer
    alone: its length, how often it repeats itself): a meeting is only usable for validation
    when one of its *other* keys can be scored."""

    reference_free_keys: tuple[str, ...]


def reference_free_keys(metric: ValidationMetric) -> frozenset[str]:
    """The keys of ``metric`` that need no reference (empty when it declares none)."""
    if isinstance(metric, HasReferenceFreeKeys):
        return frozenset(metric.reference_free_keys)
    return frozenset()


def combine_s_val(aggregates: Mapping[str, float | None], weights: Mapping[str, float]) -> float:
    """Weighted mean of the aggregates over the weighted keys present (weights of missing or None
    keys are renormalised away). 0.0 when no weighted key is present."""
    present = {k: w for k, w in weights.items() if w > 0 and aggregates.get(k) is not None}
    total = sum(present.values())
    if total <= 0:
        return 0.0
    # present holds only keys whose aggregate is not None
    return sum(w * float(cast(float, aggregates[k])) for k, w in present.items()) / total


@dataclass(frozen=True)
class HarnessHints:
    """What the outer loop's weakness analysis needs to know about a task's reward components.

    ``proxies``: reward component -> (the validation aggregate it stands for, the value below
    which that aggregate counts as low); a component saturated in training while its aggregate
    is low is suspected of being gamed. ``low``: the low threshold of an aggregate when it is
    used through a reference component ``ref_<key>`` (default 0.12). ``shape``: components that
    state a shape requirement (a format), never given the weight moved off a gamed component.
    ``receivers``: components that, when switched off, receive that weight first."""

    proxies: Mapping[str, tuple[str, float]] = field(default_factory=dict)
    low: Mapping[str, float] = field(default_factory=dict)
    shape: tuple[str, ...] = ()
    receivers: tuple[str, ...] = ()

    def proxy_of(self, component: str) -> tuple[str, float] | None:
        """The validation aggregate a reward component stands for, and its "low" threshold."""
        if component.startswith("ref_"):  # harness/reference.py: ref_<key> stands for <key>
            key = component[len("ref_") :]
            return key, self.low.get(key, 0.12)
        return self.proxies.get(component)


@dataclass(frozen=True)
class OutputFeatures:
    """Numbers that describe one output on its own (its length, its structure ...), named:
    ``of(output)`` returns one value per name, in ``names`` order."""

    names: tuple[str, ...]
    of: Callable[[str], list[float]]


@runtime_checkable
class HasOutputFeatures(Protocol):
    """A task whose outputs the learned reward model can describe (defences/learned_reward.py:
    the features beside the reward components it predicts the validation score from)."""

    def output_features(self) -> OutputFeatures: ...


@runtime_checkable
class StripsBlanks(Protocol):
    """A task that knows a template's unfilled blanks in its answers ("<owner>: <task>",
    "[insert summary here]"): the post-processor's ``drop_blanks`` step applies ``strip_blanks``
    (policy/postprocess.py)."""

    def strip_blanks(self, text: str) -> str: ...


@runtime_checkable
class HasHumanReferences(Protocol):
    """A task that can write reference answers for synthetic instances like its training
    ones: the discriminator's "human" class (defences/discriminator.py). ``n`` texts drawn with
    ``seed``, none from an instance in ``exclude_ids``."""

    def human_references(
        self, n: int, seed: int, exclude_ids: Collection[str] = ()
    ) -> list[str]: ...


@runtime_checkable
class Unlabels(Protocol):
    """An optional capability: an instance as an unlabelled input (its human references
    removed). The outer loop's rank judgement (``outer.trials: rank``) re-scores validation
    answers on such views when the training pool is unlabelled, so that each reward component
    is judged as it scores in training."""

    def unlabelled(self, instance: Instance) -> Instance: ...


@runtime_checkable
class ParsesEpisodes(Protocol):
    """An optional capability: the reward components and the validation metric judge the whole
    episode (every turn of a multi-turn rollout and what the environment did), not only the last
    answer. ``parse_episode(instance, rollout)`` then replaces ``parse(rollout.output)`` wherever
    a rollout is scored (the evaluator, validation, the rank judgement: ``parse_rollout``), and
    what it returns is the ``parsed`` argument of every RewardComponent and of the
    ValidationMetric. A failed rollout is not parsed. Like ``parse``, it must not raise on bad
    output. Single-turn tasks need none of it."""

    def parse_episode(self, instance: Instance, rollout: Rollout) -> Any: ...


@runtime_checkable
class HasEnvironmentModel(Protocol):
    """An optional capability: the environment asks a model of its own (the dialogue task's
    LLM-played customer). ``environment_model()`` names it: a model spec, ``"agent"`` for the
    agent's model, or None (the environment needs no model). Before any rollout the engine (and
    ``evotrainer eval``) builds that model like the operators' teacher, on the run's one budget
    and one response cache (``evaluation/from_config.bind_environment``), and hands it over with
    ``bind_environment(client)``: every call the environment makes counts against the run's caps
    and a rerun answers from the cache. An environment never bound uses the rollout's own ``llm``
    (the agent's client: budgeted and cached too)."""

    def environment_model(self) -> str | None: ...

    def bind_environment(self, client: LLMClient) -> None: ...


@runtime_checkable
class LoadsTrainingData(Protocol):
    """An optional capability: a real data file holds the task's validation items and its
    training instances as different views (the dialogue task: a MultiWOZ file's human reply
    turns validate, its customers' goals train). ``load_training(path, held_out)`` reads the
    training view (``harness.real_data``, ``defences.terminal_data``); none of what it returns
    may come from the same source as a held-out validation instance (``held_out``: their ids).
    ``load`` stays the validation view."""

    def load_training(self, path: str | Path, held_out: Collection[str]) -> list[Instance]: ...


@runtime_checkable
class WritesInstances(Protocol):
    """An optional capability: ``evotrainer generate --task NAME`` writes what the task's
    generator made (``generator().sample``) to a file in the task's own data format, one its
    ``load`` reads back with the ground truth (the meeting task: meetings JSONL; the code gym:
    problems JSONL with their tests). ``write_instances(path, instances)`` creates missing
    parent folders, lets an OSError propagate (the command names the file) and returns a note
    on what it wrote for the command's closing line ("mean 412 words"), or "". A task without
    it is refused by name."""

    def write_instances(self, path: Path, instances: Sequence[Instance]) -> str: ...


@runtime_checkable
class ReadsText(Protocol):
    """An optional capability: an instance made of the bare input text a user holds (the
    meeting task: a transcript of "Speaker: text" lines), with no reference, for calling a
    policy on a text (``evotrainer.Policy``, ``evotrainer apply``). ``instance_id`` is its id.
    A text the task cannot read raises DataError saying why. A task without it takes its
    examples as records (mappings of its data format's fields) only."""

    def text_instance(self, text: str, instance_id: str) -> Instance: ...


def parse_rollout(task: Task, instance: Instance, rollout: Rollout) -> Any:
    """The ``parsed`` argument the reward components and the metric get for a rollout: None for
    a failed one, ``parse_episode`` for a task that judges whole episodes, else
    ``parse(output)``."""
    if rollout.error is not None:
        return None
    if isinstance(task, ParsesEpisodes):
        return task.parse_episode(instance, rollout)
    return task.parse(rollout.output)


@runtime_checkable
class Task(Protocol):
    """A complete task plug-in."""

    name: str

    def generator(self) -> TaskGenerator: ...

    def rollout(
        self,
        instructions: str,
        instance: Instance,
        llm: LLMClient,
        sampling: SamplingParams,
    ) -> Trajectory:
        """The episode of one policy (its rendered text) on one instance: the environment. A
        single-turn task answers once (``single_turn``); a multi-turn one may show the agent
        what its answer did (e.g. failing tests) and let it revise. Every LLM call goes
        through ``llm`` (cache and budget included)."""
        ...

    def seed_policies(self) -> list[PolicyGenome]:
        """The hand-written initial policies (``inner.seed_prompts`` replaces them)."""
        ...

    def max_calls_per_rollout(self) -> int:
        """The most LLM calls one rollout makes (its turns): what a budget must hold back for a
        validation (``budget.reserve_final``)."""
        ...

    def render(self, instructions: str, instance: Instance) -> tuple[list[Message], bool]:
        """Chat messages for one policy on one instance, and whether the input was truncated.

        Layout rule: put the instance (long, shared by all policies) first and the policy's text
        after it, so backends that reuse a shared token prefix (llama.cpp, vLLM prefix caching)
        prefill each instance once for the whole population."""
        ...

    def parse(self, output: str) -> Any: ...

    def reward_components(self) -> dict[str, RewardComponent]: ...

    def validation_metric(self) -> ValidationMetric: ...

    def load(self, path: str | Path) -> list[Instance]: ...

    def synthetic_validation(self, n: int, seed: int) -> list[Instance]:
        """A held-out synthetic validation set, used when no real data file is available."""
        ...

    # -- the structural search space (operators/structure.py, fewshot.py, feedback.py) -------
    def output_templates(self) -> Sequence[str]:
        """A small library of output templates the ``template`` operator adds or swaps in:
        section headings with <placeholders>, one section per block."""
        ...

    def reference_example(self, instance: Instance) -> str | None:
        """The human reference of a real training instance written as the output a policy
        should produce (a few-shot example), or None when the instance has none."""
        ...

    def feedback_edits(self) -> Mapping[str, Sequence[FeedbackEdit]]:
        """Reward component name -> edits that address a low score of that component."""
        ...

    # -- what the engine's generic parts need to know about the domain -----------------------
    def vocabulary(self) -> InstructionVocabulary:
        """Style phrases and domain synonyms for the lexical operators."""
        ...

    def harness_hints(self) -> HarnessHints:
        """Which reward component stands for which validation metric (weakness analysis)."""
        ...

    def input_text(self, instance: Instance) -> str:
        """The text the agent reads for an instance (privacy checks, input length)."""
        ...

    def reference_text(self, instance: Instance) -> str | None:
        """The human reference of an instance as text (report, discriminator), or None."""
        ...

    def hostile_instances(self, n: int, seed: int) -> list[Instance]:
        """``n`` hostile inputs (prompt injections, planted private data) for the robustness
        probe, from a seed stream training never uses; empty when the task has none."""
        ...

    def constitution_rules(self) -> frozenset[str]:
        """The constitution's output rules (``OUTPUT_RULES``) that apply to this task's outputs.
        The rules on policy texts always apply."""
        ...


def single_turn(
    task: Task, instructions: str, instance: Instance, llm: LLMClient, sampling: SamplingParams
) -> Trajectory:
    """The rollout of a single-turn task: render, ask once."""
    messages, truncated = task.render(instructions, instance)
    c = llm.complete(messages, sampling)
    turn = Turn(
        c.text,
        prompt_tokens=c.prompt_tokens,
        completion_tokens=c.completion_tokens,
        latency_s=c.latency_s,
        cached=c.cached,
        raw_output=raw_text(c),
    )
    return Trajectory((turn,), truncated)


class BaseTask:
    """Defaults for the optional parts of ``Task``: single-turn rollouts, no structural search
    space, the general vocabulary, no proxy hints, the payload as input text, no references,
    no hostile inputs, every constitution rule, and a synthetic validation set from the
    generator. A task subclasses it and implements the rest (see docs/write-your-own-task.md)."""

    name: str = ""

    def generator(self) -> TaskGenerator:
        raise NotImplementedError

    def render(self, instructions: str, instance: Instance) -> tuple[list[Message], bool]:
        raise NotImplementedError

    def rollout(
        self,
        instructions: str,
        instance: Instance,
        llm: LLMClient,
        sampling: SamplingParams,
    ) -> Trajectory:
        return single_turn(self, instructions, instance, llm, sampling)  # type: ignore[arg-type]

    def max_calls_per_rollout(self) -> int:
        return 1

    def synthetic_validation(self, n: int, seed: int) -> list[Instance]:
        """``n`` generated instances, difficulty spread evenly over 0.2..0.8, from the seed
        stream ``random.Random(f"validation-{seed}")`` that training never uses."""
        if n <= 0:
            return []
        gen = self.generator()
        rng = random.Random(f"validation-{seed}")
        out: list[Instance] = []
        for i in range(n):
            difficulty = 0.2 + 0.6 * (i / (n - 1) if n > 1 else 0.5)
            out.extend(gen.sample(1, round(difficulty, 4), rng))
        return out

    def output_templates(self) -> Sequence[str]:
        return ()

    def reference_example(self, instance: Instance) -> str | None:
        return None

    def feedback_edits(self) -> Mapping[str, Sequence[FeedbackEdit]]:
        return {}

    def vocabulary(self) -> InstructionVocabulary:
        return GENERAL

    def harness_hints(self) -> HarnessHints:
        return HarnessHints()

    def input_text(self, instance: Instance) -> str:
        payload = instance.payload
        return payload if isinstance(payload, str) else str(getattr(payload, "text", payload))

    def reference_text(self, instance: Instance) -> str | None:
        return None

    def hostile_instances(self, n: int, seed: int) -> list[Instance]:
        return []

    def constitution_rules(self) -> frozenset[str]:
        return OUTPUT_RULES
