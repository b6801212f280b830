"""Which answers are worth learning from: the training pairs of a distillation, chosen by the
current harness (issue 31; docs/distillation.md).

Reward-filtered self-training, as in expert iteration: the best policies' answers on training
instances are the candidates; for each instance the answer the current harness's reward scores
highest is its candidate, and only the top ``keep_share`` of the candidates by that reward are
kept. The reward is a weighted mean of the components that apply to an instance, so a meeting
with a human reference (scored on its ROUGE-L, rarely above 0.3) and a synthetic one (scored on
format and completeness checks, easily 0.5) are not on one scale: candidates are ranked only
against those scored on the same components, and the top ``keep_share`` of each such scale is
kept. (Ranked on one list, answers on synthetic meetings took 24 of the 30 places in the three
``alternation`` cells of the distill benchmark, from half the candidates.) The harness decides
twice: its reward ranks the answers, and its real share decides how many human references join
where real training instances carry them (``real_share`` x the kept answers, each an answer the
human wrote for that instance, rendered with the best policy's prompt). Validation instances are never in the pool the answers come from.

Every candidate's fate is recorded with the reason (``PairChoice``), for the report.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from evotrainer.distill.pairs import TrainingPair
from evotrainer.harness.reward import weighted_reward
from evotrainer.policy.genome import PolicyGenome
from evotrainer.types import Instance, Message, ScoreVector

REFERENCE_SOURCE = "human reference"  # how a reference pair's source begins


@dataclass(frozen=True)
class Candidate:
    instance: Instance
    policy: PolicyGenome
    output: str
    reward: float
    # the reward components that applied (weight > 0, applicable to the instance): candidates
    # are ranked only against others on the same scale
    scale: tuple[str, ...] = ()


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
                best = Candidate(inst, p, got[0], r, _scale(got[1], weights))
        if best is not None:
            out.append(best)
    return out


def candidate_of(
    instance: Instance,
    policy: PolicyGenome,
    output: str,
    scores: ScoreVector,
    weights: Mapping[str, float],
) -> Candidate:
    """One answer as a candidate: its reward under ``weights`` and the scale it is on."""
    return Candidate(
        instance, policy, output, weighted_reward(scores, weights), _scale(scores, weights)
    )


def choose_pairs(
    candidates: Sequence[Candidate],
    render: Callable[[PolicyGenome, Instance], list[Message]],
    keep_share: float,
    max_pairs: int,
    real_share: float = 0.0,
    references: Sequence[tuple[Instance, str]] = (),
    reference_policy: PolicyGenome | None = None,
) -> PairChoice:
    """The kept answers (the top ``keep_share`` by reward of each scale, at most ``max_pairs``)
    and, with ``real_share`` > 0, ``round(real_share x kept)`` human references (instance, text)
    rendered with ``reference_policy``'s prompt."""
    scales: dict[tuple[str, ...], list[Candidate]] = {}
    for c in sorted(candidates, key=lambda c: (-c.reward, c.instance.id)):
        scales.setdefault(c.scale, []).append(c)
    ranked: list[tuple[float, Candidate]] = []  # (place within its scale, candidate)
    dropped_rows = []
    notes = []
    for scale, group in scales.items():
        n = max(1, round(keep_share * len(group)))
        floor = group[n - 1].reward
        ranked += [(i / len(group), c) for i, c in enumerate(group[:n])]
        dropped_rows += [
            _row(c, f"dropped: reward below {floor:.3f}{_on(scale, scales)}") for c in group[n:]
        ]
        if len(scales) > 1:
            notes.append(f"{n} of {len(group)} kept{_on(scale, scales)} (reward >= {floor:.3f})")
    ranked.sort(key=lambda t: (t[0], -t[1].reward, t[1].instance.id))
    kept = [c for _, c in ranked[:max_pairs]]
    dropped_rows += [
        _row(c, f"dropped: beyond max_pairs {max_pairs}") for _, c in ranked[max_pairs:]
    ]
    threshold = min(c.reward for c in kept) if kept else None
    pairs = [
        TrainingPair(
            tuple(render(c.policy, c.instance)),
            c.output,
            source=f"policy {c.policy.id} on {c.instance.id}, reward {c.reward:.3f}",
        )
        for c in kept
    ]
    n_refs = 0
    if real_share > 0 and references and reference_policy is not None:
        n_refs = min(len(references), round(real_share * len(kept)))
        for inst, text in references[:n_refs]:
            pairs.append(
                TrainingPair(
                    tuple(render(reference_policy, inst)),
                    text,
                    source=f"{REFERENCE_SOURCE} of {inst.id}",
                )
            )
        notes.append(f"real share {real_share:.2f}: {n_refs} human references joined")
    elif real_share > 0:
        notes.append("no real training instance carries a reference: no human pair joined")
    return PairChoice(
        tuple(pairs),
        tuple(_row(c, "kept: among the top rewards" + _on(c.scale, scales)) for c in kept),
        tuple(dropped_rows),
        n_refs,
        threshold,
        tuple(notes),
    )


def _scale(scores: ScoreVector, weights: Mapping[str, float]) -> tuple[str, ...]:
    values = scores.applicable()
    return tuple(sorted(k for k, w in weights.items() if w > 0 and k in values))


def _on(scale: tuple[str, ...], scales: Mapping[tuple[str, ...], object]) -> str:
    """' on <components>' where candidates were ranked on more than one scale, else ''."""
    return f" on {'+'.join(scale) or 'no component'}" if len(scales) > 1 else ""


def _row(c: Candidate, why: str) -> dict[str, object]:
    return {
        "instance": c.instance.id,
        "policy": c.policy.id,
        "reward": c.reward,
        "scale": list(c.scale),
        "why": why,
    }
