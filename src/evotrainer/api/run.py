"""``evotrainer.optimize`` and ``evotrainer.Optimizer``: a run from Python in the ecosystem's
shape (DSPy's ``compile(student, trainset, valset)``, GEPA's ``optimize``): examples in memory,
an optional metric function, a model string as on the command line, and a ``Policy`` back.

What it runs is ``evotrainer run``'s co-evolution (``CoEvolution``) under a config: the
starter config (``evotrainer init``'s, for the meeting task) unless you name one, the
arguments set over it. The valset is the validation data (selection, and the held-out
confirmation: ``validation.confirm`` of its examples); the trainset is the real training pool
(``harness.real_data``, without any example the valset holds) and the terminal reward's pool, as
``run --data`` uses its file. Without a valset, the trainset is both, as with ``run --data``
(``validation.limit`` of its examples validate, spread over it; the others train).
"""

from __future__ import annotations

import logging
import tempfile
from collections.abc import Mapping, Sequence
from importlib.resources import files
from pathlib import Path
from typing import Any

from evotrainer.api.examples import Examples, read_examples
from evotrainer.api.metric import KEY, ExampleMetric, MetricFn, check_metric, with_metric
from evotrainer.api.policy import Policy, settings_of, summary_of
from evotrainer.api.progress import LogEvents
from evotrainer.coevolution import CoEvolution
from evotrainer.config import DEFAULT_TASK, RunConfig, config_from_dict, load_config, set_value
from evotrainer.errors import ConfigError, DataError
from evotrainer.harness.reference import PREFIX
from evotrainer.llm.base import LLMClient
from evotrainer.policy.genome import PolicyGenome
from evotrainer.run.console import ConsoleProgress
from evotrainer.run.validation_set import spread
from evotrainer.tasks.base import Task
from evotrainer.tasks.registry import allow_import, build_task

log = logging.getLogger("evotrainer")

# the data a run of the API reads is the examples it is handed, never a file a config names
NO_FILES = {"validation.data": None, "harness.real_data": None, "defences.terminal_data": None}
METRIC_WEIGHT = 1.0  # ref_metric's weight in the training reward (real training examples)


def optimize(
    trainset: Any = None,
    valset: Any = None,
    metric: MetricFn | None = None,
    *,
    model: str | LLMClient | None = None,
    seeds: Sequence[str] | None = None,
    max_calls: int | None = None,
    task: str | None = None,
    config: str | Path | RunConfig | None = None,
    run_dir: str | Path | None = None,
    progress: bool = False,
    columns: Mapping[str, str] | None = None,
    base_url: str | None = None,
    **overrides: Any,
) -> Policy:
    """Evolve a policy on your examples; return it (call it, ``save`` it).

    ``trainset``, ``valset``: examples (dicts of the task's fields, a pandas DataFrame, a
    Hugging Face Dataset, a data file's path; api/examples.py). ``metric(example, answer)``:
    your score in [0, 1], optionally with feedback text (api/metric.py); None: the task's own
    metric (meetings: ROUGE-L, action-item F1, readability). ``model``: a model spec as on the
    command line (``local:smollm2``, ``openai:NAME`` with ``base_url``, ``fake:minutes``) or an
    LLM client object; None: the config's (the starter's: ``local:smollm2``). ``seeds``: seed
    instruction texts (``inner.seed_prompts``; None: the task's). ``max_calls``: the LLM call
    budget. ``task``: the task plug-in (None: the config's, meetings). ``config``: a YAML file
    or a RunConfig (None: the starter config). ``run_dir``: where the run's files go (None: a
    new temporary folder, logged). ``progress``: the console's progress display (rich, on
    stderr) besides the ``logging`` records (logger ``evotrainer``). ``columns``: the examples'
    field names mapped as ``data_columns`` maps a table's. ``overrides``: any config key, with
    ``__`` for its dots (``inner__generations=2``)."""
    cfg = run_config(config, task, model, max_calls, seeds, base_url, overrides)
    the_task = build_task(cfg.task)
    train, val = _examples(the_task, cfg, trainset, valset, columns)
    if metric is not None:
        cfg, the_task = _judged_by(metric, cfg, the_task, [e for e in (train, val) if e])
    folder = Path(run_dir) if run_dir else Path(tempfile.mkdtemp(prefix="evotrainer-run-"))
    folder = folder.resolve()
    log.info("run directory: %s", folder)
    observers: list[Any] = [LogEvents()]
    if progress:
        observers.append(ConsoleProgress())
    co = CoEvolution(
        cfg,
        task=the_task,
        llm=model if model is not None and not isinstance(model, str) else None,
        observers=observers,
        validation=val.instances,
        training=train.instances if train else None,
    )
    result = co.run(folder)
    _report(co, cfg)
    policy = Policy(result.best, settings_of(cfg), summary_of(result.summary, folder), folder)
    policy._parts = (
        co.components.task,
        co.components.stack.backend,
    )  # the run's task and loaded model
    return policy


