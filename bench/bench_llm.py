"""Embedded-model figures: prompt tokens of one constrained JSON call as Outlines'
``str`` input sent them (chat template applied twice) and as the backend sends them now, and how much free
text repeats itself with and without the small-model repetition control. Run from the repository root:

    python bench/bench_llm.py [--json] [--tokens-only]

Loads the embedded SmolLM2-135M GGUF on CPU (about 10 s). The "before" figure needs Outlines, no longer a
requirement (constrained JSON is llguidance now): ``pip install 'outlines==1.3.3'`` to reproduce it.
Repetition is measured greedily (T=0, where
loops are worst) on a few questions, as the share of sentences that are repeats of an earlier one.
"""

from __future__ import annotations

import json
import re
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from docgemma.agent.prompts import intent_messages
from docgemma.llm.base import Message
from docgemma.llm.transformers_backend import embedded_model_file, load_transformers_llm

JSON_MESSAGES = [Message(role="system", content="Classify the request."),
                 Message(role="user", content="Check FDA warnings for dofetilide")]
QUESTIONS = ["Check FDA warnings for dofetilide", "What are her active medications?",
             "Explain how SGLT2 inhibitors work", "Hello, what can you do?"]
MAX_TOKENS = 200


def outlines_str_tokens(llm: Any, messages: Any) -> int:
    """Prompt tokens Outlines 1.3 sent for a rendered prompt passed as ``str`` (the former behaviour)."""
    from outlines.models.tokenizer import _check_hf_chat_template
    from outlines.models.transformers import TransformersTypeAdapter, TransformerTokenizer

    adapter = TransformersTypeAdapter(llm.tokenizer, has_chat_template=_check_hf_chat_template(llm.tokenizer))
    text = adapter.format_input(llm.render_prompt(messages))
    return int(TransformerTokenizer(llm.tokenizer).encode(text)[0].shape[-1])


def repeated_share(text: str) -> float:
    sentences = [s.strip().lower() for s in re.split(r"(?<=[.!?])\s+|\n+", text) if len(s.strip()) > 10]
    if not sentences:
        return 0.0
    return 1 - len(set(sentences)) / len(sentences)


def main() -> None:
    llm = load_transformers_llm(str(embedded_model_file()))
    intent = intent_messages({"user_query": "Check FDA warnings for dofetilide"})  # type: ignore[typeddict-item]
    results: dict[str, Any] = {"model": llm.name, "json_prompt_tokens": {
        "outlines_str_input_before": outlines_str_tokens(llm, JSON_MESSAGES),
        "model_inputs_now": llm.count_tokens(JSON_MESSAGES)}, "intent_classify_prompt_tokens": {
        "outlines_str_input_before": outlines_str_tokens(llm, intent), "model_inputs_now": llm.count_tokens(intent)}}
    if "--tokens-only" in sys.argv:
        print(json.dumps(results, indent=2))
        return
    for label, flag in (("without_repetition_control", True), ("with_repetition_control", False)):
        llm.clinically_meaningful = flag
        shares, seconds = [], []
        for question in QUESTIONS:
            start = time.perf_counter()
            text = "".join(llm.generate_text([Message(role="user", content=question)], temperature=0.0,
                                             max_tokens=MAX_TOKENS))
            seconds.append(time.perf_counter() - start)
            shares.append(round(repeated_share(text), 2))
        results[label] = {"repeated_sentence_share": shares, "mean": round(sum(shares) / len(shares), 2),
                          "seconds": [round(s, 1) for s in seconds]}
    if "--json" in sys.argv:
        print(json.dumps(results, indent=2))
        return
    print(results["model"])
    for key in ("json_prompt_tokens", "intent_classify_prompt_tokens"):
        tokens = results[key]
        print(f"{key}: {tokens['outlines_str_input_before']} (Outlines str input, before) -> "
              f"{tokens['model_inputs_now']} (now)")
    for label in ("without_repetition_control", "with_repetition_control"):
        print(f"{label}: repeated sentence share {results[label]['repeated_sentence_share']} "
              f"(mean {results[label]['mean']}), seconds {results[label]['seconds']}")


if __name__ == "__main__":
    main()
