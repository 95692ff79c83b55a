"""Prefix KV-cache reuse in the transformers backend: the calls of a turn share a long
prompt prefix; the kept cache serves it, and the outputs at temperature 0 are those of a full prefill.

Run on the embedded SmolLM2 (Llama layers: plain dynamic cache) and on a tiny random Gemma 3 (sliding-window
layers of 64 tokens, so the prompts here pass the window; images through its processor).
"""

from __future__ import annotations

import threading

import pytest
from PIL import Image

from docgemma.agent.schemas import intent_schema
from docgemma.llm.base import LLMOutputError, Message, Usage
from docgemma.llm.transformers_backend import TransformersLLM, embedded_model_file, load_transformers_llm
from docgemma.tools.registry import default_registry
from tests.tiny_gemma import build_tiny_gemma3

pytestmark = [pytest.mark.slow, pytest.mark.floors]
INTENT = intent_schema(default_registry().names)
CONTEXT = ("You are a clinical decision-support assistant. Patient: Maria Lopez, 67, atrial fibrillation, "
           "chronic kidney disease stage 3, on dofetilide 250 mcg twice daily and lisinopril 10 mg daily. "
           "Conversation so far: the clinician asked about QT prolongation and renal dosing.")


def turn(ending: str) -> list[Message]:
    """A prompt with the turn's shared prefix and a node's own ending."""
    return [Message(role="system", content=CONTEXT), Message(role="user", content=ending)]


ENDINGS = ["Classify the request: check FDA warnings for dofetilide.",
           "Classify the request: what is the renal dose of dofetilide?",
           "Write one sentence for the clinician about dofetilide."]


def run_turn(llm: TransformersLLM, max_tokens: int) -> tuple[list[str], list[Usage]]:
    """Two constrained calls and one text call, as a turn makes them; outputs and usages."""
    outputs: list[str] = []
    usages: list[Usage] = []
    for ending in ENDINGS[:2]:
        try:
            outputs.append(llm.generate_json(turn(ending), INTENT, temperature=0.0, max_tokens=max_tokens)
                           .model_dump_json())
        except LLMOutputError as exc:  # a random model may not close the JSON: its raw output is compared
            outputs.append(exc.raw)
        assert llm.last_usage is not None
        usages.append(llm.last_usage)
    outputs.append("".join(llm.generate_text(turn(ENDINGS[2]), temperature=0.0, max_tokens=max_tokens)))
    assert llm.last_usage is not None
    usages.append(llm.last_usage)
    return outputs, usages


@pytest.fixture(scope="module")
def smollm2() -> TransformersLLM:
    return load_transformers_llm(str(embedded_model_file()))


@pytest.fixture(scope="module")
def tiny_gemma(tmp_path_factory: pytest.TempPathFactory) -> TransformersLLM:
    return load_transformers_llm(str(build_tiny_gemma3(tmp_path_factory.mktemp("tiny-gemma3"))))


def compare_with_and_without_reuse(llm: TransformersLLM, max_tokens: int) -> list[Usage]:
    llm._prefix.clear()
    reused, usages = run_turn(llm, max_tokens)
    llm.prefix_cache = False
    try:
        full, full_usages = run_turn(llm, max_tokens)
    finally:
        llm.prefix_cache = True
    assert reused == full
    assert all(u.cached_tokens == 0 for u in full_usages) and usages[0].cached_tokens == 0
    assert [u.prompt_tokens for u in usages] == [u.prompt_tokens for u in full_usages]
    assert [u.decoded_tokens for u in usages] == [u.decoded_tokens for u in full_usages]
    return usages


def shared_prefix(llm: TransformersLLM, a: str, b: str) -> int:
    ids_a = llm.model_inputs(turn(a))["input_ids"][0].tolist()
    ids_b = llm.model_inputs(turn(b))["input_ids"][0].tolist()
    n = 0
    while ids_a[n] == ids_b[n]:
        n += 1
    return n


def test_smollm2_outputs_are_identical_with_and_without_reuse(smollm2: TransformersLLM) -> None:
    usages = compare_with_and_without_reuse(smollm2, max_tokens=48)
    # The second and third calls are served the shared prefix (the system turn and the start of the user turn).
    assert usages[1].cached_tokens == shared_prefix(smollm2, ENDINGS[0], ENDINGS[1]) > 50
    assert usages[2].cached_tokens == shared_prefix(smollm2, ENDINGS[1], ENDINGS[2]) > 50


