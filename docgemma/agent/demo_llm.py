"""``DOCGEMMA_BACKEND=fake``: a rule-based stand-in model for UI demos and browser tests without weights.

It reads the query out of each prompt and answers from the deterministic entities, so the whole graph
(tools, approvals, errors) can be exercised; its answers say plainly that no model was used. It imitates the
agent's own rules (task patterns), so it lives in the agent layer and registers itself as the ``fake``
backend of :func:`docgemma.llm.make_llm`.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel

from docgemma.agent.patterns import TASK_PATTERNS
from docgemma.clinical.entities import extract_entities
from docgemma.llm import register_backend
from docgemma.llm.fake import Call, FakeLLM

_DOSE_RE = re.compile(r"\d+(?:\.\d+)?\s*(?:mg|mcg|g|units?|ml)\b", re.IGNORECASE)
_FREQUENCY_RE = re.compile(r"(?:once|twice|three times|four times) (?:a day|daily)|every \d+ hours|at night|as needed",
                           re.IGNORECASE)
_QUERY_RE = re.compile(r"(?:User query|Query|Clinician's question): (.*)")


def _query(call: Call) -> str:
    found = _QUERY_RE.findall(call.prompt)
    return found[-1].strip() if found else call.messages[-1]["content"]


def _respond(call: Call) -> BaseModel | dict[str, Any] | str:
    query = _query(call)
    entities = extract_entities(query)
    drugs, names, ids = entities["drug_mentions"], entities["patient_names"], entities["patient_ids"]
    by_keyword = next((sorted(p.requires)[0] for p in TASK_PATTERNS if p.matches(query)), None)
    tool = by_keyword or ("check_drug_interactions" if len(drugs) >= 2 else "check_drug_safety" if drugs
                          else "search_patient" if names else "get_patient_chart" if ids else None)
    if call.schema is None:
        return f"(Demo model, no medical reasoning.) Summary of the information gathered for: {query}"
    schema = call.schema.__name__
    if schema == "IntentClassification":
        return {"intent": "TOOL_NEEDED" if tool else "DIRECT", "task_summary": query[:140], "suggested_tool": tool}
    if schema == "ToolSelection":
        return {"tool_name": tool or "check_drug_safety"}
    if schema == "ResultAssessment":
        return {"quality": "success_partial"}
    if schema == "RetryStrategy":
        return {"strategy": "retry_same"}
    if schema == "ImageFindingsOutput":
        return {"modality": "other", "findings": ["Demo model: the image was received, not interpreted"], "confidence": "low"}
    dose = _DOSE_RE.search(query)
    frequency = _FREQUENCY_RE.search(query)
    values = {"medication_name": drugs[0] if drugs else "not specified",
              "dosage": dose.group(0) if dose else "not specified",
              "frequency": frequency.group(0) if frequency else "not specified",
              "note_type": "progress", "note_text": query[:600],
              "drug_name": drugs[0] if drugs else query[:60], "drug_names": ([*drugs, "unknown", "unknown"])[:max(2, len(drugs))],
              # "unknown" is not a valid id: TOOL_EXECUTE then takes the active patient, as it would for "her".
              "name": names[0] if names else query[:60], "patient_id": ids[0] if ids else "unknown", "query": query[:110],
              "condition": query[:80]}
    fields = call.schema.model_fields
    return {k: values.get(k, "not specified") for k, info in fields.items() if info.is_required()}


def demo_llm() -> FakeLLM:
    """The rule-based demo model."""
    return FakeLLM(responder=_respond, name="Demo rules (no model: not clinically meaningful)", supports_images=True,
                   clinically_meaningful=False)


register_backend("fake", lambda settings: demo_llm())
