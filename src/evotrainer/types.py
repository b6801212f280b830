"""The values that flow through EvoTrainer, in data-flow order.

task generator -> Instance -> (policy, LLM, environment: Task.rollout) -> Trajectory -> Rollout
-> reward components -> ScoreVector -> fitness -> selection ... -> validation -> s_val -> harness
decision.

All are frozen dataclasses: cheap to hash, safe to share between threads, and serialisable
with ``dataclasses.asdict``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Message:
    """One chat message sent to an LLM."""

    role: str  # "system" | "user" | "assistant"
    content: str


@dataclass(frozen=True)
class Instance:
    """One task instance: what a policy is asked to handle, plus whatever ground truth exists.

    ``payload`` is task specific (for meetings: a ``Meeting``). ``length_bucket`` lets the
    harness analyse weaknesses per input length ("short" | "medium" | "long").
    """

    id: str
    payload: Any
    source: str = "synthetic"  # "synthetic" | corpus name, e.g. "AMI"
    difficulty: float | None = None
    kind: str = "default"  # task type, for the generator's mix
    length_bucket: str = "medium"

    @property
    def real(self) -> bool:
        """Real data (a corpus with human references), not made by a generator."""
        return self.source != "synthetic"


@dataclass(frozen=True)
class Turn:
    """One exchange of a rollout: the agent's answer and what the environment said back (e.g.
    the visible tests' failures), which the next turn shows the agent."""

    output: str
    observation: str = ""
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0
    cached: bool = False
    raw_output: str | None = None  # the answer before the policy's loop cut, when it cut


@dataclass(frozen=True)
class Trajectory:
    """What ``Task.rollout`` returns: the turns of one episode (one turn for a single-turn task)
    and whether the input was cut to fit the model's context. The last turn's output is the
    answer the reward components and the validation metric judge."""

    turns: tuple[Turn, ...]
    truncated: bool = False

    @property
    def output(self) -> str:
        return self.turns[-1].output if self.turns else ""


@dataclass(frozen=True)
class Rollout:
    """The result of running one policy on one instance. ``error`` set means the call failed;
    the output is then empty and every reward component scores it 0. ``output`` is the final
    answer; ``turns`` holds every turn of a multi-turn episode (empty for a single turn)."""

    policy_id: str
    instance_id: str
    output: str
    error: str | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0
    cached: bool = False
    truncated: bool = False  # the input was cut to fit the model's context
    turns: tuple[Turn, ...] = ()
    raw_output: str | None = None  # the final answer before the policy's loop cut, when it cut

    @property
    def n_turns(self) -> int:
        return max(1, len(self.turns))


@dataclass(frozen=True)
class ComponentScore:
    """One reward component's verdict: a score in [0, 1] and a short, human-readable reason.

    ``applicable`` False means the component has nothing to say about this instance (e.g. a
    reference-based component on a synthetic meeting that has no human reference): it is left
    out of the weighted reward of that rollout, and the other weights are renormalised."""

    name: str
    score: float
    feedback: str = ""
    applicable: bool = True


@dataclass(frozen=True)
class ScoreVector:
    """All component scores for one rollout. Weighting happens in the harness, not here, so the
    same vector can be re-weighted by every harness variant without another LLM call."""

    components: tuple[ComponentScore, ...]

    def __getitem__(self, name: str) -> float:
        for c in self.components:
            if c.name == name:
                return c.score
        raise KeyError(name)

    def __iter__(self) -> Iterator[ComponentScore]:
        return iter(self.components)

    def as_dict(self) -> dict[str, float]:
        return {c.name: c.score for c in self.components}

    def applicable(self) -> dict[str, float]:
        """The scores of the components that apply to this rollout."""
        return {c.name: c.score for c in self.components if c.applicable}

    def feedback(self) -> dict[str, str]:
        return {c.name: c.feedback for c in self.components}


@dataclass(frozen=True)
class Lineage:
    """Where a policy came from: its parents, the operator that made it, and when."""

    parents: tuple[str, ...] = ()
    operator: str = "seed"
    generation: int = 0
    note: str = ""


@dataclass(frozen=True)
class ValidationResult:
    """Metrics of one policy on a validation set: per-instance rows and aggregates, and s_val."""

    s_val: float
    aggregates: Mapping[str, float | None]
    per_instance: tuple[Mapping[str, Any], ...] = field(default=())
    n: int = 0
    truncation: str = ""
    partial: bool = False  # raced out: s_val is a paired estimate from the first n instances


@dataclass(frozen=True)
class GeneSpec:
    """One numeric gene of the harness (a row of its gene table, as Ray Tune's PBT holds its
    ``hyperparam_mutations``): its initial value, the hard bounds no variant may leave, how far
    a random step moves it (``choices`` x ``step``: the random perturbation draws one of the
    ``choices``; ``step`` 0 never moves it), and which trial can measure its effect (``trial``:
    ``generation`` = a short inner run under the variant; a gene whose trial the run cannot
    make is never moved). The engine declares ``difficulty`` and ``real_share``; a task
    (``HasHarnessGenes``) or a feature declares its own; ``harness.genes`` overrides any."""

    name: str
    initial: float
    low: float
    high: float
    step: float = 0.0
    choices: tuple[int, ...] = (-1, 0, 1)
    trial: str = "generation"
    description: str = ""

    def __post_init__(self) -> None:
        if not self.low <= self.initial <= self.high:
            raise ValueError(
                f"gene {self.name}: initial value {self.initial} is outside [{self.low}, "
                f"{self.high}]"
            )
        if self.step < 0:
            raise ValueError(f"gene {self.name}: step must be >= 0, got {self.step}")

    def clamp(self, value: float) -> float:
        return min(self.high, max(self.low, float(value)))
