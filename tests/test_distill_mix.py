"""Issue 47: the weights-first schedule, the distillation's data mix as harness genes (with
their trial: a small adapter per outer-step trial) and training targets cut to the answer cap.
Fakes as in tests/test_distill_run.py: a fake training that writes an adapter file, a fake
model that answers better with an adapter."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from evotrainer.coevolution import CoEvolution
from evotrainer.config import config_from_dict, load_config
from evotrainer.distill.pairs import TrainingPair
from evotrainer.engine.state import load_state_dict, state_dict
from evotrainer.harness.distill_mix import (
    GENES,
    TRIAL,
    Mix,
    better_than_greedy,
    cut_to_cap,
    estimate_tokens,
    mix_genes,
    reference_pairs,
    rehearsal,
)
from evotrainer.harness.distill_pairs import Candidate
from evotrainer.harness.genes import ENGINE_TRIALS, gene_table, initial_genes, movable
from evotrainer.harness.genome import HarnessBounds, HarnessGenome
from evotrainer.llm.fakes import FunctionLLM
from evotrainer.loops.outer import HarnessOptimizer
from evotrainer.loops.rng import stream
from evotrainer.loops.weakness import WeaknessReport
from evotrainer.policy.archive import ArchiveEntry
from evotrainer.policy.genome import PolicyGenome
from evotrainer.run.estimate import distillation_rounds, estimate_calls, mix_can_move
from evotrainer.types import Instance, Message
from tests.fake_meetings import RecordingMeetingTask, honest_minutes
from tests.support import REPO
from tests.test_distill_run import (  # noqa: F401 - fixture
    config,
    events,
    fake_training,
    run,
    strong_llm,
    weak_llm,
)

LONG = " ".join(f"Sentence number {i} says what was decided about item {i}." for i in range(60))


def test_a_reference_longer_than_the_cap_is_cut_at_a_sentence_boundary():
    assert estimate_tokens(LONG) > 64
    cut = cut_to_cap(LONG, 64)
    assert estimate_tokens(cut) <= 64 and cut.endswith(".") and LONG.startswith(cut)
    assert cut_to_cap("Short minutes.", 64) == "Short minutes."
    # a tokenizer when present: any count function (here: words)
    words = cut_to_cap(LONG, 30, count=lambda t: len(t.split()))
    assert len(words.split()) <= 30 and words.endswith(".")
    # one sentence alone too long: cut after the last whole word that fits
    one = "word " * 200
    assert 0 < estimate_tokens(cut_to_cap(one, 10)) <= 10


def _inst(i: int) -> Instance:
    return Instance(id=f"m{i}", payload={"text": f"meeting {i}"}, source="AMI")


def _render(p: PolicyGenome, i: Instance) -> list[Message]:
    return [Message("system", p.render()), Message("user", str(i.payload))]


def test_reference_pairs_are_cut_to_the_cap_and_say_so():
    pool = [_inst(i) for i in range(5)]
    refs = {"m0": LONG, "m1": "Short.", "m2": "", "m3": "Fine minutes.", "m4": LONG}
    p = PolicyGenome.from_text("Write minutes.")
    pairs = reference_pairs(p, pool, _render, lambda i: refs[i.id], 3, cap=64)
    assert [x.source for x in pairs] == [
        "human reference of m0 (cut to the answer cap)",
        "human reference of m1",
        "human reference of m3",
    ]
    assert estimate_tokens(pairs[0].completion) <= 64
    # without a cap and with a random order: as the sft_refs method always did
    shuffled = reference_pairs(p, pool, _render, lambda i: refs[i.id], 64, rng=random.Random(1))
    assert {x.completion for x in shuffled} == {LONG, "Short.", "Fine minutes."}


def test_the_mix_splits_the_pairs_and_samples_must_beat_the_greedy_answer():
    mix = Mix.of({"distill_refs": 0.5, "distill_own": 0.25, "distill_context": 0.25,
                  "distill_samples": 2, "distill_epochs": 3, "distill_warm_start": 1})  # fmt: skip
    assert mix is not None and mix.samples == 2 and mix.warm_start and mix.epochs == 3
    assert mix.counts(16) == {"refs": 8, "own": 4, "context": 4}
    assert sum(mix.counts(7).values()) == 7
    assert Mix.of({"difficulty": 0.1}) is None  # no data-mix gene: the fixed mix
    p = PolicyGenome.from_text("Write minutes.")
    a, b = _inst(1), _inst(2)
    samples = [Candidate(a, p, "x", 0.6), Candidate(a, p, "y", 0.4), Candidate(b, p, "z", 0.9)]
    kept = better_than_greedy(samples, {"m1": 0.5})
    assert [c.output for c in kept] == ["x"]  # m2 has no greedy answer: nothing to beat


def _mix_config(**distill):
    return config_from_dict({"distill": {"enabled": True, "mix_genes": True, **distill}}).distill


def test_the_data_mix_is_declared_as_genes_with_the_distillation_trial():
    assert mix_genes(config_from_dict({}).distill) == []  # off unless asked for
    specs = mix_genes(_mix_config())
    assert tuple(s.name for s in specs) == GENES
    assert all(s.trial == TRIAL for s in specs)
    cfg = config_from_dict({"distill": {"enabled": True, "mix_genes": True}})
    table = gene_table(cfg.harness, cfg.outer, object(), False, extra=specs)
    assert set(GENES) <= set(table)
    assert not {g.name for g in movable(table, ENGINE_TRIALS)} & set(GENES)
    assert set(GENES) <= {g.name for g in movable(table, ENGINE_TRIALS | {TRIAL})}
    # the config may override one as any other gene
    cfg2 = config_from_dict(
        {"harness": {"genes": {"distill_samples": {"initial": 2}}}, "distill": cfg.distill}
    )
    t2 = gene_table(cfg2.harness, cfg2.outer, object(), False, extra=specs)
    assert t2["distill_samples"].initial == 2


def test_the_mix_genes_survive_rollback_reset_and_json():
    cfg = config_from_dict(
        {"outer": {"variants": 3, "reset_every": 2, "rollback_patience": 2}, "distill": {}}
    )
    table = gene_table(cfg.harness, cfg.outer, object(), False, extra=mix_genes(_mix_config()))
    base = HarnessGenome({"completeness": 0.6, "format": 0.4}, initial_genes(table))
    opt = HarnessOptimizer(
        cfg.outer,
        base,
        HarnessBounds(1.0, table),
        stream(0, "t"),
        ("completeness", "format"),
        trials=ENGINE_TRIALS | {TRIAL},
    )
    report = WeaknessReport(
        s_val=0.2, s_val_by_length={}, train_reward=0.5, train_components={}, validation={}
    )
    variants = opt.ask(report)
    moved = [v for v in variants if any(v.genes[g] != base.genes[g] for g in GENES)]
    assert moved, "a random step moves a data-mix gene"
    chosen = moved[0]
    opt.tell([0.3 if v is chosen else 0.1 for v in variants])
    reset = opt.ask(report)[0]
    assert reset.operator == "reset" and all(reset.genes[g] == chosen.genes[g] for g in GENES)
    opt.tell([0.3] * len(opt.pending))
    archived = chosen.evolve("gaussian", genes={"distill_refs": 1.0})
    opt.archive.add(ArchiveEntry(PolicyGenome.from_text("Write minutes."), archived, 0.5, 1, 1))
    for s in (0.4, 0.3, 0.2):
        back = opt.observe(s)
    assert back is not None and opt.current.genes["distill_refs"] == 1.0
    assert HarnessGenome.from_json(archived.to_json()) == archived


def test_an_outer_step_whose_steered_variants_fill_the_quota_still_trials_the_data_mix():
    """With one variant asked for, the weakness analysis's steered variant (here: more of the
    weakest task kind) used to fill the quota, and only a random step moves a data-mix gene:
    in every distill-1000 cell the mix never moved. One variant now steps the feature genes
    alone (the reward weights as they are), and the call estimate counts its trial."""
    cfg = config_from_dict({"outer": {"variants": 1}, "distill": {}})
    table = gene_table(cfg.harness, cfg.outer, object(), False, extra=mix_genes(_mix_config()))
    base = HarnessGenome({"completeness": 0.6, "format": 0.4}, initial_genes(table))

    def optimiser(trials):
        return HarnessOptimizer(
            cfg.outer,
            base,
            HarnessBounds(1.0, table),
            stream(0, "t"),
            ("completeness", "format"),
            trials=trials,
        )

    report = WeaknessReport(
        s_val=0.2,
        s_val_by_length={},
        train_reward=0.5,
        train_components={},
        validation={},
        reward_by_kind={"decision": 0.3, "planning": 0.6},
    )
    opt = optimiser(ENGINE_TRIALS | {TRIAL})
    variants = opt.ask(report)
    assert [v.operator for v in variants] == ["initial", "steer", "gene_step"]
    step = variants[2]
    assert step.weights == base.weights and step.task_mix == base.task_mix
    assert [g for g in GENES if step.genes[g] != base.genes[g]], "it moves a data-mix gene"
    assert all(step.genes[g] == base.genes[g] for g in ("difficulty", "real_share"))
    assert all(table[g].low <= step.genes[g] <= table[g].high for g in GENES)
    # where the trials cannot measure the mix (rerank, rank), nothing changes
    plain = optimiser(ENGINE_TRIALS)
    assert [v.operator for v in plain.ask(report)] == ["initial", "steer"]
    assert opt.max_variants() == plain.max_variants() + 1  # the gene step's trial counted


def _pair(target: str, source: str) -> TrainingPair:
    return TrainingPair((Message("user", "meeting"),), target, source=source)


def test_a_rehearsal_learns_each_reference_once_and_references_come_first():
    last = [
        _pair("own answer 1", "policy p1 on m1, reward 0.5"),
        _pair("reference 1", "human reference of m1"),
        _pair("reference 2", "human reference of m2"),
        _pair("own answer 3", "policy p1 on m3, reward 0.4"),
        _pair("reference 3", "human reference of m3 (cut to the answer cap)"),
    ]
    new = [_pair("reference 2", "human reference of m2"), _pair("own 4", "policy p2 on m4")]
    got = rehearsal(last, new, 10)
    # reference 2 is among the new pairs (in the current prompt): learned once
    assert [p.completion for p in got] == [
        "reference 1",
        "reference 3",
        "own answer 1",
        "own answer 3",
    ]
    assert [p.completion for p in rehearsal(last, new, 2)] == ["reference 1", "reference 3"]
    assert rehearsal(last, new, 0) == [] and rehearsal([], new, 5) == []


def test_weights_first_rounds_continue_the_references_training_by_default():
    """Under weights_first a later round starts as the references' training continued: warm
    from the carried adapter, references only (the distill-1000 cells' later rounds, cold or
    warm, with own answers at half the pairs, all validated below the references' adapter);
    the other schedules start cold on half references, half own answers."""

    def initial(**schedule):
        d = config(Path("/tmp"), mix_genes=True, **schedule).distill
        names = ("distill_warm_start", "distill_refs", "distill_own")
        return {g.name: g.initial for g in mix_genes(d) if g.name in names}

    assert initial() == {"distill_warm_start": 0.0, "distill_refs": 0.5, "distill_own": 0.5}
    assert initial(schedule="weights_first") == {
        "distill_warm_start": 1.0,
        "distill_refs": 1.0,
        "distill_own": 0.0,
    }


def test_a_later_weights_first_round_continues_from_the_references_adapter(
    tmp_path,
    fake_training,  # noqa: F811 - the fixture imported above
):
    """The second round starts from the weights the best policy carries (the references'
    adapter) and trains on its new pairs plus the references the first learned that the new
    pairs do not hold again: every reference stays in the training while own answers join."""
    cfg = config(
        tmp_path,
        schedule="weights_first",
        after=2,
        every=1,
        max_rounds=2,
        mix_genes=True,
        max_pairs=8,  # of the 10 references: the second round's share holds 4 of the first's 8
    )
    # half references, half own answers (weights_first starts on references only)
    co, res = run(tmp_path, _with_genes(cfg, {"distill_refs": 0.5, "distill_own": 0.5}))
    first, second = res.summary["distillations"]
    assert first["kept"] and second["adapter"], second["why"]
    assert fake_training.starts == [None, first["adapter"]]
    refs = first["pairs"]["references"]
    new = second["pairs"]["pairs"]
    rehearsed = second["training"]["rehearsed"]
    assert fake_training[1] == new + rehearsed
    # the references of both rounds together: every one of the first round's, once
    assert second["pairs"]["references"] + rehearsed == refs
    assert (refs, second["pairs"]["references"], rehearsed) == (8, 4, 4)
    assert new > second["pairs"]["references"]  # own answers joined
    if second["kept"]:  # what the next warm start rehearses: everything this one learned
        assert len(co.state.distill_last_pairs) == new + rehearsed


def test_a_later_weights_first_round_by_default_continues_on_the_references_alone(
    tmp_path,
    fake_training,  # noqa: F811 - the fixture imported above
):
    cfg = config(tmp_path, schedule="weights_first", after=2, every=1, max_rounds=2, mix_genes=True)
    _, res = run(tmp_path, cfg)
    first, second = res.summary["distillations"]
    assert first["kept"] and second["adapter"], second["why"]
    assert fake_training.starts == [None, first["adapter"]]
    assert second["pairs"]["references"] == second["pairs"]["pairs"] > 0
    assert any("data mix 1.00/0.00/0.00" in n for n in second["pairs"]["notes"])


@pytest.mark.usefixtures("fake_training")
def test_weights_first_trains_on_the_references_before_generation_one(tmp_path):
    cfg = config(
        tmp_path, schedule="weights_first", after=2, every=1, max_rounds=3, cut_targets=True
    )
    co, res = run(tmp_path, cfg)
    records = res.summary["distillations"]
    first = records[0]
    assert first["generation"] == 0 and first["kept"], first["why"]
    assert first["pairs"]["references"] == first["pairs"]["pairs"] > 0
    assert first["pairs"]["notes"][0].startswith("weights first:")
    assert len(records) == 3  # then the usual cadence: after generations 2 and 3
    assert [r["generation"] for r in records[1:]] == [2, 3]
    started = [e for e in events(tmp_path / "run") if e["type"] == "distill_started"]
    gens = [e for e in events(tmp_path / "run") if e["type"] == "generation"]
    assert started[0]["generation"] == 0 and gens
    # prompt evolution ran on the references' adapter: children bred on those weights
    bred = [
        p
        for p in co.state.policies.values()
        if p.adapter == first["adapter"] and p.lineage.operator != "distill"
    ]
    assert bred and min(p.lineage.generation for p in bred) == 1


def _with_genes(cfg, genes: dict[str, float], step: float | None = None):
    """``cfg`` with the harness genes ``genes`` starting at the values given (and, with
    ``step``, moving by it: 0 fixes them)."""
    extra = {} if step is None else {"step": step}
    over = {n: {"initial": v, **extra} for n, v in genes.items()}
    table = config_from_dict({"harness": {"genes": over}}).harness.genes
    harness = cfg.harness.model_copy(update={"genes": {**cfg.harness.genes, **table}})
    return cfg.model_copy(update={"harness": harness})


def _references_warm_start(tmp_path):
    """Two distillations on the references only, the second warm-started from the first."""
    cfg = config(tmp_path, mix_genes=True, every=1, max_rounds=2)
    return _with_genes(cfg, {"distill_refs": 1.0, "distill_own": 0.0, "distill_warm_start": 1.0})


def test_the_mix_genes_steer_a_distillation_and_survive_a_checkpoint(
    tmp_path,
    fake_training,  # noqa: F811 - the fixture imported above
):
    co, res = run(tmp_path, _references_warm_start(tmp_path))
    records = [r for r in res.summary["distillations"] if r["adapter"]]
    assert records
    assert all(r["pairs"]["references"] == r["pairs"]["pairs"] for r in records)
    assert any("data mix 1.00/0.00/0.00" in n for n in records[0]["pairs"]["notes"])
    s = co.state
    assert s.harness.genes["distill_refs"] == 1.0
    if any(r["kept"] for r in records):
        assert s.distill_last_pairs
        assert all(TrainingPair(**p) for p in s.distill_last_pairs)
    data = state_dict(s, 0.0)
    s.distill_last_pairs = []
    load_state_dict(s, data, co.components.cfg)
    assert s.harness.genes["distill_refs"] == 1.0
    assert s.distill_last_pairs == data["distill"].get("last_pairs", [])
    # distill_warm_start 1: the second adapter starts from the weights of the first (kept, so
    # the best policy carries it); the first is trained from scratch
    assert records[0]["kept"] and len(fake_training.starts) == 2
    assert fake_training.starts == [None, records[0]["adapter"]]
    warm = [r for r in records if r.get("training", {}).get("started_from")]
    assert [r["training"]["started_from"] for r in warm] == [f"{records[0]['adapter']}.gguf"]


def test_a_warm_start_refuses_an_adapter_file_changed_after_it_was_recorded(
    tmp_path,
    monkeypatch,
    fake_training,  # noqa: F811 - the fixture imported above
):
    """The adapter a warm start reads is checked by hash like one being served: a file
    changed in the run directory after the first distillation stops the second."""
    import evotrainer.distill.train as train_module
    from evotrainer.errors import DataError

    fake = train_module.train_adapter

    def train_then_tamper(pairs, settings, out_dir, progress=None, start_from=None):
        result = fake(pairs, settings, out_dir, progress, start_from=start_from)
        with open(Path(out_dir) / f"{result.sha256}.gguf", "ab") as f:
            f.write(b"changed")
        return result

    monkeypatch.setattr(train_module, "train_adapter", train_then_tamper)
    with pytest.raises(DataError, match="sha256 is not the recorded one"):
        run(tmp_path, _references_warm_start(tmp_path))
    assert fake_training.starts == [None]  # the second training never started


@pytest.mark.usefixtures("fake_training")
def test_an_outer_step_trial_trains_a_small_adapter_under_its_variant(tmp_path):
    cfg = config(tmp_path, mix_genes=True, trial_pairs=4, after=3)
    cfg = cfg.model_copy(
        update={
            "outer": cfg.outer.model_copy(
                update={"enabled": True, "trials": "rerun", "every": 2, "variants": 1}
            )
        }
    )
    co, res = run(tmp_path, cfg)
    trials = [r for r in res.summary["distillations"] if r.get("trial")]
    assert trials, res.summary["distillations"]
    assert all(r["trial"]["outer_step"] >= 1 for r in trials)
    trained = [r for r in trials if r["adapter"]]
    assert trained and all(r["pairs"]["pairs"] <= 4 for r in trained)
    assert TRIAL in co.state.hopt.trials


@pytest.mark.parametrize("warm", [0.0, 1.0])
def test_a_trial_adapter_is_a_step_from_the_main_lines_weights(
    tmp_path,
    fake_training,  # noqa: F811 - the fixture imported above
    warm,
):
    """Weights first, then an outer step of rerun trials: each trial's small adapter starts
    from the references' adapter its population carries (warm-start gene 0 or 1), never
    from scratch, so the winning trial's population, which goes on as the main line, does
    not trade the references' weights for 4 pairs' (found in the first distill-1000 cell).
    Warm-starting, a trial rehearses as many of the last kept pairs as it has new ones."""
    cfg = config(tmp_path, schedule="weights_first", max_rounds=1, mix_genes=True, trial_pairs=4)
    cfg = _with_genes(cfg, {"distill_warm_start": warm}, step=0.0)
    cfg = cfg.model_copy(
        update={
            "outer": cfg.outer.model_copy(
                update={"enabled": True, "trials": "rerun", "every": 2, "variants": 1}
            ),
        }
    )
    co, res = run(tmp_path, cfg)
    first, *rest = res.summary["distillations"]
    assert first["kept"] and not first.get("trial")
    trials = [r for r in rest if r.get("trial") and r["adapter"]]
    assert trials, rest
    assert co.state.harness.genes["distill_warm_start"] == warm
    # the first training (the references') from scratch, every trial's from an adapter the
    # run trained before it; those of the first outer step from the references' adapter
    assert fake_training.starts[0] is None
    assert all(sha is not None for sha in fake_training.starts[1:])
    trained = [first["adapter"], *(r["adapter"] for r in trials)]
    assert all(sha in trained[: i + 1] for i, sha in enumerate(fake_training.starts[1:]))
    step1 = [i for i, r in enumerate(trials) if r["trial"]["outer_step"] == 1]
    assert step1 and all(fake_training.starts[1 + i] == first["adapter"] for i in step1)
    assert all(r["pairs"]["pairs"] <= 4 for r in trials)
    trained_on = fake_training[1:]  # pairs per training: new ones (+ as many rehearsed)
    assert trained_on == [r["pairs"]["pairs"] * (2 if warm else 1) for r in trials]


@pytest.mark.parametrize("trials", ["rerank", "rank"])
def test_no_distillation_trial_without_rerun_trials(trials):
    from evotrainer.engine.state import run_trials

    cfg = config_from_dict(
        {"outer": {"trials": trials}, "distill": {"enabled": True, "mix_genes": True}}
    )
    assert TRIAL not in run_trials(cfg)
    rerun = cfg.model_copy(update={"outer": cfg.outer.model_copy(update={"trials": "rerun"})})
    assert TRIAL in run_trials(rerun)


def _sampling_llm(task: RecordingMeetingTask) -> FunctionLLM:
    """The weak model's half-minutes when greedy; whole minutes on every odd sample seed at a
    temperature (a rejection sample that beats the greedy answer)."""
    weak = weak_llm(task)

    def answer(messages, params):
        meeting = task.by_prompt.get(messages[-1].content)
        if meeting is not None and params.temperature > 0 and (params.seed or 0) % 2:
            return honest_minutes(meeting)
        return weak.fn(messages, params)

    return FunctionLLM(answer, model_id="fake:weak")


@pytest.mark.usefixtures("fake_training")
@pytest.mark.parametrize("samples", [0, 2])
def test_rejection_samples_that_beat_the_greedy_answer_become_training_pairs(tmp_path, samples):
    """distill_samples > 0 in a run: answers sampled at distill.sample_temperature whose reward
    beats the greedy answer's join the own-answer pairs (here the whole minutes only a sample
    writes); with 0 samples the pairs are greedy answers only. Each sample is a backend call."""
    cfg = config(tmp_path, mix_genes=True, every=1, max_rounds=1)
    own_only = {"distill_refs": 0.0, "distill_own": 1.0, "distill_context": 0.0}
    cfg = _with_genes(cfg, {**own_only, "distill_samples": samples})
    task = RecordingMeetingTask()
    llm = _sampling_llm(task)
    co = CoEvolution(cfg, task=task, llm=llm)
    co._adapter_client = lambda sha: strong_llm(task)  # noqa: SLF001 - the fake serving stack
    co.components.evaluator.adapters = co._adapter_client
    res = co.run(tmp_path / "run")
    record = next(r for r in res.summary["distillations"] if r["pairs"]["pairs"])
    assert any(f"{samples} samples per instance" in n for n in record["pairs"]["notes"])
    assert record["pairs"]["references"] == 0 and record["kept"], record["why"]
    whole = {honest_minutes(m) for m in task.by_prompt.values()}
    sampled = [p for p in co.state.distill_last_pairs if p["completion"] in whole]
    assert bool(sampled) == (samples > 0)


def test_the_call_estimate_counts_the_distillations_and_trial_adapters():
    """The console's ~calls and ETA: configs/distill.yaml said ~275 and made 426 backend calls
    on the embedded model (docs/demo.md, 2026-12-06; 8 selection and 6 confirmation meetings, 3
    seeds), because the estimate left out the distillation rounds and the trials' adapters."""
    cfg = load_config(REPO / "configs" / "distill.yaml")
    assert distillation_rounds(cfg) == 2 and cfg.distill_trials()
    est = estimate_calls(cfg, 8, 6, 3)
    assert est.parts["distillations"] > 0
    # the returned policy's adapter effect: it and its twin without the adapter, on both parts
    assert est.parts["adapter effect"] == 2 * (8 + 6)
    assert 0.8 <= est.total / 426 <= 1.25, est.to_json()
    plain = cfg.model_copy(update={"distill": cfg.distill.model_copy(update={"enabled": False})})
    plain_parts = estimate_calls(plain, 8, 6, 3).parts
    assert distillation_rounds(plain) == 0
    assert "distillations" not in plain_parts and "adapter effect" not in plain_parts
    # prompts first, after generation 2 and every 1 more, at most 3 rounds, of 5 generations
    d = cfg.distill.model_copy(
        update={"schedule": "prompts_first", "after": 2, "every": 1, "max_rounds": 3}
    )
    assert distillation_rounds(cfg.model_copy(update={"distill": d})) == 3


