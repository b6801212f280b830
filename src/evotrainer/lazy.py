"""Lazy package namespaces (PEP 562): a package's ``__init__`` names what it offers and the
module each name lives in, and the name is imported from there the first time it is used, so
importing the package loads none of its modules. The package root and ``evotrainer.config`` use
it. Standard library only: importing this module must stay as cheap as the packages it serves."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from importlib import import_module
from typing import Any


def lazy_namespace(
    package: str, names: Mapping[str, str], namespace: dict[str, Any]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of ``package``, whose ``names`` map each lazily
    imported name to the module that defines it; ``namespace`` is the package's ``globals()``,
    where a name is kept once imported (later lookups do not come back here)."""

    def __getattr__(name: str) -> Any:
        module = names.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(import_module(module), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted({*namespace, *names})

    return __getattr__, __dir__
