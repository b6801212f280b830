"""Where training batches come from: a mix of real training instances (a corpus with human
references) and synthetic ones from the task's generator (SPEC: "the initial task generator
draws a dialogue from the corpus; L prefers longer ones"; the synthetic generator extends it).

The harness genome sets the mix: ``real_share`` of each batch is drawn from the real pool, the
rest is generated at difficulty L. On real instances L is the length preference: instances are
ranked by input length and drawn with a Gaussian preference centred on quantile L. The pool
never holds a validation instance: ``load_real_pool`` removes every held-out id (selection and
confirmation), so no validation instance reaches a training signal.
"""

from __future__ import annotations

import math
import random
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from evotrainer.errors import DataError
from evotrainer.harness.genome import HarnessGenome
from evotrainer.notices import announce
from evotrainer.tasks.base import LoadsTrainingData, SamplesWithGenes, Task, TaskGenerator
from evotrainer.tasks.registry import task_default
from evotrainer.tasks.tabular import is_data, is_table, load_data
from evotrainer.types import Instance

LENGTH_PREFERENCE_WIDTH = 0.25  # std of the preference over length quantiles


@dataclass(frozen=True)
class RealPool:
    instances: list[Instance]
    source: str
    message: str
    held_out: int = 0  # instances of the file removed because validation holds them


GIVEN = "given by caller"  # the source of instances handed over in memory (the Python API)


def given_pool(
    instances: Sequence[Instance], held_out_ids: Collection[str], input_text
) -> RealPool:
    """The real training pool of instances handed over in memory (the Python API's trainset),
    without the held-out ones, sorted by input length as ``load_real_pool`` sorts a file's."""
    held = set(held_out_ids)
    kept = sorted(
        (i for i in instances if i.id not in held), key=lambda i: (len(input_text(i)), i.id)
    )
    dropped = len(instances) - len(kept)
    msg = f"real training pool: {len(kept)} instances {GIVEN}"
    if dropped:
        msg += f" ({dropped} held out for validation)"
    return RealPool(kept, GIVEN if kept else "", msg, dropped)


def load_real_pool(
    task: Task,
    path: str | None,
    held_out_ids: Collection[str],
    input_text,
    columns: Mapping[str, str] | None = None,
) -> RealPool:
    """The real training instances of ``path`` minus the held-out ids, sorted by input length
    (``input_text(instance)`` gives the text whose length counts). Empty when there is no file.
    ``path`` may be a Parquet file or a dataset folder, read by ``columns`` (data_columns)."""
    if not path:
        return RealPool([], "", "no real training data configured: synthetic training only")
    if not is_data(path):
        default = task_default(task.name, "harness", "real_data")
        if Path(path).exists():
            raise DataError(
                f"real training data {path}: is a directory, not a data file (JSONL, Parquet) "
                "or a Hugging Face dataset folder"
            )
        if path != default:
            raise DataError(
                f"real training data {path} not found. A file you name must exist (only the "
                f"task's default, {default}, falls back to synthetic training); set "
                "harness.real_data to null for synthetic training only."
            )
        message = (
            f"the task's default real training data {path!r} not found (no data named): "
            "synthetic training only"
        )
        announce(message)
        return RealPool([], "", message)  # no source: as its resume sees it (config.yaml: null)
    held = set(held_out_ids)
    kept = load_training_data(task, path, columns, held)
    kept.instances.sort(key=lambda i: (len(input_text(i)), i.id))
    source = str(Path(path).resolve())  # the same in a run and in its resume (config.yaml)
    msg = f"real training pool: {len(kept.instances)} instances from {source}"
    if kept.held_out:
        msg += f" ({kept.held_out} held out for validation)"
    elif kept.training_view and held:
        msg += " (none from a source a validation instance comes from)"
    return RealPool(kept.instances, source, msg, kept.held_out)


@dataclass(frozen=True)
class Kept:
    instances: list[Instance]
    held_out: int  # instances of the file left out because validation holds them
    training_view: bool = False  # read by the task's training view (LoadsTrainingData)


