"""Experiment trackers (issue 35, item 8): ``tracking: {kind: mlflow | tensorboard}`` logs the
config, each generation's and outer step's metrics, the harness genes and the artifacts (report,
best policy, summary) as an observer of the run's events. Read back with MLflow's own client
(a local file store) and TensorBoard's own EventAccumulator; fake LLM, seconds."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from evotrainer.config import config_from_dict, load_config
from evotrainer.errors import ConfigError, MissingExtraError
from evotrainer.run import events as ev
from tests.fake_runs import Killed, fake_resume, fake_run, kill_at, small_config

REPO = Path(__file__).resolve().parents[1]


def _cfg(tmp_path: Path, tracking: dict, **sections):
    return small_config(
        tmp_path / "c.sqlite",
        tracking=tracking,
        report=True,
        inner={"population": 4, "elites": 2, "tasks_per_generation": 2, "generations": 4},
        outer={"every": 2, "variants": 2},
        validation={"data": None, "synthetic_size": 5, "confirm": 2},
        **sections,
    )


# -- configuration ---------------------------------------------------------------------------


def test_tracking_config():
    assert load_config(None).tracking.kind == "none"
    assert config_from_dict({"tracking": "mlflow"}).tracking.kind == "mlflow"
    cfg = config_from_dict({"tracking": {"kind": "tensorboard", "uri": "/tmp/tb"}})
    assert (cfg.tracking.kind, cfg.tracking.uri) == ("tensorboard", "/tmp/tb")
    with pytest.raises(ConfigError, match="tracking.kind"):
        config_from_dict({"tracking": {"kind": "wandb"}})


@pytest.mark.parametrize(
    ("kind", "module", "extra"),
    [("mlflow", "mlflow", "mlflow"), ("tensorboard", "tensorboardX", "tensorboard")],
)
def test_a_missing_extra_is_a_clear_error(tmp_path, monkeypatch, kind, module, extra):
    from evotrainer.coevolution import CoEvolution
    from tests.fake_meetings import RecordingMeetingTask, family_llm

    monkeypatch.setitem(sys.modules, module, None)  # import fails
    task = RecordingMeetingTask()
    with pytest.raises(MissingExtraError, match=rf"pip install 'evotrainer\[{extra}\]'"):
        CoEvolution(_cfg(tmp_path, {"kind": kind}), task=task, llm=family_llm(task))


def test_the_trackers_do_not_import_torch():
    code = (
        "import sys; sys.modules['torch'] = None\n"
        "from evotrainer.run.tracking import TensorBoardTracker\n"
        "import tempfile, pathlib\n"
        "d = pathlib.Path(tempfile.mkdtemp())\n"
        "t = TensorBoardTracker(str(d))\n"
        "t.scalars({'x': 1.0}, 0); t.close()\n"
        "assert list(d.glob('**/events.out.tfevents.*'))\n"
    )
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO)
    assert res.returncode == 0, res.stderr[-2000:]


# -- MLflow, local file store --------------------------------------------------------------------


@pytest.fixture
def mlflow_store(tmp_path, monkeypatch):
    pytest.importorskip("mlflow", reason="needs the mlflow extra")
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")  # MLflow 3: the file store is opt-in
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    return "file:" + str(tmp_path / "mlruns")


def _mlflow_run(uri: str):
    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=uri)
    exp = client.get_experiment_by_name("evotrainer")
    runs = client.search_runs([exp.experiment_id])
    assert len(runs) == 1
    return client, runs[0]


def test_mlflow_logs_config_metrics_harness_and_artifacts(tmp_path, mlflow_store):
    cfg = _cfg(tmp_path, {"kind": "mlflow", "uri": mlflow_store})
    co = fake_run(cfg, tmp_path / "run")
    client, run = _mlflow_run(mlflow_store)
    assert run.info.status == "FINISHED"
    assert run.info.run_name == "run"
    params = run.data.params
    assert params["inner.population"] == "4" and params["seed"] == "3"
    hist = client.get_metric_history(run.info.run_id, "fitness/best")
    assert sorted(m.step for m in hist) == [0, 1, 2, 3, 4]
    for name in ("harness/difficulty", "harness/real_share", "calls/backend", "diversity"):
        assert len(client.get_metric_history(run.info.run_id, name)) == 5, name
    weights = [k for k in run.data.metrics if k.startswith("harness/weight/")]
    assert weights and set(k.split("/")[-1] for k in weights) >= set(co.state.harness.weights)
    outer = client.get_metric_history(run.info.run_id, "outer/best_variant_s_val")
    assert [m.step for m in outer] == [1]
    assert "outer/difficulty" in run.data.metrics
    assert client.get_metric_history(run.info.run_id, "s_val/validated")
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert run.data.metrics["final/final_s_val"] == pytest.approx(summary["final_s_val"])
    assert "confirmation/difference" in run.data.metrics
    arts = {a.path for a in client.list_artifacts(run.info.run_id)}
    assert {"summary.json", "config.yaml", "best", "report"} <= arts
    best = {a.path for a in client.list_artifacts(run.info.run_id, "best")}
    assert {"best/prompt.txt", "best/policy.json"} <= best
    assert "report/index.html" in {a.path for a in client.list_artifacts(run.info.run_id, "report")}
    # the run directory remembers the MLflow run
    doc = json.loads((tmp_path / "run" / "tracking.json").read_text())
    assert doc == {"kind": "mlflow", "run_id": run.info.run_id}


def test_mlflow_says_where_it_logs_and_reads_back_without_the_env(tmp_path, monkeypatch):
    """Issue 51: a local file store named in the config is opted into for the user (MLflow 3
    needs MLFLOW_ALLOW_FILE_STORE=true), the run's id and how to see it are printed, and what
    was logged reads back with mlflow.search_runs (pandas: in the mlflow extra)."""
    mlflow = pytest.importorskip("mlflow", reason="needs the mlflow extra")
    pytest.importorskip("pandas", reason="the mlflow extra brings pandas")
    monkeypatch.delenv("MLFLOW_ALLOW_FILE_STORE", raising=False)
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    uri = "file:" + str(tmp_path / "mlruns")
    seen: list[ev.Event] = []
    fake_run(_cfg(tmp_path, {"kind": "mlflow", "uri": uri}), tmp_path / "run", [seen.append])
    where = [e.data for e in seen if e.type == ev.TRACKING]
    assert len(where) == 1 and where[0]["run_id"] and where[0]["run_id"] in where[0]["message"]
    assert "mlflow ui --backend-store-uri" in where[0]["message"]
    mlflow.set_tracking_uri(uri)
    try:
        runs = mlflow.search_runs(experiment_names=["evotrainer"])
    finally:
        mlflow.set_tracking_uri(None)
    assert list(runs["run_id"]) == [where[0]["run_id"]]
    assert "metrics.calls/backend" in runs.columns


def test_a_resumed_run_logs_into_the_same_mlflow_run(tmp_path, mlflow_store):
    cfg = _cfg(tmp_path, {"kind": "mlflow", "uri": mlflow_store})
    with pytest.raises(Killed):
        fake_run(cfg, tmp_path / "run", observers=[kill_at(ev.GENERATION, generation=3)])
    client, run = _mlflow_run(mlflow_store)
    assert run.info.status == "RUNNING"
    fake_resume(tmp_path / "run")
    client, again = _mlflow_run(mlflow_store)
    assert again.info.run_id == run.info.run_id and again.info.status == "FINISHED"
    steps = {m.step for m in client.get_metric_history(run.info.run_id, "fitness/best")}
    assert steps == {0, 1, 2, 3, 4}


def test_a_tracker_that_raises_is_detached_and_the_run_goes_on(tmp_path, mlflow_store, monkeypatch):
    from evotrainer.run import tracking

    def broken(self, values, step):
        raise RuntimeError("tracking server gone")

    monkeypatch.setattr(tracking.MlflowTracker, "scalars", broken)
    seen: list[ev.Event] = []
    cfg = _cfg(tmp_path, {"kind": "mlflow", "uri": mlflow_store})
    co = fake_run(cfg, tmp_path / "run", observers=[seen.append])
    assert co.state.inner.generation == 4
    detached = [e for e in seen if e.type == ev.OBSERVER_DETACHED]
    assert detached and "tracking server gone" in detached[0].data["error"]


def test_resume_takes_a_remote_tracking_uri_only_when_named(tmp_path, monkeypatch):
    from evotrainer.run.resume_settings import settings_for_resume

    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    cfg = config_from_dict({"tracking": {"kind": "mlflow", "uri": "http://attacker:5000"}})
    where = tmp_path / "run" / "config.yaml"
    with pytest.raises(ConfigError, match="MLFLOW_TRACKING_URI=http://attacker:5000"):
        settings_for_resume(cfg, where)
    monkeypatch.setenv("MLFLOW_TRACKING_URI", "http://attacker:5000")
    assert settings_for_resume(cfg, where).tracking.uri == "http://attacker:5000"
    local = config_from_dict({"tracking": {"kind": "mlflow", "uri": "file:/x/mlruns"}})
    assert settings_for_resume(local, where).tracking.uri == "file:/x/mlruns"


# -- TensorBoard --------------------------------------------------------------------------------


def test_tensorboard_event_files_read_back(tmp_path):
    pytest.importorskip("tensorboardX", reason="needs the tensorboard extra")
    ea_mod = pytest.importorskip(
        "tensorboard.backend.event_processing.event_accumulator",
        reason="reading event files back needs the tensorboard package (dev extra)",
    )
    cfg = _cfg(tmp_path, {"kind": "tensorboard"})
    co = fake_run(cfg, tmp_path / "run")
    logdir = tmp_path / "run" / "tensorboard"
    acc = ea_mod.EventAccumulator(str(logdir), size_guidance={"scalars": 0, "tensors": 0})
    acc.Reload()
    tags = acc.Tags()
    assert "fitness/best" in tags["scalars"]
    assert [s.step for s in acc.Scalars("fitness/best")] == [0, 1, 2, 3, 4]
    assert [s.step for s in acc.Scalars("harness/real_share")] == [0, 1, 2, 3, 4]
    weights = [t for t in tags["scalars"] if t.startswith("harness/weight/")]
    assert {t.split("/")[-1] for t in weights} >= set(co.state.harness.weights)
    assert [s.step for s in acc.Scalars("outer/best_variant_s_val")] == [1]
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert acc.Scalars("final/final_s_val")[0].value == pytest.approx(summary["final_s_val"])
    texts = tags["tensors"]  # text summaries are tensors in TensorBoard's reader
    assert "config/text_summary" in texts and "best_policy/text_summary" in texts
    config_text = acc.Tensors("config/text_summary")[0].tensor_proto.string_val[0].decode()
    assert "population: 4" in config_text
    for name in ("summary.json", "best/prompt.txt", "best/policy.json", "report/index.html"):
        assert (logdir / "artifacts" / name).is_file(), name


def test_a_tracking_folder_in_a_config_file_means_the_files_folder(tmp_path):
    proj = tmp_path / "proj"
    proj.mkdir()
    for uri, want in (
        ("tb-logs", str(proj / "tb-logs")),
        ("file:mlruns", "file:" + str(proj / "mlruns")),
        ("http://127.0.0.1:5000", "http://127.0.0.1:5000"),
        ("file:///abs/mlruns", "file:///abs/mlruns"),
    ):
        (proj / "exp.yaml").write_text(f"tracking:\n  kind: mlflow\n  uri: {uri}\n")
        assert load_config(proj / "exp.yaml").tracking.uri == want
