"""Node ③ TOOL_SELECT (LLM, T=0, two stages): stage 1 picks the tool name only, stage 2 extracts that
tool's arguments with deterministic entity hints.

* Stage 1 by rule: when the task still needs a tool code can name (task patterns, an imperative write, a
  named patient, a question about the active patient's record), no model call.
* Stage 2 by rule first: :func:`docgemma.agent.prefill.prefill` fills what the message states; the model
  is asked only for the required fields still missing (a schema of just those), never for a patient id.

* Retry "same": no model call — the same tool and arguments run again.
* Retry "different": stage 2 only, told what failed.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel

from docgemma.agent import prompts, rules
from docgemma.agent.node_settings import NODE_CONFIG
from docgemma.agent.prefill import FromRecord, from_record, prefill
from docgemma.agent.record_check import RecordFacts
from docgemma.agent.schemas import missing_fields_schema, tool_selection_schema
from docgemma.agent.state import AgentState
from docgemma.agent.trace import NodeTrace
from docgemma.llm.base import LLM, LLMError, clinically_meaningful
from docgemma.tools.extract import NOT_SPECIFIED
from docgemma.tools.registry import ToolRegistry, ToolSpec
from docgemma.tools.routing import Role


def entity_hints(state: AgentState) -> list[str]:
    """Stage-2 hints from INPUT_ASSEMBLY (deterministic entity hints: without them the model misses names and
    drugs) and the active patient."""
    entities = state["extracted_entities"]
    hints = [f"Detected patient ID: {pid}" for pid in entities["patient_ids"]]
    active = state.get("active_patient")
    if active and not entities["patient_ids"]:
        hints.append(f"Active patient ID: {active['id']} ({active['name']})")
    hints += [f"Detected patient name: {name}" for name in entities["patient_names"]]
    hints += [f"Detected drug name: {drug}" for drug in entities["drug_mentions"]]
    return hints


def example_for(state: AgentState, registry: ToolRegistry) -> ToolSpec:
    """The 1-shot example: the suggested tool's, else one matched from the entities (two drugs: the tool of
    drugs together; one drug: a drug's safety; a patient name: the patient search), else the first tool's."""
    suggested = state.get("suggested_tool")
    if suggested and suggested in registry:
        return registry[suggested]
    entities = state["extracted_entities"]
    drugs = entities["drug_mentions"]
    candidates = (
        registry.first(Role.INTERACTIONS) if len(drugs) >= 2 else None,
        registry.first(Role.DRUG_SAFETY) if drugs else None,
        next((s for s in registry if s.patient_search), None) if entities["patient_names"] else None,
    )
    return next((spec for spec in candidates if spec), registry.specs[0])


#: Fields only code may fill: a model cannot know an identifier the message and the record do not give.
CODE_ONLY_FIELDS = frozenset({"patient_id"})


def _ask_model(llm: LLM, state: AgentState, spec: ToolSpec, schema: type[BaseModel], *,
               known: dict[str, Any] | None = None, retry_note: str = "") -> dict[str, Any]:
    """Stage 2 by the model for ``schema`` (the tool's arguments, or only the missing ones). An unusable
    output yields ``{}``: TOOL_EXECUTE then reports the missing fields."""
    config = NODE_CONFIG["tool_select_stage2"]
    try:
        out = llm.generate_json(
            prompts.stage2_messages(state, spec, entity_hints(state), retry_note, known=known), schema,
            temperature=config.temperature, max_tokens=max(config.max_tokens, spec.arg_max_tokens),
        )
    except LLMError:
        return {}
    return out.model_dump(exclude_none=True)


def _fill_args(llm: LLM, state: AgentState, spec: ToolSpec, read: FromRecord | None) -> tuple[dict[str, Any], str]:
    """Stage 2: code's values (the message's, then the record's, ``read`` by :func:`from_record`: "her other meds",
    a connection's start), then the model for the required fields still missing. Returns the arguments and how they
    were obtained (for the timeline)."""
    known = prefill(spec, state)
    if read is not None:
        known = {**known, **read.args}
    missing = _missing(spec, known)
    if not missing:
        return known, "arguments by rule (no model call)" + (f"; {read.note}" if read else "")
    if spec.writes and not clinically_meaningful(llm):
        # A model not fit for medicine puts no words into the record: the card shows what is missing and
        # the clinician edits it (seen on the embedded model: the request itself became a note's text).
        return {**dict.fromkeys(missing, NOT_SPECIFIED), **known}, (
            f"{', '.join(missing)} not stated: left for the clinician on the card (demo model writes nothing)")
    # The parts a request splits into are asked for with the missing field, so that the model does not put the
    # whole request into it ("belimumab in lupus nephritis" is an intervention and a condition).
    extra = tuple(name for name in spec.model_fills if name not in known)
    asked = _ask_model(llm, state, spec, missing_fields_schema(spec.args_model, missing + extra), known=known)
    how = f"model asked for {', '.join(missing)}" + (f"; {', '.join(known)} by rule" if known else "")
    return {**asked, **known}, how


def _missing(spec: ToolSpec, known: dict[str, Any]) -> tuple[str, ...]:
    """The required fields code could not fill (a patient id is never the model's to give)."""
    return tuple(name for name, info in spec.args_model.model_fields.items()
                 if info.is_required() and name not in known and name not in CODE_ONLY_FIELDS)


#: A required argument in the clinician's words (an argument not listed reads as its name in words).
ASKED_AS = {"drug_name": "drug", "drug_names": "drugs", "query": "search terms", "name": "patient's name",
            "fhir_id": "record item (a condition, medication or result)",
            "resource_type": "record item (a condition, medication or result)"}


def _in_words(missing: tuple[str, ...]) -> str:
    words = dict.fromkeys(ASKED_AS.get(name, name.replace("_", " ")) for name in missing)  # once each, in order
    return " and ".join(words)


def _ask_clinician(spec: ToolSpec, missing: tuple[str, ...]) -> str:
    """What a model not fit for medicine cannot read from the message is asked for, never guessed by it."""
    fields = _in_words(missing)
    return (f"I could not read the {fields} for the {spec.label} in your message, and this demo model does not guess. "
            f"Which {fields} do you mean?")


def _demo_asks(trace: NodeTrace, state: AgentState, spec: ToolSpec, reason: str,
               from_record: dict[str, Any]) -> dict[str, Any] | None:
    """The embedded default makes no model call for arguments either (issue 26): a required field code cannot
    read is asked of the clinician. None: code has every field, the tool writes (the card shows what is missing),
    or the model is fit to extract it."""
    missing = _missing(spec, {**prefill(spec, state), **from_record})
    if not missing or spec.writes or clinically_meaningful(trace.llm):
        return None
    event = trace.event("asked the clinician", f"decided by rule: {reason}; the {_in_words(missing)} not stated "
                        "and not read by code: asked for (a demo model makes no call for arguments)")
    return {"current_tool": None, "current_args": None, "clarification_request": _ask_clinician(spec, missing),
            "timeline": [event]}


def tool_select(state: AgentState, *, llm: LLM, registry: ToolRegistry,
                record_facts: RecordFacts | None = None) -> dict[str, Any]:
    """Select the next tool call; see the module docstring. ``record_facts`` reads the active patient's record for
    the arguments it gives ("her other meds")."""
    trace = NodeTrace("tool_select", llm)
    assert trace.llm is not None
    mode = state.get("retry_mode")
    tool = state.get("current_tool")

    if mode == "same" and tool:
        event = trace.event(registry.label(tool), "retrying the same request")
        return {"retry_mode": None, "timeline": [event]}

    if mode == "different" and tool:
        last = state["tool_results"][-1]
        note = f"The previous attempt ({last['args']}) failed: {last['error']} Use different arguments."
        args = _ask_model(trace.llm, state, registry[tool], registry[tool].args_model, retry_note=note)
        event = trace.event(registry.label(tool), f"retrying with different arguments: {args}")
        return {"current_args": args, "retry_mode": None, "timeline": [event]}

    by_rule = rules.next_tool(state, registry)
    if by_rule is not None:
        tool, reason = by_rule
        gap = from_record(registry[tool], state, record_facts)
        if gap is not None and gap.ask:
            # "her other meds" and the record gives none: the clinician is asked, nothing is checked half-way.
            event = trace.event("asked the clinician", f"decided by rule: {reason}; {gap.note} (no model call)")
            return {"current_tool": None, "current_args": None, "clarification_request": gap.ask, "timeline": [event]}
        spec = registry[tool]
        asked = _demo_asks(trace, state, spec, reason, gap.args if gap is not None else {})
        if asked is not None:
            return asked
        # The record was read once for this tool (``gap``): its arguments are those, not a second read.
        args, how = _fill_args(trace.llm, state, spec, gap)
        event = trace.event(registry.label(tool), f"decided by rule: {reason}; {how}; arguments: {args}")
        return {"current_tool": tool, "current_args": args, "retry_count": 0, "retry_mode": None, "timeline": [event]}

    # Only a first selection reaches the model: on loop re-entry the router has already named the tool
    # the task still needs (code), so a "none" answer from the model (no more tools) is never needed.
    if not clinically_meaningful(trace.llm):
        # Unreachable on the default graph (an unsure turn is asked with buttons before this node): kept as a guard
        # so that a model not fit for medicine never chooses a tool.
        event = trace.event("no further tool", "a demo model does not choose tools (no model call)")
        return {"current_tool": None, "current_args": None, "timeline": [event]}
    config = NODE_CONFIG["tool_select_stage1"]
    messages = prompts.stage1_messages(state, registry, example_for(state, registry))
    try:
        choice = trace.llm.generate_json(
            messages, tool_selection_schema(registry.names), temperature=config.temperature, max_tokens=config.max_tokens,
        )
        tool = str(choice.tool_name)  # type: ignore[attr-defined]  # dynamic schema
    except LLMError:
        event = trace.event("no further tool", "model output unusable; moving on to the answer")
        return {"current_tool": None, "current_args": None, "timeline": [event]}

    args, how = _fill_args(trace.llm, state, registry[tool], from_record(registry[tool], state, record_facts))
    event = trace.event(registry.label(tool), f"model chose; {how}; arguments: {args}")
    return {"current_tool": tool, "current_args": args, "retry_count": 0, "retry_mode": None, "timeline": [event]}


def route_after_select(state: AgentState) -> Literal["tool_execute", "synthesize"]:
    """Edge: execute the chosen tool, or answer when the loop chose none."""
    return "tool_execute" if state.get("current_tool") else "synthesize"
