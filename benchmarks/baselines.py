"""The external optimisers of the quality benchmark, wired to EvoTrainer's task, metric and
metered LLM stack so that they run on the same model, data, truncation and call budget:

- GEPA (``pip install gepa``): a ``GEPAAdapter`` whose ``evaluate`` renders the candidate
  instruction with ``MeetingTask.render`` (same layout and truncation as the engine), calls the
  model and scores each meeting with ``MinutesMetric`` (per-meeting s_val); the reflection LM is
  a callable on the same endpoint. Both go through one ``Budget``; a custom stopper ends the run
  when the budget is spent.
- EvoPrompt-GA from ``promptolution`` (``pip install promptolution``): its ``EvoPromptGA``
  optimiser with a ``RewardTask`` (reward = per-meeting s_val), a predictor that renders prompts
  with ``MeetingTask.render``, and a promptolution ``BaseLLM`` that calls the same metered
  endpoint (task calls and crossover/mutation meta-prompts alike).

Every call of either goes through ``stack.client`` (MeteredLLM under a per-method cache), so
``BudgetExceeded`` stops them at the same number of backend calls as EvoTrainer.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from evotrainer.errors import BudgetExceeded, LLMError
from evotrainer.evaluation.validation import combine_s_val
from evotrainer.llm.base import SamplingParams
from evotrainer.llm.spec import LLMStack
from evotrainer.policy.decoding import DecodingGenes
from evotrainer.policy.postprocess import LoopCut
from evotrainer.tasks.meetings.metrics import MinutesMetric, reference_text
from evotrainer.tasks.meetings.task import MeetingTask
from evotrainer.types import Instance, Message

# Meta-prompt task description shared by GEPA's reflection and promptolution's meta-prompts.
TASK_DESCRIPTION = (
    "The inputs are meeting transcripts (speaker turns). The assistant must write meeting "
    "minutes: a title, the topics, the decisions, and at most 5 action items formatted as "
    "'Owner: task'."
)


@dataclass
class Scored:
    output: str
    score: float
    row: dict[str, Any]
    error: str | None = None


@dataclass
class Scorer:
    """One instruction on one meeting: render, call, score (per-meeting s_val). Every answer
    is decoded with ``decoding`` and cut with ``cut``: the profile's seed genes, the same for
    every method (issue 46)."""

    task: MeetingTask
    stack: LLMStack
    sampling: SamplingParams
    weights: Mapping[str, float]
    metric: MinutesMetric | None = None  # default: the task's (its empty-reference rule)
    # what GEPA's reflection reads about one rollout (default: the meeting task's feedback)
    feedback: Callable[[Instance, Scored], str] | None = None
    decoding: DecodingGenes = field(default_factory=DecodingGenes)
    cut: LoopCut = field(default_factory=LoopCut)

    def __post_init__(self) -> None:
        if self.metric is None:
            self.metric = self.task.validation_metric()

    def messages(self, instruction: str, inst: Instance) -> list[Message]:
        return self.task.render(instruction, inst)[0]

    def score_output(self, inst: Instance, output: str) -> tuple[float, dict[str, Any]]:
        row = self.metric.score(inst, output, self.task.parse(output))
        agg = self.metric.aggregate([row])
        return combine_s_val(agg, self.weights), dict(row)

    def run(self, instruction: str, inst: Instance) -> Scored:
        try:
            params = replace(self.sampling, **self.decoding.overrides())
            c = self.stack.client.complete(self.messages(instruction, inst), params)
        except BudgetExceeded:
            raise
        except LLMError as exc:
            return Scored("", 0.0, {}, error=f"{type(exc).__name__}: {exc}")
        text = self.cut.apply(c.text)
        s, row = self.score_output(inst, text)
        return Scored(text, s, row)

    def run_many(self, pairs: Sequence[tuple[str, Instance]]) -> list[Scored]:
        """Instance-major order (all instructions on one meeting back to back) so the backend
        can reuse the transcript prefix; results in the input order."""
        order = sorted(range(len(pairs)), key=lambda j: (pairs[j][1].id, j))
        out: list[Scored | None] = [None] * len(pairs)
        for j in order:
            out[j] = self.run(*pairs[j])
        return [o for o in out if o is not None]


def feedback_text(inst: Instance, scored: Scored) -> str:
    """What GEPA's reflection sees about one rollout: the metric values and a short excerpt of
    the human reference (the 'textual feedback' GEPA is built around)."""
    if scored.error:
        return f"The call failed: {scored.error}"
    r = scored.row
    ref = reference_text(inst.payload)
    items = list(inst.payload.action_items)
    f1 = r.get("action_item_f1")
    f1_text = (
        f"action-item F1 {f1:.3f}"
        if f1 is not None
        else "action items not scored: the reference lists none"
    )
    parts = [
        f"Score {scored.score:.3f} (ROUGE-L {r.get('rougeL') or 0:.3f} against the reference "
        f"minutes; {f1_text}).",
        f"The response had {int(r.get('n_action_items') or 0)} action items; the reference has "
        f"{len(items)}" + (f": {'; '.join(items[:3])}." if items else "."),
        f"The reference minutes begin: {ref[:300]!r}",
    ]
    return " ".join(parts)


# -- GEPA -----------------------------------------------------------------------------------
class MinutesGEPAAdapter:
    """A ``gepa.core.adapter.GEPAAdapter`` for the meeting-minutes task. One component,
    ``system``: the instruction text (placed after the transcript, as in the engine)."""

    propose_new_texts = None  # use GEPA's own reflective proposer (with reflection_lm)

    def __init__(self, scorer: Scorer, excerpt_chars: int = 500) -> None:
        self.scorer = scorer
        self.excerpt_chars = excerpt_chars
        self.full_evals: dict[str, list[float]] = {}

    def evaluate(self, batch: list[Instance], candidate: dict[str, str], capture_traces=False):
        from gepa.core.adapter import EvaluationBatch

        text = candidate["system"]
        res = self.scorer.run_many([(text, inst) for inst in batch])
        traces = None
        if capture_traces:
            traces = [{"instance": inst, "scored": s} for inst, s in zip(batch, res, strict=True)]
        return EvaluationBatch(
            outputs=[s.output for s in res],
            scores=[s.score for s in res],
            trajectories=traces,
        )

    def make_reflective_dataset(self, candidate, eval_batch, components_to_update):
        records = []
        for tr in eval_batch.trajectories or []:
            inst, scored = tr["instance"], tr["scored"]
            transcript = self.scorer.task.render("", inst)[0][0].content
            excerpt = transcript[: self.excerpt_chars].rstrip() + " ..."
            records.append(
                {
                    "Inputs": {"transcript (excerpt)": excerpt},
                    "Generated Outputs": scored.output[:600],
                    "Feedback": (self.scorer.feedback or feedback_text)(inst, scored),
                }
            )
        return {name: records for name in components_to_update}


class BudgetStopper:
    """GEPA stop condition: the shared budget is spent (or nearly: less than ``reserve``), or
    ``stall`` iterations in a row made no backend call (every request answered by the cache, or
    an iteration failing before its first call): a guard against spinning forever."""

    def __init__(self, stack: LLMStack, reserve: int = 1, stall: int = 8) -> None:
        self.stack = stack
        self.reserve = reserve
        self.stall = stall
        self.idle = 0
        self.last = -1
        self.stalled = False

    def __call__(self, gepa_state: Any) -> bool:
        b = self.stack.budget
        if b.max_calls is not None and b.backend_calls + self.reserve > b.max_calls:
            return True
        self.idle = self.idle + 1 if b.backend_calls == self.last else 0
        self.last = b.backend_calls
        self.stalled = self.idle >= self.stall
        return self.stalled


class QuietLogger:
    def __init__(self) -> None:
        self.lines: list[str] = []

    def log(self, message: str) -> None:
        self.lines.append(str(message))


def run_gepa(
    scorer: Scorer,
    seed_instruction: str,
    trainset: list[Instance],
    valset: list[Instance],
    reflection_sampling: SamplingParams,
    seed: int,
    minibatch: int = 2,
) -> dict[str, Any]:
    """Run ``gepa.optimize`` until the budget is spent; the best candidate by valset mean."""
    import gepa

    stack = scorer.stack
    reflection_calls = {"n": 0}

    def reflection_lm(prompt: str | list[dict[str, Any]]) -> str:
        if isinstance(prompt, str):
            msgs = [Message("user", prompt)]
        else:
            msgs = [Message(m["role"], str(m["content"])) for m in prompt]
        reflection_calls["n"] += 1
        params = SamplingParams(
            temperature=reflection_sampling.temperature,
            max_tokens=reflection_sampling.max_tokens,
            seed=seed * 1000 + reflection_calls["n"],
        )
        return stack.client.complete(msgs, params).text

    adapter = MinutesGEPAAdapter(scorer)
    logger = QuietLogger()
    seed_candidate = {"system": seed_instruction}
    stopper = BudgetStopper(stack)
    try:
        result = gepa.optimize(
            seed_candidate=seed_candidate,
            trainset=trainset,
            valset=valset,
            adapter=adapter,
            reflection_lm=reflection_lm,
            reflection_minibatch_size=minibatch,
            stop_callbacks=[stopper],
            logger=logger,
            seed=seed,
            raise_on_exception=False,
            display_progress_bar=False,
            skip_perfect_score=False,
        )
    except BudgetExceeded as exc:  # the seed's own valset evaluation did not fit
        return {
            "best": seed_instruction,
            "selection_s_val": None,
            "note": f"budget spent before GEPA finished its initial evaluation: {exc}",
            "reflection_calls": reflection_calls["n"],
            "log_tail": logger.lines[-5:],
        }
    best_idx = result.best_idx
    return {
        "best": result.best_candidate["system"],
        "selection_s_val": float(result.val_aggregate_scores[best_idx]),
        "candidates": len(result.candidates),
        "reflection_calls": reflection_calls["n"],
        "iterations_logged": sum(1 for line in logger.lines if line.startswith("Iteration")),
        "budget_errors": sum(1 for line in logger.lines if "budget spent" in line.lower()),
        "stalled": stopper.stalled,
        "exceptions": sum(1 for line in logger.lines if "Exception during optimization" in line),
        "log_tail": [line[:300] for line in logger.lines[-5:]],
    }


# -- promptolution (EvoPrompt-GA) -----------------------------------------------------------
def run_evoprompt(
    scorer: Scorer,
    seed_instructions: Sequence[str],
    selection: list[Instance],
    meta_sampling: SamplingParams,
    seed: int,
    max_steps: int = 1000,
) -> dict[str, Any]:
    """promptolution's EvoPromptGA (Guo et al. 2023) until the budget is spent."""
    import numpy as np
    import pandas as pd
    from promptolution.optimizers.evoprompt_ga import EvoPromptGA
    from promptolution.tasks.reward_tasks import RewardTask

    logging.getLogger("promptolution").setLevel(logging.CRITICAL)
    for name in list(logging.root.manager.loggerDict):
        if name.startswith("promptolution"):
            logging.getLogger(name).setLevel(logging.CRITICAL)

    by_id = {inst.id: inst for inst in selection}
    meta_calls = {"n": 0}

    def reward(prediction: str, mid: str) -> float:
        return scorer.score_output(by_id[mid], prediction)[0]

    ids = [inst.id for inst in selection]
    df = pd.DataFrame({"x": ids, "mid": ids})
    task = RewardTask(
        df,
        reward,
        x_column="x",
        reward_columns=["mid"],
        task_description=TASK_DESCRIPTION,
        n_subsamples=len(ids),
        eval_strategy="full",
        seed=seed,
    )
    np.random.seed(seed)
    llm = _stack_llm(scorer.stack, meta_sampling, seed, meta_calls)
    predictor = _minutes_predictor(llm, scorer, by_id)
    opt = EvoPromptGA(
        predictor=predictor,
        task=task,
        meta_llm=llm,
        initial_prompts=list(seed_instructions),
        selection_mode="wheel",
    )
    try:
        opt.optimize(n_steps=max_steps)
    except BudgetExceeded as exc:  # inside the initial evaluation (outside promptolution's loop)
        return {
            "best": seed_instructions[0],
            "selection_s_val": None,
            "note": f"budget spent before EvoPromptGA finished its initial evaluation: {exc}",
            "meta_calls": meta_calls["n"],
        }
    best = opt.prompts[0]
    return {
        "best": best.instruction,
        "selection_s_val": float(opt.scores[0]) if len(opt.scores) else None,
        "population": len(opt.prompts),
        "meta_calls": meta_calls["n"],
    }


