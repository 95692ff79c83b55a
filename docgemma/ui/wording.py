"""Clinical words for what the page shows: the reasoning steps and the timeline speak of "needs a look-up",
"data returned" and "Prescription", not ``TOOL_NEEDED``, ``success_partial`` or ``prescribe_medication``;
arguments read as a line ("medication: amoxicillin · dose: 500 mg"), a patient by name, and record ids and
FHIR type names stay out of the chat except where an id is the point (a write's confirmation).

Pure functions on strings (no Gradio): the agent's timeline keeps its exact words for the CLI, the golden
records and the tests; only the page translates them.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Mapping
from functools import lru_cache

from docgemma.clinical.lab_names import lab_names
from docgemma.workspace import NOT_WRITTEN, PatientId, Tools

#: The agent's internal words and their meaning for a clinician (decisions, result classes, routes, errors).
WORDS: Mapping[str, str] = {
    "TOOL_NEEDED": "needs a look-up",
    "DIRECT": "answer directly",
    "success_rich": "complete result",
    "success_partial": "data returned",
    "no_results": "nothing found",
    "error_retryable": "failed, can be retried",
    "error_fatal": "failed",
    "SYNTHESIZE": "write the answer",
    "TOOL_SELECT": "consult the next resource",
    "ERROR_HANDLER": "handle the failure",
    "ASK_USER": "ask you",
    "SKIP": "stop trying this resource",
    "RETRY": "try again",
    "retry_same": "try again unchanged",
    "retry_different_args": "try again with other terms",
    "patient_names": "patient",
    "patient_ids": "patient",
    "drug_mentions": "drugs",
    "action_verbs": "asked to",
}
#: Error types (``tools/outcome.py``), translated where a step names one ("error: timeout", "declined: …").
ERROR_WORDS: Mapping[str, str] = {
    "timeout": "timed out",
    "service_unavailable": "service unavailable",
    "offline": "not reachable (offline)",
    "rate_limit": "service busy",
    "server_error": "service error",
    "not_found": "not found",
    "drug_not_in_database": "drug not in the database",
    "invalid_args": "information missing",
    "invalid_response": "unreadable reply",
    "no_image": "no image attached",
    "not_configured": "not available here",
    "no_vision": "needs a vision model",
    "declined": "declined by you",  # said without "failed" (see ``words``)
    "not_requested": "not asked for",
    "unknown_patient": "no such patient on record",
    "generic": "failed",
}
#: A patient id the record does not name (see :func:`argument_line`).
NOT_ON_RECORD = "not found on record"
#: Argument names as a clinician says them.
ARGUMENT_WORDS: Mapping[str, str] = {
    "medication_name": "medication", "dosage": "dose", "drug_name": "drug", "drug_names": "drugs",
    "note_type": "note type", "note_text": "note", "name": "looking for", "query": "search", "condition": "condition",
    "fhir_id": "record item", "resource_type": "reading", "include_notes": "with notes", "date_from": "from",
    "date_to": "to", "start_date": "from", "end_date": "to",
    "patient_id": "patient", "patient_name": "patient", "unread": "words no field took",
}
#: FHIR resource types as clinical words.
RESOURCE_WORDS: Mapping[str, str] = {
    "MedicationRequest": "prescription", "AllergyIntolerance": "allergy", "DocumentReference": "note",
    "Condition": "condition", "Observation": "result", "Encounter": "visit", "Procedure": "procedure",
    "DiagnosticReport": "report", "CarePlan": "care plan", "Immunization": "immunization", "Patient": "patient",
    "Media": "image",
}
#: What a record query reads, as a clinician names it ("reading: allergies", never "kind: AllergyIntolerance").
_PLURAL_RESOURCE: Mapping[str, str] = {"MedicationRequest": "prescriptions", "AllergyIntolerance": "allergies",
                                       "Observation": "results", "Immunization": "immunizations",
                                       "Media": "images", "Patient": "patients"}
_UUID = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
_ARGS = re.compile(r"(?:arguments|args): (\{.*?\})(?=;|$)")
_BRACKETED_ID = re.compile(rf"\s*\[(?:[A-Za-z]+/)?{_UUID}\]")
_TYPED_ID = re.compile(rf"\b({'|'.join(RESOURCE_WORDS)})/({_UUID})")
_ID = re.compile(rf"(,\s*)?\b(?:ID |id )?({_UUID})")
_RESOURCE_AT_LINE_START = re.compile(rf"^(\s*(?:- )?)({'|'.join(RESOURCE_WORDS)}) ", re.MULTILINE)

#: An entity list's item whose values were all dropped (an id with no patient's name for it).
_EMPTY_ITEM = re.compile(r"(?:^|(?<=, ))(?:patient_ids|patient_names|drug_mentions|action_verbs): ?(?:, |$)")

PatientName = Callable[[PatientId], "str | None"]


@lru_cache(maxsize=16)
def _terms(tool_names: tuple[str, ...]) -> re.Pattern[str]:
    """The internal words and these tool names, longest first (built once per set of running tools)."""
    return re.compile(r"\b(" + "|".join(re.escape(t) for t in sorted([*WORDS, *tool_names], key=len, reverse=True))
                      + r")\b")

#: Argument names a step may name ("model asked for drug_names"): those that are code identifiers.
_ARGUMENT_TERMS = re.compile(r"\b(" + "|".join(sorted((k for k in ARGUMENT_WORDS if "_" in k), key=len, reverse=True))
                             + r")\b")


_ERRORS = "|".join(ERROR_WORDS)
_ERROR_NAMED = re.compile(rf"\berror: ({_ERRORS})\b|^({_ERRORS}):")


def _error_words(m: re.Match[str]) -> str:
    if m.group(1) == "declined":  # the clinician's decision, not a failure
        return ERROR_WORDS["declined"]
    return f"failed: {ERROR_WORDS[m.group(1)]}" if m.group(1) else f"{ERROR_WORDS[m.group(2)]}:"


def words(text: str, tools: Tools | None = None) -> str:
    """``text`` with internal words (decisions, classes, routes, error types, and the names of ``tools``, the
    running registry's as the workspace gives them) in clinical words."""
    labels = {name: tool.label for name, tool in (tools or {}).items()}
    text = _ERROR_NAMED.sub(_error_words, text)
    text = _ARGUMENT_TERMS.sub(lambda m: ARGUMENT_WORDS[m.group(1)], text)
    return _terms(tuple(sorted(labels))).sub(lambda m: labels.get(m.group(1)) or WORDS[m.group(1)], text)


def _value(value: object) -> str:
    if isinstance(value, (list, tuple)):
        return ", ".join(str(v) for v in value)
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


def argument_line(args: Mapping[str, object], patient_name: PatientName | None = None) -> str:
    """Arguments as a readable line: ``medication: amoxicillin · dose: 500 mg``; a patient by name."""
    parts = []
    for key, value in args.items():
        if value is None or value == "":
            continue
        if key == "patient_id":
            # An id whose patient cannot be named is not on record (or the record cannot be read): say so,
            # never claim it is the patient on record; without a way to look names up, the id is left out.
            if patient_name:
                parts.append(f"patient: {patient_name(PatientId(str(value))) or NOT_ON_RECORD}")
            continue
        if key in NOT_WRITTEN and key not in ARGUMENT_WORDS:
            # Code's own pin, no value anyone gave (the entry a label removal changes, "AllergyIntolerance/<id>/
            # _history/1", read as "entry: allergy/_history/1"): the card says the entry, the technical details keep it.
            continue
        if key == "resource_type" and str(value) in RESOURCE_WORDS:  # "kind: allergy", not "AllergyIntolerance"
            value = _PLURAL_RESOURCE.get(str(value), RESOURCE_WORDS[str(value)] + "s")
        parts.append(f"{ARGUMENT_WORDS.get(key, key.replace('_', ' '))}: {_value(value)}")
    return " · ".join(parts)


def _arguments(match: re.Match[str], patient_name: PatientName | None) -> str:
    try:
        args = ast.literal_eval(match.group(1))
    except (ValueError, SyntaxError):
        return match.group(0)
    return argument_line(args, patient_name) if isinstance(args, dict) else match.group(0)


def _without_ids(text: str, patient_name: PatientName | None) -> str:
    text = _TYPED_ID.sub(lambda m: RESOURCE_WORDS[m.group(1)], text)

    def named(m: re.Match[str]) -> str:
        # "Grace Mensah (born …, ID <uuid>)": the name is there already, the id goes; a bare id becomes the name.
        if m.group(1):
            return ""
        return (patient_name(PatientId(m.group(2))) if patient_name else None) or ""

    return _ID.sub(named, text)


def step_text(text: str, patient_name: PatientName | None = None, tools: Tools | None = None) -> str:
    """A reasoning step's decision or detail in clinical words: arguments as a line, internal words and tool
    names (of ``tools``) translated, record ids replaced by the patient's name or dropped, entity lists as
    ``drugs: …``."""
    text = _ARGS.sub(lambda m: _arguments(m, patient_name), text)
    text = _BRACKETED_ID.sub("", text)
    text = _without_ids(text, patient_name)
    text = text.replace("(hint: ", "(suggested: ")
    text = _EMPTY_ITEM.sub("", text)  # "patient_ids: <an id not on record>, …": nothing left to show
    return re.sub(r"\(\s*\)|\s{2,}", " ", words(text, tools)).strip().rstrip(";,").strip()


#: After a write the clinician declined, the steps that follow it as the page tells them (decision, detail); None:
#: not shown. The agent checks the result, routes it to its error handling and skips the call, which is right
#: for the agent and its records but reads as a failure ("failed", "Handling a problem") on the page.
AFTER_DECLINE: Mapping[str, tuple[str, str] | None] = {
    "result_classify": ("declined by you", "nothing was written to the record"),
    "router": (DECLINED_ROUTE := "stop here: declined by you", "nothing to retry"),
    "error_handler": None,
}


def is_declined(node: str, decision: str) -> bool:
    """A step that is a write the clinician declined (the tool's own ``error: declined``)."""
    return node == "tool_execute" and decision.strip() == "error: declined"


def route(actions: list[str], declined: list[bool] | None = None) -> str:
    """The turn's routing decisions in order, in clinical words. ``declined``: for each routing to the error
    handling, in order, whether it followed a declined write; that routing and the skip after it read as
    :data:`DECLINED_ROUTE`."""
    flags = iter(declined or [])
    shown: list[str] = []
    skipping = False
    for action in actions:
        if skipping and action == "SKIP":
            skipping = False
            continue
        skipping = action == "ERROR_HANDLER" and next(flags, False)
        shown.append(DECLINED_ROUTE if skipping else WORDS.get(action, action))
    return " → ".join(shown)


#: A patient named with their record id ("Grace Mensah (ID <uuid>)", "- Grace Mensah, born …, female (ID <uuid>)").
_NAMED_ID = re.compile(rf"(, born [^()\n]*?)? \(ID ({_UUID})\)")
_ID_AFTER_BIRTH = re.compile(rf"(born [0-9?-]+(?:, [a-z]+)?),\s*ID {_UUID}")
#: Says who a patient id is as a clinician knows them ("born 1991-01-22, female"); None where the record cannot.
PatientBorn = Callable[[PatientId], "str | None"]


def without_patient_ids(text: str) -> str:
    """``text`` without the record id that follows a patient's birth date ("born 1950-02-01, ID <uuid>" →
    "born 1950-02-01"): a clinician tells two patients apart by name and birth date."""
    return _ID_AFTER_BIRTH.sub(r"\1", text)


_PLURAL = re.compile(r"\b(\d+) ([a-z]+)\(s\)")
#: A visit's HL7 ActCode class as a record line ends with it ("review (AMB)").
_VISIT_CLASS = {"AMB": "outpatient", "EMER": "emergency", "IMP": "inpatient", "HH": "home visit", "VR": "virtual",
                "OBSENC": "observation", "SS": "day case", "ACUTE": "inpatient", "PRENC": "pre-admission"}
_VISIT_CLASS_CODE = re.compile(rf"\(({'|'.join(_VISIT_CLASS)})\)")


def clinical_text(text: str) -> str:
    """Record text as a clinician reads it: results by their clinical names ("Creatinine", "eGFR", not the LOINC
    long name) and counts in plain English ("4 encounters", "1 condition", never "condition(s)")."""
    text = _PLURAL.sub(lambda m: f"{m.group(1)} {m.group(2)}{'' if m.group(1) == '1' else 's'}", text)
    text = _VISIT_CLASS_CODE.sub(lambda m: f"({_VISIT_CLASS[m.group(1)]})", text)
    return lab_names(text)


def answer_text(text: str, born: PatientBorn | None = None) -> str:
    """An answer as the chat shows it: a patient by name and birth date, not by record id ("Grace Mensah (born
    1991-01-22, female)"); record item ids in brackets dropped and FHIR type names that open a line of record
    data in clinical words ("Observation Creatinine …" → "Result: Creatinine …"); a write confirmation keeps
    its id (see :func:`write_line`)."""

    def demographics(m: re.Match[str]) -> str:
        if m.group(1):  # the line gives the birth date already: the id goes
            return m.group(1)
        who = born(PatientId(m.group(2))) if born else None
        return f" ({who})" if who else ""

    text = clinical_text(without_patient_ids(_NAMED_ID.sub(demographics, text)))
    text = _BRACKETED_ID.sub("", text)
    return _RESOURCE_AT_LINE_START.sub(lambda m: f"{m.group(1)}{RESOURCE_WORDS[m.group(2)].capitalize()}: ", text)


_WRITE = re.compile(r"^(?P<verb>[^:]+): (?P<what>.*?) \[(?P<type>[A-Za-z]+)/(?P<id>[^\]]+)\](?P<rest>.*)$", re.DOTALL)


def write_line(confirmation: str) -> tuple[str, str, str, str]:
    """A write's confirmation (``tools.ehr_tools.format_write``) as (what was written, its kind in clinical
    words, its record reference ``Type/id``, the override reason or "")."""
    found = _WRITE.match(confirmation.strip())
    if not found:
        return confirmation, "", "", ""
    kind = RESOURCE_WORDS.get(found["type"], found["type"])
    rest = found["rest"].strip(" —-")
    reason = rest.split("reason:", 1)[1].strip() if "reason:" in rest else ""
    verb = found["verb"].strip()
    # "Saved for Grace Mensah: …": the write names its patient, and so does the page.
    saved_for = re.match(r"Saved for (?P<who>.+)$", verb)
    if saved_for:
        kind = f"{kind} for {saved_for['who']}"
    what = found["what"] if verb == "Saved" or saved_for else f"{found['what']} ({verb.lower()})"
    return what, kind, f"{found['type']}/{found['id']}", reason
