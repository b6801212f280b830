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
import re
import sys
import time
from datetime import datetime
from pathlib import Path
from typing import Annotated

import typer

from evotrainer.errors import DataError, EvoTrainerError
from evotrainer.tasks.registry import task_words
from evotrainer.terminal import SafeConsole, printable

app = typer.Typer(add_completion=False, no_args_is_help=True, help=__doc__)
# every string they print has its control characters written out (terminal.py)
err = SafeConsole(stderr=True)
out = SafeConsole()

ModelOpt = Annotated[
    str | None,
    typer.Option(
        "--model",
        help="local:smollm2 | local:/path/model.gguf | openai:<model> (with --base-url) | "
        "without a model: fake:echo | fake:minutes | fake:latency=SECONDS",
    ),
]
BaseUrlOpt = Annotated[
    str | None, typer.Option("--base-url", help="OpenAI-compatible endpoint for openai: specs")
]
MaxCallsOpt = Annotated[
    int | None,
    typer.Option("--max-calls", min=1, help="stop after this many LLM calls (budget.max_calls)"),
]
MaxTokensOpt = Annotated[
    int | None,
    typer.Option(
        "--max-tokens",
        min=1,
        help="stop after this many prompt+completion tokens (budget.max_tokens)",
    ),
]
TimeoutOpt = Annotated[
    float | None,
    typer.Option(
        "--timeout",
        min=0.001,
        help="stop starting generations after this many seconds (budget.max_wall_s); the best "
        "policy is still validated and confirmed",
    ),
]


def _budget_values(
    max_calls: int | None, max_tokens: int | None, timeout: float | None
) -> dict[str, object]:
    values: dict[str, object] = {}
    if max_calls is not None:
        values["budget.max_calls"] = max_calls
    if max_tokens is not None:
        values["budget.max_tokens"] = max_tokens
    if timeout is not None:
        values["budget.max_wall_s"] = timeout
    return values


TaskOpt = Annotated[
    str | None,
    typer.Option(
        "--task",
        help="the task plug-in: meetings (default) | code | an installed one | one not "
        "packaged: my_module:PLUGIN (from the current folder) or path/to/file.py:PLUGIN",
    ),
]


def _version(value: bool) -> None:
    if value:
        from evotrainer import __version__

        print(f"evotrainer {__version__}")
        raise typer.Exit()


@app.callback()
def _main(
    version: Annotated[
        bool,
        typer.Option("--version", callback=_version, is_eager=True, help="print the version"),
    ] = False,
) -> None:
    pass


def _fail(exc: Exception, hint: str = "", where: Path | None = None) -> None:
    """Print ``exc`` as one error paragraph and exit 2; ``where``: the folder the command
    works in, named when an OSError names no file."""
    from rich.text import Text

    msg = str(exc) if not isinstance(exc, OSError) else _os_error(exc, where)
    text = Text("error: ", style="red") + Text(printable(msg + hint))
    err.print(text, soft_wrap=True, highlight=False)
    raise typer.Exit(2)


def _os_error(exc: OSError, where: Path | None = None) -> str:
    """A file-system error (disk full, permission denied, a file where a folder should be ...)
    as one line naming the file, else the folder being worked in; an error that is not about
    a file (e.g. a socket's) is not called one."""
    reason = exc.strerror or str(exc)
    if exc.filename:
        return f"cannot read or write a file ({exc.filename}): {reason}"
    if where is not None:
        return f"cannot read or write a file in {where} (the system did not say which): {reason}"
    return f"{reason} (error {exc.errno})" if exc.errno else reason


def _overrides(
    model: str | None, base_url: str | None, val_data: str | None, task: str | None = None
) -> dict[str, str]:
    """Option values as they are (file and model names are never parsed as YAML: with YAML,
    ``meet #2.jsonl`` would become ``meet``)."""
    values = {}
    if task:
        values["task.name"] = task
    if model:
        values["model.spec"] = model
    if base_url:
        values["model.base_url"] = base_url
    if val_data:
        values["validation.data"] = val_data
    return values


def _observers(as_json: bool) -> list:
    from evotrainer.run.console import ConsoleProgress
    from evotrainer.run.events import JsonStdout

    return [JsonStdout()] if as_json else [ConsoleProgress(err)]


