"""Argument grounding and validation before a tool runs (TOOL_EXECUTE's first step).

Grounding uses deterministic facts to repair what a 4B model commonly gets wrong: a drug name the
dictionary does not know while the message names exactly one drug, a pronoun where a patient ID belongs
while an active patient exists. Rule: grounding may fill a missing or invalid value; it never replaces a
value that stands in the clinician's own words ("Ahmed Al-Rashidi", "amoxicillin-clavulanate" stay as
written). Every repair is reported so the timeline shows it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ValidationError

from docgemma.agent.state import ExtractedEntities, PatientRef
from docgemma.clinical.entities import DrugDictionary
from docgemma.clinical.function_words import only_function_words
from docgemma.clinical.ingredients import resolve_local
from docgemma.tools.outcome import ToolOutcome, failure
from docgemma.tools.registry import ToolSpec

#: A FHIR id (letters, digits, '-', '.'; at most 64) that also contains a digit: names and pronouns
#: ("her", "John") never do, real identifiers always do. Rejects '/', '..' paths and injection text.
PATIENT_ID_RE = re.compile(r"^(?=.*\d)[A-Za-z0-9\-.]{1,64}$")


@dataclass
class Checked:
    """Outcome of validation: the parsed arguments, or the error outcome to record instead."""

    args: dict[str, Any]
    model: BaseModel | None = None
    error: ToolOutcome | None = None
    repairs: list[str] = field(default_factory=list)


def valid_patient_id(value: object) -> bool:
    """True for a plausible patient identifier."""
    return isinstance(value, str) and bool(PATIENT_ID_RE.match(value)) and ".." not in value


def stands_in(value: object, query: str) -> bool:
    """True when ``value`` is written in the clinician's message (case and spacing ignored)."""
    if not isinstance(value, str) or len(value.strip()) < 2:
        return False
    squash = lambda text: re.sub(r"\s+", " ", text).strip().lower()  # noqa: E731
    return squash(value) in squash(query)


def same_product(name: str, drugs: list[str]) -> bool:
    """True when ``name`` is, by its ingredients, one of the drugs the message names ("Augmentin" and
    "amoxicillin-clavulanate"; "co-amoxiclav" and "amoxicillin/clavulanate"): the one resolver decides."""
    ingredients = set(resolve_local(name).ingredients)
    return bool(ingredients) and any(ingredients == set(resolve_local(d).ingredients) for d in drugs)


def other_patient_named(entities: ExtractedEntities, active: PatientRef) -> str | None:
    """A patient name in the message that shares no word with the active patient's ("And Amina Okafor's kidney
    function?" while Joseph Mwangi is active): that patient's record is asked for, so the active patient's must not
    stand in for it. None when every name the message gives is the active patient's."""
    own = {w.lower() for w in active["name"].split()}
    return next((n for n in entities["patient_names"] if not own & {w.lower() for w in n.split()}), None)


def _record_patient_id(args: dict[str, Any], entities: ExtractedEntities,
                       active: PatientRef | None) -> tuple[dict[str, Any], list[str]]:
    """The patient id as the record knows it: an identifier the message wrote (an MRN, ``Patient/<id>``) becomes
    the record id the roster resolved it to; the active patient's id, while the message names exactly one other
    patient of the roster by id, becomes that patient's (the message's patient, never the active one in its place)."""
    given = args.get("patient_id")
    aliases = entities.get("patient_aliases") or {}
    if isinstance(given, str) and aliases.get(given.strip().lower(), given) != given:
        return {**args, "patient_id": aliases[given.strip().lower()]}, ["patient ID: the record's id for the identifier given"]
    # Only an id the record's roster knows as a patient's: an id in a message may be a record item's ("what was the
    # aspirin (<id>) prescribed for?"), and the active patient stays the patient then.
    known = [i for i in entities["patient_ids"] if i in aliases.values()]
    if active and given == active["id"] and len(known) == 1 and known[0] != given:
        return {**args, "patient_id": known[0]}, ["patient ID taken from the message (not the active patient's)"]
    return args, []


