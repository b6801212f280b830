"""Task plug-ins: the "write your own task" page runs as written, a package registers a task
through the ``evotrainer.tasks`` entry point, each task validates its own config keys, and
``BaseTask`` supplies the optional parts."""

from __future__ import annotations

import re
import sys
import textwrap
import types

import pytest

from evotrainer.config import config_from_dict
from evotrainer.errors import ConfigError
from evotrainer.tasks import registry
from evotrainer.tasks.base import OUTPUT_RULES, BaseTask
from evotrainer.tasks.registry import build_task, known_tasks, plugin_for
from tests.support import REPO

DOC = REPO / "docs" / "write-your-own-task.md"


@pytest.fixture
def clean_registry(monkeypatch):
    monkeypatch.setattr(registry, "_PLUGINS", dict(registry._PLUGINS))


def test_the_write_your_own_task_page_runs(clean_registry, capsys, monkeypatch):
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(), re.S)
    assert len(blocks) >= 5
    module = types.ModuleType("sums_example")  # dataclasses look their module up
    monkeypatch.setitem(sys.modules, "sums_example", module)
    exec(compile("\n".join(blocks), str(DOC), "exec"), module.__dict__)
    assert "sums" in known_tasks()
    assert capsys.readouterr().out.startswith("1.0")


def _install(tmp_path, monkeypatch, body: str, name: str = "shapes") -> None:
    """A package on sys.path with a dist-info that declares an evotrainer.tasks entry point."""
    module = f"{name}_pkg"
    (tmp_path / f"{module}.py").write_text(textwrap.dedent(body))
    info = tmp_path / f"{module}-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {module}\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[evotrainer.tasks]\n{name} = {module}:PLUGIN\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, module, raising=False)


def test_an_installed_package_adds_a_task_through_the_entry_point(
    tmp_path, monkeypatch, clean_registry
):
    _install(
        tmp_path,
        monkeypatch,
        """
        from pydantic import Field
        from evotrainer.config import TaskConfig
        from evotrainer.tasks.meetings.task import MeetingTask
        from evotrainer.tasks.registry import TaskPlugin

        class ShapesConfig(TaskConfig):
            corners: int = Field(4, ge=3)

        class ShapesTask(MeetingTask):
            name = "shapes"

        PLUGIN = TaskPlugin(
            "shapes",
            lambda cfg: ShapesTask(),
            ShapesConfig,
            {"outer": {"s_val_weights": {"rougeL": 1.0}}},
        )
        """,
    )
    assert "shapes" in known_tasks()
    cfg = config_from_dict({"task": {"name": "shapes", "corners": 5}})
    assert cfg.task.corners == 5 and cfg.outer.s_val_weights == {"rougeL": 1.0}
    assert build_task(cfg.task).name == "shapes"
    with pytest.raises(ConfigError, match="task.corners"):
        config_from_dict({"task": {"name": "shapes", "corners": 2}})


def test_a_broken_plug_in_is_a_clear_error(tmp_path, monkeypatch, clean_registry):
    _install(tmp_path, monkeypatch, "raise RuntimeError('half installed')\n", name="broken")
    with pytest.raises(ConfigError, match="broken.*half installed"):
        plugin_for("broken")


def test_each_task_validates_its_own_keys():
    with pytest.raises(ConfigError, match="task.hostile_share: unknown key"):
        config_from_dict({"task": {"name": "code", "hostile_share": 0.5}})
    with pytest.raises(ConfigError, match="task.turns: unknown key"):
        config_from_dict({"task": {"turns": 2}})
    with pytest.raises(ConfigError, match=r"unknown task 'nope'; known: .*code.*meetings"):
        config_from_dict({"task": {"name": "nope"}})
    cfg = config_from_dict({"task": {"name": "code"}, "harness": {"weights": {"lint": 1.0}}})
    assert cfg.harness.weights == {"lint": 1.0}  # a value the config sets wins


def test_base_task_defaults():
    class Minimal(BaseTask):
        name = "minimal"

    t = Minimal()
    inst = type("I", (), {"payload": "plain text"})()
    assert t.input_text(inst) == "plain text" and t.reference_text(inst) is None
    assert t.hostile_instances(3, 0) == [] and t.constitution_rules() == OUTPUT_RULES
    assert t.output_templates() == () and t.feedback_edits() == {}
    assert not t.vocabulary().phrases and t.harness_hints().proxy_of("x") is None
    assert t.harness_hints().proxy_of("ref_rougeL") == ("rougeL", 0.12)


def test_a_plug_in_without_reward_weights_is_a_clear_error(clean_registry, monkeypatch):
    """The page's task with no harness.weights in its defaults: a ConfigError naming the key
    and the task's components, not a ValueError from deep inside the harness."""
    from evotrainer.errors import ConfigError

    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(), re.S)
    source = "\n".join(blocks)
    weights = '"weights": {"correct": 0.8, "brief": 0.2}, '
    assert weights in source
    module = types.ModuleType("sums_example")
    monkeypatch.setitem(sys.modules, "sums_example", module)
    with pytest.raises(ConfigError, match=r"harness.weights: .*\['brief', 'correct'\]"):
        exec(compile(source.replace(weights, ""), str(DOC), "exec"), module.__dict__)
