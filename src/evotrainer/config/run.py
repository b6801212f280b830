"""The whole run's configuration: typed, validated, round-trips to YAML.

Unknown keys are errors; every field has a documented default (the defaults are SPEC's: population
10, 20 tasks per policy per generation, 20 inner generations, outer loop every 5, difficulty
0.3). What depends on the task (its reward weights and switchable components, s_val's metrics,
the data files) comes from the task's plug-in (``TaskPlugin.defaults``, tasks/registry.py; the
meeting task's: weights [0.5, 0.2, 0.3] over completeness/format/action_count ...), under
whatever the config sets; ``task`` is validated by the task's own ``TaskConfig`` subclass, so a
task adds its own keys. ``load_config`` turns any validation problem into one ConfigError that
names the key.
"""

from __future__ import annotations

import contextlib
import difflib
import re
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import (
    BaseModel,
    Field,
    SerializeAsAny,
    ValidationError,
    field_validator,
    model_validator,
)

from evotrainer.config.base import DEFAULT_TASK, TaskConfig
from evotrainer.config.base import StrictModel as _Strict
from evotrainer.config.inner import InnerConfig
from evotrainer.config.llm import BudgetConfig, CacheConfig, ModelConfig, OperatorModelConfig
from evotrainer.config.outer import (
    DefencesConfig,
    HarnessConfig,
    MetaConfig,
    OuterConfig,
    ValidationConfig,
)
from evotrainer.config.services import DistillConfig, RayConfig, SurrogateConfig, TrackingConfig
from evotrainer.errors import ConfigError
from evotrainer.tasks.registry import BUILTIN, allow_import, plugin_for

__all__ = [
    "MAX_YAML_VALUES",
    "RunConfig",
    "merge_defaults",
    "load_yaml",
    "check_yaml_size",
    "apply_override",
    "set_value",
    "config_from_dict",
    "PATH_KEYS",
    "LOCAL_MODEL_NAMES",
    "resolve_paths",
    "load_config",
    "reference_markdown",
]

MAX_YAML_VALUES = 100_000  # a config holds hundreds; more comes from an alias bomb


class RunConfig(_Strict):
    seed: int = Field(0, description="master seed of every random choice")
    model: ModelConfig = Field(default_factory=ModelConfig)
    operator_model: OperatorModelConfig = Field(default_factory=OperatorModelConfig)
    runner: Literal["auto", "serial", "threads", "async", "ray"] = Field(
        "auto",
        description="how evaluations run: auto = one at a time for the embedded model, "
        "concurrent coroutines for HTTP servers; ray = backend calls on Ray workers (cache "
        "and budget stay in this process)",
    )
    ray: RayConfig = Field(default_factory=RayConfig)
    surrogate: SurrogateConfig = Field(default_factory=SurrogateConfig)
    cache: CacheConfig = Field(default_factory=CacheConfig)
    budget: BudgetConfig = Field(default_factory=BudgetConfig)
    task: SerializeAsAny[TaskConfig] = Field(default_factory=TaskConfig)
    inner: InnerConfig = Field(default_factory=InnerConfig)
    outer: OuterConfig = Field(default_factory=OuterConfig)
    harness: HarnessConfig = Field(default_factory=HarnessConfig)
    validation: ValidationConfig = Field(default_factory=ValidationConfig)
    defences: DefencesConfig = Field(default_factory=DefencesConfig)
    meta: MetaConfig = Field(default_factory=MetaConfig)
    distill: DistillConfig = Field(default_factory=DistillConfig)
    init_from: str | None = Field(
        None,
        description="warm start: an earlier run directory (same task, any model or corpus) "
        "whose archive front seeds the population and whose best harness seeds the harness",
    )
    report: bool = Field(True, description="write the HTML report when the run ends")
    data_columns: dict[str, str] = Field(
        default_factory=dict,
        description="for data in a Parquet file or a Hugging Face datasets folder "
        "(save_to_disk, one split): the task's record field <- the column holding it, e.g. "
        "{id: dialogue_id, transcript: 'dialogue:turns', references.minutes: summary} "
        "(':turns' splits 'Speaker: text' lines into turns; id: '@row' numbers the rows); a "
        "field not named is read from the column of its own name (docs/data.md; pip install "
        "'evotrainer[hf]')",
    )
    tracking: TrackingConfig = Field(default_factory=TrackingConfig)

    @model_validator(mode="before")
    @classmethod
    def _task_defaults(cls, data: Any) -> Any:
        """Under the given values, the defaults of the task ``task.name`` names."""
        if not isinstance(data, dict):
            return data
        data = {"task": {"name": DEFAULT_TASK}, **data}
        task = data["task"]
        name = task.name if isinstance(task, TaskConfig) else (task or {}).get("name")
        if not isinstance(task, TaskConfig | dict) or not isinstance(name, str | None):
            return data  # the field validation reports it
        return merge_defaults(plugin_for(name or DEFAULT_TASK).defaults, data)

    @field_validator("task", mode="before")
    @classmethod
    def _task_class(cls, value: Any) -> Any:
        """Validate ``task`` with the config class of the task it names (its own keys)."""
        if isinstance(value, TaskConfig):
            value = value.model_dump()
        if isinstance(value, dict) and isinstance(value.get("name", DEFAULT_TASK), str):
            return plugin_for(value.get("name", DEFAULT_TASK)).config.model_validate(value)
        return value

    def to_yaml(self) -> str:
        return yaml.safe_dump(self.model_dump(mode="json"), sort_keys=False)

    def distill_trials(self) -> bool:
        """Whether an outer step's trials each train a small adapter (``distill.mix_genes``
        under ``outer.trials: rerun``): the engine's distillation trial and its call estimate."""
        d, o = self.distill, self.outer
        return d.enabled and d.mix_genes and o.enabled and o.trials == "rerun"