def run_config(
    config: str | Path | RunConfig | None,
    task: str | None,
    model: str | LLMClient | None,
    max_calls: int | None,
    seeds: Sequence[str] | None,
    base_url: str | None,
    overrides: Mapping[str, Any],
) -> RunConfig:
    """The run's config: ``config`` (or the starter config, for the meeting task) with the
    arguments set over it, no data file named."""
    values: dict[str, Any] = dict(NO_FILES)
    if task:
        values["task.name"] = task
        allow_import(task)  # a module:PLUGIN you named
    if isinstance(model, str):
        values["model.spec"] = model
    if base_url:
        values["model.base_url"] = base_url
    if max_calls is not None:
        values["budget.max_calls"] = max_calls
    if seeds is not None:
        values["inner.seed_prompts"] = _seed_texts(seeds)
    values.update({k.replace("__", "."): v for k, v in overrides.items()})
    if isinstance(config, RunConfig):
        data = config.model_dump(mode="json")
        for key, value in values.items():
            set_value(data, key, value)
        return config_from_dict(data, "the RunConfig given + arguments")
    if config is None and (task or DEFAULT_TASK) == DEFAULT_TASK:
        config = Path(str(files("evotrainer") / "configs" / "starter.yaml"))
    return load_config(config, [], values)


def _seed_texts(seeds: Sequence[str]) -> list[str]:
    if isinstance(seeds, str):
        return [seeds]
    texts = list(seeds)
    bad = [i for i, t in enumerate(texts) if not isinstance(t, str) or not t.strip()]
    if bad or not texts:
        raise ConfigError(f"seeds: give instruction texts (seeds[{bad[0] if bad else 0}] is not)")
    return texts


def _examples(
    task: Task, cfg: RunConfig, trainset: Any, valset: Any, columns: Mapping[str, str] | None
) -> tuple[Examples | None, Examples]:
    """(train, val) read as the task's instances (train None without a trainset); without a
    valset, ``validation.limit`` of the trainset spread over it validates (``run --data``'s
    rule)."""
    if trainset is None and valset is None:
        raise DataError("give trainset= (and valset=): the examples to evolve the policy on")
    train = read_examples(task, trainset, "trainset", columns) if trainset is not None else None
    if valset is not None:
        val = read_examples(task, valset, "valset", columns)
    else:
        assert train is not None
        limit = cfg.validation.limit
        picked = spread(train.instances, limit) if limit else list(train.instances)
        val = Examples(picked, {i.id: train.records[i.id] for i in picked})
    if train is None or valset is None:
        return train, val
    shared = {i.id for i in train.instances} & {i.id for i in val.instances}
    if shared:
        log.warning(
            "%d trainset examples have the id of a valset example (%s ...): they stay out of "
            "training (no validation example may reach a training signal)",
            len(shared),
            sorted(shared)[0],
        )
    return train, val


def _judged_by(
    metric: MetricFn, cfg: RunConfig, task: Task, examples: Sequence[Examples]
) -> tuple[RunConfig, Task]:
    """The config and task of a run whose s_val is ``metric``: the task's metric with the key
    ``metric`` added, s_val its mean, and ``ref_metric`` a reward component on real training
    examples (its feedback is what reflection reads)."""
    fn = check_metric(metric)
    records = {k: v for e in examples for k, v in e.records.items()}
    judged = with_metric(task, ExampleMetric(fn, task.validation_metric(), records))
    data = cfg.model_dump(mode="json")
    h = cfg.harness
    set_value(data, "outer.s_val_weights", {KEY: 1.0})
    set_value(data, "harness.reference_components", [*h.reference_components, KEY])
    set_value(data, "harness.weights", {**h.weights, PREFIX + KEY: METRIC_WEIGHT})
    return config_from_dict(data, "config + metric"), judged


def _report(co: CoEvolution, cfg: RunConfig) -> None:
    """The run's HTML report, as ``evotrainer run`` builds it (``report: false``: none)."""
    if not cfg.report or co.run_dir is None:
        return
    # lazy: start-up time (matplotlib)
    from evotrainer.report.build import build_report

    log.info("report: %s", build_report(co.run_dir))


class Optimizer:
    """DSPy's optimizer shape: set it up, then ``compile`` a student on examples.

        optimizer = evotrainer.Optimizer(metric=my_metric, model="fake:minutes", max_calls=80)
        policy = optimizer.compile(trainset=train, valset=val)

    ``student``: where evolution starts: an instruction text, a list of them, a PolicyGenome
    or a Policy (its components); None: the task's seeds. Every other argument is
    ``optimize``'s."""

    def __init__(self, metric: MetricFn | None = None, **settings: Any) -> None:
        self.metric = metric
        self.settings = settings

    def compile(self, student: Any = None, *, trainset: Any = None, valset: Any = None) -> Policy:
        settings = dict(self.settings)
        if student is not None:
            settings.update(_student(student))
        return optimize(trainset, valset, self.metric, **settings)


def _student(student: Any) -> dict[str, Any]:
    """``optimize``'s arguments for a student: seed texts, or seed components."""
    if isinstance(student, Policy):
        student = student.genome
    if isinstance(student, PolicyGenome):
        return {"inner__seed_components": [dict(student.components)]}
    if isinstance(student, str):
        return {"seeds": [student]}
    if isinstance(student, Sequence):
        return {"seeds": list(student)}
    raise ConfigError(
        f"student is a {type(student).__name__}: give an instruction text, a list of them, a "
        "PolicyGenome or a Policy"
    )
