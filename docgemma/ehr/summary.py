"""The pre-compiled, condition-centric patient summary, sized for a 4B model.

Pruned FHIR JSON of one patient runs to some 20k tokens; a 4B model on a small GPU would pay that prefill on
every node, so this summary is compact text within :data:`TOKEN_BUDGET` (Gemma tokenizer) for a typical patient.
Detail that does not fit stays reachable through the patient-data tools. Sections, most important first:
orientation, safety constraints, active conditions with treating medications (explicit ``reasonReference``
links, then flagged encounter-inferred ones) and care plans, unlinked medications with recency, allergies
and immunizations ("None recorded" when empty: absence is a clinical fact), recently resolved conditions,
latest observation per LOINC code with its trend, and the last encounter with its note.
"""

from __future__ import annotations

import base64
import binascii
import math
import re
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, datetime, timezone
from typing import Any

from docgemma.clinical.allergy import is_no_known_allergy
from docgemma.clinical.ingredients import LOCAL, conflicts
from docgemma.fhir import concept_code, display_text, encounter_reference, reference_id

TOKEN_BUDGET = 1500
ACTIVE_CONDITION = {"active", "recurrence", "relapse"}
RESOLVED_CONDITION = {"resolved", "remission", "inactive"}
ACTIVE_MED = {"active", "on-hold"}
RECENT_DAYS = 183
NOTE_CHARS = 700
#: Minimum lines each section keeps when the budget forces trimming.
KEEP = {
    "orientation": 99,
    "safety": 99,
    "allergies": 99,
    "conditions": 6,
    "medications": 4,
    "observations": 4,
    "encounter": 2,
    "resolved": 1,
    "immunizations": 1,
}
#: Trimming order when over budget: the last section here loses lines first.
PRIORITY = [
    "orientation",
    "safety",
    "allergies",
    "conditions",
    "medications",
    "observations",
    "encounter",
    "resolved",
    "immunizations",
]


def estimate_tokens(text: str) -> int:
    """An estimate for the Gemma tokenizer, fitted on these summaries: Gemma splits numbers into single
    digits (about 1.5 tokens each with separators), while words cost about 0.2 tokens a character."""
    digits = sum(c.isdigit() for c in text)
    return math.ceil((len(text) - digits) / 4.2 + digits * 1.6 + text.count("\n"))


def _day(value: Any) -> date | None:
    if not isinstance(value, str) or len(value) < 10:
        return None
    try:
        return datetime.fromisoformat(value[:10]).date()
    except ValueError:
        return None


def _status(resource: dict[str, Any], field_name: str = "clinicalStatus") -> str:
    if isinstance(resource.get(field_name), dict):
        return concept_code(resource, field_name)
    return str(resource.get("status", ""))


#: UCUM codes a record writes as its unit (Synthea does) and how a clinician writes them: a page shows "38.2 °C",
#: not "38.2 Cel". An annotation in braces ({score}, {INR}) names the scale, not a unit: it is dropped.
UNIT_DISPLAY = {"Cel": "°C", "[degF]": "°F", "mm[Hg]": "mmHg", "kg/m2": "kg/m²", "mL/min/{1.73_m2}": "mL/min/1.73 m²",
                "mL/min/1.73m2": "mL/min/1.73 m²", "10*3/uL": "×10³/µL", "10*6/uL": "×10⁶/µL", "10*9/L": "×10⁹/L",
                "10*12/L": "×10¹²/L", "m[IU]/L": "mIU/L", "[IU]/L": "IU/L", "u[IU]/mL": "µIU/mL", "uL": "µL",
                "ug/L": "µg/L", "umol/L": "µmol/L", "[lb_av]": "lb", "[in_i]": "in", "/min": "/min"}


def unit_text(unit: str) -> str:
    """A record's unit as a clinician writes it (UCUM code → display; a braced annotation dropped)."""
    return UNIT_DISPLAY.get(unit, re.sub(r"\{[^}]*\}", "", unit)).strip()


