"""TOOL_SELECT stage 1: description format, shots, joint vs two-stage, schema order,
analytical prefix, and the two rejected strategies (boolean probing, reasoning-then-select).

The baseline is the agent's own prompt (``prompts.stage1_messages``) and schema; the variants change
one thing each. ``rule`` is what code decides before any model call (``rules.next_tool``).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from pydantic import BaseModel, Field, create_model

from docgemma.agent import prompts, rules
from docgemma.agent.nodes.tool_select import entity_hints, example_for
from docgemma.agent.schemas import tool_selection_schema
from docgemma.eval.experiments.core import Case, Probe, Suite, Unusable, Variant, case_state, load_cases, tool_ok
from docgemma.eval.matching import args_match
from docgemma.llm.base import Message
from docgemma.tools.registry import ToolRegistry, ToolSpec, default_registry

REGISTRY = default_registry()
NAMES = REGISTRY.names


def short_list(registry: ToolRegistry) -> str:
    """Seed 002's short_desc: the signature (parenthetical argument hints) and a few words."""
    return "\n".join(f"- {s.signature} — {' '.join(s.full_desc.split()[:6])}…" for s in registry)


def names_list(registry: ToolRegistry) -> str:
    """Names only."""
    return "\n".join(f"- {s.name}" for s in registry)


def stage1(case: Case, *, tools: str = "full", shots: int = 1, prefix: bool = True, reasoning: str = "") -> list[Message]:
    """The agent's stage-1 prompt with one factor changed."""
    state = case_state(case)
    example = example_for(state, REGISTRY)
    messages = prompts.stage1_messages(state, REGISTRY, example)
    if tools == "full" and shots == 1 and prefix and not reasoning:
        return messages  # exactly the agent's prompt
    listing = {"full": REGISTRY.tool_list(), "short": short_list(REGISTRY), "names": names_list(REGISTRY)}[tools]
    others = [s for s in REGISTRY if s.name != example.name][: max(0, shots - 1)]
    ask = f"{prompts.ANALYTICAL_PREFIX}which tool fits best?" if prefix else "Which tool fits best?"
    if reasoning:
        ask = f"Your analysis: {reasoning}\n\n{ask}"
    return prompts.with_shared_prefix(state, prompts.stage1_task(listing, [example, *others][:shots], state, ask))


def _select(probe: Probe, messages: list[Message]) -> str:
    out = probe.json(messages, tool_selection_schema(NAMES), "tool_select_stage1")
    return str(out.tool_name)  # type: ignore[attr-defined]  # dynamic schema


def selecting(**factors: Any) -> Any:
    def trial(probe: Probe | None, case: Case) -> dict[str, Any]:
        assert probe is not None
        tool = _select(probe, stage1(case, **factors))
        return {"output": tool, "correct": tool_ok(case, tool), "exact": tool == case["expected_tool"]}
    return trial


def _stage2(probe: Probe, case: Case, spec: ToolSpec) -> dict[str, Any]:
    state = case_state(case)
    config_cap = max(128, spec.arg_max_tokens)
    out = probe.json(prompts.stage2_messages(state, spec, entity_hints(state)), spec.args_model,
                     "tool_select_stage2", max_tokens=config_cap)
    return out.model_dump(exclude_none=True)


def two_stage(probe: Probe | None, case: Case) -> dict[str, Any]:
    """Stage 1 then stage 2 with the chosen tool's own argument schema (the agent's design)."""
    assert probe is not None
    tool = _select(probe, stage1(case))
    try:
        args = _stage2(probe, case, REGISTRY[tool])
    except Unusable:
        args = {}
    right = tool_ok(case, tool)
    return {"output": f"{tool} {args}", "correct": right, "exact": tool == case["expected_tool"],
            "args_correct": right and args_match(case["expected_args"], args)}


@lru_cache(maxsize=2)
def joint_schema(critical_first: bool) -> type[BaseModel]:
    """One schema: ``tool_name`` plus every tool's arguments as nullable fields (joint
    selection, 80% vs 90% two-stage). ``critical_first=False`` puts the nullable fields before ``tool_name``."""
    fields: dict[str, Any] = {}
    for spec in REGISTRY:
        for name, info in spec.args_model.model_fields.items():
            if name in fields:
                continue
            kind: Any = list[str] if "list" in str(info.annotation) else bool if info.annotation is bool else str
            fields[name] = (kind | None, Field(default=None, max_length=4 if kind is list[str] else 60)
                            if kind is not bool else None)
    tool = {"tool_name": (tool_selection_schema(NAMES).model_fields["tool_name"].annotation, ...)}
    ordered = {**tool, **fields} if critical_first else {**fields, **tool}
    return create_model("JointSelection" if critical_first else "JointSelectionCriticalLast", **ordered)


