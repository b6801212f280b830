"""The evaluator: (policies x instances) -> rollouts -> score vectors, memoised.

The task owns the episode (``Task.rollout``: one turn or several). Jobs run instance-major (every
policy on instance 1, then instance 2 ...) so a backend that keeps the previous prompt's KV cache
prefills each instance once for the whole population, and a backend that decodes several
prompts together gets each instance's prompts as one group (dispatch.py: groups, concurrency,
each record stored as soon as it is made, so a stop mid-batch keeps the finished ones). Groups
and the async path apply to single-turn tasks (``max_calls_per_rollout() == 1``: the rollout is
render + one completion, ``tasks.base.single_turn``); a multi-turn task's episodes run one by
one through ``Task.rollout``. A failed request never raises out: its rollout carries the
error and scores 0 on every component. Only BudgetExceeded propagates, so a run can stop cleanly
at a boundary, and TooManyErrors from the error-rate guard (error_rate.py) when most answers
fail.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import partial
from typing import Any

from evotrainer.errors import BudgetExceeded, EvoTrainerError
from evotrainer.evaluation import dispatch
from evotrainer.evaluation.error_rate import ErrorRateGuard
from evotrainer.evaluation.runner import Runner, SerialRunner
from evotrainer.harness.reward import score_rollout, weighted_reward
from evotrainer.llm.base import (
    Completion,
    LLMClient,
    SamplingParams,
    batch_size_of,
    complete_batch,
)
from evotrainer.llm.postprocessed import PostProcessedLLM, raw_text
from evotrainer.policy.genome import PolicyGenome
from evotrainer.tasks.base import RewardComponent, StripsBlanks, Task, parse_rollout
from evotrainer.types import Instance, Message, Rollout, ScoreVector, Trajectory, Turn


@dataclass(frozen=True)
class EvalRecord:
    rollout: Rollout
    vector: ScoreVector


@dataclass(frozen=True)
class PolicyFitness:
    """A policy's fitness on a batch under given weights, with what reflection needs."""

    policy_id: str
    fitness: float
    components: Mapping[str, float]
    n: int
    errors: int
    feedback: str = ""