def quantity_text(obs: dict[str, Any]) -> str:
    """An observation's value as text: a quantity, a systolic/diastolic pair, a coded or string value."""
    if "valueQuantity" in obs:
        q = obs["valueQuantity"]
        return f"{_num(q.get('value'))} {unit_text(str(q.get('unit', '')))}".strip()
    if obs.get("component"):
        # Systolic (LOINC 8480-6) before diastolic, whatever order the source used.
        parts = sorted((c for c in obs["component"] if "valueQuantity" in c),
                       key=lambda c: "8480-6" not in str(c.get("code")))
        if parts:
            unit = unit_text(str(parts[0]["valueQuantity"].get("unit", "")))
            return "/".join(_num(c["valueQuantity"].get("value")) for c in parts) + f" {unit}"
    if "valueCodeableConcept" in obs:
        return str(obs["valueCodeableConcept"].get("text") or display_text({"code": obs["valueCodeableConcept"]}))
    if "valueString" in obs:
        return str(obs["valueString"])
    return "?"


def _num(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.3g}" if abs(value) < 1000 else f"{value:.0f}"
    return str(value)


def note_text(document: dict[str, Any]) -> str:
    """Decoded text of a DocumentReference's first text attachment ('' if none)."""
    for content in document.get("content", []):
        attachment = content.get("attachment", {})
        if str(attachment.get("contentType", "text/plain")).startswith("text/") and attachment.get("data"):
            try:
                return base64.b64decode(attachment["data"]).decode("utf-8", errors="replace").strip()
            except (binascii.Error, ValueError):
                return ""
    return ""


def is_image(document: dict[str, Any]) -> bool:
    """True for a DocumentReference or Media carrying an image (PNG, JPEG or DICOM)."""
    if document.get("resourceType") == "Media":
        return True
    types = [str(c.get("attachment", {}).get("contentType", "")) for c in document.get("content", [])]
    return any(t.startswith("image/") or t == "application/dicom" for t in types)


def trend(latest: dict[str, Any], previous: dict[str, Any] | None) -> dict[str, Any] | None:
    """Direction, delta and previous value of a numeric observation (None without a previous value)."""
    if previous is None:
        return None
    a, b = latest.get("valueQuantity", {}).get("value"), previous.get("valueQuantity", {}).get("value")
    if not isinstance(a, (int, float)) or not isinstance(b, (int, float)):
        return None
    delta = a - b
    percent = (delta / b * 100) if b else 0.0
    direction = "stable" if abs(percent) < 5 else ("rising" if delta > 0 else "falling")
    d1, d0 = _day(latest.get("effectiveDateTime")), _day(previous.get("effectiveDateTime"))
    return {
        "direction": direction,
        "delta": round(delta, 3),
        "delta_percent": round(percent, 1),
        "previous_value": b,
        "previous_date": str(d0) if d0 else None,
        "timespan_days": (d1 - d0).days if d1 and d0 else None,
    }


def recency(med: dict[str, Any], today: date) -> tuple[str, int | None]:
    """("new" | "recent" | "established" | "unknown", days since authoredOn)."""
    start = _day(med.get("authoredOn"))
    if start is None:
        return "unknown", None
    days = (today - start).days
    return ("new" if days < 30 else "recent" if days < RECENT_DAYS else "established"), days


@dataclass
class PatientSummary:
    """The compiled summary: the text injected into prompts, and the facts behind it (for tools and tests)."""

    patient_id: str
    text: str
    facts: dict[str, Any] = field(default_factory=dict)
    tokens_estimated: int = 0
    trimmed: bool = False


def _med_line(med: dict[str, Any], today: date, inferred: bool = False) -> str:
    label, days = recency(med, today)
    dose = ""
    for instruction in med.get("dosageInstruction", [])[:1]:
        dose = f", {instruction.get('text')}" if instruction.get("text") else ""
    since = f", {label}, started {_days_ago(days)}" if days is not None else ""
    # An encounter-inferred link is a guess from the visit, never a fact: it must read as one.
    flag = f" {POSSIBLY_RELATED}" if inferred else ""
    return f"{display_text(med)}{dose}{since}{flag}"


