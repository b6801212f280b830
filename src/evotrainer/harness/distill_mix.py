"""What a distillation trains on, as the harness decides it (issue 47; docs/distillation.md).

- The data mix as harness genes (``distill.mix_genes``; their consumer is the distillation
  step, engine/distill_step.py): the shares of human references (``distill_refs``), of
  reward-filtered own answers (``distill_own``) and of context-distilled answers
  (``distill_context``: the evolved prompt's answers trained under the short seed prompt, so
  the weights learn what the long prompt asked for); ``distill_samples``, answers sampled per
  instance at ``distill.sample_temperature`` and kept only when the harness's reward puts them
  above the current weights' greedy answer (rejection sampling, as RFT / ReST); the epochs;
  and ``distill_warm_start``, whether the next adapter starts from the weights of the adapter
  the best validated policy carries (its GGUF file read back,
  ``distill/export.read_gguf_adapter``) and also trains on the pairs the last kept adapter
  learned (``rehearsal``: against forgetting; on by default under ``schedule: weights_first``,
  whose later rounds would otherwise trade the references' adapter for one trained from
  scratch on half as many references). Their trial
  is ``distillation``: an outer-step trial that trains a small adapter under the variant's mix,
  judged on s_val like every other trial (engine/trials.py).
- References as training pairs (``reference_pairs``: the weights-first schedule's first
  adapter, the ``sft_refs`` benchmark method, the references joining a later distillation).
- Training targets that end within the answer cap (``cut_to_cap``): a reference longer than
  ``model.max_tokens`` is cut at a sentence boundary, so the distilled model learns to stop.
  Under ``distill.reference_targets: answer`` (``reference_of``) the reference is written as
  the answer the task asks for (``Task.reference_example``: for meetings a summary, the
  decisions and the action items as a list) and ``fit_to_cap`` shortens its prose before
  anything else, so the action items the task scores stay in the target.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from evotrainer.config.services import DistillConfig
from evotrainer.distill.pairs import TrainingPair
from evotrainer.harness.distill_pairs import REFERENCE_SOURCE, Candidate
from evotrainer.operators.fewshot import CHARS_PER_TOKEN
from evotrainer.policy.genome import PolicyGenome
from evotrainer.types import GeneSpec, Instance, Message

TRIAL = "distillation"  # the trial kind that can measure a data-mix gene
SHARES = ("distill_refs", "distill_own", "distill_context")
GENES = (*SHARES, "distill_samples", "distill_epochs", "distill_warm_start")
MAX_SAMPLES = 4
SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")

Render = Callable[[PolicyGenome, Instance], list[Message]]


class ReferenceSource(Protocol):
    """The two ways a task writes an instance's human reference (tasks/base.py ``Task``)."""

    def reference_text(self, instance: Instance) -> str | None: ...

    def reference_example(self, instance: Instance) -> str | None: ...


def mix_genes(d: DistillConfig) -> list[GeneSpec]:
    """The data mix's declarations (none unless ``distill.enabled`` and ``distill.mix_genes``)."""
    if not (d.enabled and d.mix_genes):
        return []
    epochs = min(8.0, max(1.0, d.epochs))
    # under weights_first a later round starts as the references' training continued: warm from
    # the carried adapter, on the references alone (in the evolved prompt); own answers join
    # only where the harness's trials move the shares (docs/distillation.md, "Weights first")
    first = d.schedule == "weights_first"
    warm, refs, own = (1.0, 1.0, 0.0) if first else (0.0, 0.5, 0.5)
    return [
        GeneSpec("distill_refs", refs, 0, 1, step=0.25, trial=TRIAL,
                 description="the share of human references in a distillation's pairs "
                             "(initially 1 under schedule weights_first, else 0.5)"),
        GeneSpec("distill_own", own, 0, 1, step=0.25, trial=TRIAL,
                 description="the share of reward-filtered own answers (initially 0 under "
                             "schedule weights_first, else 0.5)"),
        GeneSpec("distill_context", 0.0, 0, 1, step=0.25, trial=TRIAL,
                 description="the share of context-distilled answers (the evolved prompt's "
                 "answers under the short seed prompt)"),
        GeneSpec("distill_samples", 0.0, 0, MAX_SAMPLES, step=1, trial=TRIAL,
                 description="answers sampled per instance, kept when they beat the greedy one"),
        GeneSpec("distill_epochs", epochs, 1, 8, step=1, trial=TRIAL,
                 description="passes over a distillation's pairs"),
        GeneSpec("distill_warm_start", warm, 0, 1, step=1, trial=TRIAL,
                 description="1: the next adapter starts from the carried adapter's weights "
                             "and rehearses the last kept adapter's pairs (initially 1 under "
                             "schedule weights_first)"),
    ]  # fmt: skip


