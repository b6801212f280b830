"""Co-evolve an LLM agent's prompts and their training harness. Start with `evotrainer init`,
then `evotrainer run -c evotrainer.yaml --data my.jsonl`.

Model specs (--model): local:smollm2 (embedded, the default; extra local), local:smollm2-q4_0,
local:/path/model.gguf, openai:<model> with --base-url URL (vLLM, Ollama, llama.cpp server ...),
and fakes that need no model, for plumbing checks and tests: fake:echo (answers with the end of
its prompt), fake:minutes (plausible minutes from the meeting's transcript),
fake:latency=SECONDS (an echo after a delay)."""

from __future__ import annotations

import logging
import math
import os
import random
import sys
import time
from datetime import datetime
from pathlib import Path
from typing import Annotated

import typer

from evotrainer import EXAMPLES, __version__, example_config
from evotrainer.cli.common import (
    BaseUrlOpt,
    MaxCallsOpt,
    MaxTokensOpt,
    ModelOpt,
    TaskOpt,
    TimeoutOpt,
    budget_values,
    err,
    fail,
    out,
    overrides,
)
from evotrainer.cli.eval import EvalSettings, run_eval
from evotrainer.cli.run import conclude, data_values, interrupted, observers, resume_hint
from evotrainer.errors import ConfigError, DataError, EvoTrainerError
from evotrainer.review.server import serve
from evotrainer.run.checkpoint import atomic_write
from evotrainer.tasks.registry import allow_import, build_task, task_words
from evotrainer.types import Message

app = typer.Typer(add_completion=False, no_args_is_help=True, help=__doc__)


def _version(value: bool) -> None:
    if value:
        print(f"evotrainer {__version__}")
        raise typer.Exit()


@app.callback()
def _main(
    version: Annotated[
        bool,
        typer.Option("--version", callback=_version, is_eager=True, help="print the version"),
    ] = False,
) -> None:
    _log_to_console()


@app.command()
def run(
    config: Annotated[Path | None, typer.Option("-c", "--config", help="YAML config")] = None,
    set_: Annotated[
        list[str] | None, typer.Option("--set", help="override: key.sub=value (repeatable)")
    ] = None,
    run_dir: Annotated[
        Path | None, typer.Option("--run-dir", help="where to write the run")
    ] = None,
    model: ModelOpt = None,
    base_url: BaseUrlOpt = None,
    val_data: Annotated[
        str | None, typer.Option("--val-data", help="validation JSONL (real meetings)")
    ] = None,
    data: Annotated[
        str | None,
        typer.Option(
            "--data",
            help="your data (JSONL with references; or a Parquet file or Hugging Face "
            "datasets folder, mapped by data_columns: docs/data.md): validation (selection and "
            "held-out confirmation) and the real training pool, validation instances removed "
            "from it",
        ),
    ] = None,
    task: TaskOpt = None,
    max_calls: MaxCallsOpt = None,
    max_tokens: MaxTokensOpt = None,
    timeout: TimeoutOpt = None,
    as_json: Annotated[bool, typer.Option("--json", help="print events as JSON lines")] = False,
    force: Annotated[
        bool, typer.Option("--force", help="replace the run already in --run-dir")
    ] = False,
    init_from: Annotated[
        str | None,
        typer.Option(
            "--init-from",
            help="warm start: seed the population and harness from an earlier run directory",
        ),
    ] = None,
) -> None:
    """Run co-evolution (inner policy GA + outer harness evolution)."""
    # lazy: start-up time
    from evotrainer.coevolution import CoEvolution
    from evotrainer.config import load_config
    from evotrainer.run.rundir import check_new_run_dir, remove_run

    rd = run_dir
    try:
        values: dict[str, object] = {**overrides(model, base_url, val_data, task)}
        values.update(budget_values(max_calls, max_tokens, timeout))
        if init_from:
            values["init_from"] = init_from
        cfg = load_config(config, set_ or [], values)
        if timeout is not None and cfg.model.timeout_s > timeout:
            values["model.timeout_s"] = timeout  # no request waits longer than the whole run
            cfg = load_config(config, set_ or [], values)
        if data:
            cfg = load_config(config, set_ or [], {**data_values(data, cfg), **values})
        rd = run_dir or Path("runs") / f"{datetime.now():%Y%m%d-%H%M%S}-seed{cfg.seed}"
        if force:
            remove_run(rd)
        check_new_run_dir(rd)  # before the model loads
        if cfg.init_from:
            # lazy: start-up time
            from evotrainer.run.warm_start import check_source

            check_source(Path(cfg.init_from), cfg.task.name)
        co = CoEvolution(cfg, observers=observers(as_json))
        result = co.run(rd)
        conclude(co, result, as_json, cfg.report)
    except (EvoTrainerError, OSError) as exc:
        fail(exc, resume_hint(exc, rd), where=rd)
    except KeyboardInterrupt:
        interrupted(rd if rd is not None and rd.is_dir() else None)


