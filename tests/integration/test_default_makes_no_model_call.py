"""Issue 26: on the embedded default (a model flagged not clinically meaningful) no golden turn calls the model
for routing, arguments or any clinical text. An unsure turn asks with buttons; every answer is written by code.
The one call the default makes is the friendly first line of a plain greeting (issue 27's visible model work,
``agent/small_talk.py``): a text call from SYNTHESIZE on a turn with no tool, which code decided is a greeting and
checks before it is shown.

The model here is a fake that records each call and has no reply scripted: every call shows in ``calls``, so the
assertion is on what the graph asked for, not on what a model answered."""

from __future__ import annotations

from pathlib import Path

import pytest

from docgemma.eval.golden import load_cases, run_session
from docgemma.eval.oracle import golden_assistant
from docgemma.llm.fake import FakeLLM

FILES = sorted((Path(__file__).parents[2] / "golden_tests").glob("*.json"))


@pytest.mark.slow
@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_no_golden_turn_calls_the_embedded_default_model_but_to_greet(path: Path) -> None:
    model = FakeLLM(name="SmolLM2 stand-in", supports_images=False, clinically_meaningful=False)
    assistant, ctx, registry = golden_assistant(model)
    turns = 0
    for session in load_cases(path):
        for record in run_session(assistant, session, ctx, registry, path.stem):
            turns += 1
            if record["llm_calls"]:
                where = (session.session_id, record["user_input"])
                assert [c["node"] for c in record["calls_by_node"]] == ["synthesize"], where
                assert record["llm_calls"] == 1 and not record["tools"] and record["intent"] == "DIRECT", where
    assert turns
    assert all(call.kind == "text" and call.schema is None for call in model.calls)  # never a JSON decision


@pytest.mark.parametrize("message, field", [("Check FDA warnings for zyxomab", "drug"),
                                            ("recruiting trials for NSCLC after immunotherapy?", "condition"),
                                            ("what is her metformin treating?", "record item (a condition")])
def test_an_argument_code_cannot_read_is_asked_for_not_extracted_by_the_demo_model(message: str, field: str) -> None:
    """Before: the rule chose the tool and the demo model was asked for the missing argument (one call)."""
    model = FakeLLM(name="SmolLM2 stand-in", supports_images=False, clinically_meaningful=False)
    assistant, ctx, _registry = golden_assistant(model)
    ctx.turn = {"user_input": message}
    assistant.set_active_patient("ask-for-argument", {"id": "gm-001", "name": "Grace Mensah"})
    result = assistant.run_turn("ask-for-argument", message)
    assert model.calls == [] and not result.tools
    assert f"could not read the {field}" in result.answer and "does not guess" in result.answer
    assert "_" not in result.answer and "fhir" not in result.answer.lower()
    select = next(e for e in result.timeline if e["node"] == "tool_select")
    assert "_" not in select["detail"].split("decided by rule:")[1].split("asked for")[0]  # no field names
