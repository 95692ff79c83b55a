"""Only true and clinical text on the page (issue 27): no sentence the failure makes untrue, no internal words
(record ids, FHIR references, snake_case names, raw timings) in the steps or the answer."""

from __future__ import annotations

from typing import Any

from docgemma.agent.nodes.synthesize import _all_failed
from docgemma.llm.fake import FakeLLM
from docgemma.tools.registry import default_registry


def _failed(error_type: str) -> dict[str, Any]:
    return {"tool_name": "analyze_image", "tool_label": "image analysis", "status": "error", "error_type": error_type,
            "error": "The image analysis needs a vision model; the current model cannot read images."}


def test_a_failure_retrying_cannot_mend_is_not_followed_by_try_again() -> None:
    """An image on a model without vision ended in "Please try again shortly." while the timeline said
    retrying cannot help."""
    state: Any = {"intent": "TOOL_NEEDED", "tool_results": [_failed("no_vision")], "error_messages": []}
    text, _ = _all_failed(state, FakeLLM(), default_registry()) or ("", "")
    assert "cannot read images" in text and "try again" not in text.lower()
    state["tool_results"] = [_failed("timeout")]
    text, _ = _all_failed(state, FakeLLM(), default_registry()) or ("", "")
    assert "Please try again shortly." in text  # a passing failure may mend
