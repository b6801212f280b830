"""Checking plain data read from a run directory before it becomes the run's state.

A checkpoint that passes its checksum may still be crafted (the checksum is not a signature), so
what it holds is checked for shape as it is loaded: ``check_shape`` compares it with the state a
fresh run of the same config writes (every value where that state has one must be of the same
kind: a number, a text, a list, an object ...), and ``typed`` builds a dataclass only from values
of its fields' annotated types. A value of the wrong kind is a TypeError naming where it is,
which ``load_state_into`` turns into a clear CheckpointError instead of a crash later in the run.
"""

from __future__ import annotations

import types
import typing
from collections.abc import Mapping, Sequence
from dataclasses import fields
from typing import Any, TypeVar

T = TypeVar("T")


def check_shape(template: Any, value: Any, where: str = "state") -> None:
    """TypeError when ``value`` is not of the kind ``template`` is at some place both have.
    None in the template means "anything" (an optional part); lists of the template's length
    are compared item by item, other lists item by item with its first item; keys only
    ``value`` has are not checked (an empty template map is a map of anything)."""
    if template is None:
        return
    if not _same_kind(template, value):
        raise TypeError(f"{where} is {_kind(value)}, expected {_kind(template)}")
    if isinstance(template, dict):
        for key, sub in template.items():
            if key in value:
                check_shape(sub, value[key], f"{where}.{key}")
    elif isinstance(template, list) and template:
        for i, item in enumerate(value):
            ref = template[i] if len(template) == len(value) else template[0]
            check_shape(ref, item, f"{where}[{i}]")


def _same_kind(template: Any, value: Any) -> bool:
    if isinstance(template, bool) or isinstance(value, bool):
        return isinstance(template, bool) and isinstance(value, bool)
    if isinstance(template, int | float):
        return isinstance(value, int | float)
    return isinstance(value, type(template))


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    names: dict[type, str] = {str: "a text", list: "a list", dict: "an object"}
    return names.get(type(value), type(value).__name__)


def typed(cls: type[T], data: Mapping[str, Any]) -> T:
    """``cls(**data)`` for a dataclass, when every value has its field's annotated type (an int
    for ``int``, a number for ``float``, a text for ``str``, an object of numbers for
    ``Mapping[str, float]`` ...); TypeError naming the field otherwise."""
    if not isinstance(data, Mapping):
        raise TypeError(f"{cls.__name__}: expected an object, got {_kind(data)}")
    hints = typing.get_type_hints(cls)
    for f in fields(cls):  # type: ignore[arg-type]
        if f.name in data and not _fits(data[f.name], hints.get(f.name, Any)):
            raise TypeError(
                f"{cls.__name__}.{f.name}: {_kind(data[f.name])} is not {hints[f.name]}"
            )
    return cls(**data)


def _fits(value: Any, hint: Any) -> bool:
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if hint is Any:
        return True
    if origin in (typing.Union, types.UnionType):
        return any(_fits(value, a) for a in args)
    if hint is type(None):
        return value is None
    if hint is bool:
        return isinstance(value, bool)
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if hint is float:
        return isinstance(value, int | float) and not isinstance(value, bool)
    if hint is str:
        return isinstance(value, str)
    if origin is not None and isinstance(origin, type) and issubclass(origin, Mapping):
        key, val = args or (Any, Any)
        return isinstance(value, Mapping) and all(
            _fits(k, key) and _fits(v, val) for k, v in value.items()
        )
    if origin in (tuple, list) or (isinstance(origin, type) and issubclass(origin, Sequence)):
        if isinstance(value, str | bytes) or not isinstance(value, list | tuple):
            return False
        item = args[0] if args else Any
        if origin is tuple and args and args[-1] is not Ellipsis:
            return len(value) == len(args) and all(map(_fits, value, args))
        return all(_fits(v, item) for v in value)
    return True  # a type this check does not know: the constructor decides