def test_the_estimate_counts_no_gene_step_trial_when_every_mix_gene_is_fixed():
    """An outer step adds the gene-step trial only when a mix gene can move (the outer loop's
    ``_feature_genes``); with every one fixed by ``harness.genes`` (step 0) the estimate left
    it in, one trial per outer step too many. Fixing the shares alone (the benchmark's
    ``_refs`` and ``_own`` cells) leaves epochs, samples and the warm start free."""
    cfg = load_config(REPO / "configs" / "distill.yaml")
    names = [g.name for g in mix_genes(cfg.distill)]

    def fixed(which: list[str]):
        genes = {**cfg.harness.model_dump()["genes"], **{n: {"step": 0.0} for n in which}}
        return config_from_dict(
            {**cfg.model_dump(), "harness": {**cfg.harness.model_dump(), "genes": genes}}
        )

    shares = fixed(["distill_refs", "distill_own", "distill_context"])
    none_move = fixed(names)
    assert mix_can_move(cfg) and mix_can_move(shares) and not mix_can_move(none_move)
    steps = estimate_calls(cfg, 8, 6, 3).parts["outer steps"]
    assert estimate_calls(shares, 8, 6, 3).parts["outer steps"] == steps
    assert estimate_calls(none_move, 8, 6, 3).parts["outer steps"] < steps
    # the outer loop agrees: no movable feature gene, so no gene step among its variants
    table = gene_table(
        none_move.harness, none_move.outer, object(), True, extra=mix_genes(none_move.distill)
    )
    assert not [
        g for g in movable(table, {*ENGINE_TRIALS, "distillation"}) if g.trial == "distillation"
    ]