def joint(critical_first: bool) -> Any:
    def trial(probe: Probe | None, case: Case) -> dict[str, Any]:
        assert probe is not None
        state = case_state(case)
        messages = prompts.stage1_messages(state, REGISTRY, example_for(state, REGISTRY))
        messages[-1] = Message(role="user", content=messages[-1]["content"] + "\nFill in the tool and its arguments.")
        out = probe.json(messages, joint_schema(critical_first), "tool_select_stage1", max_tokens=512)
        values = out.model_dump(exclude_none=True)
        tool = str(values.pop("tool_name"))
        right = tool_ok(case, tool)
        return {"output": f"{tool} {values}", "correct": right, "exact": tool == case["expected_tool"],
                "args_correct": right and args_match(case["expected_args"], values)}
    return trial


@lru_cache(maxsize=1)
def probe_schema() -> type[BaseModel]:
    """Boolean probing: one ``suitable`` flag per tool."""
    return create_model("ToolSuitability", **{name: (bool, ...) for name in NAMES})  # type: ignore[call-overload]


def boolean_probe(probe: Probe | None, case: Case) -> dict[str, Any]:
    """Boolean probing, "is tool X suitable?" for every tool at once; right only when the expected tool is
    the one marked suitable."""
    assert probe is not None
    system = ("You are a clinical tool router. For each tool below, say whether it is suitable for the task "
              f"(true or false).\n\nAvailable tools:\n{REGISTRY.tool_list()}")
    out = probe.json([Message(role="system", content=system), Message(role="user", content=f"Task: {case['query']}")],
                     probe_schema(), "tool_select_stage1", max_tokens=160)
    chosen = [n for n, v in out.model_dump().items() if v]
    right = len(chosen) == 1 and tool_ok(case, chosen[0])
    return {"output": ",".join(chosen), "correct": right, "exact": right, "n_suitable": len(chosen)}


def reason_then_select(probe: Probe | None, case: Case) -> dict[str, Any]:
    """Reasoning-then-select: free-text reasoning first, then the selection with the reasoning in the prompt."""
    assert probe is not None
    think = [Message(role="system", content="You are a clinical assistant. Reason briefly about what the clinician "
                                           "needs and which resource could provide it."),
             Message(role="user", content=case["query"])]
    reasoning = probe.text(think, temperature=0.0, max_tokens=128).strip()
    tool = _select(probe, stage1(case, reasoning=reasoning[:600]))
    return {"output": tool, "correct": tool_ok(case, tool), "exact": tool == case["expected_tool"]}


def by_rule(probe: Probe | None, case: Case) -> dict[str, Any]:
    """What code decides before asking the model (None: the model would be asked)."""
    decided = rules.next_tool(case_state(case), REGISTRY)
    tool = decided[0] if decided else None
    return {"output": tool or "(model asked)", "correct": tool is not None and tool_ok(case, tool),
            "exact": tool == case["expected_tool"], "decided": tool is not None}


SUITE = Suite(
    name="tool_select",
    node="tool_select_stage1",
    description="Stage-1 tool accuracy (and stage-2 argument accuracy where the variant extracts arguments).",
    cases=lambda: load_cases("tool_select"),
    variants=(
        Variant("full_desc_1shot", selecting(), description="the agent's prompt: full_desc, 1 matched shot, prefix"),
        Variant("short_desc", selecting(tools="short"), description="signature + a few words"),
        Variant("names_only", selecting(tools="names"), description="tool names only"),
        Variant("0shot", selecting(shots=0), description="no example"),
        Variant("3shot", selecting(shots=3), description="matched example + two others"),
        Variant("prefix_off", selecting(prefix=False), description="no analytical prefix"),
        Variant("two_stage", two_stage, description="stage 1 then the tool's own argument schema"),
        Variant("joint", joint(True), description="one schema: tool_name first, all arguments nullable"),
        Variant("joint_critical_last", joint(False), description="one schema, nullable arguments before tool_name"),
        Variant("boolean_probe", boolean_probe, description="a suitable flag per tool (rejected)"),
        Variant("reason_then_select", reason_then_select, description="free reasoning, then select (rejected)"),
        Variant("rule", by_rule, uses_model=False, description="rules.next_tool: code decides when the message settles it"),
    ),
)