def _conclude(co, result, as_json: bool, report: bool) -> None:  # type: ignore[no-untyped-def]
    s = result.summary
    if report and co.run_dir is not None:
        try:
            from evotrainer.report.build import build_report

            path = build_report(co.run_dir)
            if not as_json:
                err.print(f"report: {path}", markup=False)
        except ImportError:
            pass
    if as_json:
        return
    from rich.markup import escape

    out.print()
    initial = s["initial_s_val"]
    out.print(
        f"[bold]initial s_val[/] {_s_val_text(initial)}  ->  "
        f"[bold]final s_val[/] {s['final_s_val']:.4f}   ({escape(s['validation']['source'])}, "
        f"n={s['validation']['n']})"
    )
    c = s.get("confirmation")
    if c:
        lo, hi = c["difference"]["ci95"]
        returned = "the best seed" if c["returned"] == c["best_seed"] else "the evolved policy"
        out.print(
            f"[bold]on {c['n']} {task_words(co.task.name).instances} not used for "
            "selection:[/] returned policy "
            f"{c['winner_s_val'] if c['returned'] == c['winner'] else c['best_seed_s_val']:.4f}"
            f", best seed {c['best_seed_s_val']:.4f} (s_val); evolved winner - best seed "
            f"{c['difference']['mean']:+.4f} [95% CI {lo:+.4f}, {hi:+.4f}] "
            f"({escape(c.get('measure') or 's_val')})"
        )
        out.print(f"returned {returned}: {c['reason']}", markup=False)
    elif s["validation"].get("confirmation_note"):
        out.print(f"not confirmed: {s['validation']['confirmation_note']}", markup=False)
    out.print(
        f"generations {s['generations']}, outer steps {s['outer_steps']}, "
        f"LLM calls {s['llm_calls']} ({s['runtime']['backend_calls']} to the backend), "
        f"tokens {s['prompt_tokens'] + s['completion_tokens']}, wall {s['wall_s']:.0f}s"
    )
    out.print("[bold]best prompt:[/]")
    out.print(result.best.render(), markup=False)
    if co.run_dir is not None:
        out.print(f"[bold]run directory:[/] {escape(str(co.run_dir))}")


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
    from evotrainer.coevolution import CoEvolution
    from evotrainer.config import load_config
    from evotrainer.run.rundir import check_new_run_dir, remove_run

    rd = run_dir
    try:
        values: dict[str, object] = {**_overrides(model, base_url, val_data, task)}
        values.update(_budget_values(max_calls, max_tokens, timeout))
        if init_from:
            values["init_from"] = init_from
        cfg = load_config(config, set_ or [], values)
        if data:
            cfg = load_config(config, set_ or [], {**_data_values(data, cfg), **values})
        rd = run_dir or Path("runs") / f"{datetime.now():%Y%m%d-%H%M%S}-seed{cfg.seed}"
        if force:
            remove_run(rd)
        check_new_run_dir(rd)  # before the model loads
        if cfg.init_from:
            from evotrainer.run.warm_start import check_source

            check_source(Path(cfg.init_from), cfg.task.name)
        co = CoEvolution(cfg, observers=_observers(as_json))
        result = co.run(rd)
        _conclude(co, result, as_json, cfg.report)
    except (EvoTrainerError, OSError) as exc:
        _fail(exc, _resume_hint(exc, rd), where=rd)


def _data_values(data: str, cfg) -> dict[str, str]:  # type: ignore[no-untyped-def]
    """``run --data FILE``: the validation data, and the real training pool and terminal-reward
    pool where the task draws them from real data by default (``--val-data`` still wins)."""
    from evotrainer.tasks.registry import task_default

    values = {"validation.data": data}
    for section, key in (("harness", "real_data"), ("defences", "terminal_data")):
        if task_default(cfg.task.name, section, key) is not None:
            values[f"{section}.{key}"] = data
    return values


def _s_val_text(x: float | None) -> str:
    """An s_val for the closing lines; '-' when the run never measured it (a budget that
    stopped it before its seeds were validated)."""
    return f"{x:.4f}" if x is not None and math.isfinite(x) else "- (not measured)"


def _resume_hint(exc: Exception, run_dir: Path | None) -> str:
    from evotrainer.errors import TooManyErrors

    if isinstance(exc, TooManyErrors) and run_dir and (run_dir / "checkpoints").is_dir():
        return f" Then `evotrainer resume {run_dir}` continues from the last checkpoint."
    return ""


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
    from evotrainer.coevolution import CoEvolution
    from evotrainer.tasks.registry import allow_import

    if task:
        allow_import(task)
    try:
        co, path = CoEvolution.resume(
            run_dir,
            observers=_observers(as_json),
            base_url=base_url,
            ray_address=ray_address,
            settings=_budget_values(max_calls, max_tokens, timeout),
            more_generations=more_generations,
            operator_base_url=operator_base_url,
        )
        result = co.run(path)
        _conclude(co, result, as_json, co.cfg.report)
    except (EvoTrainerError, OSError) as exc:
        _fail(exc, _resume_hint(exc, run_dir), where=run_dir)


