"""Serving distilled LoRA adapters (engine/distill_step.py): one metered, cached client per
adapter, made on first use from the run directory's ``adapters/`` (its file verified by hash
before llama.cpp loads it); and the start-up check that distillation can run here."""

from __future__ import annotations

import threading
from pathlib import Path

from evotrainer.config import RunConfig
from evotrainer.distill import extra, serve
from evotrainer.errors import ConfigError
from evotrainer.llm.adapter_file import adapter_file_name
from evotrainer.llm.base import LLMClient
from evotrainer.llm.budget import Budget
from evotrainer.llm.spec import build_stack


class AdapterServer:
    """The clients of a run's adapters (``Evaluator.adapters`` asks it for one by sha256).
    ``run_dir``: the run's directory once ``run()`` opened it; ``root``: the one a resume reads
    adapters from before that."""

    def __init__(self, cfg: RunConfig, budget: Budget) -> None:
        self.cfg = cfg
        self.budget = budget
        self.run_dir: Path | None = None
        self.root: Path | None = None
        self._clients: dict[str, LLMClient] = {}
        self._lock = threading.Lock()

    def write_to(self, run_dir: Path) -> None:
        """The run's directory, once ``run()`` opened it: adapters are written and read there."""
        self.run_dir = run_dir

    def read_from(self, root: Path) -> None:
        """Where a resume reads adapters from before ``run()`` opens the directory."""
        self.root = root

    def directory(self) -> Path:
        root = self.run_dir or self.root
        if root is None:
            raise ConfigError("distillation writes its adapters to a run directory: pass one")
        return Path(root) / "adapters"

    def __call__(self, sha: str) -> LLMClient:
        """The metered, cached client of adapter ``sha`` (one llama.cpp model per adapter,
        made on first use; its file is verified by hash before llama.cpp loads it)."""
        with self._lock:
            client = self._clients.get(sha)
            if client is None:
                path = self.directory() / adapter_file_name(sha)
                backend = serve.embedded_with_adapter(path, sha, self.cfg.model, self.cfg.seed)
                stack = build_stack(backend, self.cfg.cache, self.budget)
                client = self._clients[sha] = stack.client
            return client


def check_distill(cfg: RunConfig) -> None:
    """Refuse at start-up what distillation cannot do here (the missing extra, a model
    server instead of the embedded model)."""
    if not cfg.distill.enabled:
        return
    if not extra.installed():  # cheap at start-up; the imports happen when it trains
        extra.require("distillation (distill.enabled)")
    if not cfg.model.spec.startswith("local:"):
        raise ConfigError(
            "distill.enabled needs the embedded model (model.spec local:...): the adapter "
            f"is trained on and served by it, not by {cfg.model.spec!r}"
        )