def ground(spec: ToolSpec, args: dict[str, Any], entities: ExtractedEntities,
           active: PatientRef | None, query: str = "") -> tuple[dict[str, Any], list[str]]:
    """Fill missing or invalid arguments from deterministic entities; return them and what was filled."""
    args = dict(args)
    repairs: list[str] = []
    fields = spec.args_model.model_fields
    if "patient_id" in fields:
        args, repairs = _record_patient_id(args, entities, active)
    if "patient_id" in fields and not valid_patient_id(args.get("patient_id")):
        if len(entities["patient_ids"]) == 1:
            args["patient_id"] = entities["patient_ids"][0]
            repairs.append("patient ID taken from the message")
        elif active and not entities["patient_ids"] and not other_patient_named(entities, active):
            args["patient_id"] = active["id"]
            repairs.append("patient ID taken from the active patient")
    names = entities["patient_names"]
    if "name" in fields and spec.patient_search and len(names) == 1 and not stands_in(args.get("name"), query):
        args["name"] = names[0]
        repairs.append(f"patient name set to {names[0]!r} from the message")
    drugs = entities["drug_mentions"]
    if "drug_name" in fields and drugs:
        name = args.get("drug_name")
        known = isinstance(name, str) and (DrugDictionary.canonical(name) in drugs or same_product(name, drugs))
        if not known and not stands_in(name, query):
            # Invalid (not a drug the message names): the first drug the message names fills it.
            args["drug_name"] = drugs[0]
            repairs.append(f"drug name set to {drugs[0]!r} from the message")
    if "drug_names" in fields and len(drugs) >= 2:
        raw = args.get("drug_names")
        given: list[Any] = raw if isinstance(raw, list) else []
        grounded = [d for d in given if stands_in(d, query) or DrugDictionary.canonical(str(d)) in drugs
                    or same_product(str(d), drugs)]
        if len(grounded) < 2 or len(grounded) < len(given):
            args["drug_names"] = drugs[:4]
            repairs.append("drug names set from the message")
    return args, repairs


def meaningless_fields(spec: ToolSpec, data: dict[str, Any]) -> list[str]:
    """The fields of a write whose value is only pronouns, prepositions or articles ("on her", "him"): no
    substance, drug, dose, reaction or note. Such a value is never written; the clinician is asked for it."""
    if not spec.writes:
        return []
    bad = []
    for name, value in data.items():
        values = value if isinstance(value, list) else [value]
        if name != "patient_id" and any(isinstance(v, str) and only_function_words(v) for v in values):
            bad.append(name)
    return bad


def validate(spec: ToolSpec, args: dict[str, Any], *, has_image: bool) -> Checked:
    """Schema and semantic checks; on failure the error lists the missing or invalid fields."""
    try:
        model = spec.args_model.model_validate(args)
    except ValidationError as exc:
        missing = sorted({str(err["loc"][0]) for err in exc.errors() if err["loc"]})
        return Checked(args, error=failure("invalid_args", missing_fields=missing or ["arguments"]))
    data = model.model_dump()
    if "patient_id" in data and not valid_patient_id(data["patient_id"]):
        return Checked(args, error=failure("invalid_args", missing_fields=["patient_id"]))
    if meaningless := meaningless_fields(spec, data):
        return Checked(args, error=failure("invalid_args", missing_fields=meaningless))
    if "drug_names" in data:
        distinct = {d.strip().lower() for d in data["drug_names"] if d.strip()}
        if len(distinct) < 2:
            return Checked(args, error=failure("invalid_args", missing_fields=["a second drug name"]))
    if spec.needs_image and not has_image:
        return Checked(args, error=failure("no_image"))
    return Checked(model.model_dump(exclude_none=True), model=model)
