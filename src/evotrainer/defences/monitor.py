"""The proxy-gap monitor: watches the training reward (the proxy) against s_val (the real
objective) and the harness's own updates, and raises alerts the driver turns into events.

Alerts:
- ``reward_up_s_val_flat``: over the last ``window`` outer steps the best policy's training
  reward rose by more than ``eps`` while s_val stayed flat or fell: the proxy is being gamed;
- ``component_saturated``: over the last ``window`` generations under one reward (the window
  restarts when the harness changes the weights), one weighted component of the best policy
  reached ``saturation`` while another weighted component fell by more than ``drop``: the
  population trades real quality for an easy term (e.g. exactly three vacuous action items);
- ``oscillation``: a reward weight's accepted updates changed sign twice in a row, or s_val
  alternated up/down over the last four steps (the engine's rollback reacts to the latter).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Alert:
    kind: str
    message: str
    detail: Mapping[str, Any] = field(default_factory=dict)


@dataclass
class ProxyGapMonitor:
    window: int = 3
    eps: float = 0.02
    saturation: float = 0.95
    drop: float = 0.1
    generations: list[tuple[int, float, dict[str, float], dict[str, float]]] = field(
        default_factory=list
    )
    validations: list[tuple[int, float, float]] = field(default_factory=list)
    weights: list[dict[str, float]] = field(default_factory=list)
    raised: set[tuple[str, str]] = field(default_factory=set)

    def _once(self, kind: str, key: str, message: str, **detail: Any) -> list[Alert]:
        if (kind, key) in self.raised:
            return []
        self.raised.add((kind, key))
        return [Alert(kind, message, detail)]

    def observe_generation(
        self,
        generation: int,
        best_fitness: float,
        components: Mapping[str, float],
        weights: Mapping[str, float],
    ) -> list[Alert]:
        if self.generations and self.generations[-1][3] != dict(weights):
            self.generations = []  # a new reward: earlier component scores are not comparable
        self.generations.append((generation, best_fitness, dict(components), dict(weights)))
        recent = self.generations[-(self.window + 1) :]
        if len(recent) <= self.window:
            return []
        first, last = recent[0][2], recent[-1][2]
        active = [k for k, w in weights.items() if w > 0 and k in last and k in first]
        alerts: list[Alert] = []
        for sat in active:
            if last[sat] < self.saturation:
                continue
            for other in active:
                if other != sat and first[other] - last[other] > self.drop:
                    alerts += self._once(
                        "component_saturated",
                        f"{sat}>{other}",
                        f"generation {generation}: '{sat}' saturated at {last[sat]:.2f} while "
                        f"'{other}' fell {first[other]:.2f} -> {last[other]:.2f}: suspected "
                        "reward hacking",
                        saturated=sat,
                        falling=other,
                        generation=generation,
                    )
        return alerts

    def observe_validation(self, step: int, s_val: float, train_reward: float) -> list[Alert]:
        self.validations.append((step, s_val, train_reward))
        recent = self.validations[-self.window :]
        if len(recent) < self.window:
            return []
        d_reward = recent[-1][2] - recent[0][2]
        d_sval = recent[-1][1] - recent[0][1]
        alerts: list[Alert] = []
        if d_reward > self.eps and d_sval <= self.eps / 2:
            alerts += self._once(
                "reward_up_s_val_flat",
                str(step),
                f"outer step {step}: training reward +{d_reward:.3f} over {self.window} steps "
                f"while s_val changed {d_sval:+.3f}: the proxy is drifting from the objective",
                reward_change=d_reward,
                s_val_change=d_sval,
                step=step,
            )
        s = [v[1] for v in self.validations[-5:]]
        deltas = [b - a for a, b in zip(s, s[1:], strict=False)]
        if len(deltas) == 4 and all(
            abs(d) > self.eps / 4 and (d > 0) != (e > 0)
            for d, e in zip(deltas, deltas[1:], strict=False)
        ):
            alerts += self._once(
                "oscillation", f"s_val{step}", f"outer step {step}: s_val alternates {s}", step=step
            )
        return alerts

    def observe_weights(self, step: int, weights: Mapping[str, float]) -> list[Alert]:
        self.weights.append(dict(weights))
        if len(self.weights) < 4:
            return []
        w = self.weights[-4:]
        alerts: list[Alert] = []
        for k in w[-1]:
            d = [w[i + 1].get(k, 0) - w[i].get(k, 0) for i in range(3)]
            if (
                all(abs(x) > 1e-3 for x in d)
                and (d[0] > 0) != (d[1] > 0)
                and (d[1] > 0) != (d[2] > 0)
            ):
                alerts += self._once(
                    "oscillation",
                    f"{k}{step}",
                    f"outer step {step}: weight of '{k}' moved {[f'{x:+.2f}' for x in d]}",
                    component=k,
                    step=step,
                )
        return alerts

    # -- checkpoint (plain data) ----------------------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        return {
            "generations": [list(g) for g in self.generations],
            "validations": [list(v) for v in self.validations],
            "weights": [dict(w) for w in self.weights],
            "raised": sorted(map(list, self.raised)),
        }

    def load_state_dict(self, s: Mapping[str, Any]) -> None:
        self.generations = [(int(g), float(f), dict(c), dict(w)) for g, f, c, w in s["generations"]]
        self.validations = [(int(a), float(b), float(c)) for a, b, c in s["validations"]]
        self.weights = [dict(w) for w in s["weights"]]
        self.raised = {(str(k), str(v)) for k, v in s["raised"]}
