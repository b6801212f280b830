"""What ``resume`` takes from a run directory's config.yaml.

A run directory is untrusted input: anyone who could write it (a shared folder, a copied or
downloaded run) can edit its config.yaml. So a resume takes from it what the run's result
depends on, and nothing that would run code or send the run's data somewhere the user did not
name:

- **code-running settings are refused**: ``ray.runtime_env`` (``py_modules``, ``pip``,
  ``worker_process_setup_hook`` ... run code on every Ray worker) when ``runner: ray``, and any
  setting a task declares with ``TaskConfig.executable_settings`` (a weaker sandbox); where
  the run does not use them (``runner`` is not ray) they are dropped;
- **endpoints must be named on the command line**: ``model.base_url`` (an ``openai:`` model
  sends every prompt, transcripts included, and ``$OPENAI_API_KEY`` there) and ``ray.address``
  (a Ray cluster runs the workers and sends back pickled results) are taken only when they are
  the environment's (``$OPENAI_BASE_URL``, ``$RAY_ADDRESS``) or repeated as ``resume --base-url
  URL`` / ``--ray-address ADDRESS``; the value given there replaces config.yaml's. The same
  holds for the teacher's ``operator_model.base_url`` (``resume --operator-base-url URL``), and
  an MLflow ``tracking.uri`` that is not a local folder (it receives the config, the metrics,
  the best policy and the report) is taken only when it is ``$MLFLOW_TRACKING_URI``.
"""

from __future__ import annotations

import os
from pathlib import Path

from evotrainer.config import RunConfig
from evotrainer.errors import ConfigError


def settings_for_resume(
    config: RunConfig,
    cfg_file: Path,
    base_url: str | None = None,
    ray_address: str | None = None,
    operator_base_url: str | None = None,
) -> RunConfig:
    """``config`` (read from ``cfg_file``) as a resume may use it; ConfigError naming the key
    and what to do for a setting it refuses."""
    config = _without_code(config, cfg_file)
    config = _model_endpoint(config, cfg_file, base_url)
    config = _operator_endpoint(config, cfg_file, operator_base_url)
    _tracking_endpoint(config, cfg_file)
    return _ray_endpoint(config, cfg_file, ray_address)


def _without_code(config: RunConfig, cfg_file: Path) -> RunConfig:
    if config.ray.runtime_env and config.runner == "ray":
        raise ConfigError(
            f"{cfg_file}: ray.runtime_env is set ({', '.join(map(repr, config.ray.runtime_env))}"
            "): it runs code on every Ray worker, and a resume never takes code-running settings "
            "from a run directory. If you wrote it and the workers need it, check the file, "
            "remove the key and start the cluster with that runtime_env yourself; otherwise "
            "start a new run."
        )
    if config.ray.runtime_env:  # not used by this run: not taken
        config = config.model_copy(
            update={"ray": config.ray.model_copy(update={"runtime_env": None})}
        )
    unsafe = config.task.executable_settings()
    if unsafe:
        raise ConfigError(
            f"{cfg_file}: {', '.join(unsafe)}: a resume never takes settings that let code run "
            "with less confinement from a run directory. Start a new run with that setting "
            "if you mean it."
        )
    return config


def _model_endpoint(config: RunConfig, cfg_file: Path, given: str | None) -> RunConfig:
    model = config.model
    if not model.spec.strip().startswith("openai:"):
        recorded = None  # only openai: models use base_url: not taken
    elif given:
        recorded = given
    else:
        recorded = model.base_url
        if recorded and not _same_url(recorded, os.environ.get("OPENAI_BASE_URL")):
            raise ConfigError(
                f"{cfg_file}: model.base_url is {recorded!r}: a resume sends the run's prompts "
                "(transcripts included) and $OPENAI_API_KEY only to an endpoint you name. If "
                f"it is yours: `evotrainer resume {cfg_file.parent} --base-url {recorded}`."
            )
    if recorded == model.base_url:
        return config
    return config.model_copy(update={"model": model.model_copy(update={"base_url": recorded})})


def _operator_endpoint(config: RunConfig, cfg_file: Path, given: str | None) -> RunConfig:
    op = config.operator_model
    if not (op.spec or "").strip().startswith("openai:"):
        recorded = None  # the agent model, or an embedded one: base_url is not used
    elif given:
        recorded = given
    else:
        recorded = op.base_url
        if recorded and not _same_url(recorded, os.environ.get("OPENAI_BASE_URL")):
            raise ConfigError(
                f"{cfg_file}: operator_model.base_url is {recorded!r}: a resume sends the "
                "run's policies and feedback (quoting transcripts) and an API key only to an "
                f"endpoint you name. If it is yours: `evotrainer resume {cfg_file.parent} "
                f"--operator-base-url {recorded}`."
            )
    if recorded == op.base_url:
        return config
    return config.model_copy(
        update={"operator_model": op.model_copy(update={"base_url": recorded})}
    )


def _tracking_endpoint(config: RunConfig, cfg_file: Path) -> None:
    t = config.tracking
    if t.kind != "mlflow" or not t.uri or not _remote(t.uri):
        return
    if not _same_url(t.uri, os.environ.get("MLFLOW_TRACKING_URI")):
        raise ConfigError(
            f"{cfg_file}: tracking.uri is {t.uri!r}: a resume sends the run's config, metrics "
            "and results only to a tracking server you name. If it is yours: "
            f"MLFLOW_TRACKING_URI={t.uri} evotrainer resume {cfg_file.parent}"
        )


def _remote(uri: str) -> bool:
    scheme = uri.partition("://")[0].lower() if "://" in uri else ""
    return scheme not in ("", "file")


def _ray_endpoint(config: RunConfig, cfg_file: Path, given: str | None) -> RunConfig:
    ray = config.ray
    if config.runner != "ray":
        address = None  # not used by this run: not taken
    elif given:
        address = given
    else:
        address = ray.address
        if address and address != os.environ.get("RAY_ADDRESS"):
            raise ConfigError(
                f"{cfg_file}: ray.address is {address!r}: a resume connects only to a Ray "
                "cluster you name (it runs the workers and sends results back). If it is "
                f"yours: `evotrainer resume {cfg_file.parent} --ray-address {address}`."
            )
    if address == ray.address:
        return config
    return config.model_copy(update={"ray": ray.model_copy(update={"address": address})})


def _same_url(a: str | None, b: str | None) -> bool:
    return bool(a and b) and a.rstrip("/") == b.rstrip("/")  # type: ignore[union-attr]
