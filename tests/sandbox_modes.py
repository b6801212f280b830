"""The sandbox modes this machine offers, for tests that run in each of them.

Safe: every bubblewrap variant that works here (with its own user namespace; as root also the
variant without one). Unsafe: the opt-in mechanisms that work here. A test of the isolation
runs its probe in every safe mode with the audit hook switched off (the isolation alone must
hold); a test of the detection layer runs it in every mode with the hook on.
"""

from __future__ import annotations

import os

import pytest

from evotrainer.tasks.code import seccomp
from evotrainer.tasks.code.isolation import Isolation, SandboxUnavailable, _try, detect
from evotrainer.tasks.code.sandbox import Limits, Sandbox

FAST = Limits(call_s=1.0, wall_s=8.0, memory_mb=256)


def _safe() -> list[Isolation]:
    filt = seccomp.program() is not None
    variants = [Isolation("bwrap", True, filt)]
    if os.geteuid() == 0:
        variants.append(Isolation("bwrap", False, filt))
    try:
        detect("bwrap")
    except SandboxUnavailable:
        return []
    return [v for v in variants if _try(v)]


def _unsafe() -> list[Isolation]:
    out = []
    for name in ("unsafe-unshare", "unsafe-process"):
        try:
            out.append(detect(name))
        except SandboxUnavailable:
            continue
    return out


SAFE = _safe()
UNSAFE = _unsafe()
NO_BWRAP = "bubblewrap does not work here (apt install bubblewrap; CI installs it)"


def label(iso: Isolation) -> str:
    return iso.describe().replace(" ", "_").replace(",", "")


def safe_params():
    return [pytest.param(i, id=label(i)) for i in SAFE] or [
        pytest.param(None, marks=pytest.mark.skip(reason=NO_BWRAP))
    ]


def all_params():
    return safe_params() + [pytest.param(i, id=label(i)) for i in UNSAFE]


def box(iso: Isolation, hook: bool = True, limits: Limits = FAST) -> Sandbox:
    return Sandbox(iso.mechanism, limits, audit_hook=hook, isolation=iso)
