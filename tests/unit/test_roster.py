"""The record's own patients are found in a message however the clinician writes them (``clinical/roster.py``):
names in any case and order, with the possessive, a family name after a title; MRNs, ``Patient/<id>`` and ids; and a
birth date that tells namesakes apart. Words that only look like a patient's name are not one."""

from __future__ import annotations

from typing import Any

import pytest

from docgemma.agent.validation import ground
from docgemma.clinical.entities import extract_entities
from docgemma.clinical.roster import KnownPatient, Roster, birth_dates, known_patients_in, with_known_patients
from docgemma.ehr.client import FhirClientError
from docgemma.tools.patient_roster import known_patient, record_roster
from docgemma.tools.registry import default_registry

AMINA = KnownPatient("95ec8510-867d-5952-bbb9-19da7084909b", "Amina Okafor", ("Amina",), "Okafor", "1964-03-12",
                     ("DG-1001",))
GRACE = KnownPatient("3f15-grace", "Grace Mensah", ("Grace",), "Mensah", "1991-01-22", ("DG-1003",))
OLD_JAMES = KnownPatient("054c-james", "James Wilson", ("James",), "Wilson", "1950-02-01", ("DG-1009",))
YOUNG_JAMES = KnownPatient("103d-james", "James Wilson", ("James",), "Wilson", "1988-11-30", ("DG-1010",))
AHMED = KnownPatient("ahmed-7", "Ahmed Al-Rashidi", ("Ahmed",), "Al-Rashidi", "1970-01-01", ())
SARAH = KnownPatient("sarah-8", "Sarah White", ("Sarah",), "White", "1980-05-05", ())
ROSTER = Roster((AMINA, GRACE, OLD_JAMES, YOUNG_JAMES, AHMED, SARAH))


def found(text: str) -> tuple[list[str], list[str]]:
    entities = with_known_patients(extract_entities(text), text, ROSTER)
    return entities["patient_names"], entities["patient_ids"]


@pytest.mark.parametrize("text", [
    "does amina okafor have any allergies?", "AMINA OKAFOR MEDS", "Okafor, Amina: last eGFR?", "okafor amina meds",
    "amina okafor's meds?", "check Okafor Amina's meds", "OKAFOR AMINA'S LABS", "mrs okafor allergies?",
    "patient Okafor, last seen?", "amina  okafor meds", "what's amina okafor on",
])
def test_a_name_in_any_case_or_order_is_the_record_patient(text: str) -> None:
    assert found(text) == (["Amina Okafor"], [])


@pytest.mark.parametrize("text", [
    "grace period for the prescription", "Dr Mensah asked about it", "amina's mother", "okaforamina", "amina okafore",
    "Mensah", "is wilson's disease likely?", "james said wilson", "patient white cell count?", "ms white matter lesions",
    "pt white", "Dr White's patient",
])
def test_words_that_only_look_like_a_patient_are_not_one(text: str) -> None:
    assert found(text)[0] in ([], ["Mensah"]) and found(text)[1] == []
    assert not {"Grace Mensah", "Amina Okafor", "Sarah White"} & set(found(text)[0])


@pytest.mark.parametrize(("text", "patient"), [
    ("Open the chart for patient DG-1003", GRACE), ("meds for mrn dg-1003", GRACE), ("DG-1010 allergies?", YOUNG_JAMES),
    ("Patient/95ec8510-867d-5952-bbb9-19da7084909b allergies?", AMINA), ("allergies of ahmed-7", AHMED),
    ("james wilson (DG-1009) allergies", OLD_JAMES),
])
def test_an_identifier_reference_or_id_is_the_record_id(text: str, patient: KnownPatient) -> None:
    assert found(text) == ([], [patient.id])


@pytest.mark.parametrize(("text", "patient"), [
    ("check the record for okafor, amina, dg-1001", AMINA), ("Mensah, Grace, hospital number DG-1003 - open it", GRACE),
    ("grace mensah MRN: DG-1003 please", GRACE), ("DG-1003 - grace mensah, chart", GRACE),
    ("open the record DG-1009", OLD_JAMES), ("can you pull up the chart for DG-1009", OLD_JAMES),
    ("allergies for patient number DG-1001?", AMINA), ("the lot on DG-1003 please", GRACE),
])
def test_a_name_given_with_its_own_identifier_or_request_words_beside_it_name_one_patient(
        text: str, patient: KnownPatient) -> None:
    assert found(text) == ([], [patient.id])


@pytest.mark.parametrize(("text", "name"), [
    ("check the record for ines duarte, DG-1009", "Ines Duarte"),
    ("Duarte, Ines, hospital number DG-1003 - open the record", "Duarte Ines"),
    ("rosa delgado (MRN DG-1001) allergies?", "Rosa Delgado"),
    ("DG-1003 - Leo Martins, last visit?", "Leo Martins"),
    ("grace okafor dg-1003 meds", "Grace Okafor"),
])
def test_a_name_beside_an_identifier_that_is_another_patients_is_kept_so_the_turn_asks(text: str, name: str) -> None:
    """Issue 26: "check the record for ines duarte, DG-1009" opened DG-1009's record (James Wilson) surely: the name
    given with the number was read as no one. A name the identifier does not carry stays a second patient."""
    names, ids = found(text)
    assert name in names and len(ids) == 1