@app.command()
def report(run_dir: Annotated[Path, typer.Argument(help="a run directory")]) -> None:
    """Write RUN_DIR/report/index.html (works on a run in progress too)."""
    from evotrainer.report.build import build_report

    try:
        out.print(str(build_report(run_dir)), markup=False, highlight=False)
    except (EvoTrainerError, OSError) as exc:
        _fail(exc)


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
    from evotrainer.review.server import serve
    from evotrainer.tasks.registry import allow_import

    if task:
        allow_import(task)
    try:
        serve(run_dir, host, port, token, say=lambda m: err.print(m, markup=False, highlight=False))
    except (EvoTrainerError, OSError) as exc:
        _fail(exc)


@app.command()
def generate(
    out_file: Annotated[Path, typer.Option("--out", help="output JSONL")],
    difficulty: Annotated[float, typer.Option("--difficulty", min=0, max=1)] = 0.5,
    n: Annotated[int, typer.Option("-n", min=1, help="number of meetings")] = 100,
    seed: Annotated[int, typer.Option("--seed")] = 0,
    hostile_share: Annotated[
        float,
        typer.Option("--hostile-share", min=0, max=1, help="share with planted PII/injections"),
    ] = 0.0,
) -> None:
    """Write synthetic meetings (with ground truth) in the shared JSONL format."""
    import random

    from evotrainer.tasks.meetings.generator import MeetingGenerator
    from evotrainer.tasks.meetings.loader import save_meetings

    gen = MeetingGenerator(hostile_share=hostile_share)
    instances = gen.sample(n, difficulty, random.Random(seed))
    try:
        if out_file.is_dir():
            raise DataError(f"--out {out_file}: is a directory; give a file name (JSONL)")
        save_meetings(out_file, [i.payload for i in instances])
    except OSError as exc:
        _fail(DataError(f"--out {out_file}: cannot write it: {exc.strerror or exc}"))
    except DataError as exc:
        _fail(exc)
    words = sum(i.payload.word_count for i in instances) / len(instances)
    out.print(
        f"wrote {n} meetings to {out_file} (L={difficulty}, mean {words:.0f} words)", markup=False
    )


def _policy_text(prompt: str, seeds: dict[str, str]) -> str:
    """Policy text from --prompt. The rule: ``seed:NAME`` is one of the task's seeds; a value
    that names an existing file is that file's text; a value that looks like a file name (one
    line of one word, or ending in an extension such as .txt or .md) but names no file is an
    error; anything else is the policy text itself."""
    if prompt.startswith("seed:"):
        name = prompt.removeprefix("seed:")
        if name not in seeds:
            raise EvoTrainerError(f"--prompt {prompt}: known seeds are {sorted(seeds)}")
        return seeds[name]
    kind = _path_kind(prompt)
    if kind == "file":
        try:
            text = Path(prompt).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise DataError(f"--prompt {prompt}: cannot read the file: {exc}") from None
        if not text.strip():
            raise DataError(f"--prompt {prompt}: the file is empty")
        return text
    if kind == "other":
        raise DataError(f"--prompt {prompt}: not a file")
    if not prompt.strip():
        raise DataError("--prompt: the policy text is empty")
    if _looks_like_a_file_name(prompt):
        raise DataError(
            f"--prompt {prompt!r}: no such file (a value of one word or ending in a file "
            "extension is read as a file name). Give policy text (several words), a file that "
            "holds it, or seed:A|B|C."
        )
    return prompt


def _path_kind(value: str) -> str | None:
    """``file``, ``other`` (a directory ...) or None when ``value`` names nothing: policy text
    longer than a file name may be (ENAMETOOLONG) or holding a NUL names nothing."""
    try:
        path = Path(value)
        if path.is_file():
            return "file"
        return "other" if path.exists() else None
    except (OSError, ValueError):
        return None


_EXTENSION = re.compile(r"\.[A-Za-z][A-Za-z0-9]{0,7}$")
NAME_MAX, PATH_MAX = 255, 4096  # bytes in a file name and in a path (Linux)


def _looks_like_a_file_name(value: str) -> bool:
    """One line that a path may be (no part over NAME_MAX bytes) of one word or ending in an
    extension: ``prompt.txt``, ``my prompt.txt``, ``prompts/best``."""
    one_line = value.strip()
    if "\n" in one_line or len(one_line.encode()) > PATH_MAX:
        return False
    if any(len(part.encode()) > NAME_MAX for part in one_line.split("/")):
        return False
    return len(one_line.split()) == 1 or _EXTENSION.search(one_line) is not None