def test_a_later_round_warm_starts_from_the_best_validated_policys_weights(
    tmp_path,
    fake_training,  # noqa: F811 - the fixture imported above
):
    """After an outer step the population carries the winning trial's small adapter; a later
    round continues from the weights of the best validated policy instead, the policy its
    adapter is judged against (the second distill-1000 cell's round 2 started from a trial's
    16-pair adapter while the references' adapter held the best s_val)."""
    cfg = config(
        tmp_path,
        schedule="weights_first",
        max_rounds=2,
        mix_genes=True,
        trial_pairs=4,
        after=3,
        every=1,
    )
    cfg = cfg.model_copy(
        update={  # outer steps after generations 2 and 4, the second round after generation 5
            "outer": cfg.outer.model_copy(
                update={"enabled": True, "trials": "rerun", "every": 2, "variants": 1}
            ),
            "inner": cfg.inner.model_copy(update={"generations": 6}),
        }
    )
    co, res = run(tmp_path, cfg)
    trained = [r for r in res.summary["distillations"] if r["adapter"]]
    assert len(fake_training.starts) == len(trained)
    assert any(r.get("trial") for r in trained[1:-1]), "an outer step's trials came first"
    ((i, later),) = [(i, r) for i, r in enumerate(trained) if r["round"] == 2]
    judged_against = co.state.policies[later["validation"]["without"]["policy"]]
    assert judged_against.adapter == trained[0]["adapter"]  # the references' (kept) adapter
    assert fake_training.starts[i] == judged_against.adapter
    assert later["training"]["started_from"] == f"{judged_against.adapter}.gguf"
