"""Held-out phrasings (written before the fix, never tuned on): a record question that names a patient other than
the active one, in any case or form, is answered about that patient or asks; never from the active patient's record.
First pass (before the roster was wired in) and final pass are reported in the branch's report."""

from __future__ import annotations

from pathlib import Path

import pytest

from docgemma.ehr.service import Ehr
from tests.integration.named_patient import Verdict, judge, named_turn, wanted_patients

#: (active patient, message, the patient the answer must be about: a name two patients share must be asked about).
HELD_OUT: list[tuple[str, str, str]] = [
    ("Grace Mensah", "kofi asante allergies?", "Kofi Asante"),
    ("Grace Mensah", "what's samuel kariuki on", "Samuel Kariuki"),
    ("Grace Mensah", "MARIA GARCIA LAST SEEN?", "Maria Garcia"),
    ("Grace Mensah", "oduya margaret - any meds?", "Margaret Oduya"),
    ("Grace Mensah", "fatima bello's last kidney function?", "Fatima Bello"),
    ("Grace Mensah", "Any allergies for DG-1007?", "Samuel Kariuki"),
    ("Grace Mensah", "meds for mrn DG-1006", "Margaret Oduya"),
    ("Grace Mensah", "Open the chart for Patient/95ec8510-867d-5952-bbb9-19da7084909b", "Amina Okafor"),
    ("Grace Mensah", "james wilson born 1950-02-01, any allergies?", "James Wilson 1950-02-01"),
    ("Grace Mensah", "when was James Wilson (DOB 1988-11-30) last seen?", "James Wilson 1988-11-30"),
    ("Grace Mensah", "Mwangi, Joseph: last INR?", "Joseph Mwangi"),
    ("Grace Mensah", "check okafor amina's meds", "Amina Okafor"),
    ("Grace Mensah", "open the chart for dg-1004", "Fatima Bello"),
    ("Joseph Mwangi", "allergies - grace mensah", "Grace Mensah"),
    ("Joseph Mwangi", "james wilson allergies?", "James Wilson"),  # two James Wilsons: it must ask which
    ("Joseph Mwangi", "is kofi asante on any meds?", "Kofi Asante"),
]


@pytest.fixture(scope="module")
def ehr(tmp_path_factory: pytest.TempPathFactory) -> Ehr:
    return Ehr.embedded(Path(tmp_path_factory.mktemp("record")) / "record.sqlite")


@pytest.mark.parametrize(("active", "message", "target"), HELD_OUT)
def test_a_held_out_phrasing_is_about_the_patient_it_names(ehr: Ehr, active: str, message: str,
                                                          target: str) -> None:
    result, patients = named_turn(ehr, active, message)
    verdict = judge(result, patients, active, target)
    expected = Verdict.RIGHT if len(wanted_patients(patients, target)) == 1 else Verdict.ASKED
    assert verdict is expected, (verdict, result.answer, result.follow_ups)