@app.command()
def resume(
    run_dir: Annotated[Path, typer.Argument(help="a run directory")],
    as_json: Annotated[bool, typer.Option("--json", help="print events as JSON lines")] = False,
    base_url: Annotated[
        str | None,
        typer.Option(
            "--base-url",
            help="the OpenAI-compatible endpoint to continue with; needed when the run's "
            "config.yaml names one that is not $OPENAI_BASE_URL (a run directory is not trusted "
            "to choose where prompts and the API key go)",
        ),
    ] = None,
    ray_address: Annotated[
        str | None,
        typer.Option(
            "--ray-address",
            help="the Ray cluster to continue on (runner ray); needed when config.yaml names one "
            "that is not $RAY_ADDRESS",
        ),
    ] = None,
    operator_base_url: Annotated[
        str | None,
        typer.Option(
            "--operator-base-url",
            help="the operator model's (operator_model, the teacher's) endpoint; needed when "
            "config.yaml names one that is not $OPENAI_BASE_URL",
        ),
    ] = None,
    max_calls: MaxCallsOpt = None,
    max_tokens: MaxTokensOpt = None,
    timeout: TimeoutOpt = None,
    more_generations: Annotated[
        int,
        typer.Option(
            "--more-generations",
            min=0,
            help="continue, even a finished run, for N generations more than it has made",
        ),
    ] = 0,
    task: Annotated[
        str | None,
        typer.Option(
            "--task",
            help="repeat the run's task when it is a module:ATTR plug-in (a run directory is "
            "not trusted to choose code to import)",
        ),
    ] = None,
) -> None:
    """Continue a run from its last intact checkpoint (a run stopped before its first
    checkpoint starts again); with --more-generations N, a finished run too, for N more
    generations. Settings in RUN_DIR/config.yaml that would run code (Ray runtime_env, a
    module:ATTR task) are refused; endpoints and such a task must be repeated here."""
    # lazy: start-up time
    from evotrainer.coevolution import CoEvolution

    if task:
        allow_import(task)
    try:
        co, path = CoEvolution.resume(
            run_dir,
            observers=observers(as_json),
            base_url=base_url,
            ray_address=ray_address,
            settings=budget_values(max_calls, max_tokens, timeout),
            more_generations=more_generations,
            operator_base_url=operator_base_url,
        )
        result = co.run(path)
        conclude(co, result, as_json, co.components.cfg.report)
    except (EvoTrainerError, OSError) as exc:
        fail(exc, resume_hint(exc, run_dir), where=run_dir)
    except KeyboardInterrupt:
        interrupted(run_dir)


@app.command()
def report(run_dir: Annotated[Path, typer.Argument(help="a run directory")]) -> None:
    """Write RUN_DIR/report/index.html (works on a run in progress too)."""
    # lazy: start-up time
    from evotrainer.report.build import build_report

    try:
        out.print(str(build_report(run_dir)), markup=False, highlight=False)
    except (EvoTrainerError, OSError) as exc:
        fail(exc)


