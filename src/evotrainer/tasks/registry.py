"""Task plug-ins by name.

A task is registered as a ``TaskPlugin``: how to build it from its config, its config class (a
``TaskConfig`` subclass holding the task's own keys) and the run-config values it needs by
default (its reward weights, s_val's metrics, its data files). Plug-ins are found, in this
order, among those registered at run time (``register_task``), in the Python entry point group
``evotrainer.tasks`` (how an installed package adds a task without editing EvoTrainer; the
built-in tasks are declared there too), and among the built-in ones (for a source checkout that
was never installed). An entry point names a ``TaskPlugin`` or a function that returns one:

    [project.entry-points."evotrainer.tasks"]
    mytask = "mypackage.task:PLUGIN"

Without packaging, a task name may be ``module:ATTR`` (``my_pkg.tasks:PLUGIN``, imported from
the current folder or the path) or ``path/to/file.py:ATTR``: ``--task my_tasks:PLUGIN``. Such a
name imports and runs code, so it is imported only when the user names it (``allow_import``:
the command line's ``--task``, a config file read by ``load_config``, or ``register_task``);
a name read from elsewhere (a run directory's config.yaml) is refused with the option that
allows it.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

from evotrainer.config.base import TaskConfig
from evotrainer.errors import ConfigError

# what a plug-in builds: a Task (tasks/base.py, a layer above this registry: config validates
# the task section through it)
Task = Any

ENTRY_POINT_GROUP = "evotrainer.tasks"
BUILTIN = {
    "meetings": "evotrainer.tasks.meetings.plugin:PLUGIN",
    "code": "evotrainer.tasks.code.plugin:PLUGIN",
    "dialogue": "evotrainer.tasks.dialogue.plugin:PLUGIN",
}


@dataclass(frozen=True)
class TaskWords:
    """How the console and the report name a task's instances, its outputs and their
    references ("meetings", "minutes", "human reference")."""

    instances: str = "instances"
    output: str = "output"
    reference: str = "reference"


@dataclass(frozen=True)
class TaskPlugin:
    """``build(task_config) -> Task``; ``config``: the class that validates the ``task``
    section; ``defaults``: run-config sections -> keys -> values the task needs unless the
    config sets them (e.g. ``{"harness": {"weights": {...}}, "outer": {"s_val_weights": ...}}``)."""

    name: str
    build: Callable[[Any], Task]
    config: type[TaskConfig] = TaskConfig
    defaults: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    words: TaskWords = TaskWords()


_PLUGINS: dict[str, TaskPlugin] = {}
_IMPORTABLE: set[str] = set()  # module:ATTR names the user allowed to import (allow_import)


def is_import_name(name: str) -> bool:
    """``module:ATTR`` or ``file.py:ATTR``: a task plug-in named by where its code is."""
    module, sep, attr = name.rpartition(":")
    return bool(sep and module and attr.isidentifier())


def allow_import(name: str) -> None:
    """Let ``plugin_for`` import the plug-in ``name`` (``module:ATTR``) names: called for names
    the user gave (``--task``, their own config file), never for names read from a run."""
    if is_import_name(name):
        _IMPORTABLE.add(name)


def register_task(
    name: str | TaskPlugin,
    factory: Callable[[Any], Task] | None = None,
    *,
    config: type[TaskConfig] = TaskConfig,
    defaults: Mapping[str, Mapping[str, Any]] | None = None,
) -> TaskPlugin:
    """Register a task at run time: ``register_task(plugin)`` or ``register_task("name",
    factory, config=..., defaults=...)``. A later registration of a name replaces it."""
    if isinstance(name, TaskPlugin):
        plugin = name
    else:
        if factory is None:
            raise TypeError("register_task(name, factory): the factory is missing")
        plugin = TaskPlugin(name, factory, config, dict(defaults or {}))
    _PLUGINS[plugin.name] = plugin
    return plugin


def _as_plugin(obj: Any, origin: str) -> TaskPlugin:
    if callable(obj) and not isinstance(obj, TaskPlugin):
        obj = obj()
    if not isinstance(obj, TaskPlugin):
        raise ConfigError(f"task plug-in {origin}: expected a TaskPlugin, got {type(obj).__name__}")
    return obj


def _from_entry_points(name: str) -> TaskPlugin | None:
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        if ep.name == name:
            try:
                obj = ep.load()
            except Exception as exc:  # noqa: BLE001 - a broken plug-in package is a user error
                raise ConfigError(
                    f"task {name!r}: the entry point {ep.value!r} could not be loaded: "
                    f"{type(exc).__name__}: {exc}"
                ) from None
            return _as_plugin(obj, f"{name!r} ({ep.value})")
    return None


def _builtin(name: str) -> TaskPlugin | None:
    target = BUILTIN.get(name)
    if target is None:
        return None
    module, attr = target.split(":")
    return _as_plugin(getattr(importlib.import_module(module), attr), target)


def known_tasks() -> list[str]:
    names = set(_PLUGINS) | set(BUILTIN)
    names |= {ep.name for ep in entry_points(group=ENTRY_POINT_GROUP)}
    return sorted(names)


def plugin_for(name: str) -> TaskPlugin:
    """The plug-in registered under ``name`` (ConfigError naming the known tasks if none)."""
    plugin = _PLUGINS.get(name) or _from_entry_points(name) or _builtin(name)
    if plugin is None and is_import_name(name):
        plugin = _imported(name)
    if plugin is None:
        raise ConfigError(f"task.name: unknown task {name!r}; known: {known_tasks()}")
    _PLUGINS.setdefault(name, plugin)
    return plugin


def _imported(name: str) -> TaskPlugin:
    """The plug-in ``module:ATTR`` or ``file.py:ATTR`` names, imported (only when allowed)."""
    if name not in _IMPORTABLE:
        raise ConfigError(
            f"task.name {name!r} names a module to import, which runs its code: it is imported "
            f"only when you name it (`--task {name}` on the command line, or your own config "
            "file), never because a run directory's config.yaml names it"
        )
    module_name, _, attr = name.rpartition(":")
    try:
        if module_name.endswith(".py") or "/" in module_name:
            module = _module_from_file(Path(module_name))
        else:
            if "" not in sys.path and os.getcwd() not in sys.path:
                sys.path.insert(0, os.getcwd())  # like python -m: the current folder's modules
            module = importlib.import_module(module_name)
    except Exception as exc:  # noqa: BLE001 - the user's module: say what failed
        raise ConfigError(
            f"task {name!r}: the module {module_name!r} could not be imported: "
            f"{type(exc).__name__}: {exc}"
        ) from None
    if not hasattr(module, attr):
        raise ConfigError(f"task {name!r}: the module {module_name!r} has no {attr!r}")
    plugin = _as_plugin(getattr(module, attr), name)
    _PLUGINS.setdefault(plugin.name, plugin)  # the task's own name finds it too
    return plugin


def _module_from_file(path: Path) -> Any:
    if not path.is_file():
        raise FileNotFoundError(f"no such file: {path}")
    module_name = f"evotrainer_task_{path.stem}"
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"{path} is not a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module  # dataclasses and pickling look their module up
    spec.loader.exec_module(module)
    return module


def build_task(cfg: TaskConfig) -> Task:
    plugin = plugin_for(cfg.name)
    if not isinstance(cfg, plugin.config):
        cfg = plugin.config.model_validate(cfg.model_dump())
    return plugin.build(cfg)


def task_default(name: str, section: str, key: str) -> Any:
    """The default a task's plug-in gives ``section.key`` (None when it gives none, or when no
    plug-in is registered under ``name``, e.g. a task object handed to the engine directly)."""
    try:
        plugin = plugin_for(name)
    except ConfigError:
        return None
    return (plugin.defaults.get(section) or {}).get(key)


def task_words(name: str) -> TaskWords:
    """The words of the task ``name`` names (the generic ones when no plug-in is registered
    under it, or when it is a module that may not be imported: a run directory's task)."""
    try:
        return plugin_for(name).words
    except ConfigError:
        return TaskWords()
