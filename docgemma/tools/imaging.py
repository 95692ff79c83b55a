"""analyze_medical_image: the model's vision path on the attached image, answered in its own findings schema."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field, StringConstraints

from docgemma.llm.base import LLMError, Message, NodeConfig
from docgemma.tools.outcome import ToolOutcome, failure, success
from docgemma.tools.spec import ToolContext

SYSTEM = """You are a medical imaging assistant supporting a clinician. Analyse the attached image for
the clinician's question: image type, up to four findings, a one-sentence impression, your confidence,
and whether a specialist should review it."""


#: analyze_medical_image's own schema is larger than INPUT_ASSEMBLY's findings: more tokens.
IMAGE_TOOL_CONFIG = NodeConfig(0.3, 768)


class ImageAnalysisOutput(BaseModel):
    """What the image tool answers: image type, up to four findings, an impression, a confidence level and
    whether a specialist should review it, every field bounded so the JSON closes inside the token cap."""

    image_type: Literal["chest_xray", "ct_scan", "mri", "pathology", "dermatology", "unknown"]
    findings: list[Annotated[str, StringConstraints(max_length=90)]] = Field(min_length=1, max_length=4)
    impression: str = Field(max_length=160)
    confidence: Literal["high", "medium", "low"]
    requires_specialist_review: bool


def analyze_medical_image(args: BaseModel, context: ToolContext) -> ToolOutcome:
    """Ask the (vision) model about the attached image."""
    if context.image is None:
        return failure("no_image")
    if context.llm is None or not context.llm.supports_images:
        return failure("no_vision")
    config = IMAGE_TOOL_CONFIG
    messages = [Message(role="system", content=SYSTEM), Message(role="user", content=str(args.query))]  # type: ignore[attr-defined]
    try:
        out = context.llm.generate_json(messages, ImageAnalysisOutput, temperature=config.temperature,
                                        max_tokens=config.max_tokens, images=[context.image])
    except LLMError:
        return failure("invalid_response")
    return success(out.model_dump())


def format_analysis(data: dict[str, Any]) -> str:
    """Findings as lines, then the impression and the review flag."""
    lines = [f"Image type: {data['image_type']} (confidence {data['confidence']})"]
    lines += [f"- {f}" for f in data["findings"]]
    lines.append(f"Impression: {data['impression']}")
    if data["requires_specialist_review"]:
        lines.append("Specialist review recommended.")
    return "\n".join(lines)
