"""Task plug-ins by name. Register your own with ``register_task("name", factory)``."""

from __future__ import annotations

from collections.abc import Callable

from evotrainer.config import TaskConfig
from evotrainer.errors import ConfigError
from evotrainer.tasks.base import Task

_FACTORIES: dict[str, Callable[[TaskConfig], Task]] = {}


def register_task(name: str, factory: Callable[[TaskConfig], Task]) -> None:
    _FACTORIES[name] = factory


def _meetings(cfg: TaskConfig) -> Task:
    from evotrainer.tasks.meetings.task import MeetingTask

    return MeetingTask(
        max_input_tokens=cfg.max_input_tokens,
        truncation=cfg.truncation,
        hostile_share=cfg.hostile_share,
    )


register_task("meetings", _meetings)


def build_task(cfg: TaskConfig) -> Task:
    try:
        return _FACTORIES[cfg.name](cfg)
    except KeyError:
        known = sorted(_FACTORIES)
        raise ConfigError(f"task.name: unknown task {cfg.name!r}; known: {known}") from None