def test_an_identifier_as_written_maps_to_the_record_id_and_an_unknown_one_stays() -> None:
    entities = with_known_patients(extract_entities("meds for DG-1003 and DG-1099"), "meds for DG-1003 and DG-1099", ROSTER)
    assert entities["patient_ids"] == [GRACE.id, "DG-1099"]
    assert entities["patient_aliases"] == {"dg-1003": GRACE.id}


def test_a_shared_name_stays_a_name_for_the_search_to_ask_which() -> None:
    assert known_patients_in("james wilson allergies?", ROSTER).names == ["James Wilson"]
    assert found("Kwame Nobody's meds and amina okafor's")[0] == ["Amina Okafor", "Kwame Nobody"]
    assert found("ahmed al-rashidi's meds") == (["Ahmed Al-Rashidi"], [])
    assert found("patient White, any allergies?") == (["Sarah White"], []) == found("mrs white allergies?")


def test_nothing_found_leaves_the_entities_as_they_were() -> None:
    entities = extract_entities("What is warfarin?")
    assert with_known_patients(entities, "What is warfarin?", ROSTER) is entities


@pytest.mark.parametrize(("text", "dates"), [
    ("James Wilson born 1988-11-30", ["1988-11-30"]), ("james wilson dob 30/11/1988", ["1988-11-30"]),
    ("James Wilson (DOB: 30 Nov 1988)", ["1988-11-30"]), ("James Wilson (b. November 30th, 1988)", ["1988-11-30"]),
    ("James Wilson (1950-02-01) meds", ["1950-02-01"]), ("date of birth 1.2.1950", []),  # day or month first?
    ("born 1988-13-01", []), ("labs since 2024-01-01", []),
])
def test_a_birth_date_is_read_only_where_it_is_one(text: str, dates: list[str]) -> None:
    assert birth_dates(text) == dates


def test_a_model_that_copies_the_mrn_reads_the_record_id() -> None:
    spec = default_registry()["query_patient_data"]
    text = "any allergies for DG-1003?"
    entities = with_known_patients(extract_entities(text), text, ROSTER)
    args, repairs = ground(spec, {"patient_id": "DG-1003", "resource_type": "AllergyIntolerance"}, entities,
                           {"id": AMINA.id, "name": AMINA.name}, text)
    assert args["patient_id"] == GRACE.id and repairs
    # The active patient's id, chosen while the message names another by id, becomes the named patient's.
    args, _ = ground(spec, {"patient_id": AMINA.id, "resource_type": "AllergyIntolerance"}, entities,
                     {"id": AMINA.id, "name": AMINA.name}, text)
    assert args["patient_id"] == GRACE.id
    # An id that is no patient's (a record item's) leaves the active patient as the patient.
    item = "what was the aspirin (751be8bb-11e8-5579-a23e-59f151606c89) prescribed for?"
    entities = with_known_patients(extract_entities(item), item, ROSTER)
    args, _ = ground(spec, {"patient_id": AMINA.id}, entities, {"id": AMINA.id, "name": AMINA.name}, item)
    assert args["patient_id"] == AMINA.id


class _Client:
    def __init__(self, patients: list[dict[str, Any]] | Exception) -> None:
        self.patients, self.reads = patients, 0

    def search(self, resource_type: str, params: Any = (), limit: int = 500) -> list[dict[str, Any]]:
        self.reads += 1
        if isinstance(self.patients, Exception):
            raise self.patients
        return self.patients


class _Ehr:
    def __init__(self, client: _Client) -> None:
        self.client = client


def test_the_roster_is_read_from_the_record_kept_a_while_and_none_when_unreadable() -> None:
    resource = {"resourceType": "Patient", "id": "p1", "name": [{"family": "Okafor", "given": ["Amina"]}],
                "birthDate": "1964-03-12", "identifier": [{"system": "urn:x", "value": "DG-1001"}]}
    client = _Client([resource, {"resourceType": "Patient", "id": "p2", "name": [{"text": "no family"}]}])
    roster = record_roster(_Ehr(client), ttl_s=60)  # type: ignore[arg-type]
    first = roster()
    assert first is not None and first.patients == (KnownPatient("p1", "Amina Okafor", ("Amina",), "Okafor",
                                                                   "1964-03-12", ("DG-1001",)),)
    assert roster() is first and client.reads == 1
    assert record_roster(_Ehr(_Client(FhirClientError(503, "down"))))() is None  # type: ignore[arg-type]
    assert known_patient({"resourceType": "Patient", "name": "not a list"}) is None


def test_another_patients_family_name_beside_a_number_is_a_second_patient() -> None:
    bello = KnownPatient("bello-1", "Fatima Bello", ("Fatima",), "Bello", "1975-04-04", ("DG-1004",))
    roster = Roster((*ROSTER.patients, bello))
    assert known_patients_in("pull up Bello DG-1003 allergies", roster).disagreeing == ["Fatima Bello"]


@pytest.mark.parametrize("text", ["DG-1003: worsening breathlessness overnight, latest sats?",
                                  "consultant asked DG-1003 potassium", "bed 4 new admission DG-1003",
                                  "DG-1003, awaiting CT head"])
def test_what_is_written_beside_a_number_that_is_no_name_stays_none(text: str) -> None:
    assert found(text) == ([], [GRACE.id])