@app.command()
def review(
    run_dir: Annotated[Path, typer.Argument(help="a run directory (finished or in progress)")],
    host: Annotated[
        str, typer.Option("--host", help="address to bind; not loopback needs a token")
    ] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", min=0, max=65535)] = 8765,
    token: Annotated[
        str | None,
        typer.Option("--token", help="access token (default: none on 127.0.0.1, random elsewhere)"),
    ] = None,
    task: Annotated[
        str | None,
        typer.Option("--task", help="repeat the run's task when it is a module:ATTR plug-in"),
    ] = None,
) -> None:
    """Serve a local page where people rate two policies' minutes blind, side by side; ratings
    go to RUN_DIR/ratings.sqlite and a running or resumed run uses them at its next outer step."""
    if task:
        allow_import(task)
    try:
        serve(run_dir, host, port, token, say=lambda m: err.print(m, markup=False, highlight=False))
    except (EvoTrainerError, OSError) as exc:
        fail(exc)


@app.command("apply")
def apply_(
    policy_file: Annotated[
        Path,
        typer.Argument(
            help="a policy file (Policy.save's, a run's best/policy.json) or a run directory"
        ),
    ],
    data: Annotated[
        Path,
        typer.Option(
            "--data",
            help="the inputs: the task's JSONL (no references needed, ids made when missing), "
            "a Parquet file or a Hugging Face datasets folder",
        ),
    ],
    out_file: Annotated[
        Path | None, typer.Option("--out", help="answers JSONL (default: stdout)")
    ] = None,
    model: ModelOpt = None,
    base_url: BaseUrlOpt = None,
) -> None:
    """Apply a saved policy to new inputs: one JSON line per input, {"id", "answer"} (and
    "error" where the model gave none), answered as the run answered (its task settings, model,
    decoding and loop cut; --model replaces the model)."""
    # lazy: start-up time
    from evotrainer.cli.apply import run_apply

    try:
        failed = run_apply(policy_file, data, out_file, model, base_url)
    except (EvoTrainerError, OSError) as exc:
        fail(exc)
    except KeyboardInterrupt:
        interrupted(None)
    if failed:
        raise typer.Exit(1)


@app.command()
def generate(
    out_file: Annotated[Path, typer.Option("--out", help="output JSONL")],
    difficulty: Annotated[float, typer.Option("--difficulty", min=0, max=1)] = 0.5,
    n: Annotated[int, typer.Option("-n", min=1, help="number of instances")] = 100,
    seed: Annotated[int, typer.Option("--seed")] = 0,
    hostile_share: Annotated[
        float | None,
        typer.Option(
            "--hostile-share",
            min=0,
            max=1,
            help="meetings: share with planted PII/injections (task.hostile_share, default 0)",
        ),
    ] = None,
    task: TaskOpt = None,
) -> None:
    """Write synthetic instances of the task (with their ground truth) in its own data format,
    a JSONL file its loader reads back: meetings by default, problems with --task code."""
    # lazy: start-up time
    from evotrainer.config import load_config
    from evotrainer.tasks.base import WritesInstances

    values: dict[str, object] = {**overrides(None, None, None, task)}
    if hostile_share is not None:
        values["task.hostile_share"] = hostile_share
    try:
        cfg = load_config(None, None, values)
        made = build_task(cfg.task)
        writer = made if isinstance(made, WritesInstances) else None
        if writer is None:
            raise ConfigError(
                f"task {cfg.task.name!r} cannot write generated instances in its data format (it "
                "has no write_instances: tasks/base.py, WritesInstances); meetings and code can"
            )
    except EvoTrainerError as exc:
        fail(exc)
    instances = made.generator().sample(n, difficulty, random.Random(seed))
    try:
        if out_file.is_dir():
            raise DataError(f"--out {out_file}: is a directory; give a file name (JSONL)")
        note = writer.write_instances(out_file, instances)
    except OSError as exc:
        fail(DataError(f"--out {out_file}: cannot write it: {exc.strerror or exc}"))
    except DataError as exc:
        fail(exc)
    what = task_words(cfg.task.name).instances
    about = f"L={difficulty}, {note}" if note else f"L={difficulty}"
    out.print(f"wrote {n} {what} to {out_file} ({about})", markup=False)


