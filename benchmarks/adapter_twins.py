"""How much of a weights method's test gain is its prompt and how much its adapter: each
returned policy of a results directory that carries an adapter and a prompt other than the
best seed's, against its twin (the best seed's prompt, decoding and loop cut on the same
adapter), on every test meeting, through the test evaluation's cache and scorer.

The twins' scores go to ``RESULTS/test/twins.json`` (never into scores.json: a twin is no
method's returned policy); the paired differences (policy - twin, and twin - seed_best)
with 95% bootstrap intervals over meetings are printed and saved beside them.

    python benchmarks/adapter_twins.py --profile distill-1000 --threads 2
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks import bench_profile, quality, stats  # noqa: E402
from benchmarks import common as C  # noqa: E402
from benchmarks.bench import Bench  # noqa: E402
from benchmarks.cells import runner, scoring  # noqa: E402
from benchmarks.cells.comparisons import vector  # noqa: E402
from benchmarks.cells.grid import load_cells  # noqa: E402
from evotrainer.policy.genome import PolicyGenome  # noqa: E402
from evotrainer.types import Lineage  # noqa: E402


def twins(cells: dict[str, dict[str, Any]], best_seed: PolicyGenome) -> dict[str, Any]:
    """Returned policy id -> (cell, the policy, its twin) for each adapter-carrying policy
    whose text differs from the best seed's."""
    out = {}
    for c, rec in sorted(cells.items()):
        for r in (rec.get("rows") or {}).values() if rec.get("status") == "ok" else []:
            p = PolicyGenome.from_json(r["best_policy"])
            if p.adapter is None or p.render() == best_seed.render():
                continue
            note = f"twin of {p.id}: the best seed's prompt on its adapter"
            twin = best_seed.with_adapter(p.adapter, Lineage(parents=(best_seed.id,), note=note))
            out[p.id] = (c, p, twin)
    return out


def main(argv: list[str] | None = None) -> int:
    args = quality.parse_args(argv)
    prof = bench_profile.resolve(args)
    results, work = runner.results_dirs(args, prof)
    args.work_dir = str(work)
    bench = Bench(args, prof)
    cells = load_cells(results)
    if (cells.get("seeds") or {}).get("status") != "ok":
        raise SystemExit(f"{results} has no finished seeds cell: it says which seed is best")
    seed_best = cells["seeds"]["rows"]["seed_best"]["best_policy"]["id"]
    best = next(p for p in bench.seeds() if p.id == seed_best)
    pairs = twins(cells, best)
    path = results / "test" / "twins.json"
    scores = json.loads(path.read_text()) if path.is_file() else {}
    meetings = [(name, inst) for name, s in bench.tests.items() for inst in s.instances]
    pols = {t.id: t for _, _, t in pairs.values()}
    C.log(f"{len(pols)} twins x {len(meetings)} meetings into {path}")
    todo = [(n, i) for n, i in meetings if set(pols) - set(scores.get(n, {}).get(i.id, {}))]
    if todo:
        scoring._score(bench, results, work, args, pols, todo, scores, path)  # noqa: SLF001
    main_scores = json.loads((results / "test" / "scores.json").read_text())
    ids = [(n, i.id) for n, i in meetings]

    def vec(src: dict, pid: str) -> list[float | None]:
        return vector(src, ids, pid, "s_val")

    report = {}
    for pid, (cell, _, twin) in pairs.items():
        prompt = stats.paired_difference([vec(main_scores, pid)], vec(scores, twin.id))
        adapter = stats.paired_difference([vec(scores, twin.id)], vec(main_scores, seed_best))
        report[cell] = {"policy": pid, "twin": twin.id, "prompt": prompt, "adapter": adapter}
        print(
            f"{cell}: returned - twin (its prompt on the same adapter) {stats.fmt_ci(prompt)}; "
            f"twin - seed_best (the adapter under the best seed's prompt) {stats.fmt_ci(adapter)}"
        )
    C.write_json(results / "test" / "twins-summary.json", report)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