def merge_defaults(defaults: Any, data: dict[str, Any]) -> dict[str, Any]:
    """``data`` with the sections of ``defaults`` filled in where ``data`` leaves a key out
    (a section's key that ``data`` sets replaces the default's whole value, except a group of
    keys, such as ``inner.seed_decoding``: there each key the data leaves out keeps the
    default's value)."""
    out = dict(data)
    for section, values in (defaults or {}).items():
        given = out.get(section)
        if isinstance(values, dict) and isinstance(given, dict):
            merged = {**values, **given}
            for key in _groups(section):
                if isinstance(values.get(key), dict) and isinstance(given.get(key), dict):
                    merged[key] = {**values[key], **given[key]}
            out[section] = merged
        elif isinstance(values, dict) and given is None and section not in out:
            out[section] = dict(values)
        elif section not in out:
            out[section] = values
    return out


def _groups(section: str) -> list[str]:
    """The keys of ``section`` whose values are groups of keys (a model of their own)."""
    field = RunConfig.model_fields.get(section)
    model = field.annotation if field is not None else None
    if not (isinstance(model, type) and issubclass(model, BaseModel)):
        return []
    return [
        k
        for k, f in model.model_fields.items()
        if isinstance(f.annotation, type) and issubclass(f.annotation, BaseModel)
    ]


def _format_errors(exc: ValidationError, source: str, data: Any = None) -> str:
    lines = []
    for err in exc.errors():
        key = ".".join(str(p) for p in err["loc"]) or "(top level)"
        msg = err["msg"]
        if err["type"] == "extra_forbidden":
            msg = "unknown key" + did_you_mean(tuple(str(p) for p in err["loc"]), data)
        lines.append(f"{key}: {msg}")
    return f"invalid config ({source}):\n  " + "\n  ".join(lines)


def did_you_mean(loc: tuple[str, ...], data: Any = None) -> str:
    """``"; did you mean inner.generations?"`` for an unknown key: the closest key of its own
    section (difflib), else the same key in another section; "" when nothing is close."""
    *section, name = loc
    keys = _keys_of(_model_at(tuple(section), data))
    close = difflib.get_close_matches(name, keys, n=1, cutoff=0.6)
    if close:
        return f"; did you mean {'.'.join([*section, close[0]])}?"
    if section:  # a known key in the wrong section: budget.max_calls written under inner
        elsewhere = [
            f"{other}.{name}"
            for other in RunConfig.model_fields
            if name in _keys_of(_model_at((other,), data))
        ]
        if elsewhere:
            return f"; did you mean {' or '.join(elsewhere)}?"
    return ""


