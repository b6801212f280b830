"""Weakness analysis: what the outer loop looks at before it proposes harness variants.

- gaming: a reward component the best policy saturates in training while the validation metric
  that component stands for stays low (e.g. action_count ~1 but action-item F1 ~0) is suspected
  of being gamed; the steered variant moves weight away from it.
- length: s_val per validation length bucket; when long inputs are clearly worse than short ones,
  raise the difficulty L; when the training reward saturates, raise L; when it is very low, lower it.
- kind: the task kind where the best policy earns least gets more of the mix.
- proxy disagreement: the inner loop's best policy validates clearly below the best policy
  validated so far: the training reward ranks policies unlike the meta-objective, and the outer
  loop raises the share of real training instances (where the reward can use the references).

Which component stands for which validation aggregate, and what counts as low, is the task's
knowledge (``Task.harness_hints()``, e.g. tasks/meetings/task.py: action_count stands for
action-item F1). Reference components (``ref_<key>``, harness/reference.py) stand for the
validation aggregate of the same key, so saturation on real training instances with a low
validation score (overfitting the training data) is flagged like any other proxy.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from evotrainer.tasks.base import HarnessHints

SATURATED = 0.8
DISAGREE = 0.02


@dataclass(frozen=True)
class WeaknessReport:
    s_val: float
    s_val_by_length: Mapping[str, float]
    train_reward: float
    train_components: Mapping[str, float]
    validation: Mapping[str, float | None]  # the validation aggregates (None: not applicable)
    reward_by_kind: Mapping[str, float] = field(default_factory=dict)
    suspects: tuple[str, ...] = ()  # components the proxy-gap monitor flagged since last step
    best_s_val: float | None = None  # best s_val validated so far (the archive's best)
    hints: HarnessHints = field(default_factory=HarnessHints)  # the task's proxy pairs

    @property
    def proxy_disagrees(self) -> bool:
        """The proxy's best validates clearly (by more than DISAGREE) below the best so far."""
        return self.best_s_val is not None and self.s_val < self.best_s_val - DISAGREE

    def gamed(self, weights: Mapping[str, float]) -> list[str]:
        """Weighted components suspected of being gamed: flagged by the monitor (saturated
        while another component fell), or saturated in training while the validation metric
        they stand for is low."""
        out = [c for c in self.suspects if weights.get(c, 0) > 0]
        for comp in weights:
            pair = self.hints.proxy_of(comp)
            if pair is None:
                continue
            metric, low = pair
            if weights.get(comp, 0) <= 0 or metric not in self.validation:
                continue
            saturated = self.train_components.get(comp, 0) >= SATURATED
            value = self.validation[metric]
            if saturated and value is not None and value < low and comp not in out:
                out.append(comp)
        return out

    def difficulty_direction(self) -> int:
        b = self.s_val_by_length
        if "short" in b and "long" in b and b["long"] < b["short"] - 0.05:
            return +1
        if self.train_reward >= 0.9:
            return +1
        if self.train_reward < 0.3:
            return -1
        return 0

    def weakest_kind(self) -> str | None:
        if len(self.reward_by_kind) < 2:
            return None
        return min(self.reward_by_kind, key=lambda k: (self.reward_by_kind[k], k))

    def to_json(self) -> dict[str, object]:
        return {
            "s_val": self.s_val,
            "s_val_by_length": dict(self.s_val_by_length),
            "train_reward": self.train_reward,
            "train_components": dict(self.train_components),
            "reward_by_kind": dict(self.reward_by_kind),
            "suspects": list(self.suspects),
            "best_s_val": self.best_s_val,
            "proxy_disagrees": self.proxy_disagrees,
        }
