"""Plain-text rendering of a turn result (the terminal chat)."""

from __future__ import annotations

from docgemma.workspace import TurnResult


def render_timeline(result: TurnResult) -> str:
    """The reasoning timeline, confidence, sources and follow-ups as aligned text."""
    lines = ["Reasoning timeline:"]
    for e in result.timeline:
        calls = f"{e['llm_calls']} LLM call(s), {e['prompt_tokens']} prompt tokens" if e["llm_calls"] else "code"
        lines.append(f"  {e['label']:<34} {e['decision']:<24} {e['duration_ms']:>9.1f} ms  {calls}")
        detail = e["detail"]
        if detail:
            lines.append(f"      {detail[:160]}")
    lines.append(f"Confidence: {result.confidence or 'n/a'}   LLM calls: {result.llm_calls}   "
                 f"prompt tokens: {result.prompt_tokens}   time: {result.latency_ms:.0f} ms")
    for source in result.sources:
        lines.append(f"Source: {source['title']} <{source['url']}>")
    for question in result.follow_ups:
        lines.append(f"Follow-up: {question}")
    return "\n".join(lines)