def _model_at(path: tuple[str, ...], data: Any) -> type[BaseModel] | None:
    """The config model of the section at ``path`` (``task``: the named task's own class)."""
    model: type[BaseModel] | None = RunConfig
    for i, part in enumerate(path):
        field = model.model_fields.get(part) if model is not None else None
        if field is None:
            return None
        model = field.annotation if isinstance(field.annotation, type) else None
        if model is not None and not issubclass(model, BaseModel):
            return None
        if i == 0 and part == "task":
            name = data.get("task", {}).get("name") if isinstance(data, dict) else None
            with contextlib.suppress(ConfigError, AttributeError):
                model = plugin_for(name if isinstance(name, str) else DEFAULT_TASK).config
    return model


def _keys_of(model: type[BaseModel] | None) -> list[str]:
    return list(model.model_fields) if model is not None else []


class DuplicateKey(yaml.YAMLError):
    """A key written twice in one YAML mapping (YAML forbids it; PyYAML keeps the last)."""


class _StrictLoader(yaml.SafeLoader):
    """``yaml.safe_load``'s loader, refusing a key written twice in one mapping (a merge
    ``<<: *anchor`` may still be overridden by a key written out)."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: dict[Any, int] = {}
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue
            key = self.construct_object(key_node, deep=True)
            line = key_node.start_mark.line + 1
            try:
                first = seen.get(key)
                seen[key] = line
            except TypeError:
                continue  # an unhashable key: construct_mapping says so below
            if first is not None:
                raise DuplicateKey(
                    f"gives the key {key!r} twice (line {first} and line {line}); YAML allows "
                    "a key once in a mapping, and which one would count is a guess: remove one"
                )
        return super().construct_mapping(node, deep)


_StrictLoader.add_constructor("tag:yaml.org,2002:map", _StrictLoader.construct_yaml_map)


def strict_yaml(text: str) -> Any:
    """``yaml.safe_load`` that raises DuplicateKey for a key written twice in one mapping."""
    return yaml.load(text, Loader=_StrictLoader)  # noqa: S506 - a SafeLoader subclass


def load_yaml(text: str, source: str) -> Any:
    """``yaml.safe_load`` for configs: ConfigError naming ``source`` for text that is not YAML,
    for a key written twice in one mapping (naming it and its lines), and for YAML that would
    blow up once used (an alias bomb, a value that contains itself): ``check_yaml_size``."""
    try:
        data = strict_yaml(text)
    except DuplicateKey as exc:
        raise ConfigError(f"{source}: {exc}") from None
    except (yaml.YAMLError, ValueError, RecursionError) as exc:
        raise ConfigError(f"{source}: not valid YAML: {exc}") from None
    check_yaml_size(data, source)
    return data


def check_yaml_size(value: Any, source: str) -> None:
    """Refuse a loaded YAML value that aliases expand to more than MAX_YAML_VALUES values, or
    that refers to itself. PyYAML shares an anchored value between its aliases, so loading is
    quick, but whatever later copies or serialises the config (a run's config.yaml, the cache
    key of ``model.extra_body``) would expand it without end. Counted once per distinct value."""
    sizes: dict[int, int] = {}
    open_: set[int] = set()

    def size(v: Any) -> int:
        if not isinstance(v, dict | list):
            return 1
        if id(v) in sizes:
            return sizes[id(v)]
        if id(v) in open_:
            raise ConfigError(f"{source}: a YAML alias refers to itself (*alias inside &anchor)")
        open_.add(id(v))
        parts = [*v.keys(), *v.values()] if isinstance(v, dict) else v
        n = 1 + sum(size(x) for x in parts)
        open_.discard(id(v))
        if n > MAX_YAML_VALUES:
            raise ConfigError(
                f"{source}: the YAML expands through its aliases (&anchor / *alias) to more "
                f"than {MAX_YAML_VALUES:,} values; a config needs far fewer (an alias bomb?)"
            )
        sizes[id(v)] = n
        return n

    try:
        size(value)
    except RecursionError:
        raise ConfigError(f"{source}: the YAML is nested too deeply") from None


def _parse_value(raw: str) -> Any:
    """A --set value as YAML, else the text as written (DuplicateKey passes through)."""
    try:
        return strict_yaml(raw)
    except DuplicateKey:
        raise
    except (yaml.YAMLError, ValueError, RecursionError):
        return raw


def apply_override(data: dict[str, Any], assignment: str) -> None:
    """Apply one ``key.sub=value`` override (value parsed as YAML) to a nested dict."""
    if "=" not in assignment:
        raise ConfigError(f"--set expects key=value, got {assignment!r}")
    key, raw = assignment.split("=", 1)
    try:
        value = _parse_value(raw)
    except DuplicateKey as exc:
        raise ConfigError(f"--set {key.strip()}: {exc}") from None
    check_yaml_size(value, f"--set {key.strip()}")
    set_value(data, key, value)


def set_value(data: dict[str, Any], key: str, value: Any) -> None:
    """Set ``key.sub`` in a nested dict to ``value`` as it is (no YAML parsing)."""
    parts = key.strip().split(".")
    if not all(parts):
        raise ConfigError(f"--set {key!r}: empty key")
    node = data
    for p in parts[:-1]:
        child = node.setdefault(p, {})
        if not isinstance(child, dict):
            raise ConfigError(f"--set {key}: {p!r} is not a section")
        node = child
    node[parts[-1]] = value


def config_from_dict(data: dict[str, Any], source: str = "config") -> RunConfig:
    try:
        return RunConfig.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(_format_errors(exc, source, data)) from None


# the keys that hold a file or folder name: relative values in a config file mean the config
# file's folder (``resolve_paths``); ``model.spec`` only for a ``local:`` model file
PATH_KEYS: list[tuple[str, ...]] = [
    ("validation", "data"),
    ("harness", "real_data"),
    ("defences", "terminal_data"),
    ("cache", "path"),
    ("init_from",),
    ("model", "spec"),
    ("operator_model", "spec"),
    ("tracking", "uri"),  # a folder or file: URI; a server's URL is left as it is
    ("task", "name"),  # only a plug-in named by its file: path/to/tasks.py:PLUGIN
]
LOCAL_MODEL_NAMES = re.compile(r"^smollm2(-[a-z0-9_]+)?$")  # local:<name>: a model, not a file


def resolve_paths(data: dict[str, Any], folder: Path) -> dict[str, Any]:
    """``data`` (a config file's contents) with the relative paths under PATH_KEYS made
    absolute against ``folder`` (the config file's): ``evotrainer run -c proj/exp.yaml`` reads
    the data ``exp.yaml`` names next to it, from whatever folder it is started. Values that are
    not strings are left for validation to report."""
    out = dict(data)
    for keys in PATH_KEYS:
        node: Any = out
        for k in keys[:-1]:
            child = node.get(k) if isinstance(node, dict) else None
            if not isinstance(child, dict):
                node = None
                break
            node[k] = child = dict(child)  # never change the caller's dict
            node = child
        if not isinstance(node, dict) or not isinstance(node.get(keys[-1]), str):
            continue
        value = node[keys[-1]]
        if keys[-1] == "spec":
            kind, sep, rest = value.strip().partition(":")
            if kind == "local" and sep and rest and not LOCAL_MODEL_NAMES.match(rest):
                node[keys[-1]] = f"local:{_against(rest, folder)}"
        elif keys == ("tracking", "uri"):
            if "://" not in value and value.strip():
                file = value.startswith("file:")
                where = _against(value.removeprefix("file:"), folder)
                node[keys[-1]] = f"file:{where}" if file else where
        elif keys == ("task", "name"):
            module, sep, attr = value.rpartition(":")
            if sep and (module.endswith(".py") or "/" in module):
                node[keys[-1]] = f"{_against(module, folder)}:{attr}"
        elif value.strip():
            node[keys[-1]] = _against(value, folder)
    return out


def _against(value: str, folder: Path) -> str:
    path = Path(value).expanduser()
    return str(path if path.is_absolute() else (folder / path).resolve())


def load_config(
    path: str | Path | None = None,
    overrides: list[str] | None = None,
    values: dict[str, Any] | None = None,
    base: RunConfig | None = None,
) -> RunConfig:
    """Read a YAML config (or start from ``base``, a config already checked such as a run
    directory's, or from the defaults; relative paths in the file mean its folder:
    ``resolve_paths``), apply ``--set`` overrides (values parsed as YAML; paths relative
    to the current directory, like any command-line value), then ``values``
    (``{"validation.data": "meet #2.jsonl"}``: taken as they are, for options such as
    ``--val-data`` whose value is a file name or a model name, never YAML)."""
    data: dict[str, Any] = base.model_dump(mode="json") if base is not None else {}
    source = "the run's config" if base is not None else "defaults"
    if path is not None:
        p = Path(path)
        if not p.is_file():
            raise ConfigError(f"config file not found: {p}")
        try:
            text = p.read_text(encoding="utf-8")
        except UnicodeDecodeError as exc:
            raise ConfigError(f"{p}: not valid YAML: {exc}") from None
        loaded = load_yaml(text, str(p)) or {}
        if not isinstance(loaded, dict):
            raise ConfigError(f"{p}: the top level must be a mapping of sections")
        data, source = resolve_paths(loaded, p.resolve().parent), str(p)
    for assignment in overrides or []:
        apply_override(data, assignment)
    if overrides:
        source += " + --set " + " ".join(overrides)
    for key, value in (values or {}).items():
        set_value(data, key, value)
        source += f" + {key}={value!r}"
    task = data.get("task")
    name = task.get("name") if isinstance(task, dict) else None
    if isinstance(name, str) and (base is None or name != base.task.name):
        allow_import(name)  # a module:ATTR plug-in the user named (never a run's)
    return config_from_dict(data, source)


def reference_markdown() -> str:
    """The configuration reference (docs/config.md is this text; a test keeps it current)."""
    lines = [
        "# Configuration reference",
        "",
        "Generated from `evotrainer/config/` by `evotrainer config --markdown`. A YAML config",
        "holds any subset of these sections; `--set section.key=value` overrides one key.",
        "Unknown keys are errors. `evotrainer config` prints the full default YAML.",
        "",
        f"Defaults are those of the default task ({DEFAULT_TASK}); another task sets its own "
        "where it needs them (listed at the end, with its `task` keys).",
        "",
    ]
    defaults = RunConfig()
    top = RunConfig.model_fields
    scalars = [(n, f) for n, f in top.items() if not _is_section(f.annotation)]
    lines += ["## (top level)", "", "| key | default | meaning |", "|---|---|---|"]
    for name, f in scalars:
        lines.append(f"| `{name}` | `{_default_repr(f)}` | {_cell(f.description)} |")
    for name, f in top.items():
        if not _is_section(f.annotation):
            continue
        section = getattr(defaults, name)
        model = type(section)
        lines += ["", f"## {name}", "", "| key | default | meaning |", "|---|---|---|"]
        for sub, sf in model.model_fields.items():
            part = getattr(section, sub)
            if isinstance(part, BaseModel):  # a group of keys: each of its own
                lines.append(f"| `{name}.{sub}` | | {_cell(sf.description)} |")
                for key, kf in type(part).model_fields.items():
                    value = _value_repr(getattr(part, key))
                    lines.append(f"| `{name}.{sub}.{key}` | `{value}` | {_cell(kf.description)} |")
                continue
            value = _value_repr(getattr(section, sub))
            lines.append(f"| `{name}.{sub}` | `{value}` | {_cell(sf.description)} |")
    for task in sorted(set(BUILTIN) - {DEFAULT_TASK}):
        plugin = plugin_for(task)
        cfg = config_from_dict({"task": {"name": task}})
        lines += ["", f"## task: {task}", "", "| key | default | meaning |", "|---|---|---|"]
        for sub, sf in plugin.config.model_fields.items():
            value = _value_repr(getattr(cfg.task, sub))
            lines.append(f"| `task.{sub}` | `{value}` | {_cell(sf.description)} |")
        for section, values in plugin.defaults.items():
            for key in values:
                value = _value_repr(getattr(getattr(cfg, section), key))
                lines.append(f"| `{section}.{key}` | `{value}` | the {task} task's default |")
    return "\n".join(lines) + "\n"


def _cell(text: str | None) -> str:
    return (text or "").replace("|", "\\|")


def _is_section(annotation: Any) -> bool:
    return isinstance(annotation, type) and issubclass(annotation, BaseModel)


def _default_repr(f: Any) -> str:
    return _value_repr(f.default_factory() if f.default_factory is not None else f.default)


def _value_repr(value: Any) -> str:
    if isinstance(value, BaseModel):
        return "{...}"
    if isinstance(value, tuple):
        value = list(value)
    return yaml.safe_dump(value, default_flow_style=True).strip().removesuffix("...").strip()