#: How a medication linked to a condition only by the visit that recorded both is worded (never "treats").
POSSIBLY_RELATED = "(prescribed at the visit that recorded this condition; no recorded link)"


def _days_ago(days: int) -> str:
    """A medication's start in words a clinician reads ("today", "12 days ago"), not "(0 d)"."""
    if days <= 0:
        return "today"
    return "yesterday" if days == 1 else f"{days} days ago"


def drug_allergy_conflicts(meds: list[dict[str, Any]], allergies: list[dict[str, Any]]) -> list[str]:
    """An active medication that conflicts with a recorded allergy (same substance, class or related class, on
    the ingredients the one resolver finds in the medication's name, e.g. "Amoxicillin 250 MG / Clavulanate
    125 MG Oral Tablet"), and the active medications it could not identify at all (never a silent pass)."""
    out: list[str] = []
    unknown: list[str] = []
    allergens = [(allergy, LOCAL.allergen(display_text(allergy))) for allergy in allergies]
    for med in meds:
        name = display_text(med)
        product = LOCAL.resolve(name)
        for allergy, allergen in allergens:
            found = conflicts(allergen, product)
            if found:
                out.append(f"ALLERGY CONFLICT WITH ACTIVE DRUG: {name} is active despite the recorded allergy "
                           f"'{display_text(allergy)}' — {found[0].reason}")
        if not product.resolved:
            unknown.append(name)
    if unknown and any(not allergen.non_drug for _allergy, allergen in allergens):
        out.append(f"ALLERGY CHECK INCOMPLETE: could not identify the ingredients of {'; '.join(unknown)} to check "
                   "them against the recorded allergies.")
    return out


def compile_summary(
    resources: list[dict[str, Any]],
    today: date | None = None,
    count_tokens: Callable[[str], int] = estimate_tokens,
    budget: int = TOKEN_BUDGET,
    compiled_at: datetime | None = None,
) -> PatientSummary:
    """Compile the summary of one patient's compartment (the Patient plus its resources).

    A stored resource that is not valid FHIR R4 and breaks the compilation is left out, and the summary says
    how many were (one bad resource must not make every later turn fail). The header says when the summary
    was compiled (``compiled_at``, default now), so a reader knows how fresh it is.
    """
    from docgemma.ehr.validate import tolerant

    stamp = (compiled_at or datetime.now(timezone.utc)).astimezone(timezone.utc)
    day = today or date.today()
    return tolerant(lambda readable, skipped: _compile(readable, day, count_tokens, budget, stamp, skipped), resources)


@dataclass
class _Chart:
    """One patient's compartment, selected and grouped for the summary's sections."""

    today: date
    patient: dict[str, Any]
    active: list[dict[str, Any]]
    resolved: list[dict[str, Any]]
    meds: list[dict[str, Any]]
    allergies: list[dict[str, Any]]
    immunizations: list[dict[str, Any]]
    #: condition id → treating medication lines; → care plans addressing it
    treats: dict[str, list[str]]
    addresses: dict[str, list[str]]
    inferred_ids: set[str]
    unlinked: list[dict[str, Any]]
    #: LOINC code → observations, newest first; and (latest, previous) per code in display order
    series: dict[str, list[dict[str, Any]]]
    latest_obs: list[tuple[dict[str, Any], dict[str, Any] | None]]
    last: dict[str, Any] | None
    note: str
    images: list[dict[str, Any]]

    @property
    def pid(self) -> str:
        return str(self.patient.get("id", "?"))

    @property
    def born(self) -> date | None:
        return _day(self.patient.get("birthDate"))

    @property
    def age(self) -> int | None:
        born, today = self.born, self.today
        return (today.year - born.year - ((today.month, today.day) < (born.month, born.day))) if born else None


