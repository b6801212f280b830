"""The outer loop: harness evolution as an ask/tell optimiser.

    hopt.observe(s_val_of_current_best)   # may trigger a rollback (returns the archive entry)
    variants = hopt.ask(weakness_report)  # incumbent + steered + perturbed variants
    ... trial inner run + s_val for each variant (the driver does this) ...
    decision = hopt.tell(s_vals)          # keep the variant with the highest s_val

Proposals: a *steered* variant from the weakness analysis (weight moved away from a suspected
gamed component, L moved by the length analysis, mix tilted to the weakest kind, more real
training instances when the proxy misleads: a gamed component, or the inner loop's best policy
validating clearly below the best validated one) and random
variants: a smoothed Gaussian step with momentum (heavy ball: centred on the current weights plus
``momentum`` x the last accepted step), a random step of every movable gene of the gene table
(harness/genes.py: difficulty, real share, a task's or a feature's own; when no variant moves a
feature's genes, e.g. a distillation's data mix, one more variant steps those alone), or CMA-ES (``cma``, loops/cma_es.py: its state is plain
data in the checkpoint, never a pickle). Every variant is pushed inside the
hard bounds. Rollback: when s_val has fallen ``rollback_patience`` times in a row or oscillates
(sign of the change alternates over the last 4 steps), return to the best archived pair, zero
the momentum and widen the next search (a different branch). Reset: every ``reset_every`` steps
the weights go back to the base reward before proposing (curriculum). Every variant is made by
``HarnessGenome.evolve``: the genes a step does not name are kept, so a gene added to the table
survives rollback, reset, steering and CMA-ES without being named here.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from evotrainer.config import OuterConfig
from evotrainer.harness.genes import ENGINE_TRIALS, movable
from evotrainer.harness.genome import HarnessBounds, HarnessGenome
from evotrainer.harness.reference import metric_key
from evotrainer.loops.cma_es import CMAES
from evotrainer.loops.rng import rng_from_state, rng_state
from evotrainer.loops.weakness import WeaknessReport
from evotrainer.policy.archive import Archive, ArchiveEntry
from evotrainer.tasks.base import HarnessHints
from evotrainer.types import GeneSpec

OSCILLATION_EPS = 0.005
GAMED_KEEPS = (0.5, 0.1)  # the line search off a gamed component: the shares of it kept


@dataclass(frozen=True)
class HarnessDecision:
    chosen: HarnessGenome
    index: int
    s_val: float
    changed: bool
    reason: str


@dataclass
class HarnessOptimizer:
    cfg: OuterConfig
    base: HarnessGenome
    bounds: HarnessBounds
    rng: random.Random
    space: tuple[str, ...]  # components the harness may weight (active ones + switchable)
    real_pool: bool = False  # real training instances exist: the real share may move
    hints: HarnessHints = field(default_factory=HarnessHints)  # the task's: shape, receivers
    trials: frozenset[str] = ENGINE_TRIALS  # the trials the run can make (which genes move)
    current: HarnessGenome = field(init=False)
    velocity: dict[str, float] = field(default_factory=dict)
    step: int = 0
    s_val_history: list[float] = field(default_factory=list)
    decisions: list[dict[str, Any]] = field(default_factory=list)
    archive: Archive = field(default_factory=Archive)
    explore: float = 1.0
    pending: list[HarnessGenome] = field(default_factory=list)
    _cma: CMAES | None = None

    def __post_init__(self) -> None:
        self.base = self.base.bounded(self.bounds)
        self.current = self.base

    # -- observe / ask / tell ------------------------------------------------------------
    def observe(self, s_val: float) -> ArchiveEntry | None:
        """Record the s_val of the current best; return the archive entry to roll back to, if
        s_val keeps falling or oscillates (the caller restores its policy)."""
        self.s_val_history.append(s_val)
        h = self.s_val_history
        deltas = [b - a for a, b in zip(h, h[1:], strict=False)]
        r = self.cfg.rollback_patience
        falling = len(deltas) >= r and all(d < 0 for d in deltas[-r:])
        last4 = deltas[-4:]
        oscillating = len(last4) == 4 and all(
            abs(d) > OSCILLATION_EPS and (d > 0) != (e > 0)
            for d, e in zip(last4, last4[1:], strict=False)
        )
        best = self.archive.best()
        if (falling or oscillating) and best is not None and self.archive.score(best) > s_val:
            self.current = best.harness.evolve(
                "rollback",
                parent=self.current.id,
                note="s_val falling" if falling else "s_val oscillating",
            ).bounded(self.bounds)
            self.velocity = {}
            self.explore = 1.5
            self.s_val_history.append(self.archive.score(best))  # the new reference
            return best
        return None

    def ask(self, report: WeaknessReport) -> list[HarnessGenome]:
        self.step += 1
        if self.cfg.reset_every and self.step % self.cfg.reset_every == 0:
            self.current = self.current.evolve(
                "reset",
                parent=self.current.id,
                note=f"periodic reset at outer step {self.step}",
                weights=self.base.weights,
            )
            self.velocity = {}
        variants: list[HarnessGenome] = [self.current] if self.cfg.include_incumbent else []
        ids = {v.id for v in variants}

        def add(v: HarnessGenome) -> None:
            v = v.bounded(self.bounds)
            if v.id not in ids:
                ids.add(v.id)
                variants.append(v)

        target = len(variants) + self.cfg.variants
        for v in self._steered(report):
            add(v)
        for p in self._perturbations(self.cfg.variants * 3):
            if len(variants) >= target:
                break
            add(p)
        features = self._feature_genes()
        if features and not any(self._moves(v, features) for v in variants):
            stepped = self._feature_step(features)
            if stepped is not None:
                add(stepped)
        self.pending = variants
        return list(variants)

    def tell(
        self, s_vals: Sequence[float], choice: int | None = None, why: str = ""
    ) -> HarnessDecision:
        """``s_vals``: each variant's score (s_val or meta score; CMA-ES learns from them).
        ``choice``: the variant chosen by another rule (Pareto selection), with ``why``;
        default: the highest score."""
        if len(s_vals) != len(self.pending):
            raise ValueError(f"tell() got {len(s_vals)} scores for {len(self.pending)} variants")
        idx = max(range(len(s_vals)), key=lambda i: (s_vals[i], -i))  # ties: earliest
        idx = idx if choice is None else choice
        chosen = self.pending[idx]
        changed = chosen.id != self.current.id
        if self._cma is not None:
            self._tell_cma(s_vals)
        if changed:
            step = {
                k: chosen.weights.get(k, 0.0) - self.current.weights.get(k, 0.0) for k in self.space
            }
            self.velocity = step
        else:
            self.velocity = {k: v * self.cfg.momentum for k, v in self.velocity.items()}
        self.explore = 1.0
        reason = (
            f"variant {idx} ({chosen.operator}) had the best s_val {s_vals[idx]:.4f}"
            if changed
            else f"kept the incumbent (s_val {s_vals[idx]:.4f})"
        )
        if why:
            reason = f"variant {idx} ({chosen.operator})" if changed else "kept the incumbent"
            reason += f": {why}"
        self.decisions.append(
            {
                "step": self.step,
                "chosen": chosen.to_json(),
                "s_vals": list(s_vals),
                "variants": [v.to_json() for v in self.pending],
                "reason": reason,
            }
        )
        self.current = chosen
        self.pending = []
        return HarnessDecision(chosen, idx, float(s_vals[idx]), changed, reason)

    # -- proposals ------------------------------------------------------------------------
    def max_variants(self) -> int:
        """The most variants ``ask`` can return besides the incumbent: ``variants``, or more
        when the steered ones alone outnumber them (a line search towards the references, and
        for a gamed component two kept shares along each of its steps)."""
        steps = len(self._reference_shifts()) or 1
        feature_step = 1 if self._feature_genes() else 0
        return max(self.cfg.variants, steps * len(GAMED_KEEPS)) + feature_step

    def _feature_genes(self) -> list[GeneSpec]:
        """The movable genes only a feature's own trial measures (e.g. a distillation's data
        mix, trial ``distillation``): the steered variants never move them, only a random
        step does."""
        return [g for g in movable(self.bounds.genes, self.trials) if g.trial not in ENGINE_TRIALS]

    def _moves(self, v: HarnessGenome, genes: list[GeneSpec]) -> bool:
        return any(v.genes.get(g.name, g.initial) != self._now(g) for g in genes)

    def _now(self, spec: GeneSpec) -> float:
        return self.current.genes.get(spec.name, spec.initial)

    def _random_step(self, spec: GeneSpec) -> float:
        """The gene's current value plus one of its ``choices`` x ``step`` (unclamped)."""
        return self._now(spec) + self.rng.choice(spec.choices) * spec.step

    def _feature_step(self, genes: list[GeneSpec]) -> HarnessGenome | None:
        """A variant that moves only the feature genes (a random step of each, as the random
        perturbation draws them; the reward weights and the engine's genes as they are), so
        an outer step whose steered variants fill ``outer.variants`` still trials them (the
        distill-1000 cells' data mix never moved without it: docs/distillation.md). None when
        no draw moves one inside its bounds."""
        for _ in range(20):
            step = {g.name: g.clamp(self._random_step(g)) for g in genes}
            moved = [g.name for g in genes if step[g.name] != self._now(g)]
            if moved:
                return self.current.evolve(
                    "gene_step",
                    parent=self.current.id,
                    note="data genes stepped: " + ", ".join(moved),
                    genes=step,
                )
        return None

    def _reference_shifts(self) -> list[float]:
        """The line search towards the references, when the proxy misleads: the shares of the
        other components' weight moved onto them (none without real training instances)."""
        first = self.cfg.reference_shift
        return sorted({first, 1.0}) if self.real_pool and first > 0 else []

    def _weights_over_space(self) -> dict[str, float]:
        return {k: float(self.current.weights.get(k, 0.0)) for k in self.space}

    def _steered(self, report: WeaknessReport) -> list[HarnessGenome]:
        """Variants steered by the weakness analysis. When a component looks gamed, a line
        search along the steering direction: keep half, then a tenth, of its weight (the rest
        goes to the task's preferred receivers that are off, e.g. owner/task accuracy for
        meetings, else to the other substantive components; never to a shape component)."""
        direction = report.difficulty_direction()
        diff = self.current.difficulty + direction * self.cfg.difficulty_step
        notes = [f"L {'up' if direction > 0 else 'down'}"] if direction else []
        mix = dict(self.current.task_mix) if self.current.task_mix else None
        weak = report.weakest_kind()
        if weak is not None:
            mix = mix or dict.fromkeys(report.reward_by_kind, 1.0)
            mix[weak] = mix.get(weak, 1.0) * 1.5
            notes.append(f"more '{weak}' tasks")
        gamed = report.gamed(self._weights_over_space())
        real = self.current.real_share
        real_note = ""
        if self.real_pool and (gamed or report.proxy_disagrees):
            real = self.bounds.clamp("real_share", real + self.cfg.real_share_step)
            if real != self.current.real_share:
                real_note = f"real share up to {real:.2f} (the proxy misleads)"
        out = []
        for trusted, share, trust_note in self._trust_references(report):
            for keep in GAMED_KEEPS if gamed else (1.0,):
                w = dict(trusted)
                # a trust note that sets the real share replaces the steered share's note
                step_notes = [*notes, *([real_note] if real_note and share is None else [])]
                step_notes += [trust_note] if trust_note else []
                for comp in gamed:
                    if w[comp] <= 0:  # the references took all of its weight already
                        continue
                    moved = w[comp] * (1 - keep)
                    w[comp] -= moved
                    others = [k for k in self.space if k not in gamed and k not in self.hints.shape]
                    receivers = [k for k in others if w[k] == 0 and k in self.hints.receivers] or [
                        k for k in others if w[k] > 0
                    ]
                    for k in receivers:
                        w[k] += moved / len(receivers)
                    step_notes.append(
                        f"kept {keep:.0%} of {comp} (saturated in training, low on validation)"
                    )
                out.append(
                    self.current.evolve(
                        "steer",
                        parent=self.current.id,
                        note="; ".join(step_notes),
                        weights=w,
                        task_mix=mix,
                        genes={"difficulty": diff, "real_share": real if share is None else share},
                    )
                )
        return out

    def _trust_references(
        self, report: WeaknessReport
    ) -> list[tuple[dict[str, float], float | None, str]]:
        """Where the steered variants put the weight: (weights over the space, a real share
        that replaces the steered one or None, a note). As they are, unless the inner loop's
        best validates clearly below the best validated policy (the proxy misleads) and there
        are real training instances: then a line search towards the reference components
        (``ref_*``: the validation metric on real training instances): a share
        ``reference_shift`` of every other component's weight moved onto them, then all of it,
        split equally among the active ones (all of them when none is active). With all of it,
        no other component scores, so nothing scores a synthetic instance: the real share goes
        to its upper bound (training only where the references are)."""
        w = self._weights_over_space()
        refs = [k for k in self.space if metric_key(k) is not None]
        shifts = self._reference_shifts()
        if not (shifts and report.proxy_disagrees and refs):
            return [(w, None, "")]
        receivers = [k for k in refs if w[k] > 0] or refs
        out = []
        for shift in shifts:
            moved = {k: v * shift for k, v in w.items() if k not in refs and v > 0}
            trusted = {k: v - moved.get(k, 0.0) for k, v in w.items()}
            for k in receivers:
                trusted[k] += sum(moved.values()) / len(receivers)
            note = f"moved {shift:.0%} of the other components' weight to the reference ones"
            share = None
            if shift >= 1.0:
                spec = self.bounds.genes.get("real_share")
                share = spec.high if spec is not None else 1.0
                note += f", real share {share:.2f} (only they score)"
            out.append((trusted, share, note + " (the proxy misleads)"))
        return out

    def _perturbations(self, n: int) -> list[HarnessGenome]:
        if self.cfg.optimizer == "cma":
            return self._ask_cma(n)
        out = []
        sigma = self.cfg.weight_sigma * self.explore
        for _ in range(n):
            w = self._weights_over_space()
            for k in self.space:
                if w[k] > 0:
                    w[k] += self.cfg.momentum * self.velocity.get(k, 0.0)
                    w[k] += self.rng.gauss(0.0, sigma)
                elif self.rng.random() < 0.15:
                    w[k] = 0.05 + abs(self.rng.gauss(0.0, sigma))
            active = [k for k in self.space if w[k] > 0]
            if len(active) > 2 and self.rng.random() < 0.1:
                w[self.rng.choice(active)] = 0.0
            w = {k: max(0.0, v) for k, v in w.items()}
            if sum(w.values()) <= 0:
                w = self._weights_over_space()
            genes = {  # every movable gene of the table, a random step each, in table order
                spec.name: self._random_step(spec)
                for spec in movable(self.bounds.genes, self.trials)
            }
            out.append(self.current.evolve("gaussian", self.current.id, weights=w, genes=genes))
        return out

    def _ask_cma(self, n: int) -> list[HarnessGenome]:
        if self._cma is None:
            x0 = [self._weights_over_space()[k] for k in self.space]
            self._cma = CMAES(
                x0, self.cfg.weight_sigma, self.cfg.variants, self.rng.randrange(1, 2**31)
            )
        return [
            self.current.evolve(
                "cma",
                parent=self.current.id,
                weights={k: float(v) for k, v in zip(self.space, x, strict=True)},
            )
            for x in self._cma.ask()
        ]

    def _tell_cma(self, s_vals: Sequence[float]) -> None:
        assert self._cma is not None and self._cma.asked is not None
        ids = [v.id for v in self.pending]
        scores = []
        for x in self._cma.asked.tolist():
            v = self.current.evolve(
                "initial", weights={k: float(a) for k, a in zip(self.space, x, strict=True)}
            ).bounded(self.bounds)
            # a proposal that was deduplicated away is scored like its twin, else neutral
            scores.append(-s_vals[ids.index(v.id)] if v.id in ids else 0.0)
        self._cma.tell(scores)

    # -- checkpoint -----------------------------------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        return {
            "current": self.current.to_json(),
            "velocity": self.velocity,
            "step": self.step,
            "s_val_history": self.s_val_history,
            "decisions": self.decisions,
            "archive": self.archive.to_json(),
            "explore": self.explore,
            "rng": rng_state(self.rng),
            "cma": self._cma.state_dict() if self._cma else None,
        }

    def load_state_dict(self, s: dict[str, Any]) -> None:
        self.current = HarnessGenome.from_json(s["current"])
        self.velocity = dict(s["velocity"])
        self.step = int(s["step"])
        self.s_val_history = list(s["s_val_history"])
        self.decisions = list(s["decisions"])
        rank = self.archive.rank  # the driver's ranking is not state: keep it
        self.archive = Archive.from_json(s["archive"])
        self.archive.rank = rank
        self.explore = float(s["explore"])
        self.rng = rng_from_state(s["rng"])
        # plain numbers only; anything else (e.g. an old checkpoint's pickle) is never loaded
        cma = s.get("cma")
        self._cma = CMAES.from_state(cma) if isinstance(cma, dict) else None
        self.pending = []