@app.command("eval")
def eval_(
    data: Annotated[
        Path,
        typer.Option(
            "--data",
            "--val-data",
            help="the task's JSONL data, a Parquet file or a Hugging Face datasets folder "
            "(mapped by --set data_columns=...: docs/data.md)",
        ),
    ],
    prompt: Annotated[
        list[str],
        typer.Option(
            "--prompt", help="policy text, a file holding it, or seed:NAME (A|B|C) (repeatable)"
        ),
    ],
    out_file: Annotated[Path | None, typer.Option("--out", help="metrics JSON")] = None,
    limit: Annotated[int | None, typer.Option("--limit", min=1)] = None,
    model: ModelOpt = None,
    base_url: BaseUrlOpt = None,
    set_: Annotated[list[str] | None, typer.Option("--set", help="config override")] = None,
    task_name: TaskOpt = None,
) -> None:
    """Run policies over a data set and report validation metrics (several policies share each
    instance's prefill: instances are evaluated one at a time for all policies)."""
    from rich.markup import escape

    from evotrainer.config import load_config
    from evotrainer.evaluation import eval_report
    from evotrainer.evaluation.from_config import evaluator_from_config
    from evotrainer.evaluation.validation import Validator
    from evotrainer.llm.budget import Budget
    from evotrainer.llm.spec import build_backend, build_stack
    from evotrainer.policy.genome import PolicyGenome
    from evotrainer.run.validation_set import check_references, check_s_val_weights
    from evotrainer.tasks.registry import build_task
    from evotrainer.tasks.tabular import load_data

    try:
        cfg = load_config(None, set_ or [], _overrides(model, base_url, None, task_name))
        if out_file is not None and out_file.is_dir():
            raise DataError(f"--out {out_file}: is a directory; give a file name (metrics JSON)")
        task = build_task(cfg.task)
        seeds = {s.name: s.render() for s in task.seed_policies()}
        policies = [PolicyGenome.from_text(_policy_text(p, seeds), name=p) for p in prompt]
        instances = load_data(task, data, cfg.data_columns)
        instances = instances[:limit] if limit else instances
        for warning in check_references(task, instances, str(data)):
            err.print(f"[yellow]warning:[/] {escape(warning)}", soft_wrap=True)
        check_s_val_weights(cfg.outer.s_val_weights, task, instances)
        ray = cfg.ray if cfg.runner == "ray" else None
        stack = build_stack(build_backend(cfg.model, cfg.seed, ray=ray), cfg.cache, Budget())
        evaluator = evaluator_from_config(cfg, task, stack.client)
        trunc = cfg.task.truncation_note() or "none"
        validator = Validator(task, evaluator, instances, cfg.outer.s_val_weights, str(data), trunc)
        t0 = time.perf_counter()
        with err.status(f"evaluating {len(policies)} policies on {len(instances)} instances ..."):
            results = validator.validate(policies)
        wall = time.perf_counter() - t0
    except (EvoTrainerError, OSError) as exc:
        _fail(exc)
        return
    keys = task.validation_metric().keys
    width = out.width
    diffs = eval_report.paired_to_first(validator, results, policies, cfg.seed)
    out.print(
        f"{data.name}: {len(instances)} instances, truncation {trunc}, model "
        f"{stack.backend.model_id}",
        markup=False,
        highlight=False,
    )
    n_cut = sum(1 for r in results[policies[0].id].per_instance if r.get("truncated"))
    if len(policies) == 1:
        res = results[policies[0].id]
        weighted = [k for k, w in cfg.outer.s_val_weights.items() if w > 0]
        s_vals = validator.row_s_vals(res)
        out.print(eval_report.instances_table(res, keys, weighted, s_vals, width, _cell))
        tables = eval_report.means_tables(keys, [("mean", res.aggregates)], width)
    else:
        out.print(eval_report.policies_table(policies, results, diffs, width, _cell))
        out.print(
            "vs #1: mean paired s_val difference to #1 (same instances), 95% bootstrap CI",
            markup=False,
            highlight=False,
        )
        columns = [(f"#{i}", results[p.id].aggregates) for i, p in enumerate(policies, 1)]
        tables = eval_report.means_tables(keys, columns, width)
    for t in tables:
        out.print(t)
    if n_cut:
        note = "(* = input truncated) " if len(policies) == 1 else ""
        out.print(
            f"{note}inputs truncated: {n_cut} of {len(instances)} ({trunc})",
            markup=False,
            highlight=False,
        )
    out.print(
        f"wall {wall:.0f}s, {stack.budget.backend_calls} backend "
        f"calls, {stack.budget.cache_hits} cache hits",
        markup=False,
        highlight=False,
    )
    failed = {
        p.id: [r["error"] for r in results[p.id].per_instance if r.get("error")] for p in policies
    }
    n_failed = sum(len(v) for v in failed.values())
    n_total = sum(len(results[p.id].per_instance) for p in policies)
    if n_failed:
        first = next(e for v in failed.values() for e in v)
        err.print(
            f"[yellow]warning:[/] {n_failed} of {n_total} answers failed and scored 0 "
            f"(first error: {escape(first)})",
            soft_wrap=True,
        )
    try:
        if out_file:
            docs = []
            for p in policies:
                res = results[p.id]
                diff = diffs[len(docs)]
                docs.append(
                    {
                        "prompt": p.render(),
                        "label": p.name,
                        "s_val": res.s_val,
                        "vs_first": diff.to_json() if diff is not None else None,
                        **{k: res.aggregates.get(k) for k in keys},
                        "aggregates": dict(res.aggregates),
                        "errors": len(failed[p.id]),
                        "per_meeting": list(res.per_instance),
                    }
                )
            doc = {
                "data": str(data),
                "model": stack.backend.model_id,
                "truncation": trunc,
                **docs[0],
                "policies": docs,
                "budget": stack.budget.snapshot(),
                "wall_s": round(wall, 2),
            }
            from evotrainer.run.checkpoint import dumps_strict

            out_file.parent.mkdir(parents=True, exist_ok=True)
            out_file.write_text(dumps_strict(doc), encoding="utf-8")
    except OSError as exc:
        _fail(DataError(f"--out {out_file}: cannot write it: {exc.strerror or exc}"))
    if n_total and n_failed == n_total:
        _fail(DataError(f"every answer failed ({n_failed} of {n_total}): the scores mean nothing"))