@app.command("eval")
def eval_(
    prompt: Annotated[
        list[str],
        typer.Option(
            "--prompt",
            help="policy text, a file holding it, seed:NAME (A|B|C), or a policy JSON file "
            "(a run's best/policy.json: with its decoding and loop-cut genes; text policies "
            "get inner.seed_decoding and inner.seed_postprocess) (repeatable)",
        ),
    ],
    data: Annotated[
        Path | None,
        typer.Option(
            "--data",
            "--val-data",
            help="the task's JSONL data, a Parquet file or a Hugging Face datasets folder "
            "(mapped by --set data_columns=...: docs/data.md); default with -c or --run: its "
            "validation.data",
        ),
    ] = None,
    config: Annotated[
        Path | None,
        typer.Option(
            "-c", "--config", help="evaluate under this config's settings (task, input cut ...)"
        ),
    ] = None,
    run_dir: Annotated[
        Path | None,
        typer.Option(
            "--run",
            help="evaluate under this run's settings (its config.yaml: the task and its input "
            "cut, s_val's weights, the model and cache), as the run validated",
        ),
    ] = None,
    out_file: Annotated[Path | None, typer.Option("--out", help="metrics JSON")] = None,
    limit: Annotated[int | None, typer.Option("--limit", min=1)] = None,
    model: ModelOpt = None,
    base_url: BaseUrlOpt = None,
    set_: Annotated[list[str] | None, typer.Option("--set", help="config override")] = None,
    task_name: TaskOpt = None,
    timeout: Annotated[
        float | None,
        typer.Option(
            "--timeout",
            min=0.001,
            help="seconds to wait for each answer of a model server (model.timeout_s, default "
            "120; retried model.max_retries times); a line says when it waits",
        ),
    ] = None,
) -> None:
    """Run policies over a data set and report validation metrics (several policies share each
    instance's prefill: instances are evaluated one at a time for all policies). With -c or
    --run, under that config's or run's settings (the defaults otherwise)."""
    try:
        settings = EvalSettings(config, run_dir, model, base_url, set_, task_name, timeout)
        run_eval(data, prompt, out_file, limit, settings)
    except KeyboardInterrupt:
        interrupted(None)


@app.command()
def init(
    path: Annotated[Path, typer.Argument(help="the config file to write")] = Path(
        "evotrainer.yaml"
    ),
    example: Annotated[
        str,
        typer.Option(
            "--example",
            help="starter (a first, small run on meeting minutes) | demo (make demo's "
            "settings) | code (the code gym) | dialogue (the dialogue task)",
        ),
    ] = "starter",
    force: Annotated[bool, typer.Option("--force", help="replace an existing file")] = False,
) -> None:
    """Write an example config to edit, with comments on where your data goes. Never through a
    symbolic link (``--force`` replaces a file, not what a link points to)."""
    try:
        if example not in EXAMPLES:
            raise EvoTrainerError(f"--example {example}: the examples are {', '.join(EXAMPLES)}")
        if path.is_symlink():
            raise EvoTrainerError(
                f"{path} is a symbolic link (to {os.readlink(path)}): init does not write "
                "through a link; remove the link or choose another PATH"
            )
        if path.exists() and (path.is_dir() or not force):
            what = "a directory" if path.is_dir() else "a file"
            raise EvoTrainerError(
                f"{path} exists ({what}): choose another PATH"
                + ("" if path.is_dir() else " or replace it with --force")
            )
        # a temporary file renamed over PATH: a link planted meanwhile is replaced, not followed
        atomic_write(path, example_config(example).read_text(encoding="utf-8"))  # mode 0644
    except (EvoTrainerError, OSError) as exc:
        fail(exc)
    out.print(
        f"wrote {path}: edit it, then\n  evotrainer run -c {path} --data my.jsonl\n"
        "(relative paths in it mean its folder; every key: evotrainer config --markdown)",
        markup=False,
        highlight=False,
    )


