"""What this installation can really do, said the same way by the greeting, the refusals and the page.

Four things differ between installations, and every sentence that promises something must follow them:
whether the answers come from the demo rules (``DOCGEMMA_BACKEND=fake``: no language model at all) or from a
model; whether that model may write medical text (MedGemma, a served model) or not (the embedded CPU demo
model); whether it reads images; and whether the knowledge services (openFDA, PubMed, ClinicalTrials.gov) can
be reached from this machine. The patient record is local and always there.
"""

from __future__ import annotations

from dataclasses import dataclass

from docgemma.agent.demo_llm import DEMO_RULES_NAME
from docgemma.llm.base import clinically_meaningful


@dataclass(frozen=True)
class Mode:
    """The facts of one installation that the page's sentences depend on."""

    #: The demo rules answer (no language model).
    rules: bool
    #: The model may write medical text.
    medical_text: bool
    #: The model reads images.
    images: bool
    #: The model's short name ("SmolLM2-135M-Instruct", "MedGemma 1.5 4B IT").
    model: str


def mode_of(llm: object) -> Mode:
    """The :class:`Mode` of an installation answering with ``llm``."""
    name = str(getattr(llm, "name", "the model"))
    rules = name == DEMO_RULES_NAME
    meaningful = clinically_meaningful(llm)
    return Mode(rules=rules, medical_text=meaningful, images=meaningful and bool(getattr(llm, "supports_images", False)),
                model=name.split(" (")[0].strip() or name)


def who(mode: Mode) -> str:
    """Who answers, as the subject of a sentence about what it will not do."""
    if mode.rules:
        return "This demo runs on rules, without a language model, so it"
    return f"The current model, {mode.model}, is a small demo model that runs without a GPU; it"


def capabilities(mode: Mode, offline: bool | None) -> str:
    """What the clinician can ask for here (``offline``: True when the knowledge services cannot be reached,
    None when not known yet)."""
    items = []
    if mode.medical_text:
        items.append("clinical questions")
    if not offline:
        items.append("FDA drug safety warnings and drug interactions, medical literature, clinical trials")
    items.append("the patient record (search, chart review, and — with your approval — notes, allergies and "
                 "prescriptions)")
    if mode.images:
        items.append("analysis of an attached medical image")
    text = "I can help with: " + "; ".join(items) + "."
    if offline:
        text += (" The FDA, literature and trial look-ups cannot be reached from this machine (no internet "
                 "connection), so they are not available now.")
    if not mode.medical_text:
        text += (" This demo writes no medical text and reads no images: MedGemma on a GPU does both.")
    return text


def limits(mode: Mode, offline: bool | None) -> str:
    """Why a medical question is not answered here, and what this demo can show instead."""
    can = ["the patient record (\"Find patient Grace Mensah\", \"What are her active medications?\")",
           "approved writes (\"Prescribe amoxicillin 500 mg three times daily for Grace Mensah\")"]
    if not offline:
        can[:0] = ["FDA drug labels (\"Check FDA warnings for dofetilide\")",
                   "drug interactions (\"Check interactions between warfarin and aspirin\")",
                   "medical literature and clinical trials"]
    return (f"{who(mode)} cannot answer medical questions from its own knowledge, and will not try: such an "
            f"answer could be wrong.\n\nHere you can still see the rest of the assistant work on real data: "
            f"{'; '.join(can)}. Answers to medical questions need MedGemma on a GPU or a served model.")


def no_vision(mode: Mode) -> str:
    """The answer to an image question where the image cannot be read."""
    subject = "This demo runs on rules, without a language model: it" if mode.rules else \
        f"The current model, {mode.model}, has no vision: it"
    return (f"{subject} cannot read images or answer medical questions. The image was received and is shown in "
            "the chat; reading it needs MedGemma on a GPU.")


def undecided(mode: Mode, offline: bool | None, buttons: bool = True) -> str:
    """The answer when no rule was sure of the request and a model not fit to judge it was not asked to guess
    (one sentence; the closest actions follow as buttons, and ``buttons`` False says there are none: offline, a
    message naming nothing the record answers may have no action to offer)."""
    acts_on = ["a drug's FDA warnings or interactions", "the patient's record", "studies or trials"] if not offline \
        else ["the patient's record"]
    subject = "this demo runs on rules, without a language model:" if mode.rules else \
        f"on this demo ({mode.model}, not fit to judge medical requests)"
    # Said in a clinician's words (issue 46: "code acts on requests…" was the engineer's).
    return (f"{subject[:1].upper()}{subject[1:]} it acts on requests that name what they need — "
            f"{', '.join(acts_on)} — and this request was not recognised as one, so nothing was guessed"
            + (": the closest actions are below." if buttons else "."))
