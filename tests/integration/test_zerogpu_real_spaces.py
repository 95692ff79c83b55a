"""Whole turns on the real ``spaces`` package (0.51.3) in its ZeroGPU mode, on the CPU (``tests/zerogpu_cpu.py``
says how, ``tests/zerogpu_turns.py`` runs them in a process of their own): every model call's arguments are
pickled into a forked GPU worker and its results pickled back, as on a ZeroGPU Space.

Each of the agent's constrained-JSON schemas crosses (the intent and tool-selection schemas are classes made by
``pydantic.create_model`` inside functions: they failed every model-decided turn with PicklingError), a streamed
answer, a turn the model decides, an image turn, an approval card and its approved write; the GPU check runs in
the workers, once each, never in the main process; a spent quota is the one sentence, not Gradio's ``AppError``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest

from docgemma.agent.assistant import MODEL_DOWN
from docgemma.llm.base import BACKEND_DOWN_SENTENCE
from tests.app_process import ROOT
from tests.tiny_gemma import build_tiny_gemma3

pytestmark = pytest.mark.slow

#: The agent's schemas that are not a tool's arguments (``agent_schemas``), by name.
AGENT_SCHEMAS = {"IntentClassification", "ToolSelection", "ResultAssessment", "RetryStrategy", "ImageFindingsOutput",
                 "ImageAnalysisOutput"}


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    tiny = build_tiny_gemma3(tmp_path_factory.mktemp("tiny-gemma3"))
    out = tmp_path_factory.mktemp("zerogpu") / "report.json"
    done = subprocess.run([sys.executable, "-m", "tests.zerogpu_turns", str(tiny), str(out)], cwd=ROOT,
                          capture_output=True, text=True, timeout=540)
    assert done.returncode == 0, done.stderr[-4000:]
    result: dict[str, Any] = json.loads(out.read_text())
    return result


def test_spaces_wraps_the_model_calls(report: dict[str, Any]) -> None:
    assert report["wrapped"]  # spaces.GPU in ZeroGPU mode, not the identity it is elsewhere
    assert "/allow" in report["device_api"]  # a GPU worker was forked and allowed itself


def test_every_constrained_json_schema_crosses_into_the_worker(report: dict[str, Any]) -> None:
    schemas = report["schemas"]
    assert set(schemas) >= AGENT_SCHEMAS and len(schemas) >= len(AGENT_SCHEMAS) + 10  # and each tool's arguments
    # The random model's JSON may be cut at the token cap (LLMOutputError): it crossed, ran and came back.
    assert set(schemas.values()) <= {"valid", "crossed; LLMOutputError"}, schemas


def test_a_streamed_answer(report: dict[str, Any]) -> None:
    turn = report["turns"]["streamed answer"]
    assert turn["calls"] == [["text", "text", 0, None]] and turn["tokens"] >= 1 and turn["answer"]
    assert not turn["backend_down"]


#: How a JSON call through the GPU may end: validated, or the random model's JSON cut at its token cap (it crossed,
#: ran and came back; the tiny model's weights are drawn anew for each run). Never BackendUnavailable or a pickle error.
CROSSED = {None, "LLMOutputError"}


def test_a_turn_the_model_decides_uses_the_schemas_made_inside_functions(report: dict[str, Any]) -> None:
    turn = report["turns"]["model decides"]
    (intent,) = [c for c in turn["calls"] if c[1] == "IntentClassification"]  # made by create_model in a function
    assert intent[-1] in CROSSED and not turn["backend_down"] and turn["answer"]
    # ToolSelection, the other, follows only when the random model says TOOL_NEEDED; it crossed above in any case.
    assert all(c[-1] in CROSSED for c in turn["calls"])


def test_an_image_turn_sends_its_pixels_into_the_worker(report: dict[str, Any]) -> None:
    turn = report["turns"]["image"]
    (vision,) = [c for c in turn["calls"] if c[1] == "ImageFindingsOutput"]
    assert vision[2] == 1 and vision[-1] in CROSSED and not turn["backend_down"] and turn["answer"]


def test_an_approval_card_and_its_approved_write(report: dict[str, Any]) -> None:
    assert report["turns"]["approval card"]["card"] == "prescribe_medication"
    approved = report["turns"]["approved"]
    assert len(approved["writes"]) == 1 and ["text", "text", 0, None] in approved["calls"]


def test_the_gpu_check_runs_in_each_worker_once_never_in_the_main_process(report: dict[str, Any]) -> None:
    checks = report["gpu_checks"]
    assert checks and report["parent"] not in checks and len(set(checks)) == len(checks)


def test_a_spent_quota_is_the_one_sentence(report: dict[str, Any]) -> None:
    turn = report["turns"]["quota spent"]
    assert turn["answer"] == BACKEND_DOWN_SENTENCE and turn["backend_down"] and turn["writes"] == []
    assert turn["timeline"][-1] == ["synthesize", MODEL_DOWN]  # the step it cut off, closed
    assert turn["calls"][-1][-1] == "BackendUnavailable"
