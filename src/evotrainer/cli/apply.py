"""``evotrainer apply`` beyond its options (app.py): a saved policy answers every input of a data
file, one JSON line per input (``{"id": ..., "answer": ...}``, and ``"error"`` where the model
gave none), to ``--out`` or stdout; progress on stderr. The Python API's ``Policy`` does the
work (api/policy.py): the same answers as ``policy(example)``."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import TextIO

from evotrainer.api.examples import read_examples
from evotrainer.api.policy import Policy
from evotrainer.cli.common import err
from evotrainer.types import Instance, Rollout


def run_apply(
    policy_file: Path,
    data: Path,
    out_file: Path | None,
    model: str | None,
    base_url: str | None,
) -> int:
    """Answer every input of ``data`` with the policy of ``policy_file``; the number of
    answers the model failed to give."""
    policy = Policy.load(policy_file, model=model, base_url=base_url)
    err.print(
        f"policy {policy.genome.id} ({policy.config.task.name}, model "
        f"{policy.config.model.spec}) on {data}",
        markup=False,
    )
    instances = read_examples(policy.evaluator().task, data, data.name).instances
    if out_file is not None:
        out_file.parent.mkdir(parents=True, exist_ok=True)
        with out_file.open("w", encoding="utf-8") as fh:
            failed = _write(policy, instances, fh)
    else:
        failed = _write(policy, instances, sys.stdout)
    where = f" to {out_file}" if out_file else ""
    err.print(
        f"wrote {len(instances)} answers{where}"
        + (f"; {failed} failed (their lines carry the error)" if failed else ""),
        markup=False,
    )
    return failed


def _write(policy: Policy, instances: list[Instance], fh: TextIO) -> int:
    """The answers as JSON lines, flushed one by one; a progress line on stderr at most every
    10 s. Returns how many failed."""
    failed, shown = 0, time.monotonic()
    for n, r in enumerate(policy.answers(instances), start=1):
        fh.write(json.dumps(_line(r), ensure_ascii=False) + "\n")
        fh.flush()
        failed += r.error is not None
        if time.monotonic() - shown >= 10 or n == len(instances):
            shown = time.monotonic()
            err.print(f"answered {n}/{len(instances)}", markup=False)
    return failed


def _line(r: Rollout) -> dict[str, object]:
    line: dict[str, object] = {"id": r.instance_id, "answer": r.output}
    if r.error is not None:
        line["error"] = r.error
    return line