@dataclass(frozen=True)
class Mix:
    """One distillation's data mix, read from the harness's genes."""

    refs: float
    own: float
    context: float
    samples: int
    epochs: float
    warm_start: bool

    @classmethod
    def of(cls, genes: Mapping[str, float]) -> Mix | None:
        """The mix the genes set; None when the run declares no data-mix gene (the fixed mix:
        ``keep_share`` of the answers and ``real_share`` x them in references)."""
        if "distill_refs" not in genes:
            return None
        return cls(
            refs=float(genes["distill_refs"]),
            own=float(genes["distill_own"]),
            context=float(genes["distill_context"]),
            samples=round(genes["distill_samples"]),
            epochs=float(genes["distill_epochs"]),
            warm_start=genes["distill_warm_start"] >= 0.5,
        )

    def counts(self, total: int) -> dict[str, int]:
        """Pairs of each source for ``total`` pairs: the shares normalised (all 0: own
        answers only)."""
        shares = {"refs": self.refs, "own": self.own, "context": self.context}
        s = sum(shares.values())
        if s <= 0:
            return {"refs": 0, "own": total, "context": 0}
        out = {k: int(total * v / s) for k, v in shares.items()}
        rest = total - sum(out.values())  # the largest remainders get the rounding
        for k in sorted(shares, key=lambda k: -(total * shares[k] / s - out[k]))[:rest]:
            out[k] += 1
        return out


def estimate_tokens(text: str) -> int:
    """A tokenizer-free token count (the few-shot operator's: characters / 4)."""
    return int(len(text) / CHARS_PER_TOKEN) + 1


def reference_of(task: ReferenceSource, form: str) -> Callable[[Instance], str | None]:
    """What a distillation trains on as an instance's human reference (``distill.
    reference_targets``): ``answer``, the reference written as the answer the task asks for
    (``Task.reference_example``; the task's reference text where it has none), or ``text``,
    the validation metric's reference text as it is (``Task.reference_text``; for meetings its
    action items are plain sentences that the task's parser does not read as items)."""
    if form == "text":
        return task.reference_text

    def answer(inst: Instance) -> str | None:
        return task.reference_example(inst) or task.reference_text(inst)

    return answer


def cut_to_cap(text: str, max_tokens: int, count: Callable[[str], int] | None = None) -> str:
    """``text`` if it fits ``max_tokens`` (by ``count``, default ``estimate_tokens``), else its
    longest run of whole sentences (or lines) that fits; a first sentence that alone is too
    long is cut after its last whole word that fits."""
    count = count or estimate_tokens
    text = text.strip()
    if count(text) <= max_tokens:
        return text
    ends = [m.start() for m in SENTENCE_END.finditer(text)]
    best = ""
    for end in ends:
        head = text[:end].rstrip()
        if count(head) > max_tokens:
            break
        best = head
    if best:
        return best
    words = text.split()
    out: list[str] = []
    for w in words:
        if count(" ".join([*out, w])) > max_tokens:
            break
        out.append(w)
    return " ".join(out)


