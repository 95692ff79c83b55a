"""analyze_medical_image: the vision model on the attached image (``tools/imaging.py``)."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from docgemma.tools import imaging
from docgemma.tools.args import ToolArgs
from docgemma.tools.routing import Request
from docgemma.tools.spec import ToolSpec, ready_binding


class ImageAnalysisArgs(ToolArgs):
    query: str = Field(min_length=2, max_length=110, description="What to look for in the image")


def image_query(request: Request) -> dict[str, Any]:
    """``query``: the message itself (what to look for in the image)."""
    return {"query": request.query[:110]} if len(request.query) >= 2 else {}


#: Needs no client (the turn's model and image come in the ToolContext); bound with the knowledge tools, so a
#: registry without them reports it ``not_configured`` like the others.
SPEC = ToolSpec(
    "analyze_medical_image",
    "Image Analysis",
    "Analyze an attached medical image (X-ray, CT, MRI, histopathology slide, etc.) for findings "
    "relevant to the specified query. Use when a clinician shares a medical image and asks for "
    "analysis or interpretation.",
    ImageAnalysisArgs,
    "Is there a pneumothorax on this chest X-ray?",
    needs_image=True,
    extract=image_query,
    binding=ready_binding(imaging.analyze_medical_image, imaging.format_analysis),
)
