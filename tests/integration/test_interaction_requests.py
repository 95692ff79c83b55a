"""Interaction requests as a clinician types them, through a whole turn on the demo model: the exact openFDA
requests sent (offline: ``tests/fake_openfda.py`` over recorded-shape labels), and the rendered answer as a
clinician reads it — every drug kept, every pair in both directions, each direction with the passage that names
the other drug (or its class), and "does not mention" never turned into "safe" or "no interaction"."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from docgemma.agent.assistant import Assistant, TurnResult
from docgemma.agent.demo_llm import demo_llm
from docgemma.config import Settings
from docgemma.tools.binding import bind_tools, knowledge_clients
from docgemma.tools.registry import default_registry
from tests.fake_openfda import FakeOpenFDA

PARAMS = {"limit": "5", "sort": "effective_time:desc"}


@dataclass(frozen=True)
class Request:
    message: str
    drugs: list[str]
    searches: list[str]
    #: Lines the answer must contain (each direction as the clinician should read it).
    says: tuple[str, ...]


REQUESTS = [
    Request("Check interactions between clopidogrel, aspirin, and pantoprazole", ["clopidogrel", "aspirin", "pantoprazole"],
            ['openfda.generic_name:"clopidogrel"', 'openfda.generic_name:"aspirin"', 'openfda.generic_name:"pantoprazole"'],
            ("3 pairs, each in both directions", "The clopidogrel bisulfate label names aspirin: [Drug interactions]",
             "The clopidogrel bisulfate label does not mention pantoprazole.",
             "The pantoprazole sodium label names clopidogrel: [Drug interactions] Clopidogrel: concomitant administration",
             "The aspirin label does not mention pantoprazole.", "The pantoprazole sodium label does not mention aspirin.")),
    Request("Check interactions between Plavix and omeprazole", ["clopidogrel", "omeprazole"],
            ['openfda.generic_name:"clopidogrel"', 'openfda.generic_name:"omeprazole"'],
            ("The clopidogrel bisulfate label names omeprazole: [Drug interactions] Avoid concomitant use of Plavix with "
             "omeprazole", "The omeprazole label names clopidogrel: [Drug interactions] Clopidogrel: omeprazole reduces")),
    Request("Any interaction between simvastatin and clarithromycin?", ["simvastatin", "clarithromycin"],
            ['openfda.generic_name:"simvastatin"', 'openfda.generic_name:"clarithromycin"'],
            ("The simvastatin label names clarithromycin: [Contraindications]",
             "The clarithromycin label names simvastatin: [Contraindications]")),
    Request("Any interaction between Augmentin and warfarin?", ["amoxicillin-clavulanate", "warfarin"],
            ['(openfda.substance_name:"amoxicillin" AND openfda.substance_name:"clavulanate")',
             'openfda.generic_name:"warfarin"'],
            ("amoxicillin-clavulanate = amoxicillin + clavulanate: label amoxicillin and clavulanate potassium (AUGMENTIN)",
             "The amoxicillin and clavulanate potassium label names the class of warfarin: [Drug interactions] Oral "
             "Anticoagulants", "The warfarin sodium label does not mention amoxicillin-clavulanate.")),
    Request("Check interactions between ibuprofen, lisinopril and sertraline", ["ibuprofen", "lisinopril", "sertraline"],
            ['openfda.generic_name:"ibuprofen"', 'openfda.generic_name:"lisinopril"', 'openfda.generic_name:"sertraline"'],
            ("The ibuprofen label names the class of lisinopril: [Drug interactions] ACE inhibitors",
             "The lisinopril label names the class of ibuprofen: [Drug interactions] Non-Steroidal Anti-Inflammatory",
             "The ibuprofen label names the class of sertraline", "The sertraline hydrochloride label names the class of "
             "ibuprofen", "The lisinopril label does not mention sertraline.",
             "The sertraline hydrochloride label does not mention lisinopril.")),
    Request("Check interactions between tramadol and sertraline", ["tramadol", "sertraline"],
            ['openfda.generic_name:"tramadol"', 'openfda.generic_name:"sertraline"'],
            ("The tramadol hydrochloride label names the class of sertraline: [Drug interactions] Serotonergic drugs",
             "The sertraline hydrochloride label names tramadol: [Drug interactions] Other serotonergic drugs")),
    Request("Check interactions between warfarin and Advil", ["warfarin", "ibuprofen"],
            ['openfda.generic_name:"warfarin"', 'openfda.generic_name:"ibuprofen"'],
            ("The warfarin sodium label names ibuprofen: [Drug interactions] Drugs that increase bleeding risk",
             "The ibuprofen label names warfarin: [Drug interactions] Drugs that interfere with hemostasis")),
    Request("Check interactions between metformin and lisinopril", ["metformin", "lisinopril"],
            ['openfda.generic_name:"metformin"', 'openfda.generic_name:"lisinopril"'],
            ("The metformin hydrochloride label does not mention lisinopril.",
             "The lisinopril label names the class of metformin: [Drug interactions] Antidiabetics")),
    Request("Check interactions between warfarin, aspirin, ibuprofen and omeprazole",
            ["warfarin", "aspirin", "ibuprofen", "omeprazole"],
            ['openfda.generic_name:"warfarin"', 'openfda.generic_name:"aspirin"', 'openfda.generic_name:"ibuprofen"',
             'openfda.generic_name:"omeprazole"'],
            ("6 pairs, each in both directions", "The omeprazole label names warfarin: [Drug interactions] Warfarin: "
             "monitor INR", "The warfarin sodium label does not mention omeprazole.",
             "The aspirin label names ibuprofen: [Warnings]", "The ibuprofen label does not mention omeprazole.")),
    Request("Check interactions between pantoprazole and methotrexate", ["pantoprazole", "methotrexate"],
            ['openfda.generic_name:"pantoprazole"', 'openfda.generic_name:"methotrexate"'],
            ("methotrexate: no FDA label found", "The pantoprazole sodium label names methotrexate: [Drug interactions]",
             "No FDA label was found for methotrexate, so its label could not be checked for pantoprazole.")),
    Request("Check interactions between Coumadin and clarithromycin", ["warfarin", "clarithromycin"],
            ['openfda.generic_name:"warfarin"', 'openfda.generic_name:"clarithromycin"'],
            ("The clarithromycin label names warfarin: [Drug interactions] Oral anticoagulants: there is a risk of serious "
             "hemorrhage", "The warfarin sodium label does not mention clarithromycin.")),
    Request("Check the clopidogrel-omeprazole interaction", ["clopidogrel", "omeprazole"],
            ['openfda.generic_name:"clopidogrel"', 'openfda.generic_name:"omeprazole"'],
            ("The clopidogrel bisulfate label names omeprazole",)),
]


def turn(message: str) -> tuple[TurnResult, FakeOpenFDA]:
    fake = FakeOpenFDA()
    registry = bind_tools(default_registry(), knowledge_clients(Settings(), transport=fake.transport()))
    result = Assistant(demo_llm(), registry).run_turn("t", message)
    assert isinstance(result, TurnResult)
    return result, fake


@pytest.mark.parametrize("request_", REQUESTS, ids=lambda r: r.message)
def test_interaction_request(request_: Request) -> None:
    result, fake = turn(request_.message)
    assert [(t["tool"], t.get("args")) for t in result.tools] == [
        ("check_drug_interactions", {"drug_names": request_.drugs})]
    assert fake.searches == request_.searches
    for sent in fake.requests:  # the same query shape on every request
        assert sent.url.path == "/drug/label.json" and sent.url.host == "api.fda.gov"
        assert {k: v for k, v in sent.url.params.items() if k != "search"} == PARAMS
    answer = result.answer
    for line in request_.says:
        assert line in answer, (line, answer)
    pairs = len(request_.drugs) * (len(request_.drugs) - 1) // 2
    directions = [line for line in answer.splitlines() if line.startswith(("- The ", "- No FDA label was found"))]
    assert len(directions) == 2 * pairs, answer
    lowered = answer.lower()
    assert "no interaction" not in lowered and " is safe" not in lowered and "safe to" not in lowered
    assert result.sources and all(s["url"].startswith("https://dailymed.nlm.nih.gov/") for s in result.sources)


def test_every_drug_named_is_kept_up_to_six() -> None:
    message = "Check interactions between warfarin, aspirin, ibuprofen, omeprazole, clopidogrel and sertraline"
    result, fake = turn(message)
    assert result.tools[0]["args"]["drug_names"] == ["warfarin", "aspirin", "ibuprofen", "omeprazole", "clopidogrel",
                                                     "sertraline"]
    assert len(fake.searches) == 6 and "15 pairs, each in both directions" in result.answer
    assert "truncated" not in result.answer
    directions = [line for line in result.answer.splitlines() if line.startswith(("- The ", "- No FDA label"))]
    assert len(directions) == 30


def test_an_unknown_drug_is_said_unidentified_not_cleared() -> None:
    result, _fake = turn("Check interactions between warfarin, aspirin and zyxomab")
    answer = result.answer
    assert "zyxomab: no FDA label found" in answer
    assert "zyxomab could not be identified, so the warfarin sodium label was not checked for it." in answer
    assert "does not mention zyxomab" not in answer