def _compile(
    resources: list[dict[str, Any]],
    today: date,
    count_tokens: Callable[[str], int],
    budget: int,
    compiled_at: datetime,
    skipped: int,
) -> PatientSummary:
    chart = _chart(resources, today)
    safety = _safety(chart)
    sections: dict[str, tuple[str, list[str]]] = {
        "orientation": (f"## Patient (summary compiled at {compiled_at:%H:%M} UTC)", _orientation(chart, skipped)),
        "safety": ("## Safety", safety or ["No allergies or safety flags recorded."]),
        "allergies": ("## Allergies", [f"- {display_text(a)}" for a in chart.allergies] or ["None recorded."]),
        "conditions": ("## Active conditions (with their medications)", _condition_lines(chart)),
        "medications": ("## Medications not linked to a condition",
                        [f"- {_med_line(m, today)}" for m in chart.unlinked] or ["None."]),
        "observations": ("## Latest observations", _observation_lines(chart) or ["None recorded."]),
        "encounter": ("## Last encounter", _encounter_lines(chart) or ["None recorded."]),
        "resolved": ("## Recently resolved (6 months)",
                     [f"- {display_text(c)} (resolved {str(c.get('abatementDateTime'))[:10]})" for c in chart.resolved]
                     or ["None."]),
        "immunizations": ("## Immunizations", _immunization_lines(chart)),
    }
    text, trimmed = _fit(sections, count_tokens, budget)
    return PatientSummary(chart.pid, text, _facts(chart, safety, skipped, compiled_at), count_tokens(text), trimmed)


def _chart(resources: list[dict[str, Any]], today: date) -> _Chart:
    """Select what the sections show: active and recently resolved conditions, active medications (linked to the
    conditions they treat), allergies, immunizations, the latest observations, the last encounter and its note."""
    by_type: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for resource in resources:
        by_type[str(resource.get("resourceType"))].append(resource)
    patients = by_type.get("Patient") or [{}]

    conditions = by_type["Condition"]
    active = sorted(
        (c for c in conditions if _status(c) in ACTIVE_CONDITION),
        key=lambda c: str(c.get("onsetDateTime") or c.get("recordedDate") or ""),
        reverse=True,
    )
    resolved = [
        c
        for c in conditions
        if _status(c) in RESOLVED_CONDITION and (d := _day(c.get("abatementDateTime"))) and (today - d).days <= RECENT_DAYS
    ]
    meds = [m for m in by_type["MedicationRequest"] if str(m.get("status")) in ACTIVE_MED]
    plans = [p for p in by_type["CarePlan"] if str(p.get("status")) in ACTIVE_MED]
    treats, addresses, linked, inferred_ids = _condition_links(active, meds, plans, today)
    series, latest_obs = _latest_observations(by_type["Observation"])
    last, note = _last_encounter(by_type["Encounter"], by_type["DocumentReference"])
    return _Chart(
        today=today,
        patient=patients[0],
        active=active,
        resolved=resolved,
        meds=meds,
        allergies=[a for a in by_type["AllergyIntolerance"] if _status(a) in ("active", "")],
        immunizations=sorted(
            (i for i in by_type["Immunization"] if i.get("status") == "completed"),
            key=lambda i: str(i.get("occurrenceDateTime", "")),
            reverse=True,
        ),
        treats=treats,
        addresses=addresses,
        inferred_ids=inferred_ids,
        unlinked=[m for m in meds if str(m.get("id")) not in linked | inferred_ids],
        series=series,
        latest_obs=latest_obs,
        last=last,
        note=note,
        images=[d for d in [*by_type["DocumentReference"], *by_type["Media"]] if is_image(d)],
    )


