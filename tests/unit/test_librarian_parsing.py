"""The pieces a librarian's request is built from: status, phase and place words, the split of a trials request,
literature concepts and filters, label topics and label subsections."""

from __future__ import annotations

from datetime import date
from typing import Any

import pytest

from docgemma.tools import label_query, label_sections, literature_query, places, trial_query
from docgemma.tools.trials import phase_filter, status_filter

YEAR = date.today().year


@pytest.mark.parametrize(("words", "sent"), [
    ("recruiting", "RECRUITING"), ("currently enrolling", "RECRUITING"), ("not yet recruiting", "NOT_YET_RECRUITING"),
    ("active", "RECRUITING,ACTIVE_NOT_RECRUITING,ENROLLING_BY_INVITATION"), ("completed", "COMPLETED"),
    ("RECRUITING,NOT_YET_RECRUITING", "RECRUITING,NOT_YET_RECRUITING"), ("active not recruiting", "ACTIVE_NOT_RECRUITING"),
    ("whatever", None), (None, None),
])
def test_status_words_become_the_api_filter(words: str | None, sent: str | None) -> None:
    assert status_filter(words) == sent


@pytest.mark.parametrize(("words", "sent"), [
    ("3", "AREA[Phase]PHASE3"), ("phase III", "AREA[Phase]PHASE3"), ("PHASE2", "AREA[Phase]PHASE2"),
    ("2/3", "AREA[Phase]PHASE2 AND AREA[Phase]PHASE3"), ("2 or 3", "AREA[Phase](PHASE2 OR PHASE3)"),
    ("early 1", "AREA[Phase]EARLY_PHASE1"), ("either", None), ("", None),
])
def test_phase_words_become_an_essie_filter(words: str, sent: str | None) -> None:
    assert phase_filter(words) == sent


def test_places_have_coordinates_that_agree_with_known_distances() -> None:
    nairobi, kampala = places.lookup("Nairobi"), places.lookup("kampala")
    assert nairobi and kampala and nairobi.point and kampala.point
    assert 480 < places.distance_km(nairobi.point, kampala.point) < 540  # about 510 km apart
    london, boston = places.lookup("London"), places.lookup("Boston")
    assert london and boston and london.point and boston.point
    assert 5200 < places.distance_km(london.point, boston.point) < 5350
    assert places.lookup("Kenya") == places.Place("Kenya") and places.lookup("UK") == places.Place("United Kingdom")
    assert places.lookup("Lupus Nephritis") is None


@pytest.mark.parametrize(("message", "expected"), [
    ("Check metformin safety, find trials for diabetes and pull up Maria Garcia's chart", {"condition": "diabetes"}),
    ("Trials for insulin resistance", {"condition": "insulin resistance"}),  # a drug word inside a condition
    ("Benlysta trials for lupus", {"condition": "lupus", "intervention": "belimumab"}),
    ("trials for sickle cell disease in kids?", {"condition": "sickle cell disease", "age_group": "child"}),
    ("trials for HIV in pregnancy", {"condition": "HIV", "other_terms": "pregnancy"}),
    ("any trials in patients with lupus nephritis testing voclosporin",
     {"condition": "lupus nephritis", "intervention": "voclosporin"}),
    ("malaria vaccine trials within 30 miles of Blantyre",
     {"condition": "malaria", "intervention": "vaccine", "location": "Blantyre", "distance_km": 48}),
    ("novel treatments for MDR-TB trials near Durban", {"condition": "MDR-TB", "location": "Durban"}),
    ("open-label trials of tenofovir in hepatitis B", {"condition": "hepatitis B", "intervention": "tenofovir"}),
    ("trials for asthma in Lagos, Nigeria", {"condition": "asthma", "location": "Lagos"}),
    ("Are there any trials for vitamin A deficiency in the elderly?", {"condition": "vitamin A deficiency",
                                                                       "age_group": "older adult"}),
    ("trials for active tuberculosis in Kenya", {"condition": "active tuberculosis", "location": "Kenya"}),
    ("any ongoing trials for active lupus nephritis?", {"condition": "active lupus nephritis",
                                                        "status": "RECRUITING,ACTIVE_NOT_RECRUITING,ENROLLING_BY_INVITATION"}),
    ("trials for heart failure that are still active", {"condition": "heart failure",
                                                        "status": "RECRUITING,ACTIVE_NOT_RECRUITING,ENROLLING_BY_INVITATION"}),
])
def test_a_trials_request_splits_into_its_parts(message: str, expected: dict[str, Any]) -> None:
    assert trial_query.parse(message) == expected


@pytest.mark.parametrize(("message", "expected"), [
    ("studies on vitamin A supplementation in measles", {"query": "vitamin A supplementation in measles"}),
    ("Find the latest evidence on iron supplementation in pregnancy",
     {"query": "iron supplementation in pregnancy", "since_year": YEAR - 5, "newest_first": True}),
    ("Cochrane systematic reviews on zinc for diarrhoea in the past five years",
     {"query": "zinc for diarrhoea", "publication_types": ["systematic review"], "since_year": YEAR - 5,
      "newest_first": True}),
    ("meta-analysis of new oral anticoagulants in atrial fibrillation",
     {"query": "new oral anticoagulants in atrial fibrillation", "publication_types": ["meta-analysis"]}),
])
def test_literature_concepts_and_filters(message: str, expected: dict[str, Any]) -> None:
    assert literature_query.parse(message) == expected


@pytest.mark.parametrize(("message", "topic"), [
    ("warfarin in Child-Pugh B cirrhosis", "hepatic impairment"),
    ("renal dosing of enoxaparin", "renal impairment"),
    ("amoxicillin dose for a 3 year old child", "children"),
    ("can she take sertraline while breastfeeding", "lactation"),
    ("isotretinoin in the first trimester", "pregnancy"),
    ("paracetamol overdose", "overdose"),
    ("maximum daily dose of colchicine", "dosage"),
    ("boxed warning of amiodarone", None),
])
def test_label_topics(message: str, topic: str | None) -> None:
    assert label_query.topic(message) == topic


def test_label_subsections_are_found_by_their_heading() -> None:
    text = ("8 USE IN SPECIFIC POPULATIONS 8.1 Pregnancy Risk Summary: avoid. 8.2 Lactation Unknown. "
            "8.6 Renal Impairment Reduce the dose to 5 mg when CrCl is below 30 mL/min (see 2.3). 8.7 Hepatic Impairment None.")
    sections = {"use_in_specific_populations": text, "dosage_and_administration": "2.1 Adults 10 mg daily. "
                "2.3 Dosage in Renal Impairment: 5 mg daily."}
    renal = label_sections.answer(sections, "renal impairment")
    assert [p["section"] for p in renal] == ["use_in_specific_populations 8.6", "dosage_and_administration 2.3"]
    assert renal[0]["text"].startswith("8.6 Renal Impairment Reduce the dose") and renal[0]["text"].endswith("(see 2.3).")
    assert label_sections.answer(sections, "children") == []  # never made up
    old_label = {"precautions": "General: use with care. Patients with hepatic impairment may need lower doses."}
    assert label_sections.answer(old_label, "hepatic impairment")[0]["text"] == (
        "Patients with hepatic impairment may need lower doses.")
