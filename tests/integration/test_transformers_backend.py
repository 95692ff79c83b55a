"""The transformers backend on a tiny random Gemma 3 image-text model built in the test."""

from __future__ import annotations

import pytest
from PIL import Image

from docgemma.agent.schemas import ImageFindingsOutput, ResultAssessment, intent_schema
from docgemma.llm.base import LLMOutputError, Message
from docgemma.llm.transformers_backend import TransformersLLM, load_transformers_llm
from docgemma.tools.registry import default_registry
from tests.tiny_gemma import build_tiny_gemma3

pytestmark = [pytest.mark.slow, pytest.mark.floors]
MESSAGES = [Message(role="system", content="Classify the request."), Message(role="user", content="What is hypertension?")]


@pytest.fixture(scope="module")
def llm(tmp_path_factory: pytest.TempPathFactory) -> TransformersLLM:
    directory = build_tiny_gemma3(tmp_path_factory.mktemp("tiny-gemma3"))
    return load_transformers_llm(str(directory))


def test_loads_as_image_text_model_without_quantization_on_cpu(llm: TransformersLLM) -> None:
    assert llm.supports_images and llm.device == "cpu" and llm.quantization is None
    assert type(llm.model).__name__ == "Gemma3ForConditionalGeneration"


#: Enough tokens for the longest output the schemas allow: the random model fills every string to its maximum length
#: (140 characters for a summary, 4 × 90 for findings) and a character can take two byte-level tokens. With 256,
#: whether it finished depended on the random weights, i.e. on which tests had drawn from the generator before.
ROOM = 1024


def test_constrained_json_is_schema_valid_and_constraints_are_reused(llm: TransformersLLM) -> None:
    schema = intent_schema(default_registry().names)
    out = llm.generate_json(MESSAGES, schema, temperature=0.0, max_tokens=ROOM)
    assert out.intent in ("DIRECT", "TOOL_NEEDED")  # type: ignore[attr-defined]
    first = llm.constraints.matcher(schema)
    llm.generate_json(MESSAGES, schema, temperature=0.0, max_tokens=ROOM)
    assert llm.constraints.matcher(schema) is first and list(llm.constraint_build_s) == ["IntentClassification"]


def test_image_goes_through_the_processor(llm: TransformersLLM) -> None:
    image = Image.new("RGB", (100, 80), (120, 30, 30))
    out = llm.generate_json(MESSAGES, ImageFindingsOutput, temperature=0.0, max_tokens=ROOM, images=[image])
    assert 1 <= len(out.findings) <= 4 and out.confidence in ("high", "medium", "low")
    prompt = llm.render_prompt(MESSAGES, n_images=1)
    assert prompt.count("<start_of_image>") == 1


def test_capped_generation_raises_output_error(llm: TransformersLLM) -> None:
    with pytest.raises(LLMOutputError):
        llm.generate_json(MESSAGES, ResultAssessment, temperature=0.0, max_tokens=3)


def test_text_streams_and_tokens_are_counted(llm: TransformersLLM) -> None:
    chunks = list(llm.generate_text(MESSAGES, temperature=0.5, max_tokens=8))
    assert isinstance(chunks, list) and all(isinstance(c, str) for c in chunks)
    assert llm.count_tokens(MESSAGES) > llm.count_tokens(MESSAGES[1:]) > 0
