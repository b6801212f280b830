"""One inner generation: draw the harness's batch, ask the policy optimiser for candidates,
score them (racing; screened by the surrogate when it is on), tell the optimiser. Also the
operators' view of the run (harness weights, few-shot candidates)."""

from __future__ import annotations

from collections.abc import Sequence

from evotrainer.engine.components import Components
from evotrainer.engine.state import RunState
from evotrainer.errors import ConfigError
from evotrainer.evaluation.evaluator import PolicyFitness
from evotrainer.harness.genome import HarnessGenome
from evotrainer.harness.reward import weighted_reward
from evotrainer.harness.training_set import share_weights
from evotrainer.loops.inner import PolicyOptimizer
from evotrainer.loops.rng import stream
from evotrainer.operators.fewshot import cut_to_tokens
from evotrainer.policy.genome import PolicyGenome
from evotrainer.run import events as ev
from evotrainer.types import Instance

BEST_OUTPUT_EXAMPLES = 3  # best training outputs offered as few-shot candidates


def draw_batch(
    c: Components, s: RunState, epoch: int, harness: HarnessGenome, n: int | None = None
) -> list[Instance]:
    """The training batch of ``epoch`` (``n`` instances; default tasks_per_generation)."""
    rng = stream(c.cfg.seed, "batch", epoch)
    batch = c.batches.sample(n or c.cfg.inner.tasks_per_generation, harness, rng)
    leaked = [i.id for i in batch if i.id in c.held_out]
    if leaked:  # cannot happen (the pool is filtered); a generator bug must not leak
        raise ConfigError(f"training batch holds validation instances {leaked}")
    s.train_ids.update(i.id for i in batch)
    return batch


def retune_threads(c: Components, s: RunState) -> None:
    """Before a generation: the embedded model decides its CPU threads again from the cores
    free now (LlamaCppLLM.retune_threads); a change is an event (console, report)."""
    retune = getattr(c.stack.backend, "retune_threads", None)
    if retune is None:
        return
    before = getattr(c.stack.backend, "n_threads", None)
    now = retune()
    if now != before:
        c.emit(ev.THREADS, threads=now, previous=before, generation=s.inner.generation + 1)


def fitness_of(
    c: Components,
    s: RunState,
    policies: Sequence[PolicyGenome],
    batch: Sequence[Instance],
    harness: HarnessGenome,
    epoch: int | None = None,
    race: PolicyOptimizer | None = None,
    drawn: HarnessGenome | None = None,
) -> dict[str, PolicyFitness]:
    """Fitness on ``batch``; with ``race``, new policies race against its population.
    ``drawn``: the harness that drew ``batch`` when it is not ``harness``; its instances
    are then weighted to ``harness``'s real share (``share_weights``)."""
    for p in policies:
        s.policies.setdefault(p.id, p)
    return c.judge(
        policies,
        batch,
        harness,
        s.epoch if epoch is None else epoch,
        incumbents=race.complete(batch) if race is not None else (),
        survivors=c.cfg.inner.elites,
        instance_weights=(
            share_weights(batch, drawn.real_share, harness.real_share) if drawn else None
        ),
    )


def run_generation(
    c: Components,
    s: RunState,
    opt: PolicyOptimizer,
    batch: list[Instance],
    h: HarnessGenome,
    epoch: int,
    drawn: HarnessGenome | None = None,
) -> int:
    """One inner generation of ``opt`` (the main line's ``s.inner`` or a trial's copy) under
    ``h``; returns the epoch (it advances with per-generation batches). ``drawn``: the harness
    that drew ``batch``, when not ``h`` (``fitness_of``)."""
    if c.cfg.inner.batch == "per_generation" and opt.population:
        epoch += 1
        batch[:] = draw_batch(c, s, epoch, h)
        drawn = None
        if opt is s.inner:
            s.drawn = h
        opt.shrink_to_elites()
        opt.refit(fitness_of(c, s, opt.population, batch, h, epoch))
    refresh_resources(c, opt, h, batch)
    candidates = opt.ask()

    def evaluate(cs: Sequence[PolicyGenome]) -> dict[str, PolicyFitness]:
        return fitness_of(c, s, cs, batch, h, epoch, race=opt, drawn=drawn)

    if c.surrogate is not None and opt.population:  # children: screened first
        k = c.cfg.inner.race_first
        cost = k if 0 < k < len(batch) else len(batch)
        learn = opt is s.inner  # not from trials (they may run concurrently)
        opt.tell(c.surrogate.fitness(opt, candidates, evaluate, cost, learn))
    else:
        opt.tell(evaluate(candidates))
    return epoch


def refresh_resources(
    c: Components, opt: PolicyOptimizer, harness: HarnessGenome, batch: Sequence[Instance]
) -> None:
    """Keep the operators' view current: the harness weights, and few-shot candidates from
    the references and the best training outputs so far: the elites' best outputs on the
    current batch (what a checkpoint can restore; never a validation instance)."""
    store = c.evaluator.store
    scored = sorted(
        (
            (weighted_reward(rec.vector, harness.weights), rec.rollout.output)
            for p in opt.population
            for inst in opt.scored_on(p, batch)
            if (rec := store.get((p.id, inst.id))) is not None
            and rec.rollout.error is None
            and rec.rollout.output
        ),
        reverse=True,
    )
    best: list[str] = []
    for _, text in scored:
        cut = cut_to_tokens(text, c.cfg.inner.example_tokens)
        if cut and cut not in best:
            best.append(cut)
        if len(best) >= BEST_OUTPUT_EXAMPLES:
            break
    opt.resources.weights = dict(harness.weights)
    opt.resources.examples = (*c.reference_examples, *best)
