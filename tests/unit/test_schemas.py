"""Schemas: decision-critical fields first, and every JSON closes inside its node's token cap."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from docgemma.agent.node_settings import NODE_CONFIG
from docgemma.agent.schemas import (
    ImageFindingsOutput,
    ResultAssessment,
    RetryStrategy,
    intent_schema,
    tool_selection_schema,
)
from docgemma.tools.registry import default_registry

REGISTRY = default_registry()


def max_json_chars(schema: dict[str, Any], defs: dict[str, Any] | None = None) -> int:
    """Worst-case length of a compact JSON instance (every token is at least one character)."""
    defs = defs or schema.get("$defs", {})
    if "$ref" in schema:
        return max_json_chars(defs[schema["$ref"].split("/")[-1]], defs)
    if "anyOf" in schema:
        return max(max_json_chars(s, defs) for s in schema["anyOf"])
    if "enum" in schema:
        return max(len(str(v)) + 2 for v in schema["enum"])
    if "const" in schema:
        return len(str(schema["const"])) + 2
    kind = schema.get("type")
    if kind == "object":
        props = schema["properties"]
        return 2 + sum(len(k) + 4 + max_json_chars(v, defs) for k, v in props.items())
    if kind == "array":
        return 2 + schema["maxItems"] * (max_json_chars(schema["items"], defs) + 1)
    if kind == "string":
        return 2 + schema["maxLength"]  # escapes aside: clinical text is mostly plain
    if kind in ("number", "integer"):
        return 24
    if kind == "null":
        return 4
    if kind == "boolean":
        return 5
    raise AssertionError(f"unbounded schema part: {schema}")


CASES: list[tuple[type[BaseModel], int]] = [
    (intent_schema(REGISTRY.names), NODE_CONFIG["intent_classify"].max_tokens),
    (tool_selection_schema(REGISTRY.names), NODE_CONFIG["tool_select_stage1"].max_tokens),
    (ResultAssessment, NODE_CONFIG["result_classify"].max_tokens),
    (RetryStrategy, NODE_CONFIG["error_retry"].max_tokens),
    (ImageFindingsOutput, NODE_CONFIG["image_analysis"].max_tokens),
] + [(s.args_model, max(NODE_CONFIG["tool_select_stage2"].max_tokens, s.arg_max_tokens)) for s in REGISTRY]


@pytest.mark.parametrize(("schema", "cap"), CASES, ids=lambda v: getattr(v, "__name__", str(v)))
def test_worst_case_json_fits_token_cap(schema: type[BaseModel], cap: int) -> None:
    assert max_json_chars(schema.model_json_schema()) <= cap


def test_decision_critical_fields_come_first() -> None:
    assert next(iter(intent_schema(REGISTRY.names).model_fields)) == "intent"
    assert next(iter(ResultAssessment.model_fields)) == "quality"
    assert list(RetryStrategy.model_fields) == ["strategy"]
    for spec in REGISTRY:
        fields = list(spec.args_model.model_fields.values())
        required = [f.is_required() for f in fields]
        assert required == sorted(required, reverse=True), f"{spec.name}: optional field before a required one"
        if "patient_id" in spec.args_model.model_fields:
            assert next(iter(spec.args_model.model_fields)) == "patient_id"


def test_tool_names_come_from_the_registry() -> None:
    schema = tool_selection_schema(REGISTRY.names).model_json_schema()
    assert set(schema["properties"]["tool_name"]["enum"]) == set(REGISTRY.names)
    assert tool_selection_schema(REGISTRY.names) is tool_selection_schema(tuple(REGISTRY.names))


def test_missing_fields_schema_keeps_order_types_and_bounds() -> None:
    from docgemma.agent.schemas import missing_fields_schema

    spec = REGISTRY["add_allergy"]
    partial = missing_fields_schema(spec.args_model, ("reaction", "substance"))
    assert list(partial.model_fields) == ["substance", "reaction"]  # the argument model's order
    assert partial.model_json_schema()["properties"]["reaction"]["maxLength"] == 60
    assert partial is missing_fields_schema(spec.args_model, ("substance", "reaction"))


def test_registry_has_the_v3_and_patient_data_tools_with_labels_and_write_flags() -> None:
    assert len(REGISTRY.names) == 14
    assert {"query_patient_data", "explore_connections", "get_patient_timeline"} <= set(REGISTRY.names)
    assert {s.name for s in REGISTRY if s.writes} == {"prescribe_medication", "add_allergy", "save_clinical_note",
                                                      "remove_allergy_label"}
    assert REGISTRY.label("check_drug_safety") == "Drug Safety Report"
    listing = REGISTRY.tool_list()
    assert "check_drug_interactions(drug_names: list[str])" in listing
    assert ("find_clinical_trials(condition: str, intervention: str = None, location: str = None, "
            "distance_km: int = None, status: str = None, phase: str = None") in listing
    assert "search_medical_literature(query: str, publication_types: list[str] = None, since_year: int = None" in listing
    assert "get_patient_timeline(patient_id: str, start_date: str = None, end_date: str = None, include_notes: bool = False)" \
        in listing
