"""Node ① INPUT_ASSEMBLY (deterministic; one vision call only when an image is attached).

Starts the turn: resets per-turn fields (to ``state.TURN_DEFAULTS``), truncates an over-long message with a
visible note, formats the last turns of history, decodes the attachment, extracts entities, runs the vision
call, and loads the active patient's context (the clinical context every later prompt shares).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from docgemma.agent import prompts
from docgemma.agent.choice import chosen_patient
from docgemma.agent.memory import since_last_switch
from docgemma.agent.node_settings import HISTORY_TURNS, NODE_CONFIG
from docgemma.agent.patterns import request_part
from docgemma.agent.schemas import ImageFindingsOutput
from docgemma.agent.state import NEW_TURN, AgentState, ImageFindings, PatientChange, PatientRef, turn_defaults
from docgemma.agent.trace import NodeTrace
from docgemma.clinical.entities import ExtractedEntities, extract_entities
from docgemma.clinical.patient import described
from docgemma.clinical.roster import PatientRoster, with_known_patients
from docgemma.image_store import ImageRef, decode_ref
from docgemma.images import DEFAULT_MAX_PIXELS, ImageError
from docgemma.llm.base import LLM, LLMError

if TYPE_CHECKING:
    from PIL.Image import Image

PatientContext = Callable[[PatientRef], str | None]
DEFAULT_IMAGE_QUERY = "What does this image show?"
HISTORY_CHARS = 400


def format_history(conversation: list[Any], turns: int = HISTORY_TURNS) -> str:
    """The last ``turns`` exchanges as plain lines; long messages are shortened."""
    lines = []
    for message in conversation[-2 * turns :]:
        who = "Clinician" if message["role"] == "user" else "Assistant"
        text = message["content"]
        if len(text) > HISTORY_CHARS:
            text = text[:HISTORY_CHARS].rstrip() + " …"
        lines.append(f"{who}: {text}")
    return "\n".join(lines)


def truncated(query: str, max_chars: int, notes: list[str]) -> str:
    """The message cut to ``max_chars``, with a visible note when it was longer."""
    if len(query) > max_chars:
        notes.append(f"Your message was {len(query):,} characters long; only the first {max_chars:,} were read.")
        return query[:max_chars]
    return query


def attached_image(image_ref: ImageRef | None, max_bytes: int, max_pixels: int, notes: list[str]) -> Image | None:
    """The turn's image, decoded once with every limit (the image tool is handed this decode), or None."""
    if image_ref is None:
        return None
    try:
        return decode_ref(image_ref, max_bytes, max_pixels)
    except ImageError as exc:
        notes.append(f"{exc} The image was not analysed.")
        return None


def image_findings(image: Image, query: str, trace: NodeTrace, notes: list[str]) -> ImageFindings | None:
    """The vision call on the image; None (with a note saying why) when the model has no vision or failed."""
    assert trace.llm is not None
    if not trace.llm.supports_images:
        notes.append(
            f"An image was attached, but the current model ({trace.llm.name}) has no vision: image analysis "
            "needs a vision model such as MedGemma. The image was not analysed."
        )
        return None
    config = NODE_CONFIG["image_analysis"]
    try:
        out = trace.llm.generate_json(
            prompts.image_messages(query), ImageFindingsOutput,
            temperature=config.temperature, max_tokens=config.max_tokens, images=[image],
        )
    except LLMError:
        notes.append("The image could not be analysed this time; the answer does not use it.")
        return None
    return ImageFindings(modality=out.modality, findings=list(out.findings), confidence=out.confidence)


def resumed_choice(state: AgentState, query: str, notes: list[str]) -> tuple[PatientRef, str] | None:
    """The patient the clinician picked from a clarification's list, and the request that needed the choice
    (it continues: "Find James Wilson and check his chart" → the chart of the one chosen); None otherwise."""
    picked = chosen_patient(query, state.get("patient_options") or [])
    if picked is None or not state.get("pending_request"):
        return None
    selected = PatientRef(id=str(picked["id"]), name=str(picked.get("name") or picked["id"]))
    request = str(state["pending_request"])
    notes.append(f"Selected {described(picked)} from the list; continuing with your request: {request}")
    return selected, request