def _condition_links(
    active: list[dict[str, Any]], meds: list[dict[str, Any]], plans: list[dict[str, Any]], today: date
) -> tuple[dict[str, list[str]], dict[str, list[str]], set[str], set[str]]:
    """Condition-centric grouping: (treating medication lines, care plans, explicitly linked medication ids,
    encounter-inferred medication ids). Explicit reasonReference links first, then encounter-inferred ones."""
    condition_ids = {str(c.get("id")) for c in active}
    treats: dict[str, list[str]] = defaultdict(list)
    linked: set[str] = set()
    for med in meds:
        for ref in med.get("reasonReference", []):
            cid = reference_id(ref, "Condition")
            if cid in condition_ids:
                treats[cid].append(_med_line(med, today))
                linked.add(str(med.get("id")))
    diagnosed_at: dict[str, list[str]] = defaultdict(list)
    for condition in active:
        eid = reference_id(encounter_reference(condition), "Encounter")
        if eid:
            diagnosed_at[eid].append(str(condition.get("id")))
    inferred_ids: set[str] = set()
    for med in meds:
        if str(med.get("id")) in linked:
            continue
        eid = reference_id(encounter_reference(med), "Encounter")
        for cid in diagnosed_at.get(eid or "", []):
            treats[cid].append(_med_line(med, today, inferred=True))
            inferred_ids.add(str(med.get("id")))
    addresses: dict[str, list[str]] = defaultdict(list)
    for plan in plans:
        for ref in plan.get("addresses", []):
            cid = reference_id(ref, "Condition")
            if cid in condition_ids:
                addresses[cid].append(display_text({"code": (plan.get("category") or [{}])[0]}))
    return treats, addresses, linked, inferred_ids


def _latest_observations(
    observations: list[dict[str, Any]],
) -> tuple[dict[str, list[dict[str, Any]]], list[tuple[dict[str, Any], dict[str, Any] | None]]]:
    """Latest observation per LOINC code, with the previous value for the trend; laboratory first."""
    series: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for obs in observations:
        code = next((c.get("code") for c in obs.get("code", {}).get("coding", []) if "loinc" in str(c.get("system"))), None)
        if code:
            series[str(code)].append(obs)
    latest_obs: list[tuple[dict[str, Any], dict[str, Any] | None]] = []
    for items in series.values():
        items.sort(key=lambda o: str(o.get("effectiveDateTime") or o.get("issued") or ""), reverse=True)
        latest_obs.append((items[0], items[1] if len(items) > 1 else None))
    category_rank = {"laboratory": 0, "vital-signs": 1, "survey": 2, "social-history": 3}

    def obs_rank(pair: tuple[dict[str, Any], dict[str, Any] | None]) -> tuple[int, str]:
        cats = [c.get("code") for cc in pair[0].get("category", []) for c in cc.get("coding", [])]
        rank = min((category_rank.get(str(c), 4) for c in cats), default=4)
        return rank, str(display_text(pair[0]))

    latest_obs.sort(key=obs_rank)
    return series, latest_obs


def _last_encounter(
    encounters: list[dict[str, Any]], document_refs: list[dict[str, Any]]
) -> tuple[dict[str, Any] | None, str]:
    """The last (ambulatory, if any) encounter and its note (else the newest note on record)."""
    encounters = sorted(encounters, key=lambda e: str(e.get("period", {}).get("start", "")), reverse=True)
    ambulatory = [e for e in encounters if e.get("class", {}).get("code") == "AMB"]
    last = ambulatory[0] if ambulatory else (encounters[0] if encounters else None)
    documents = [d for d in document_refs if not is_image(d)]
    note = ""
    if last is not None:
        own = [d for d in documents if reference_id(encounter_reference(d), "Encounter") == last.get("id")]
        if own:
            note = note_text(own[0])
    if not note and documents:
        documents.sort(key=lambda d: str(d.get("date", "")), reverse=True)
        note = note_text(documents[0])
    return last, note


def _orientation(chart: _Chart, skipped: int) -> list[str]:
    """Who the patient is, how many active conditions, the last visit (and unreadable resources, if any)."""
    patient, age, born, last = chart.patient, chart.age, chart.born, chart.last
    deceased = " (deceased)" if patient.get("deceasedDateTime") or patient.get("deceasedBoolean") else ""
    key = ", ".join(display_text(c) for c in chart.active[:2])
    orientation = [
        f"{display_text(patient)} is a {age if age is not None else '?'}-year-old {patient.get('gender', 'person')}"
        f"{deceased} (born {born or 'unknown'}, ID {chart.pid}). {_conditions(len(chart.active))}"
        + (f" including {key}." if key else ".")
    ]
    if last is not None:
        kind = display_text({"type": last.get("type", [])}) if last.get("type") else last.get("class", {}).get("code", "")
        orientation.append(f"Last visit: {str(last.get('period', {}).get('start', ''))[:10]} ({kind}).")
    if skipped:
        from docgemma.ehr.validate import unreadable_note

        orientation.append(unreadable_note(skipped))
    return orientation


