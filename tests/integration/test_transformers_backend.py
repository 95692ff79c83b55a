"""The transformers backend on a tiny random Gemma 3 image-text model built in the test."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from docgemma.agent.schemas import ResultAssessment, intent_schema
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


def test_constrained_json_is_greedy_at_zero_and_constraints_are_reused(llm: TransformersLLM) -> None:
    schema = intent_schema(default_registry().names)
    first_out = llm.generate_json(MESSAGES, schema, temperature=0.0, max_tokens=ROOM)
    first = llm.constraints.matcher(schema)
    assert llm.generate_json(MESSAGES, schema, temperature=0.0, max_tokens=ROOM) == first_out  # T=0: greedy
    assert llm.constraints.matcher(schema) is first and list(llm.constraint_build_s) == ["IntentClassification"]


class ProcessorSpy:
    """The loaded processor, recording what each call received (everything else passes through)."""

    def __init__(self, processor: Any) -> None:
        self.processor = processor
        self.calls: list[dict[str, Any]] = []

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        self.calls.append(kwargs)
        return self.processor(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.processor, name)


def test_the_tiny_model_is_the_same_whatever_drew_from_the_generator_before(tmp_path: Path) -> None:
    """Seeded (tests/tiny_gemma.py SEED): a test's outcome never depends on the tests that ran before it."""
    import torch

    first = (build_tiny_gemma3(tmp_path / "a") / "model.safetensors").read_bytes()
    torch.rand(1000)  # another test's draw
    assert (build_tiny_gemma3(tmp_path / "b") / "model.safetensors").read_bytes() == first


def test_image_goes_through_the_processor(llm: TransformersLLM, monkeypatch: pytest.MonkeyPatch) -> None:
    image = Image.new("RGB", (100, 80), (120, 30, 30))
    spy = ProcessorSpy(llm.processor)
    monkeypatch.setattr(llm, "processor", spy)
    generated: list[Any] = []
    generate = llm._generate_ids
    monkeypatch.setattr(llm, "_generate_ids", lambda inputs, **kw: generated.append(inputs) or generate(inputs, **kw))

    # A schema of literals only: its JSON closes within a few dozen tokens whatever the random weights pick (with
    # ImageFindingsOutput, four 90-character strings of escapes or multi-byte characters could outrun any cap:
    # the floors run once failed here with the JSON cut short). This test is about the image's path, not the JSON.
    llm.generate_json(MESSAGES, ResultAssessment, temperature=0.0, max_tokens=ROOM, images=[image])

    assert len(spy.calls) == 1 and spy.calls[0]["images"] == [image]  # this very image, once
    assert spy.calls[0]["text"].count("<start_of_image>") == 1
    assert "pixel_values" in generated[0] and generated[0]["pixel_values"].shape[0] == 1  # it reached the model
    usage = llm.last_usage
    assert usage is not None and usage.prompt_tokens > llm.count_tokens(MESSAGES)  # expanded into image tokens


def test_capped_generation_raises_output_error(llm: TransformersLLM) -> None:
    with pytest.raises(LLMOutputError):
        llm.generate_json(MESSAGES, ResultAssessment, temperature=0.0, max_tokens=3)


def test_text_streams_and_tokens_are_counted(llm: TransformersLLM) -> None:
    import torch

    torch.manual_seed(0)  # sampled (T=0.5): the same draw whatever ran before
    chunks = list(llm.generate_text(MESSAGES, temperature=0.5, max_tokens=8))
    usage = llm.last_usage
    assert usage is not None and 1 <= usage.decoded_tokens <= 8  # the cap holds, and the call is reported
    assert usage.prompt_tokens == llm.count_tokens(MESSAGES)
    assert all(chunks)  # no empty chunk reaches the page
    assert llm.count_tokens(MESSAGES) > llm.count_tokens(MESSAGES[1:]) > 0
