"""JSON schemas of the LLM nodes, decision-critical fields first (reversing the order cut argument accuracy
from 88% to 21% on MedGemma 4B: after its first null the model writes null for every later field).

The tool-name ``Literal``s are built from the registry, so the registry stays the only list of tools.
Every free-text field is bounded: the worst-case JSON fits the node's token cap (tested).
"""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING, Annotated, Any, Literal, cast

from pydantic import BaseModel, Field, StringConstraints, create_model

if TYPE_CHECKING:
    from docgemma.tools.registry import ToolRegistry

Quality = Literal["success_rich", "success_partial", "no_results", "error_retryable", "error_fatal"]


class ResultAssessment(BaseModel):
    """RESULT_CLASSIFY: what happened (never what to do next).

    The design's ``brief_summary`` field is dropped: no code read it beyond the timeline's detail, and it was
    up to 75 characters (~20 tokens) decoded on every tool call of a turn; the decode budget has no room for
    a field the code never reads."""

    quality: Quality


class RetryStrategy(BaseModel):
    """ERROR_HANDLER's one model decision. The design's optional ``reasoning`` is dropped: the node's cap
    (``NODE_CONFIG['error_retry']``) is 64 tokens, which a 100-character reasoning string cannot be guaranteed to fit."""

    strategy: Literal["retry_same", "retry_different_args"]


class ImageFindingsOutput(BaseModel):
    """INPUT_ASSEMBLY's vision call: structured findings injected into every later prompt."""

    modality: Literal["chest_xray", "xray", "ct", "mri", "ultrasound", "pathology", "dermatology", "other"]
    findings: list[Annotated[str, StringConstraints(max_length=90)]] = Field(min_length=1, max_length=4)
    # A word, not a float: constrained decoding cannot bound a number's digits, and a random or weak
    # model fills them until the token cap (seen on the tiny test model). The image tool's own schema
    # (tools/imaging.ImageAnalysisOutput) uses the same three levels.
    confidence: Literal["high", "medium", "low"]


def _literal(values: tuple[str, ...]) -> Any:
    return Literal.__getitem__(values)


@lru_cache(maxsize=8)
def intent_schema(tool_names: tuple[str, ...]) -> type[BaseModel]:
    """IntentClassification: ``intent`` first; ``scope`` tells greetings and off-topic messages apart
    (topic suggestions for the next question); ``suggested_tool`` is a non-binding hint, last."""
    return create_model(
        "IntentClassification",
        intent=(cast(Any, Literal["DIRECT", "TOOL_NEEDED"]), ...),
        scope=(cast(Any, Literal["clinical", "greeting", "off_topic"]), "clinical"),
        task_summary=(str, Field(max_length=140, description="Brief clinical summary of the request")),
        suggested_tool=(_literal(tool_names) | None, None),
    )


def tool_selection_schema(tool_names: tuple[str, ...]) -> type[BaseModel]:
    """ToolSelection: one field, no nullable distractors. Built once per tool list."""
    return _tool_selection(tuple(tool_names))


@lru_cache(maxsize=8)
def _tool_selection(tool_names: tuple[str, ...]) -> type[BaseModel]:
    return create_model("ToolSelection", tool_name=(_literal(tool_names), ...))


def missing_fields_schema(args_model: type[BaseModel], fields: tuple[str, ...]) -> type[BaseModel]:
    """A schema of only ``fields`` of ``args_model`` (same types and bounds, same order): stage 2 asks the
    model for what code could not fill, nothing more. Built once per (model, fields)."""
    return _missing_fields(args_model, tuple(f for f in args_model.model_fields if f in fields))


@lru_cache(maxsize=64)
def _missing_fields(args_model: type[BaseModel], fields: tuple[str, ...]) -> type[BaseModel]:
    source = args_model.model_fields
    definitions: dict[str, Any] = {name: (source[name].annotation, source[name]) for name in fields}
    return create_model(args_model.__name__, __config__=args_model.model_config, **definitions)


def agent_schemas(registry: ToolRegistry) -> dict[type[BaseModel], int]:
    """Every schema the agent asks a model for, with its token cap: what a backend prepares at load.

    Stage 2's schemas of only the missing fields (``missing_fields_schema``) depend on the message and are
    not listed; a backend builds those on first use.
    """
    from docgemma.agent.node_settings import NODE_CONFIG
    from docgemma.tools.imaging import IMAGE_TOOL_CONFIG, ImageAnalysisOutput

    schemas: dict[type[BaseModel], int] = {
        intent_schema(registry.names): NODE_CONFIG["intent_classify"].max_tokens,
        tool_selection_schema(registry.names): NODE_CONFIG["tool_select_stage1"].max_tokens,
        ResultAssessment: NODE_CONFIG["result_classify"].max_tokens,
        RetryStrategy: NODE_CONFIG["error_retry"].max_tokens,
        ImageFindingsOutput: NODE_CONFIG["image_analysis"].max_tokens,
        ImageAnalysisOutput: IMAGE_TOOL_CONFIG.max_tokens,
    }
    stage2 = NODE_CONFIG["tool_select_stage2"].max_tokens
    for spec in registry:
        schemas.setdefault(spec.args_model, max(stage2, spec.arg_max_tokens))
    return schemas
