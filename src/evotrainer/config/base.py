"""What every config section is built on, apart from the run config that gathers them
(config/run.py): the strict base model and the ``task`` section's class, ``TaskConfig``. The task
registry (tasks/registry.py) needs ``TaskConfig`` and the run config needs the registry (a
task's defaults and config class), so ``TaskConfig`` lives here, below both."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

DEFAULT_TASK = "meetings"


class StrictModel(BaseModel):
    # NaN and infinities are refused everywhere (a NaN weight passes every "< 0" check)
    model_config = ConfigDict(extra="forbid", validate_assignment=True, allow_inf_nan=False)


class TaskConfig(StrictModel):
    """The ``task`` section. A task plug-in subclasses it with its own keys (the meeting task's
    are in tasks/meetings/plugin.py, the code gym's in tasks/code/plugin.py); the run config
    validates ``task`` with the class of the task ``name`` names."""

    name: str = Field(DEFAULT_TASK, description="the task plug-in (see tasks/registry.py)")

    def truncation_note(self) -> str:
        """How over-long inputs are cut, for the validation results ("" when never)."""
        return ""

    def executable_settings(self) -> list[str]:
        """``key=value`` of each setting here that lets code run with less confinement (e.g. a
        weaker sandbox): ``resume`` refuses them from a run directory's config.yaml
        (run/resume_settings.py). None by default; a task with such settings lists them."""
        return []
