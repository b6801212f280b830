from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch):
    """No test writes to the user's ~/.cache/evotrainer."""
    monkeypatch.setenv("EVOTRAINER_CACHE_DIR", str(tmp_path_factory.mktemp("llmcache")))
