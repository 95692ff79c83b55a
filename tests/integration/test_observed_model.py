"""Every model call of a turn goes through the one observed model: the image tool's call too is counted in the
timeline (its node's event and the turn's totals) and in the metrics."""

from __future__ import annotations

import io
from typing import Any

from PIL import Image

from docgemma.agent.assistant import Assistant, TurnResult
from docgemma.llm.fake import Call, FakeLLM
from docgemma.ops.metrics import Metrics
from docgemma.tools.imaging import analyze_medical_image
from docgemma.tools.registry import default_registry
from tests.conftest import assess, intent, select


def answer(call: Call) -> Any:
    """The model's replies by what is asked: the vision step, the image tool, the routing nodes, the answer."""
    if call.schema is None:
        return "No pneumothorax is seen."
    replies = {
        "ImageFindingsOutput": {"modality": "chest_xray", "findings": ["No pneumothorax"], "confidence": "medium"},
        "ImageAnalysisOutput": {"image_type": "chest_xray", "findings": ["No pneumothorax"], "impression": "Normal.",
                                "confidence": "medium", "requires_specialist_review": False},
        "IntentClassification": intent(tool="analyze_medical_image"),
        "ToolSelection": select("analyze_medical_image"),
        "ResultAssessment": assess(),
    }
    if call.schema.__name__ in replies:
        return replies[call.schema.__name__]
    return {name: "pneumothorax" for name, field in call.schema.model_fields.items() if field.is_required()}


def png() -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (16, 16)).save(buffer, format="PNG")
    return buffer.getvalue()


def test_the_image_tools_model_call_is_counted_in_the_timeline_and_the_metrics() -> None:
    fake = FakeLLM(responder=answer)
    metrics = Metrics()
    assistant = Assistant(metrics.timed(fake), default_registry({"analyze_medical_image": analyze_medical_image}))
    result = assistant.run_turn("t", "Analyze this chest x-ray for a pneumothorax", {"filename": "cxr.png", "data": png()})
    assert isinstance(result, TurnResult)
    assert [(t["tool"], t["status"]) for t in result.tools] == [("analyze_medical_image", "success")]
    tool_calls = [c for c in fake.calls if c.schema is not None and c.schema.__name__ == "ImageAnalysisOutput"]
    assert len(tool_calls) == 1 and tool_calls[0].images == 1
    execute = next(e for e in result.timeline if e["node"] == "tool_execute")
    assert execute["llm_calls"] == 1 and execute["prompt_tokens"] > 0
    assert result.llm_calls == len(fake.calls) == sum(e["llm_calls"] for e in result.timeline)
    timed = sum(metrics.registry.get_sample_value("docgemma_model_call_seconds_count", {"call": kind}) or 0
                for kind in ("json", "text"))
    assert timed == len(fake.calls)


def test_one_observed_model_serves_every_node_and_the_metrics_add_no_second_wrapper() -> None:
    metrics = Metrics()
    timed = metrics.timed(FakeLLM(responder=answer))
    assistant = Assistant(timed, default_registry())
    assert assistant.model is timed and metrics.timed(timed) is timed
