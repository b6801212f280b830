"""Every error EvoTrainer raises on purpose derives from EvoTrainerError.

The CLI turns these into a one-paragraph message and a non-zero exit code; anything else is a bug.
"""

from __future__ import annotations


class EvoTrainerError(Exception):
    """Base class: a problem the user can act on (bad input, unreachable server, budget spent)."""


class ConfigError(EvoTrainerError):
    """A config file, --set override or API config value is invalid. The message names the key."""


class DataError(EvoTrainerError):
    """A data file is missing or malformed. The message names the file and line."""


class LLMError(EvoTrainerError):
    """A model backend failed (after retries). The message names the model spec or endpoint."""


class ModelSpecError(LLMError):
    """A model spec such as ``local:smollm2`` could not be resolved."""


class ContextOverflowError(LLMError):
    """A prompt does not fit in the model's context window."""


class BudgetExceeded(EvoTrainerError):
    """A hard cap on LLM calls or tokens was reached; work stops cleanly at the next boundary."""


class TimeLimitReached(EvoTrainerError):
    """``budget.max_wall_s`` (``--timeout``) passed: the run stops before its next generation or
    outer step, then validates and confirms its best policy as after a budget stop."""


class CheckpointError(EvoTrainerError):
    """No usable checkpoint could be read from a run directory."""


class RunDirectoryError(EvoTrainerError):
    """A run directory cannot be used: it holds another run, is in use by another process, has
    finished, or is not a directory."""


class TooManyErrors(EvoTrainerError):
    """Too many LLM answers failed (dead or broken model server, context overflow ...): the run
    stops instead of scoring failures as answers."""


class CacheError(EvoTrainerError):
    """The LLM response cache (SQLite) is corrupt, locked or unwritable. The message names the
    file and the fix."""


class RunFailed(EvoTrainerError):
    """A run ended without a policy it can return (e.g. every policy broke the constitution)."""


class MissingExtraError(ConfigError):
    """A feature needs an optional extra that is not installed (e.g. distillation needs
    ``pip install 'evotrainer[distill]'``). The message names the extra and the install command."""


class MetricError(EvoTrainerError):
    """A metric function given to the Python API (``evotrainer.optimize(metric=...)``) returned
    something that is not a score. Unlike a metric that raises on one answer (that answer scores
    0, the exception is its feedback), this stops the run: every score would be wrong."""


class DistillError(EvoTrainerError):
    """LoRA distillation could not train or export an adapter (no training pair fits the
    sequence length, the loss became NaN, the adapter file is unreadable ...)."""
