"""Harness genes as data (issue 49): a gene is one declaration (a GeneSpec in the gene table)
and one consumer; every step of the outer loop keeps the genes it does not move."""

from __future__ import annotations

import random
from collections.abc import Mapping

import pytest

from evotrainer.config import config_from_dict
from evotrainer.errors import ConfigError
from evotrainer.harness.genes import default_bounds, gene_table, initial_genes, movable
from evotrainer.harness.genome import HarnessBounds, HarnessGenome
from evotrainer.harness.training_set import BatchSource
from evotrainer.loops.outer import HarnessOptimizer
from evotrainer.loops.rng import stream
from evotrainer.loops.weakness import WeaknessReport
from evotrainer.policy.archive import ArchiveEntry
from evotrainer.policy.genome import PolicyGenome
from evotrainer.tasks.meetings.generator import MeetingGenerator
from evotrainer.tasks.meetings.task import MeetingTask
from evotrainer.types import GeneSpec, Instance

PATIENCE = GeneSpec("patience", 0.5, 0.1, 0.9, step=0.1, description="how patient users are")


class PatientTask(MeetingTask):
    """A task with a gene of its own: the declaration ..."""

    def harness_genes(self):
        return [PATIENCE]

    def generator(self):
        return PatientGenerator()


class PatientGenerator(MeetingGenerator):
    """... and its consumer: every instance it makes carries the gene's value."""

    def sample_with_genes(
        self, n: int, genes: Mapping[str, float], rng: random.Random, mix=None
    ) -> list[Instance]:
        out = self.sample(n, genes["difficulty"], rng, mix)
        return [Instance(i.id, i.payload, i.source, genes["patience"], i.kind) for i in out]


def _table(**harness):
    cfg = config_from_dict({"harness": harness} if harness else {})
    return gene_table(cfg.harness, cfg.outer, PatientTask(), real_pool=False)


def test_a_task_gene_is_one_declaration_and_reaches_its_consumer():
    table = _table()
    assert list(table) == ["difficulty", "real_share", "patience"]
    h = HarnessGenome({"completeness": 1.0}, initial_genes(table))
    assert h.genes["patience"] == 0.5 and h.id != HarnessGenome(h.weights, {"difficulty": 0.3}).id
    batch = BatchSource(PatientGenerator()).sample(3, h, random.Random(0))
    assert [i.difficulty for i in batch] == [0.5, 0.5, 0.5]
    # the config may override a declared gene, never invent one
    assert _table(genes={"patience": {"initial": 0.8, "step": 0.2}})["patience"].initial == 0.8
    with pytest.raises(ConfigError, match="harness.genes.curiosity: no such gene"):
        _table(genes={"curiosity": {"initial": 0.1}})
    with pytest.raises(ConfigError, match="outside"):
        _table(genes={"patience": {"initial": 2.0}})
    # a gene whose trial the run cannot make never moves
    slow = {**table, "patience": GeneSpec("patience", 0.5, 0, 1, step=0.1, trial="simulator")}
    assert "patience" not in {g.name for g in movable(slow, {"generation"})}


def _optimiser(optimizer: str = "gaussian", **outer) -> HarnessOptimizer:
    cfg = config_from_dict({"outer": {"optimizer": optimizer, "variants": 3, **outer}})
    table = _table()
    bounds = HarnessBounds(1.0, table)
    base = HarnessGenome({"completeness": 0.6, "format": 0.4}, initial_genes(table))
    return HarnessOptimizer(cfg.outer, base, bounds, stream(0, "t"), ("completeness", "format"))


def _report() -> WeaknessReport:
    return WeaknessReport(
        s_val=0.2, s_val_by_length={}, train_reward=0.5, train_components={}, validation={}
    )


def test_the_gene_moves_and_survives_rollback_reset_and_cma():
    opt = _optimiser(reset_every=2, rollback_patience=2)
    variants = opt.ask(_report())
    assert all("patience" in v.genes for v in variants)
    assert {v.genes["patience"] for v in variants} - {0.5}, "a random step moves it"
    assert all(0.1 <= v.genes["patience"] <= 0.9 for v in variants)
    moved = next(v for v in variants if v.genes["patience"] != 0.5)
    decision = opt.tell([0.1 if v is not moved else 0.3 for v in variants])
    assert decision.chosen.genes["patience"] == moved.genes["patience"]
    # reset (step 2): the weights go back to the base, the gene stays
    reset = opt.ask(_report())[0]
    assert reset.operator == "reset" and reset.weights == opt.base.weights
    assert reset.genes["patience"] == moved.genes["patience"]
    opt.tell([0.3] * len(opt.pending))
    # rollback to the archived best keeps the archived harness's gene
    archived = moved.evolve("gaussian", genes={"patience": 0.2})
    opt.archive.add(ArchiveEntry(PolicyGenome.from_text("Write minutes."), archived, 0.5, 1, 1))
    for s in (0.4, 0.3, 0.2):
        back = opt.observe(s)
    assert back is not None and opt.current.operator == "rollback"
    assert opt.current.genes["patience"] == 0.2
    # CMA-ES moves the weights and keeps every gene
    cma = _optimiser("cma")
    cma.current = cma.current.evolve("gaussian", genes={"patience": 0.7})
    pytest.importorskip("cma")
    out = cma.ask(_report())
    assert any(v.operator == "cma" for v in out)
    assert all(v.genes["patience"] == 0.7 for v in out if v.operator == "cma")
    cma.tell([0.1 * i for i in range(len(out))])
    assert cma.current.genes["patience"] in (0.5, 0.7)


def test_genes_round_trip_and_old_harness_json_still_loads():
    h = HarnessGenome(
        {"completeness": 1.0}, {"difficulty": 0.3, "real_share": 0.4, "patience": 0.6}
    )
    back = HarnessGenome.from_json(h.to_json())
    assert back == h and back.id == h.id
    old = {"difficulty": 0.3, "weights": {"completeness": 1.0}, "task_mix": None}
    assert HarnessGenome.from_json(old).genes == {"difficulty": 0.3, "real_share": 0.0}
    # the engine's two genes keep the ids harnesses had before the table
    assert HarnessGenome.from_json(old).id == "h" + HarnessGenome.from_json(old).id[1:]
    assert default_bounds().genes["real_share"].high == 0.0  # no real pool: it cannot move