@app.command()
def config(
    markdown: Annotated[bool, typer.Option("--markdown", help="the reference as markdown")] = False,
) -> None:
    """Print the default configuration (YAML), or the configuration reference."""
    # lazy: start-up time
    from evotrainer.config import RunConfig, reference_markdown

    print(reference_markdown() if markdown else RunConfig().to_yaml(), end="")


@app.command()
def doctor(
    model: ModelOpt = None,
    base_url: BaseUrlOpt = None,
    timeout: Annotated[
        float, typer.Option("--timeout", min=0.1, help="seconds to wait for a server's answer")
    ] = 30.0,
) -> None:
    """Check the model backend: what it is, its context size, and a measured speed."""
    # lazy: start-up time
    from evotrainer.config import load_config
    from evotrainer.llm.base import SamplingParams
    from evotrainer.llm.spec import build_backend

    try:
        values: dict[str, object] = {**overrides(model, base_url, None)}
        values.update({"model.timeout_s": timeout, "model.max_retries": 0})  # fail fast, say why
        cfg = load_config(None, None, values)
        t0 = time.perf_counter()
        backend = build_backend(cfg.model)
        if cfg.model.spec.startswith("openai:"):
            err.print(f"asking the server (timeout {timeout:g} s) ...", markup=False)
        load_s = time.perf_counter() - t0
        for k, v in backend.describe().items():
            out.print(f"{k:>12}: {v}", markup=False, highlight=False)
        out.print(f"{'load':>12}: {load_s:.2f}s")
        msgs = [Message("user", "List five fruits, one per line, with one sentence on each.")]
        c = backend.complete(msgs, SamplingParams(temperature=0.0, max_tokens=96, seed=0))
        speed = _speed(c.completion_tokens, c.latency_s)
        out.print(f"{'generation':>12}: {speed} (prompt {c.prompt_tokens} tokens)", soft_wrap=True)
        if not c.text.strip():
            err.print("[red]unhealthy:[/] the model returned an empty answer")
            raise typer.Exit(1)
        out.print("[green]healthy[/]")
    except (EvoTrainerError, OSError) as exc:
        fail(exc)


def _speed(tokens: int, seconds: float) -> str:
    """``96 tokens in 1.20s = 80.0 tokens/s``; without a measurable time (a fake model answers
    at once) the speed is not made up (no "nan tokens/s")."""
    if seconds > 0 and tokens > 0 and math.isfinite(seconds):
        return f"{tokens} tokens in {seconds:.2f}s = {tokens / seconds:.1f} tokens/s"
    return f"{tokens} tokens, answered at once (no speed to measure)"


class _LogToConsole(logging.Handler):
    """EvoTrainer's log records on the error console, except those the console already shows
    as a run event (``extra={"on_console": True}``)."""

    def emit(self, record: logging.LogRecord) -> None:
        if getattr(record, "on_console", False):
            return
        err.print(f"{record.levelname.lower()}: {record.getMessage()}", markup=False)


def _log_to_console() -> None:
    """EvoTrainer's warnings (a server it waits on, a fallback ...) on the error console, once
    per process (every command, also when the app is invoked without ``main``)."""
    logger = logging.getLogger("evotrainer")
    if not any(isinstance(h, _LogToConsole) for h in logger.handlers):
        logger.addHandler(_LogToConsole(logging.WARNING))


def main() -> None:
    _log_to_console()
    try:
        app()
    except KeyboardInterrupt:  # outside a command (run, resume and eval say it themselves)
        err.print("interrupted")
        sys.exit(130)
