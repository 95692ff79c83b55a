"""Other languages are said, not ignored (issue 26, item 4): a message in French, Portuguese, Spanish or Swahili is
detected by a small stop-word reader (``clinical/language.py``), and the turn answers in that language with what
this mode understands and English examples — no tool, no model call. English with a foreign name or word is English.

First pass (sentences written before the detector was run): 20 of 20 foreign sentences and 15 of 15 English ones
right."""

from __future__ import annotations

from typing import Any

import pytest

from docgemma.agent.assistant import Assistant, TurnResult
from docgemma.agent.demo_llm import demo_llm
from docgemma.agent.other_language import EXAMPLES, reply
from docgemma.agent.rules import decide
from docgemma.clinical.entities import extract_entities
from docgemma.clinical.language import detect
from docgemma.llm.fake import FakeLLM
from docgemma.tools.registry import default_registry

REG = default_registry()

FOREIGN = {
    "fr": ["Bonjour, est-ce que la warfarine interagit avec l'aspirine ?", "Quels sont les médicaments de la patiente ?",
           "Je voudrais vérifier les allergies de ma patiente", "Y a-t-il des essais cliniques pour le diabète au Kenya ?",
           "Merci, pouvez-vous m'aider avec ce patient ?"],
    "pt": ["Olá, a varfarina tem interação com a aspirina?", "Quais são os medicamentos da paciente?",
           "Existe algum ensaio clínico para diabetes no Brasil?", "Ela tem alergia a penicilina, pode registrar isso?",
           "Obrigado, você pode ver o prontuário dele?"],
    "es": ["Hola, ¿hay interacción entre warfarina y aspirina?", "¿Cuáles son los medicamentos de la paciente?",
           "¿Tiene alergias el paciente?", "Quiero buscar ensayos clínicos para la diabetes en México",
           "Gracias, ¿puede revisar la historia de él?"],
    "sw": ["Habari daktari, je warfarin ina mwingiliano na aspirin?", "Mgonjwa anatumia dawa gani?",
           "Je kuna majaribio ya kliniki ya kisukari Kenya?", "Naomba uangalie mzio wa mgonjwa huyu",
           "Asante sana, je dawa hii ni salama kwa mjamzito?"],
}
ENGLISH = ["Find patient Maria de la Cruz", "Find recruiting trials in São Paulo",
           "Check interactions between warfarin and aspirin", "Is the patient Jean-Luc Dupont on warfarin?",
           "what's la belle indifférence?", "Record that she had a rash with doxycycline", "Any trials in Dar es Salaam?",
           "Habari! Check Amina Okafor's allergies", "Open the chart for patient DG-1003",
           "is there any interaction between doxycycline and her other meds?",
           "Find studies on malaria in Ghana and Côte d'Ivoire", "Does José Fernández have allergies?", "ok",
           "Note: pt seen, plan as per Dr. Da Silva", "la la la"]
#: A word of each reply that only that language writes.
OWN_WORD = {"fr": "médicament", "pt": "prontuário", "es": "solicitudes", "sw": "Kiingereza"}


@pytest.mark.parametrize(("language", "text"), [(lang, t) for lang, texts in FOREIGN.items() for t in texts])
def test_each_language_is_detected(language: str, text: str) -> None:
    assert detect(text) == language


@pytest.mark.parametrize("text", ENGLISH)
def test_english_with_a_foreign_name_or_word_is_english(text: str) -> None:
    assert detect(text) is None


@pytest.mark.parametrize(("language", "text"), [(lang, texts[0]) for lang, texts in FOREIGN.items()])
def test_the_rules_answer_it_directly_with_no_tool(language: str, text: str) -> None:
    state: Any = {"user_query": text, "extracted_entities": extract_entities(text), "active_patient": None}
    decision = decide(state, REG)
    assert decision is not None and decision.intent == "DIRECT" and decision.tool is None
    assert decision.rule == "other_language"


@pytest.mark.parametrize("language", list(FOREIGN))
def test_a_whole_turn_says_what_this_mode_understands_in_that_language_with_no_model_call(language: str) -> None:
    for llm in (demo_llm(REG), FakeLLM(clinically_meaningful=True)):
        result = Assistant(llm, REG).run_turn(f"lang-{language}-{llm.name}", FOREIGN[language][1])
        assert isinstance(result, TurnResult)
        assert result.llm_calls == 0 and not result.tools
        assert result.answer.startswith(reply(language)), result.answer
        assert OWN_WORD[language] in result.answer and all(example in result.answer for example in EXAMPLES)


def test_no_golden_turn_is_read_as_another_language() -> None:
    import json
    from pathlib import Path

    texts = []
    for path in sorted((Path(__file__).parents[2] / "golden_tests").glob("*.json")):
        doc = json.loads(path.read_text())
        texts += [t["user_input"] for s in doc.get("sessions", []) for t in s["user_inputs"]]
        texts += [t["user_input"] for t in doc.get("single_turn", [])]
    assert len(texts) > 400
    assert [t for t in texts if detect(t)] == []
