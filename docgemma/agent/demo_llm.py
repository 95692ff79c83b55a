"""``DOCGEMMA_BACKEND=fake``: a rule-based stand-in model for UI demos and browser tests without weights.

It reads the query out of each prompt and answers from the deterministic entities, so the whole graph
(tools, approvals, errors) can be exercised; its answers say plainly that no model was used. It imitates the
agent's own rules (the tools' task keywords and roles), so it lives in the agent layer and registers itself as
the ``fake`` backend of :func:`docgemma.llm.make_llm`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from pydantic import BaseModel

from docgemma.clinical.dosing import DOSE_TEXT_RE, frequency_words
from docgemma.clinical.entities import extract_entities
from docgemma.llm import Factory
from docgemma.llm.fake import Call, FakeLLM
from docgemma.tools.registry import ToolRegistry, installed_registry
from docgemma.tools.routing import Role

_QUERY_RE = re.compile(r"(?:User query|Query|Clinician's question): (.*)")


def _query(call: Call) -> str:
    found = _QUERY_RE.findall(call.prompt)
    return found[-1].strip() if found else call.messages[-1]["content"]


def _choose(query: str, drugs: list[str], names: list[str], ids: list[str], tools: ToolRegistry) -> str | None:
    """The first tool whose keywords the query says, else by the entities: two drugs, one drug, a patient name,
    a patient id."""
    by_entities = (
        tools.first(Role.INTERACTIONS) if len(drugs) >= 2 else tools.first(Role.DRUG_SAFETY) if drugs
        else next((s for s in tools if s.patient_search), None) if names else tools.first(Role.CHART) if ids else None
    )
    spec = next((s for s in tools if s.matches(query)), None) or by_entities
    return spec.name if spec else None


def _respond(call: Call, tools: ToolRegistry) -> BaseModel | dict[str, Any] | str:
    query = _query(call)
    entities = extract_entities(query)
    drugs, names, ids = entities["drug_mentions"], entities["patient_names"], entities["patient_ids"]
    tool = _choose(query, drugs, names, ids, tools)
    if call.schema is None:
        return f"(Demo model, no medical reasoning.) Summary of the information gathered for: {query}"
    schema = call.schema.__name__
    if schema == "IntentClassification":
        return {"intent": "TOOL_NEEDED" if tool else "DIRECT", "task_summary": query[:140], "suggested_tool": tool}
    if schema == "ToolSelection":
        return {"tool_name": tool or tools.specs[0].name}
    if schema == "ResultAssessment":
        return {"quality": "success_partial"}
    if schema == "RetryStrategy":
        return {"strategy": "retry_same"}
    if schema == "ImageFindingsOutput":
        return {"modality": "other", "findings": ["Demo model: the image was received, not interpreted"], "confidence": "low"}
    dose = DOSE_TEXT_RE.search(query)
    values = {"medication_name": drugs[0] if drugs else "not specified",
              "dosage": dose.group(0) if dose else "not specified",
              "frequency": frequency_words(query) or "not specified",
              "note_type": "progress", "note_text": query[:600],
              "drug_name": drugs[0] if drugs else query[:60], "drug_names": ([*drugs, "unknown", "unknown"])[:max(2, len(drugs))],
              # "unknown" is not a valid id: TOOL_EXECUTE then takes the active patient, as it would for "her".
              "name": names[0] if names else query[:60], "patient_id": ids[0] if ids else "unknown", "query": query[:110],
              "condition": query[:80]}
    fields = call.schema.model_fields
    return {k: values.get(k, "not specified") for k, info in fields.items() if info.is_required()}


#: The demo rules' name: the status line shows it, and :mod:`docgemma.agent.modes` recognises the rules by it.
DEMO_RULES_NAME = "Demo rules (no model: not clinically meaningful)"


def demo_llm(tools: ToolRegistry | None = None) -> FakeLLM:
    """The rule-based demo model, choosing among ``tools`` (the installed registry's: the catalog and the tools
    installed distributions add)."""
    registry = tools or installed_registry()
    return FakeLLM(responder=lambda call: _respond(call, registry), name=DEMO_RULES_NAME,
                   supports_images=True, clinically_meaningful=False)


#: The backends the agent provides to ``llm.make_llm``, by name (``DOCGEMMA_BACKEND=fake``).
AGENT_BACKENDS: Mapping[str, Factory] = MappingProxyType({"fake": lambda settings: demo_llm()})