def test_tiny_gemma_outputs_are_identical_past_the_sliding_window(tiny_gemma: TransformersLLM) -> None:
    layers = tiny_gemma.model.config.get_text_config().sliding_window
    assert tiny_gemma.count_tokens(turn(ENDINGS[0])) > 3 * layers  # the crops happen beyond the window
    usages = compare_with_and_without_reuse(tiny_gemma, max_tokens=12)
    assert usages[1].cached_tokens == shared_prefix(tiny_gemma, ENDINGS[0], ENDINGS[1]) > layers
    assert usages[2].cached_tokens == shared_prefix(tiny_gemma, ENDINGS[1], ENDINGS[2]) > layers


def test_sliding_window_layers_serve_a_shorter_prefix_later(tiny_gemma: TransformersLLM) -> None:
    """A later call sharing less than the previous one still reuses: sliding layers keep every position."""
    llm = tiny_gemma
    llm._prefix.clear()
    other = [Message(role="system", content=CONTEXT[:150]), Message(role="user", content=ENDINGS[0])]
    outs = ["".join(llm.generate_text(m, temperature=0.0, max_tokens=6)) for m in (turn(ENDINGS[0]), turn(ENDINGS[1]), other)]
    assert llm.prefix_skipped is None and llm.last_usage is not None
    assert 64 < llm.last_usage.cached_tokens < shared_prefix(llm, ENDINGS[0], ENDINGS[1])
    llm.prefix_cache = False
    try:
        assert "".join(llm.generate_text(other, temperature=0.0, max_tokens=6)) == outs[-1]
    finally:
        llm.prefix_cache = True


def test_images_are_never_served_from_the_cache(tiny_gemma: TransformersLLM) -> None:
    llm = tiny_gemma
    image = Image.new("RGB", (100, 80), (120, 30, 30))
    list(llm.generate_text(turn(ENDINGS[0]), temperature=0.0, max_tokens=4))
    list(llm.generate_text(turn(ENDINGS[0]), temperature=0.0, max_tokens=4, images=[image]))
    assert llm.prefix_skipped == "image inputs" and llm.last_usage is not None
    assert llm.last_usage.cached_tokens == 0
    # A cache filled beside pixels is not kept: the next text call starts afresh.
    list(llm.generate_text(turn(ENDINGS[0]), temperature=0.0, max_tokens=4))
    assert llm.prefix_skipped == "no kept cache"


def test_turned_off_prefills_every_call_in_full(tiny_gemma: TransformersLLM) -> None:
    llm = tiny_gemma
    llm.prefix_cache = False
    try:
        for _ in range(2):
            list(llm.generate_text(turn(ENDINGS[0]), temperature=0.0, max_tokens=4))
            assert llm.prefix_skipped == "turned off" and llm.last_usage is not None
            assert llm.last_usage.cached_tokens == 0
    finally:
        llm.prefix_cache = True


def test_abandoned_stream_keeps_no_cache_and_frees_the_model(tiny_gemma: TransformersLLM) -> None:
    llm = tiny_gemma
    llm._prefix.clear()
    list(llm.generate_text(turn(ENDINGS[1]), temperature=0.0, max_tokens=8))  # a cache is kept
    stream = llm.generate_text(turn(ENDINGS[0]), temperature=0.0, max_tokens=200)  # takes it, reuses the prefix
    next(stream)
    stream.close()  # the consumer leaves: the worker stops, the lock is released
    assert llm._lock.acquire(timeout=5)
    llm._lock.release()
    # The cache the abandoned call was writing is not kept: the next call prefills in full.
    list(llm.generate_text(turn(ENDINGS[1]), temperature=0.0, max_tokens=8))
    assert llm.prefix_skipped == "no kept cache" and llm.last_usage is not None
    assert llm.last_usage.cached_tokens == 0


def test_concurrent_calls_give_the_sequential_outputs(tiny_gemma: TransformersLLM) -> None:
    llm = tiny_gemma
    expected = {e: "".join(llm.generate_text(turn(e), temperature=0.0, max_tokens=6)) for e in ENDINGS}
    got: dict[str, list[str]] = {e: [] for e in ENDINGS}
    failures: list[BaseException] = []

    def worker(ending: str) -> None:
        try:
            for _ in range(3):
                got[ending].append("".join(llm.generate_text(turn(ending), temperature=0.0, max_tokens=6)))
        except BaseException as exc:  # noqa: BLE001 — reported by the assertion below
            failures.append(exc)

    threads = [threading.Thread(target=worker, args=(e,)) for e in ENDINGS]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures
    assert got == {e: [expected[e]] * 3 for e in ENDINGS}