class Evaluator:
    def __init__(
        self,
        task: Task,
        llm: LLMClient,
        sampling: SamplingParams,
        runner: Runner | None = None,
        components: Mapping[str, RewardComponent] | None = None,
        guard: ErrorRateGuard | None = None,
    ) -> None:
        self.task = task
        self.llm = llm
        self.sampling = sampling
        self.runner = runner or SerialRunner()
        self.components = dict(components or task.reward_components())
        # the task's rule for a template's blanks (the post-processor's drop_blanks step)
        self.strip_blanks = task.strip_blanks if isinstance(task, StripsBlanks) else None
        self.store: dict[tuple[str, str], EvalRecord] = {}
        self.instances: dict[str, Instance] = {}
        self.guard = guard  # stops the run when too many answers fail (None: never)
        self.in_flight = dispatch.InFlight()  # pairs another thread is evaluating right now
        # the client of a policy's LoRA adapter (by its sha256), set by a run that distils
        self.adapters: Callable[[str], LLMClient] | None = None

    def llm_for(self, policy: PolicyGenome) -> LLMClient:
        """The client that answers for ``policy``: the base model's, or its adapter's."""
        if policy.adapter is None:
            return self.llm
        if self.adapters is None:
            raise EvoTrainerError(
                f"policy {policy.id} carries LoRA adapter {policy.adapter[:12]}... but this "
                "evaluator serves no adapters (distillation needs the embedded backend)"
            )
        return self.adapters(policy.adapter)

    def answering(self, policy: PolicyGenome) -> tuple[LLMClient, SamplingParams]:
        """The client and sampling of ``policy``'s answers: its model (base or adapter) with
        its loop cut applied to every answer, sampled with its decoding genes."""
        llm = self.llm_for(policy)
        if policy.postprocess.enabled:
            cut = partial(policy.postprocess.apply, strip_blanks=self.strip_blanks)
            llm = PostProcessedLLM(llm, cut)
        return llm, self.sampling_for(policy)

    def sampling_for(self, policy: PolicyGenome) -> SamplingParams:
        """The evaluator's sampling with ``policy``'s decoding genes."""
        return replace(self.sampling, **policy.decoding.overrides())

    @property
    def single_turn(self) -> bool:
        """Every rollout is render + one completion: it may be batched or awaited."""
        return self.task.max_calls_per_rollout() == 1

    # -- rollouts -------------------------------------------------------------------------
    def rollout(self, policy: PolicyGenome, instance: Instance) -> Rollout:
        """The task's episode (``Task.rollout``: one turn or several) as a Rollout."""
        try:
            llm, sampling = self.answering(policy)
            t = self.task.rollout(policy.render(), instance, llm, sampling)
        except BudgetExceeded:
            raise
        except EvoTrainerError as exc:
            return _failed(policy, instance, exc)
        return _from_trajectory(policy, instance, t)

    def sample(
        self, policy: PolicyGenome, instance: Instance, temperature: float, seed: int
    ) -> EvalRecord:
        """One answer of ``policy`` sampled at ``temperature`` with ``seed`` (a distillation's
        rejection samples), scored; never stored (the store holds the greedy answers)."""
        try:
            llm, sampling = self.answering(policy)
            sampling = replace(sampling, temperature=temperature, seed=seed)
            t = self.task.rollout(policy.render(), instance, llm, sampling)
            r = _from_trajectory(policy, instance, t)
        except BudgetExceeded:
            raise
        except EvoTrainerError as exc:
            r = _failed(policy, instance, exc)
        return self.record(policy, instance, r)

    async def arollout(self, policy: PolicyGenome, instance: Instance) -> Rollout:
        """A single-turn rollout awaited on the LLM's event loop (dispatch uses it only when
        ``single_turn``)."""
        try:
            messages, truncated = self.task.render(policy.render(), instance)
            llm, sampling = self.answering(policy)
            c = await llm.acomplete(messages, sampling)
        except BudgetExceeded:
            raise
        except EvoTrainerError as exc:
            return _failed(policy, instance, exc)
        return _answered(policy, instance, c, truncated)

    def rollouts(
        self, jobs: Sequence[tuple[PolicyGenome, Instance]]
    ) -> list[Rollout | BudgetExceeded]:
        """Rollouts of several prompts decoded together (one batch), one per job in order; a
        job the budget refused gets its BudgetExceeded instead (so do the jobs after it)."""
        out: list[Rollout | BudgetExceeded | None] = [None] * len(jobs)
        groups: dict[tuple[Any, ...], list[tuple[int, Sequence[Message], bool]]] = {}
        for i, (policy, instance) in enumerate(jobs):
            try:
                messages, truncated = self.task.render(policy.render(), instance)
            except EvoTrainerError as exc:
                out[i] = _failed(policy, instance, exc)
                continue
            # a batch is decoded by one model's weights, with one sampling, cut one way
            key = (policy.adapter, self.sampling_for(policy), policy.postprocess)
            groups.setdefault(key, []).append((i, messages, truncated))
        for rendered in groups.values():
            llm, sampling = self.answering(jobs[rendered[0][0]][0])
            results = complete_batch(llm, [m for _, m, _ in rendered], sampling)
            self._answers(jobs, rendered, results, out)
        return [r for r in out if r is not None]

    def _answers(
        self,
        jobs: Sequence[tuple[PolicyGenome, Instance]],
        rendered: Sequence[tuple[int, Sequence[Message], bool]],
        results: Sequence[Completion | BaseException],
        out: list[Rollout | BudgetExceeded | None],
    ) -> None:
        for (i, _, truncated), res in zip(rendered, results, strict=True):
            policy, instance = jobs[i]
            if isinstance(res, BudgetExceeded):
                out[i] = res
            elif isinstance(res, Completion):
                out[i] = _answered(policy, instance, res, truncated)
            else:
                out[i] = _failed(policy, instance, res)

    def record(self, policy: PolicyGenome, instance: Instance, r: Rollout) -> EvalRecord:
        """Score a rollout (the error-rate guard counts it first)."""
        if self.guard is not None:
            self.guard.record(r.error)  # raises TooManyErrors above the error-rate threshold
        parsed = None
        if r.error is None:
            try:
                parsed = parse_rollout(self.task, instance, r)
            except Exception as exc:  # noqa: BLE001 - a parser bug scores 0, never crashes
                r = Rollout(r.policy_id, r.instance_id, r.output, error=f"parse error: {exc}")
        return EvalRecord(r, score_rollout(self.components, instance, r, parsed))

    def _job(self, job: tuple[PolicyGenome, Instance]) -> EvalRecord:
        policy, instance = job
        if self.guard is not None:
            self.guard.check()
        return self.record(policy, instance, self.rollout(policy, instance))

    async def _ajob(self, job: tuple[PolicyGenome, Instance]) -> EvalRecord:
        policy, instance = job
        if self.guard is not None:
            self.guard.check()
        return self.record(policy, instance, await self.arollout(policy, instance))

    def evaluate(
        self, policies: Sequence[PolicyGenome], instances: Sequence[Instance]
    ) -> dict[tuple[str, str], EvalRecord]:
        """Run every (policy, instance) pair not already in the store; return all pairs. Each
        record is stored as soon as it is made (a BudgetExceeded mid-batch keeps them)."""
        unique = {p.id: p for p in policies}
        jobs = [
            (p, inst)
            for inst in instances
            for p in unique.values()
            if (p.id, inst.id) not in self.store
        ]
        for inst in instances:
            known = self.instances.setdefault(inst.id, inst)
            if known is not inst and known.payload != inst.payload:
                # the store is keyed by (policy id, instance id): two contents under one id
                # would make a score depend on which was evaluated first
                raise ValueError(f"two different instances share the id {inst.id!r}")
        self._dispatch(jobs)
        return {(p.id, i.id): self.store[(p.id, i.id)] for p in unique.values() for i in instances}

    # -- dispatch (dispatch.py: groups, in flight once) -----------------------------------------
    def _dispatch(self, jobs: Sequence[dispatch.Job]) -> None:
        """Evaluate ``jobs``, storing every record in the store as it is made."""
        mine, theirs = self.in_flight.claim(jobs)
        error: BaseException | None = None
        try:
            if mine:
                self._run_mine(mine)
        except BaseException as exc:
            error = exc
            raise
        finally:
            for job in mine:  # whatever was not stored failed with this run's error
                if dispatch.key_of(job) not in self.store:
                    self.in_flight.finish(
                        dispatch.key_of(job), error or BudgetExceeded("not evaluated")
                    )
        for fut in theirs:
            fut.result()  # raises what stopped the other thread (BudgetExceeded ...)

    def _run_mine(self, jobs: Sequence[dispatch.Job]) -> None:
        batch = batch_size_of(self.llm) if self.single_turn else 1
        groups = dispatch.units(jobs, batch)
        amap = getattr(self.runner, "amap", None)
        if amap is not None and self.single_turn and all(len(g) == 1 for g in groups):

            async def one(group: list[dispatch.Job]) -> None:
                self._store(group[0], await self._ajob(group[0]))

            amap(one, groups)
        else:
            self.runner.map(self._run_group, groups)

    def _run_group(self, group: list[dispatch.Job]) -> None:
        if len(group) == 1:
            self._store(group[0], self._job(group[0]))
            return
        if self.guard is not None:
            self.guard.check()
        for job, r in zip(group, self.rollouts(group), strict=True):
            if isinstance(r, BudgetExceeded):
                raise r
            self._store(job, self.record(job[0], job[1], r))

    def _store(self, job: dispatch.Job, record: EvalRecord) -> None:
        self.store[dispatch.key_of(job)] = record
        self.in_flight.finish(dispatch.key_of(job))

    def rescore(self, names: Sequence[str]) -> None:
        """Recompute the named components of every stored rollout (after a learned component
        was refitted), without LLM calls."""
        comps = {n: self.components[n] for n in names if n in self.components}
        if not comps:
            return
        for key, rec in self.store.items():
            r = rec.rollout
            instance = self.instances[r.instance_id]
            vec = score_rollout(comps, instance, r, parse_rollout(self.task, instance, r))
            fresh = {c.name: c for c in vec}
            merged = tuple(fresh.get(c.name, c) for c in rec.vector)
            self.store[key] = EvalRecord(r, ScoreVector(merged))

    # -- fitness --------------------------------------------------------------------------
    def fitness(
        self,
        policy_id: str,
        instances: Sequence[Instance],
        weights: Mapping[str, float],
        worst_k: int = 3,
        instance_weights: Mapping[str, float] | None = None,
    ) -> PolicyFitness:
        """Mean weighted reward of stored rollouts (no LLM calls): re-weighting is free. With
        ``instance_weights`` (by instance id; ``training_set.share_weights``) the fitness is
        their weighted mean instead (the plain mean where they sum to 0 on ``instances``)."""
        recs = [(i, self.store[(policy_id, i.id)]) for i in instances]
        rewards = [weighted_reward(r.vector, weights) for _, r in recs]
        n = len(recs)
        shares = [instance_weights.get(i.id, 0.0) for i, _ in recs] if instance_weights else []
        total = sum(shares)
        comps: dict[str, float] = {}
        for name in self.components:  # mean over the rollouts the component applies to
            vals = [s for _, r in recs if (s := r.vector.applicable().get(name)) is not None]
            if vals:
                comps[name] = sum(vals) / len(vals)
        order = sorted(range(n), key=lambda j: rewards[j])[:worst_k]
        lines = []
        for j in order:
            inst, rec = recs[j]
            fb = "; ".join(
                f"{c.name}: {c.feedback}"
                for c in rec.vector
                if c.applicable and weights.get(c.name, 0) > 0
            )
            excerpt = " ".join(rec.rollout.output.split())[:160]
            line = f"- reward {rewards[j]:.2f} ({fb}). Output began: {excerpt!r}"
            said = [t.observation for t in rec.rollout.turns if t.observation]
            if said:  # a multi-turn episode: what the environment said last
                seen = " ".join(said[-1].split())[:160]
                line += f" (after {len(rec.rollout.turns)} turns; last feedback: {seen!r})"
            lines.append(line)
        return PolicyFitness(
            policy_id=policy_id,
            fitness=(
                sum(w * r for w, r in zip(shares, rewards, strict=True)) / total
                if total > 0
                else sum(rewards) / n
                if n
                else 0.0
            ),
            components=comps,
            n=n,
            errors=sum(1 for _, r in recs if r.rollout.error),
            feedback="\n".join(lines),
        )