def _safety(chart: _Chart) -> list[str]:
    """Allergies, drug-allergy conflicts, polypharmacy, pregnancy, anticoagulation, renal function, age, images."""
    safety: list[str] = []
    # A coded "no known drug allergy" entry is a statement, not an allergen: it stood in the panel's safety list as
    # "ALLERGY: No known drug allergy" (seen after NKDA was approved); the Allergies section still lists it.
    allergens = [a for a in chart.allergies if not is_no_known_allergy(a)]
    for allergy in allergens:
        reactions = [display_text({"code": m}) for r in allergy.get("reaction", []) for m in r.get("manifestation", [])]
        crit = f", criticality {allergy['criticality']}" if allergy.get("criticality") else ""
        safety.append(f"ALLERGY: {display_text(allergy)}" + (f" — {', '.join(reactions)}" if reactions else "") + crit)
    safety += drug_allergy_conflicts(chart.meds, allergens)
    if len(chart.meds) >= 5:
        safety.append(f"POLYPHARMACY: {len(chart.meds)} active medications.")
    text_all = " ".join(display_text(c).lower() for c in chart.active)
    med_all = " ".join(display_text(m).lower() for m in chart.meds)
    if "pregnan" in text_all or "preeclampsia" in text_all or "pre-eclampsia" in text_all:
        safety.append("PREGNANCY: check every drug for teratogenicity and pregnancy safety.")
    vka = [d for d in ("warfarin", "acenocoumarol", "phenprocoumon") if d in med_all]
    doac = [d for d in ("apixaban", "rivaroxaban", "edoxaban", "dabigatran") if d in med_all]
    if vka:
        safety.append(f"ANTICOAGULATED ({', '.join(vka)}): bleeding risk; check INR and interactions before adding "
                      "drugs.")
    if doac:
        # INR does not measure a DOAC's effect: kidney function decides its dose.
        safety.append(f"ANTICOAGULATED ({', '.join(doac)}): bleeding risk; INR does not monitor it — check kidney "
                      "function (dose) and interactions before adding drugs.")
    renal = next(((o, p) for o, p in chart.latest_obs if any(w in display_text(o).lower() for w in ("egfr", "glomerular"))),
                 None)
    if renal:
        t = trend(*renal)
        safety.append(
            f"RENAL FUNCTION: eGFR {quantity_text(renal[0])}"
            + (f", {t['direction']}" if t else "")
            + " — review renally cleared drugs and doses."
        )
    if chart.age is not None and chart.age < 18:
        safety.append("PAEDIATRIC: use weight-based dosing.")
    if chart.images:
        safety.append(
            f"IMAGES ON RECORD: {len(chart.images)} ("
            + ", ".join(str(d.get("description") or display_text(d)) for d in chart.images[:3])
            + ")."
        )
    return safety


def _conditions(count: int) -> str:
    return f"{count} active condition{'' if count == 1 else 's'}"


def _condition_lines(chart: _Chart) -> list[str]:
    """Each active condition with its treating medications and care plans."""
    lines: list[str] = []
    for c in chart.active:
        onset = str(c.get("onsetDateTime") or c.get("recordedDate") or "")[:10]
        # No resource ids here: a UUID costs ~40 Gemma tokens; the data-query tool returns them when needed.
        lines.append(f"- {display_text(c)} (since {onset or 'unknown'})")
        lines += [f"  {'possibly related' if m.endswith(POSSIBLY_RELATED) else 'treated with'}: {m}"
                  for m in chart.treats.get(str(c.get("id")), [])]
        lines += [f"  care plan: {p}" for p in chart.addresses.get(str(c.get("id")), [])]
    return lines or ["None recorded."]