def _roster_entities(entities: ExtractedEntities, query: str, roster: PatientRoster | None,
                     notes: list[str]) -> tuple[ExtractedEntities, str]:
    """``entities`` with the record's own patients the message names, in any case or form (a name, an MRN, a
    ``Patient/<id>``: ``clinical/roster.py``), and the timeline's word on it. An unreadable roster is said."""
    if roster is None:
        return entities, ""
    patients = roster()
    if patients is None:
        notes.append("The record's patient list could not be read: a patient named in this message was looked for "
                     "by the form of the name only.")
        return entities, "; patient list unreadable: names read by form only"
    # A dictated note's own text is data ("Note for Grace Mensah: seen with amina okafor's daughter"): the patient
    # is named in the request before the colon, as for the other entity rules.
    known = with_known_patients(entities, request_part(query), patients)
    added = [n for n in known["patient_names"] if n not in entities["patient_names"]]
    on_list = {p.name for p in patients.patients}
    found = [n for n in added if n in on_list] + list(known.get("patient_aliases", {}))
    # A name beside a record number that is another patient's (``with_known_patients``): said, since the turn asks.
    beside = [n for n in added if n not in on_list]
    return known, ((f"; on the record's patient list: {', '.join(found)}" if found else "")
                   + (f"; a name beside a record number that is not that patient's: {', '.join(beside)}" if beside else ""))


def _detail(entities: Any, findings: ImageFindings | None) -> str:
    """The timeline's line: the entities found, and the image findings."""
    detail = ", ".join(f"{k}: {', '.join(v)}" for k, v in entities.items() if isinstance(v, list) and v)
    if findings:
        detail += ("; " if detail else "") + (f"image findings ({findings['modality']}, confidence "
                                              f"{findings['confidence']}): " + "; ".join(findings["findings"]))
    return detail


def input_assembly(
    state: AgentState,
    *,
    llm: LLM,
    max_message_chars: int,
    max_image_bytes: int,
    max_image_pixels: int = DEFAULT_MAX_PIXELS,
    patient_context: PatientContext | None = None,
    patient_roster: PatientRoster | None = None,
) -> dict[str, Any]:
    """Assemble the turn's context; see the module docstring."""
    trace = NodeTrace("input_assembly", llm)
    notes: list[str] = []
    query = truncated(state.get("user_query", "").strip(), max_message_chars, notes)
    image = attached_image(state.get("image_ref"), max_image_bytes, max_image_pixels, notes)
    if not query and image is not None:
        query = DEFAULT_IMAGE_QUERY
    findings = image_findings(image, query, trace, notes) if image is not None else None

    active = state.get("active_patient")
    selected: PatientRef | None = None
    if (choice := resumed_choice(state, query, notes)) is not None:
        selected, query = choice
        active = selected
    context = patient_context(active) if (active and patient_context) else None
    if active and context is None:
        context = f"{active['name']} (ID {active['id']})"

    entities, roster_note = _roster_entities(extract_entities(query, has_image=image is not None), query,
                                             patient_roster, notes)
    if selected is not None:  # the chosen patient's id stands for the name the request gave
        entities["patient_ids"] = [selected["id"]]
    decision = "image attached" if image is not None else "text only"
    event = trace.event(decision, (_detail(entities, findings) or "no entities found") + roster_note)
    # Every per-turn field starts afresh (state.TURN_DEFAULTS); `conversation` and `active_patient` carry over.
    # A patient picked from the list is proposed: COMMIT_PATIENT, the one writer of `active_patient`, makes it so.
    return {
        **turn_defaults(),
        "user_query": query,
        "history": format_history(since_last_switch(state.get("conversation", []))),
        "input_notes": notes,
        "extracted_entities": entities,
        "image_findings": findings,
        "patient_context": context,
        "patient_change": PatientChange(patient=selected, by="choice") if selected is not None else None,
        "selected_patient": selected,
        "patient_at_turn_start": state.get("active_patient"),
        "timeline": [NEW_TURN, event],
    }
