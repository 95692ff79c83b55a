"""SYNTHESIZE: temperature 0.0-1.0, 256 vs 512 tokens, brief vs structured prompt,
raw vs pre-formatted errors, thinking prefix. Scored by rules: facts present, tool/source-name leakage,
answering from memory after an error, empty output, length; optionally by a judge model
(``--judge-model``, through the OpenAI-compatible backend).

The agent's own safeguards (code-written answers when every tool failed, the tool-name scrubber) are
deliberately not applied: the suite measures what the model writes.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, Field

from docgemma.agent import prompts
from docgemma.agent.node_settings import NODE_CONFIG
from docgemma.eval.experiments.core import Case, Probe, Suite, Variant, case_state, load_cases, tool_result
from docgemma.eval.matching import matches
from docgemma.llm.base import LLM, Message
from docgemma.tools.registry import default_registry

REGISTRY = default_registry()
#: Names a clinician should never see: tool names, and the services behind them (naming them is "source leakage").
LEAK_RE = re.compile(r"\b(" + "|".join(REGISTRY.names) + r"|openFDA|api\.fda|eutils|Europe ?PMC|FHIR|tool_name|"
                     r"Traceback|Exception|HTTPS?ConnectionPool)\b", re.IGNORECASE)
THINK_RE = re.compile(r"<think>.*?(</think>|$)", re.IGNORECASE | re.DOTALL)
STRUCTURED = """Use exactly this structure:
## Summary
## Key findings
## Clinical recommendations
## Sources consulted"""
THINKING = "Before answering, think step by step inside <think></think> tags, then give the answer."

#: The judge (optional): set by the CLI when ``--judge-model`` is given.
JUDGE: dict[str, LLM] = {}


class JudgeScore(BaseModel):
    """A 1-10 quality score from a judge model."""

    score: int = Field(ge=1, le=10)


def state_for(case: Case, raw_errors: bool) -> Any:
    results = [tool_result(REGISTRY, r["tool"], {"status": "success", "data": r["data"]}) for r in case.get("results", [])]
    failed = [tool_result(REGISTRY, e["tool"], {"status": "error", "error_type": e["error_type"]}, entity=e["entity"],
                          raw_error=e["raw"] if raw_errors else None) for e in case.get("errors", [])]
    return case_state(case, tool_results=results + failed, error_messages=[str(f["error"]) for f in failed])


def messages_for(case: Case, *, structured: bool = False, raw_errors: bool = False, thinking: bool = False) -> list[Message]:
    state = state_for(case, raw_errors)
    ok = [r for r in state["tool_results"] if r["status"] == "success"]
    brief = len(ok) == 1 and len(state["tool_results"]) == 1 and REGISTRY[ok[0]["tool_name"]].lookup
    messages = prompts.synthesis_messages(state, brief)
    extra = "\n\n".join(x for x in (STRUCTURED if structured else "", THINKING if thinking else "") if x)
    if extra:
        messages[0] = Message(role="system", content=f"{messages[0]['content']}\n\n{extra}")
    return messages


def score(case: Case, text: str) -> dict[str, Any]:
    """Rule scores of an answer."""
    visible = THINK_RE.sub("", text).strip()
    facts = case["facts"]
    present = [f for f in facts if matches(f, visible)]
    memory = any(matches(m, visible) for m in case.get("must_not", []))
    leak = bool(LEAK_RE.search(visible))
    empty = not visible
    return {"output": visible[:1500], "fact_rate": len(present) / len(facts), "leak": leak, "empty": empty,
            "from_memory": memory, "words": len(visible.split()),
            "correct": len(present) == len(facts) and not leak and not empty and not memory}


def model(temperature: float | None = None, max_tokens: int | None = None, **prompt: bool) -> Any:
    config = NODE_CONFIG["synthesize"]

    def trial(probe: Probe | None, case: Case) -> dict[str, Any]:
        assert probe is not None
        messages = messages_for(case, **prompt)
        text = probe.text(messages, temperature=config.temperature if temperature is None else temperature,
                          max_tokens=max_tokens or config.max_tokens)
        out = score(case, text)
        judge = JUDGE.get("model")
        if judge is not None:
            verdict = judge.generate_json(
                [Message(role="system", content="Rate this answer to a clinician from 1 (useless or unsafe) to 10 "
                                                "(accurate, concise, grounded only in the information given)."),
                 Message(role="user", content=f"{messages[1]['content']}\n\nAnswer:\n{out['output']}")],
                JudgeScore, temperature=0.0, max_tokens=16)
            out["judge_score"] = verdict.score
        return out
    return trial


SUITE = Suite(
    name="synthesize",
    node="synthesize",
    description="Answer quality by rules: all facts present, no tool/source names, no answer from memory after an "
                "error, not empty.",
    cases=lambda: load_cases("synthesize"),
    variants=(
        Variant("t0.5_256", model(), description="the agent's settings: T=0.5, 256 tokens, brief/plain prompt"),
        Variant("t0.0", model(temperature=0.0)),
        Variant("t0.3", model(temperature=0.3)),
        Variant("t0.7", model(temperature=0.7)),
        Variant("t1.0", model(temperature=1.0)),
        Variant("tokens_512", model(max_tokens=512)),
        Variant("structured", model(structured=True), description="a sectioned template (rejected)"),
        Variant("raw_errors", model(raw_errors=True), description="raw exception text instead of pre-formatted errors"),
        Variant("thinking_prefix", model(thinking=True), description="think-then-answer (rejected)"),
    ),
)