def _failed(policy: PolicyGenome, instance: Instance, exc: BaseException) -> Rollout:
    return Rollout(policy.id, instance.id, "", error=f"{type(exc).__name__}: {exc}")


def _answered(policy: PolicyGenome, instance: Instance, c: Completion, truncated: bool) -> Rollout:
    """The rollout of a single-turn episode answered by ``c`` (as ``tasks.base.single_turn``)."""
    turn = Turn(
        c.text,
        prompt_tokens=c.prompt_tokens,
        completion_tokens=c.completion_tokens,
        latency_s=c.latency_s,
        cached=c.cached,
        raw_output=raw_text(c),
    )
    return _from_trajectory(policy, instance, Trajectory((turn,), truncated))


def _from_trajectory(policy: PolicyGenome, instance: Instance, t: Trajectory) -> Rollout:
    return Rollout(
        policy.id,
        instance.id,
        t.output,
        prompt_tokens=sum(x.prompt_tokens for x in t.turns),
        completion_tokens=sum(x.completion_tokens for x in t.turns),
        latency_s=sum(x.latency_s for x in t.turns),
        cached=all(x.cached for x in t.turns),
        truncated=t.truncated,
        turns=t.turns if len(t.turns) > 1 else (),
        raw_output=t.turns[-1].raw_output if t.turns else None,
    )