def _cell(text: str) -> str:
    """Text from the data in a table: markup escaped, control characters written out (a table
    is not a string, so SafeConsole cannot do it)."""
    from rich.markup import escape

    return escape(printable(text))


def _fmt(x: float | None) -> str:
    return "-" if x is None else f"{x:.3f}"


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
            "settings) | code (the code gym)",
        ),
    ] = "starter",
    force: Annotated[bool, typer.Option("--force", help="replace an existing file")] = False,
) -> None:
    """Write an example config to edit, with comments on where your data goes."""
    from evotrainer import EXAMPLES, example_config

    try:
        if example not in EXAMPLES:
            raise EvoTrainerError(f"--example {example}: the examples are {', '.join(EXAMPLES)}")
        if path.exists() and (path.is_dir() or not force):
            what = "a directory" if path.is_dir() else "a file"
            raise EvoTrainerError(
                f"{path} exists ({what}): choose another PATH"
                + ("" if path.is_dir() else " or replace it with --force")
            )
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(example_config(example).read_text(encoding="utf-8"), "utf-8")
    except (EvoTrainerError, OSError) as exc:
        _fail(exc)
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
    from evotrainer.config import load_config
    from evotrainer.llm.base import SamplingParams
    from evotrainer.llm.spec import build_backend
    from evotrainer.types import Message

    try:
        values: dict[str, object] = {**_overrides(model, base_url, None)}
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
        tps = c.completion_tokens / c.latency_s if c.latency_s > 0 else float("nan")
        out.print(
            f"{'generation':>12}: {c.completion_tokens} tokens in {c.latency_s:.2f}s "
            f"= {tps:.1f} tokens/s (prompt {c.prompt_tokens} tokens)"
        )
        if not c.text.strip():
            err.print("[red]unhealthy:[/] the model returned an empty answer")
            raise typer.Exit(1)
        out.print("[green]healthy[/]")
    except (EvoTrainerError, OSError) as exc:
        _fail(exc)


class _LogToConsole(logging.Handler):
    """EvoTrainer's log records on the error console, except those the console already shows
    as a run event (``extra={"on_console": True}``)."""

    def emit(self, record: logging.LogRecord) -> None:
        if getattr(record, "on_console", False):
            return
        err.print(f"{record.levelname.lower()}: {record.getMessage()}", markup=False)


def main() -> None:
    logger = logging.getLogger("evotrainer")
    if not any(isinstance(h, _LogToConsole) for h in logger.handlers):
        handler = _LogToConsole(logging.WARNING)
        logger.addHandler(handler)
    try:
        app()
    except KeyboardInterrupt:
        err.print("interrupted")
        sys.exit(130)


if __name__ == "__main__":
    main()