def load_training_data(
    task: Task, path: str | Path, columns: Mapping[str, str] | None, held_out: Collection[str]
) -> Kept:
    """The training instances of a real data file, none of them a held-out validation
    instance: the task's training view of the file when it has one (``LoadsTrainingData``: it
    leaves out what shares a source with a held-out instance), else what ``load_data`` reads."""
    held = set(held_out)
    view = isinstance(task, LoadsTrainingData) and not is_table(path)
    if isinstance(task, LoadsTrainingData) and view:
        loaded = task.load_training(path, held)
    else:
        loaded = load_data(task, path, columns)
    kept = [i for i in loaded if i.id not in held]
    return Kept(kept, len(loaded) - len(kept), view)


def _weighted_sample(
    items: Sequence[Instance], weights: Sequence[float], k: int, rng: random.Random
) -> list[Instance]:
    """``k`` distinct items, each draw proportional to its weight (without replacement)."""
    pool = list(zip(items, weights, strict=True))
    out = []
    for _ in range(min(k, len(pool))):
        total = sum(w for _, w in pool)
        x = rng.random() * total
        for j, (item, w) in enumerate(pool):
            x -= w
            if x <= 0 or j == len(pool) - 1:
                out.append(item)
                pool.pop(j)
                break
    return out


class BatchSource:
    """Draws training batches for a harness genome: real and synthetic instances, shuffled."""

    def __init__(self, generator: TaskGenerator, real: Sequence[Instance] = ()) -> None:
        self.generator = generator
        self.real = list(real)  # sorted by input length (load_real_pool)

    def n_real(self, n: int, harness: HarnessGenome) -> int:
        return min(len(self.real), round(n * harness.real_share)) if self.real else 0

    def sample(self, n: int, harness: HarnessGenome, rng: random.Random) -> list[Instance]:
        k = self.n_real(n, harness)
        real = self.real_sample(k, harness.difficulty, rng)
        synthetic = self.synthetic(n - k, harness, rng) if n > k else []
        batch = [*real, *synthetic]
        rng.shuffle(batch)
        return batch

    def synthetic(self, n: int, harness: HarnessGenome, rng: random.Random) -> list[Instance]:
        """``n`` generated instances: at the harness's difficulty and mix, and under all its
        genes when the generator reads them (``SamplesWithGenes``: a task's own genes)."""
        if isinstance(self.generator, SamplesWithGenes):
            return self.generator.sample_with_genes(n, harness.genes, rng, harness.task_mix)
        return self.generator.sample(n, harness.difficulty, rng, harness.task_mix)

    def real_sample(self, k: int, difficulty: float, rng: random.Random) -> list[Instance]:
        if k <= 0:
            return []
        m = len(self.real)
        weights = [
            math.exp(-(((j / max(1, m - 1)) - difficulty) ** 2) / (2 * LENGTH_PREFERENCE_WIDTH**2))
            for j in range(m)
        ]
        return _weighted_sample(self.real, weights, k, rng)


def share_weights(
    batch: Sequence[Instance], drawn_share: float, share: float
) -> dict[str, float] | None:
    """Instance weights that make a batch drawn with real share ``drawn_share`` stand for one
    drawn with ``share``: the weighted mean reward is ``share`` x the mean over its real
    instances + (1 - ``share``) x the mean over its synthetic ones (the same rollouts, no
    call). How the outer loop's ``rerank`` trials a variant's real-share gene on the batch the
    trial drew. None (the plain mean) when the shares are equal or the batch holds one kind."""
    if abs(drawn_share - share) < 1e-9:
        return None
    n_real = sum(1 for i in batch if i.real)
    n_synthetic = len(batch) - n_real
    if n_real == 0 or n_synthetic == 0:
        return None
    real_w, synthetic_w = share / n_real, (1.0 - share) / n_synthetic
    return {i.id: real_w if i.real else synthetic_w for i in batch}
