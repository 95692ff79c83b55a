"""Pure helpers of the answer: internal-name scrubbing, confidence, sources, follow-up suggestions."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from docgemma.agent.state import AgentState, Confidence
from docgemma.tools.outcome import Source
from docgemma.tools.registry import ToolRegistry

CAPABILITIES = (
    "I can help with: FDA drug safety warnings and drug interactions, medical literature, clinical "
    "trials, the patient record (search, chart review, and — with your approval — notes, allergies and "
    "prescriptions), and analysis of an attached medical image."
)
TOPIC_SUGGESTIONS = (
    "What are the FDA boxed warnings for dofetilide?",
    "Check interactions between warfarin and aspirin",
    "Find recruiting clinical trials for heart failure",
)
#: Internal vocabulary that must never reach the clinician (besides tool names, added per registry).
INTERNAL_TERMS = ("TOOL_NEEDED", "success_rich", "success_partial", "no_results", "error_retryable",
                  "error_fatal", "retry_same", "retry_different_args")


class Scrubber:
    """Replaces tool names with clinical labels and drops internal terms, on a token stream.

    Text is released up to the last whitespace, so a name split across chunks is still caught.
    """

    def __init__(self, registry: ToolRegistry) -> None:
        labels = {spec.name: spec.label for spec in registry}
        self._labels = labels
        names = sorted([*labels, *INTERNAL_TERMS], key=len, reverse=True)
        self._pattern = re.compile(r"\[?`?\b(" + "|".join(map(re.escape, names)) + r")\b`?\]?")
        self._pending = ""

    def _clean(self, text: str) -> str:
        return self._pattern.sub(lambda m: self._labels.get(m.group(1), ""), text)

    def feed(self, chunk: str) -> str:
        """Add a chunk; return the text that is safe to show now."""
        self._pending += chunk
        cut = max(self._pending.rfind(" "), self._pending.rfind("\n"))
        if cut < 0:
            return ""
        ready, self._pending = self._pending[: cut + 1], self._pending[cut + 1 :]
        return self._clean(ready)

    def flush(self) -> str:
        """The rest of the text."""
        rest, self._pending = self._pending, ""
        return self._clean(rest)

    def clean(self, text: str) -> str:
        """Scrub a whole text at once."""
        return self._clean(text)


def scrub_stream(chunks: Iterable[str], scrubber: Scrubber) -> Iterator[str]:
    """Scrub a stream of chunks."""
    for chunk in chunks:
        ready = scrubber.feed(chunk)
        if ready:
            yield ready
    rest = scrubber.flush()
    if rest:
        yield rest


def confidence(state: AgentState) -> Confidence:
    """high: every tool call returned rich data; low: an error, a skip, no results or a question back;
    medium otherwise, including answers from the model's general knowledge (no tool used)."""
    qualities = state.get("qualities", [])
    if state.get("clarification_request") or state.get("error_messages"):
        return "low"
    if not qualities:
        return "medium"
    if qualities[-1] == "no_results" or qualities[-1].startswith("error"):
        return "low"
    succeeded = [q for q in qualities if not q.startswith("error")]
    return "high" if succeeded and all(q == "success_rich" for q in succeeded) else "medium"


def sources(state: AgentState) -> list[Source]:
    """Citations of the successful tool calls, without duplicates."""
    seen: set[str] = set()
    out: list[Source] = []
    for result in state.get("tool_results", []):
        if result["status"] != "success":
            continue
        for source in result["sources"]:
            key = source.get("url") or source.get("title")
            if key and key not in seen:
                seen.add(key)
                out.append(source)
    return out


def follow_ups(state: AgentState) -> list[str]:
    """Up to three next questions, by rule (no model call): from the drugs, patient and tools of the turn."""
    if state.get("scope") in ("greeting", "off_topic"):
        return list(TOPIC_SUGGESTIONS)
    done = {r["tool_name"] for r in state.get("tool_results", []) if r["status"] == "success"}
    entities = state["extracted_entities"]
    drugs = entities["drug_mentions"]
    patient = state.get("active_patient")
    out: list[str] = []
    if patient and "get_patient_chart" not in done:
        out.append(f"Show the chart of {patient['name']}")
    if drugs and "check_drug_safety" not in done:
        out.append(f"What are the FDA safety warnings for {drugs[0]}?")
    if len(drugs) >= 2 and "check_drug_interactions" not in done:
        out.append(f"Check interactions between {' and '.join(drugs[:3])}")
    if drugs and patient and "check_drug_interactions" not in done and len(drugs) == 1:
        out.append(f"Does {drugs[0]} interact with {patient['name']}'s current medications?")
    if drugs and "search_medical_literature" not in done:
        out.append(f"Find recent studies on {drugs[0]}")
    if "search_medical_literature" in done and "find_clinical_trials" not in done:
        out.append("Are there recruiting clinical trials on this topic?")
    if not out:
        out.append("Find recent studies on this topic")
    return out[:3]
