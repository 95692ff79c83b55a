"""Wiring of the v3 graph. No logic lives here: nodes and edge functions are imported."""

from __future__ import annotations

from functools import partial
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph

from docgemma.agent.nodes.commit_patient import NEXT, commit_patient, proposed
from docgemma.agent.nodes.error_handler import error_handler, route_after_error
from docgemma.agent.nodes.input_assembly import PatientContext, input_assembly
from docgemma.agent.nodes.intent_classify import intent_classify, route_after_intent
from docgemma.agent.nodes.result_classify import result_classify
from docgemma.agent.nodes.router import route_after_router, router
from docgemma.agent.nodes.synthesize import synthesize
from docgemma.agent.nodes.thread_update import route_at_start, thread_update
from docgemma.agent.nodes.tool_execute import WriteCheck, tool_execute
from docgemma.agent.nodes.tool_select import route_after_select, tool_select
from docgemma.agent.record_check import RecordFacts
from docgemma.agent.state import AgentState, InputState
from docgemma.clinical.roster import PatientRoster
from docgemma.config import Settings
from docgemma.llm.base import LLM
from docgemma.tools.registry import ToolRegistry


def build_graph(
    llm: LLM,
    tools: ToolRegistry,
    checkpointer: BaseCheckpointSaver[Any] | None,
    settings: Settings | None = None,
    *,
    patient_context: PatientContext | None = None,
    write_check: WriteCheck | None = None,
    record_facts: RecordFacts | None = None,
    patient_roster: PatientRoster | None = None,
) -> Any:
    """Compile the agent graph. ``checkpointer`` keeps conversations (and paused writes) per thread."""
    settings = settings or Settings()
    graph = StateGraph(AgentState, input_schema=InputState)
    graph.add_node("input_assembly", partial(
        input_assembly, llm=llm, max_message_chars=settings.max_message_chars,
        max_image_bytes=settings.max_image_bytes, max_image_pixels=settings.max_image_pixels,
        patient_context=patient_context, patient_roster=patient_roster,
    ))
    graph.add_node("intent_classify", partial(intent_classify, llm=llm, registry=tools))
    graph.add_node("tool_select", partial(tool_select, llm=llm, registry=tools, record_facts=record_facts))
    graph.add_node("tool_execute", partial(
        tool_execute, registry=tools, llm=llm, max_image_bytes=settings.max_image_bytes,
        max_image_pixels=settings.max_image_pixels, write_check=write_check, record_facts=record_facts,
    ))
    graph.add_node("result_classify", partial(result_classify, llm=llm))
    graph.add_node("router", partial(router, registry=tools))
    graph.add_node("error_handler", partial(error_handler, llm=llm, registry=tools))
    graph.add_node("synthesize", partial(synthesize, llm=llm, registry=tools, record_facts=record_facts,
                                               patient_roster=patient_roster))

    graph.add_node("thread_update", thread_update)
    graph.add_node("commit_patient", commit_patient, destinations=tuple(NEXT.values()))

    graph.add_conditional_edges(START, route_at_start, ["thread_update", "input_assembly"])
    graph.add_conditional_edges("thread_update", proposed(END), ["commit_patient", END])
    graph.add_conditional_edges("input_assembly", proposed("intent_classify"), ["commit_patient", "intent_classify"])
    graph.add_conditional_edges("intent_classify", route_after_intent, ["tool_select", "synthesize"])
    graph.add_conditional_edges("tool_select", route_after_select, ["tool_execute", "synthesize"])
    graph.add_conditional_edges("tool_execute", proposed("result_classify"), ["commit_patient", "result_classify"])
    graph.add_edge("result_classify", "router")
    graph.add_conditional_edges("router", route_after_router, ["error_handler", "tool_select", "synthesize"])
    graph.add_conditional_edges("error_handler", route_after_error, ["tool_select", "synthesize"])
    graph.add_edge("synthesize", END)
    return graph.compile(checkpointer=checkpointer)