def _observation_lines(chart: _Chart) -> list[str]:
    """The latest value per code, with its trend against the previous one."""
    lines = []
    for obs, previous in chart.latest_obs:
        when = str(obs.get("effectiveDateTime") or obs.get("issued") or "")[:10]
        line = f"- {display_text(obs)}: {quantity_text(obs)} ({when})"
        t = trend(obs, previous)
        if t:
            arrow = {"rising": "↑", "falling": "↓", "stable": "→"}[t["direction"]]
            line += f" {arrow} {t['direction']}, {t['delta']:+.3g} from {_num(t['previous_value'])} ({t['previous_date']})"
        lines.append(line)
    return lines


def _encounter_lines(chart: _Chart) -> list[str]:
    """The last encounter and the start of its note."""
    last, note = chart.last, chart.note
    if last is None:
        return []
    lines = [f"{str(last.get('period', {}).get('start', ''))[:10]} {display_text({'type': last.get('type', [])})}"]
    if note:
        short = note if len(note) <= NOTE_CHARS else note[:NOTE_CHARS].rsplit(" ", 1)[0] + " … (full note in the timeline)"
        lines.append("Note: " + " ".join(short.split()))
    return lines


def _immunization_lines(chart: _Chart) -> list[str]:
    """How many, and the latest three."""
    immunizations = chart.immunizations
    if not immunizations:
        return ["None recorded."]
    return [
        f"{len(immunizations)} on record; latest: "
        + "; ".join(f"{display_text(i)} ({str(i.get('occurrenceDateTime', ''))[:10]})" for i in immunizations[:3])
    ]


def _facts(chart: _Chart, safety: list[str], skipped: int, compiled_at: datetime) -> dict[str, Any]:
    """The structured facts behind the text (tests and the tools read these)."""
    born = chart.born
    return {
        "patient": {
            "id": chart.pid,
            "name": display_text(chart.patient),
            "age": chart.age,
            "gender": chart.patient.get("gender"),
            "birth_date": str(born) if born else None,
        },
        "active_conditions": [display_text(c) for c in chart.active],
        "treats": {display_text(c): chart.treats.get(str(c.get("id")), []) for c in chart.active},
        "inferred_medications": sorted(display_text(m) for m in chart.meds if str(m.get("id")) in chart.inferred_ids),
        "unlinked_medications": [display_text(m) for m in chart.unlinked],
        "active_medications": [display_text(m) for m in chart.meds],
        "allergies": [display_text(a) for a in chart.allergies],
        "immunizations": len(chart.immunizations),
        "recently_resolved": [display_text(c) for c in chart.resolved],
        "latest_observations": {display_text(o): {"value": quantity_text(o), "trend": trend(o, p)}
                                for o, p in chart.latest_obs},
        "latest_by_loinc": {
            code: {"id": items[0].get("id"), "previous_id": items[1].get("id") if len(items) > 1 else None}
            for code, items in chart.series.items()
        },
        "last_encounter": chart.last.get("id") if chart.last else None,
        "note": chart.note,
        "images": [str(d.get("id")) for d in chart.images],
        "safety": safety,
        "unreadable_resources": skipped,
        "compiled_at": compiled_at.isoformat(timespec="seconds"),
    }


def _render(sections: dict[str, tuple[str, list[str]]], dropped: dict[str, int]) -> str:
    out = []
    for key in PRIORITY:
        title, lines = sections[key]
        keep = len(lines) - dropped.get(key, 0)
        body = lines[:keep]
        if keep < len(lines):
            body.append(f"(+{len(lines) - keep} more in the record)")
        out.append(title + "\n" + "\n".join(body))
    return "\n".join(out)


def _fit(sections: dict[str, tuple[str, list[str]]], count_tokens: Callable[[str], int], budget: int) -> tuple[str, bool]:
    """Drop lines from the least important sections until the text fits ``budget``."""
    dropped: dict[str, int] = {}
    text = _render(sections, dropped)
    while count_tokens(text) > budget:
        for key in reversed(PRIORITY):
            lines = sections[key][1]
            if len(lines) - dropped.get(key, 0) > KEEP[key]:
                dropped[key] = dropped.get(key, 0) + 1
                break
        else:
            return text, True  # nothing more can go: the minimum is over budget
        text = _render(sections, dropped)
    return text, bool(dropped)