def _stack_llm(
    stack: LLMStack, meta_sampling: SamplingParams, seed: int, meta_calls: dict[str, int]
) -> Any:
    """A promptolution LLM over EvoTrainer's metered client (the OpenAI-compatible endpoint),
    for the crossover/mutation meta-prompts; counts its calls in ``meta_calls``."""
    from promptolution.llms.base_llm import BaseLLM

    class StackLLM(BaseLLM):
        def _get_response(self, prompts: list[str], system_prompts: list[str]) -> list[str]:
            outs = []
            for p, s in zip(prompts, system_prompts, strict=True):
                meta_calls["n"] += 1
                params = SamplingParams(
                    temperature=meta_sampling.temperature,
                    max_tokens=meta_sampling.max_tokens,
                    seed=seed * 1000 + meta_calls["n"],
                )
                msgs = [Message("system", s), Message("user", p)] if s else [Message("user", p)]
                outs.append(stack.client.complete(msgs, params).text)
            return outs

    return StackLLM()


def _minutes_predictor(llm: Any, scorer: Scorer, by_id: dict[str, Instance]) -> Any:
    """A promptolution predictor that renders each (prompt, meeting) like the engine does
    (transcript first, instruction after, same truncation) instead of promptolution's
    ``prompt + "\\n" + x``."""
    from promptolution.predictors.base_predictor import BasePredictor

    class MinutesPredictor(BasePredictor):
        def predict(self, prompts, xs, system_prompts=None):
            if isinstance(prompts, str):
                prompts = [prompts]
            res = scorer.run_many([(p, by_id[x]) for p, x in zip(prompts, xs, strict=True)])
            return [r.output for r in res], [r.output for r in res]

        def _extract_preds(self, preds):
            return preds

    return MinutesPredictor(llm)