def fit_to_cap(text: str, max_tokens: int, count: Callable[[str], int] | None = None) -> str:
    """``text`` if it fits ``max_tokens``, else its prose shortened before anything else goes:
    the last sentence of its longest line of several sentences dropped, one at a time, so that
    headings and list items (a reference written as minutes: its decisions and action items)
    stay; when every line is down to one sentence and it still does not fit, ``cut_to_cap`` of
    what is left."""
    count = count or estimate_tokens
    lines = text.strip().splitlines()
    while count("\n".join(lines)) > max_tokens:
        several = [(len(line), i) for i, line in enumerate(lines) if _sentence_ends(line)]
        if not several:
            break
        _, i = max(several)
        lines[i] = lines[i][: _sentence_ends(lines[i])[-1]].rstrip()
    return cut_to_cap("\n".join(lines), max_tokens, count)


def _sentence_ends(line: str) -> list[int]:
    """Where the sentences of ``line`` but its last end (none: one sentence)."""
    return [m.start() for m in SENTENCE_END.finditer(line.rstrip())]


Cut = Callable[[str, int, Callable[[str], int] | None], str]


def cut_for(form: str) -> Cut:
    """How a reference of ``form`` (``distill.reference_targets``) is cut to the answer cap:
    ``fit_to_cap`` for one written as the answer (its list items stay), else ``cut_to_cap``."""
    return fit_to_cap if form == "answer" else cut_to_cap


def reference_pairs(
    policy: PolicyGenome,
    pool: Sequence[Instance],
    render: Render,
    reference: Callable[[Instance], str | None],
    max_pairs: int,
    rng: random.Random | None = None,
    cap: int | None = None,
    count: Callable[[str], int] | None = None,
    cut: Cut = cut_to_cap,
) -> list[TrainingPair]:
    """At most ``max_pairs`` (instance, human reference) pairs of ``pool`` in ``policy``'s
    prompt (a random subset by ``rng`` when the pool is larger; in pool order without one);
    with ``cap``, each reference cut to it by ``cut`` (``cut_for`` the references' form)."""
    with_refs = [(i, (reference(i) or "").strip()) for i in pool]
    with_refs = [(i, t) for i, t in with_refs if t]
    if rng is not None:
        rng.shuffle(with_refs)
    out = []
    for inst, text in with_refs[:max_pairs]:
        target = cut(text, cap, count) if cap is not None else text
        if target:
            note = " (cut to the answer cap)" if target != text else ""
            out.append(
                TrainingPair(
                    tuple(render(policy, inst)),
                    target,
                    source=f"{REFERENCE_SOURCE} of {inst.id}{note}",
                )
            )
    return out


def rehearsal(
    last: Sequence[TrainingPair], new: Sequence[TrainingPair], n: int
) -> list[TrainingPair]:
    """At most ``n`` of the pairs the last kept adapter learned, to train again beside ``new``
    ones (a warm start's rehearsal): those whose target no new pair has (a reference the new
    pairs hold again, in the current prompt, is learned once), human references first, then
    in their order."""
    targets = {p.completion for p in new}
    rest = [p for p in last if p.completion not in targets]
    rest.sort(key=lambda p: not p.source.startswith(REFERENCE_SOURCE))  # stable: order kept
    return rest[: max(0, n)]


def better_than_greedy(
    samples: Sequence[Candidate], greedy: Mapping[str, float]
) -> list[Candidate]:
    """The sampled answers whose reward beats their instance's greedy answer (``greedy``:
    instance id -> reward; an instance without one keeps none)."""
    return [c for c in samples if c.instance.id in greedy and c.reward > greedy[c.instance.id]]


def context_pairs(
    kept: Sequence[Candidate], seed: PolicyGenome, render: Render, n: int
) -> list[TrainingPair]:
    """The first ``n`` kept answers rendered under ``seed``'s (short) prompt: the evolved
    prompt's behaviour distilled into the weights."""
    return [
        TrainingPair(
            tuple(render(seed, c.instance)),
            c.output,
            source=f"context-distilled: policy {c.policy.id} on {c.instance.id} under "
            f"{seed.id}, reward {c.reward:.3f}",
        )
        for c in kept[:n]
    ]


def shortest(policies: Sequence[PolicyGenome]) -> PolicyGenome:
    """The policy with the shortest prompt (ties: the first)."""
    return min(policies, key=lambda p: len(p.render()))
