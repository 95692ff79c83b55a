"""Answers written by code, for a model that is not fit to write medical text (the embedded CPU demo
model): the facts the tools returned and their sources, plainly, and an honest word about what the demo
can and cannot do. Nothing here adds a medical claim the tools did not return."""

from __future__ import annotations

import re

from docgemma.agent.state import ToolResult
from docgemma.tools.outcome import Source

DEMO_GREETING = "Hello. I am DocGemma Connect, a clinical decision-support assistant."
_LABEL_RE = re.compile(r"^\[(?P<label>[^\]\n]+)\]\n?")


def result_section(result: ToolResult) -> str:
    """One tool result as a titled section: its clinical label, then the formatted facts."""
    text = result["formatted_result"].strip()
    found = _LABEL_RE.match(text)
    body = text[found.end():] if found else text
    return f"**{result['tool_label']}**\n\n{body.strip() or 'No details were returned.'}"


def retrieved_facts(results: list[ToolResult], errors: list[str], sources: list[Source]) -> str:
    """The answer to a tool turn without a model: each successful result, what could not be retrieved,
    and the sources. That a demo writes no medical text is said once, on the page, not under every answer."""
    parts = [result_section(r) for r in results if r["status"] == "success"]
    if errors:
        parts.append("**Not retrieved**\n\n" + "\n".join(f"- {e}" for e in errors))
    linked = [s for s in sources if s.get("title")]
    if linked:
        parts.append("**Sources**\n\n" + "\n".join(
            f"- [{s['title']}]({s['url']})" if s.get("url") else f"- {s['title']}" for s in linked
        ))
    return "\n\n".join(parts)
