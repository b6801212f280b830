"""Which answers are worth learning from: the training pairs of a distillation, chosen by the
current harness (issue 31; docs/distillation.md).

Reward-filtered self-training, as in expert iteration: the best policies' answers on training
instances are the candidates; for each instance the answer the current harness's reward scores
highest is its candidate, and only the top ``keep_share`` of the candidates by that reward are
kept. The harness decides twice: its reward ranks the answers, and its real share decides how
many human references join where real training instances carry them (``real_share`` x the kept
answers, each an answer the human wrote for that instance, rendered with the best policy's
prompt). Validation instances are never in the pool the answers come from.

Every candidate's fate is recorded with the reason (``PairChoice``), for the report.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from evotrainer.distill.pairs import TrainingPair
from evotrainer.harness.reward import weighted_reward
from evotrainer.policy.genome import PolicyGenome
from evotrainer.types import Instance, Message, ScoreVector


@dataclass(frozen=True)
class Candidate:
    instance: Instance
    policy: PolicyGenome
    output: str
    reward: float


@dataclass(frozen=True)
class PairChoice:
    """The pairs of one distillation and what happened to every candidate."""

    pairs: tuple[TrainingPair, ...]
    kept: tuple[dict[str, object], ...] = ()
    dropped: tuple[dict[str, object], ...] = ()
    references: int = 0
    threshold: float | None = None  # the lowest reward kept
    notes: tuple[str, ...] = field(default=())

    def to_json(self) -> dict[str, object]:
        return {
            "pairs": len(self.pairs),
            "from_policies": len(self.kept),
            "references": self.references,
            "threshold": self.threshold,
            "kept": list(self.kept),
            "dropped": list(self.dropped),
            "notes": list(self.notes),
        }


def best_per_instance(
    policies: Sequence[PolicyGenome],
    instances: Sequence[Instance],
    answer: Callable[[PolicyGenome, Instance], tuple[str, ScoreVector] | None],
    weights: Mapping[str, float],
) -> list[Candidate]:
    """For each instance, the policies' answer that ``weights`` reward highest (ties: the
    earlier policy); ``answer`` gives a policy's stored answer and its scores, or None."""
    out = []
    for inst in instances:
        best: Candidate | None = None
        for p in policies:
            got = answer(p, inst)
            if got is None or not got[0].strip():
                continue
            r = weighted_reward(got[1], weights)
            if best is None or r > best.reward:
                best = Candidate(inst, p, got[0], r)
        if best is not None:
            out.append(best)
    return out


def choose_pairs(
    candidates: Sequence[Candidate],
    render: Callable[[PolicyGenome, Instance], list[Message]],
    keep_share: float,
    max_pairs: int,
    real_share: float = 0.0,
    references: Sequence[tuple[Instance, str]] = (),
    reference_policy: PolicyGenome | None = None,
) -> PairChoice:
    """The kept answers (top ``keep_share`` by reward, at most ``max_pairs``) and, with
    ``real_share`` > 0, ``round(real_share x kept)`` human references (instance, text)
    rendered with ``reference_policy``'s prompt."""
    ranked = sorted(candidates, key=lambda c: (-c.reward, c.instance.id))
    n_keep = min(max_pairs, max(1, round(keep_share * len(ranked)))) if ranked else 0
    kept, dropped = ranked[:n_keep], ranked[n_keep:]
    threshold = kept[-1].reward if kept else None
    pairs = [
        TrainingPair(
            tuple(render(c.policy, c.instance)),
            c.output,
            source=f"policy {c.policy.id} on {c.instance.id}, reward {c.reward:.3f}",
        )
        for c in kept
    ]
    n_refs = 0
    notes = []
    if real_share > 0 and references and reference_policy is not None:
        n_refs = min(len(references), round(real_share * len(kept)))
        for inst, text in references[:n_refs]:
            pairs.append(
                TrainingPair(
                    tuple(render(reference_policy, inst)),
                    text,
                    source=f"human reference of {inst.id}",
                )
            )
        notes.append(f"real share {real_share:.2f}: {n_refs} human references joined")
    elif real_share > 0:
        notes.append("no real training instance carries a reference: no human pair joined")
    return PairChoice(
        tuple(pairs),
        tuple(_row(c, "kept: among the top rewards") for c in kept),
        tuple(_row(c, f"dropped: reward below {threshold:.3f}") for c in dropped)
        if threshold is not None
        else (),
        n_refs,
        threshold,
        tuple(notes),
    )


def _row(c: Candidate, why: str) -> dict[str, object]:
    return {"instance": c.instance.id, "policy": c.policy.id, "reward": c.reward, "why": why}
