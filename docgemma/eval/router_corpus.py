"""A labelled corpus of clinician turns for the learned router (measurement wing: the product never imports it).

Turns are generated from **template families** (a family is one way of asking for one action: "check
interactions between A and B", "A with B - any issue?", …) filled from clinical vocabularies (the dose table's
drugs with their shortenings — amox, co-amox, pip-taz, TMP-SMX, vanc, gent — conditions, labs, places,
allergens, reactions, the demo roster's patients), then varied: a context sentence in front ("she's got a chest
infection, …"), a typo, lower case, no final punctuation, she/he. The label is the action: ``"DIRECT"`` or the
first tool's name (the labels of ``bench/bench_rules.py``). Traps are labelled with what is right, not with
what a keyword suggests: "don't prescribe amoxicillin yet" and "what is warfarin?" are DIRECT.

The split is **by family**: within each label, families are shuffled with the seed and every sixth goes to
test, the one before it to dev, the rest to train, so the test families' phrasings are never seen in training.
:func:`generate` is deterministic for a seed.
"""

from __future__ import annotations

import json
import random
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Literal

from docgemma.tools.registry import default_registry
from docgemma.tools.routing import Role

Split = Literal["train", "dev", "test"]
SEED = 20261127
PER_FAMILY = 40
DEMO_PATIENTS = Path(__file__).resolve().parents[2] / "data" / "demo" / "demo_patients.json"


@dataclass(frozen=True)
class Family:
    """One way of asking for one action. ``active``: a patient is active (None: either); ``image``: attached."""

    name: str
    label: str
    templates: tuple[str, ...]
    active: bool | None = None
    image: bool = False
    #: Context sentences may go in front (False where the template is a whole short answer: "thanks").
    context: bool = True
    #: Always in training, never held out: the product's own request phrasings (its buttons, ``agent/ask.py``) and
    #: the forms its patient-safety tests pin (a record question about a patient named by id or by name).
    canonical: bool = False
    #: Turns drawn from this family when fewer than the corpus's ``per_family`` (the families written apart weigh
    #: less than the corpus's own: see ``WRITTEN``).
    turns: int | None = None


@dataclass(frozen=True)
class Turn:
    """A generated turn: text, label, family, split and the state it is read in."""

    text: str
    label: str
    family: str
    split: Split
    active: bool
    image: bool
    #: The patient the message names ("" when none), the active patient's name ("" when none).
    named: str = ""
    active_name: str = ""


SHORTENINGS: dict[str, tuple[str, ...]] = {
    "amoxicillin": ("amox", "amoxil"),
    "amoxicillin+clavulanate": ("co-amoxiclav", "co-amox", "augmentin", "amox-clav"),
    "piperacillin+tazobactam": ("pip-taz", "tazocin", "pip-tazo", "piperacillin-tazobactam"),
    "sulfamethoxazole+trimethoprim": ("TMP-SMX", "co-trimoxazole", "bactrim", "septra"),
    "vancomycin": ("vanc", "vanco"), "gentamicin": ("gent", "genta"), "doxycycline": ("doxy",),
    "azithromycin": ("azithro",), "ciprofloxacin": ("cipro",), "metronidazole": ("metro",),
    "flucloxacillin": ("fluclox",), "clarithromycin": ("clari",), "acetaminophen": ("paracetamol",),
    "albuterol": ("salbutamol",), "rifampin": ("rifampicin",), "furosemide": ("frusemide",),
    "enoxaparin": ("clexane",), "lopinavir+ritonavir": ("kaletra",), "artemether+lumefantrine": ("coartem",),
}

VOCAB: dict[str, tuple[str, ...]] = {
    "cond": ("community-acquired pneumonia", "heart failure", "atrial fibrillation", "type 2 diabetes", "CKD",
             "hypertension", "asthma", "COPD", "sepsis", "UTI", "cellulitis", "malaria", "tuberculosis", "HIV",
             "breast cancer", "lupus nephritis", "psoriasis", "long COVID", "sickle cell disease", "pre-eclampsia",
             "migraine", "depression", "epilepsy", "DKA", "gout", "stroke", "NSCLC", "Alzheimer's disease"),
    "lab": ("potassium", "sodium", "creatinine", "eGFR", "HbA1c", "INR", "TSH", "LFTs", "haemoglobin", "CRP",
            "troponin", "platelets", "cholesterol", "BNP", "ferritin", "blood pressure", "weight"),
    "place": ("Nairobi", "Lagos", "Accra", "Kampala", "Boston", "London", "Manchester", "Toronto",
              "Johannesburg", "Dar es Salaam", "Kisumu", "Chicago"),
    "allergen": ("penicillin", "sulfa drugs", "latex", "peanuts", "IV contrast", "codeine", "amoxicillin",
                 "aspirin", "ibuprofen", "shellfish", "doxycycline", "co-trimoxazole", "morphine", "eggs"),
    "reaction": ("rash", "hives", "anaphylaxis", "angioedema", "facial swelling", "wheeze", "vomiting", "itching"),
    "dose": ("500 mg", "100mg", "1 g", "25 mcg", "5 mg", "10 mg", "625 mg", "40mg", "250 mg", "20 mg", "2 mg"),
    "freq": ("bd", "tds", "od", "qds", "twice daily", "three times a day", "once daily", "once nightly", "nocte",
             "every 8 hours", "BID", "TID", "mane"),
    "dur": ("for 5 days", "x7d", "for a week", "for 10 days", "for five days", "for 3 days", "for two weeks"),
    "body": ("seen on ward round, chest clear, continue antibiotics", "BP 150/90, increase amlodipine, review in 2 weeks",
             "INR 3.6, omit tonight's warfarin, recheck Friday", "afebrile, eating well, plan discharge tomorrow",
             "falls review, stop oxybutynin, physio referral", "K+ 5.4, hold ramipril, repeat U&E tomorrow",
             "wound healing well, sutures out day 10", "counselled about smoking cessation, leaflet given",
             "family meeting held, DNACPR discussed", "febrile 38.2, cultures sent, started on antibiotics",
             "chest infection, plan {drug} {dose} {freq}", "started {drug}, review in 48h",
             "{drug} stopped because of {reaction}"),
    "finding": ("pneumothorax", "fracture", "effusion", "consolidation", "nodule", "bleed", "mass"),
    "term": ("phase 2 trial", "p-value", "number needed to treat", "confidence interval", "cohort study",
             "non-inferiority trial", "likelihood ratio"),
    "spec": ("cardiology", "oncology", "antenatal", "diabetes clinic", "renal", "ED"),
    "num": ("25", "28", "35", "40", "18", "50"),
    "other": ("Amara Nwosu", "Daniel Reyes", "Mei Chen", "Harold Finch", "Ines Duarte", "Leo Martins",
              "Rosa Delgado", "Thomas Banda", "Sofia Haddad", "Ahmed Karim"),
}

# The labels are the catalog's tools, asked for by role or flag (a tool's name is spelled in its own module only).
_REG = default_registry()


def _role(role: Role) -> str:
    spec = _REG.first(role)
    assert spec is not None, role
    return spec.name


_D, _S, _I = "DIRECT", _role(Role.DRUG_SAFETY), _role(Role.INTERACTIONS)
_L, _T = _role(Role.LITERATURE), _role(Role.TRIALS)
_P = next(s.name for s in _REG if s.patient_search)
_C, _Q, _X, _H = _role(Role.CHART), _role(Role.RECORD_QUERY), _role(Role.CONNECTIONS), _role(Role.RECORD_HISTORY)
_RX, _AL, _NO = _role(Role.MEDICATION_ORDER), _role(Role.ALLERGY_ENTRY), _role(Role.NOTE_ENTRY)
_RM = _role(Role.ALLERGY_REMOVAL)
_IM = next(s.name for s in _REG if s.needs_image)

_KNOWLEDGE: tuple[Family, ...] = (
    # ── DIRECT: greetings, general questions, and the traps (negated writes, write words in a question) ──
    Family("greeting", _D, ("hi", "hello", "good morning!", "thanks", "thank you", "thanks, that's helpful", "cheers",
                            "bye", "hey there", "good afternoon", "ok thanks", "great, thank you"), context=False),
    Family("drug_info", _D, ("what is {drug} used for?", "tell me about {drug}", "what class of drug is {drug}?",
                             "what kind of medicine is {drug}?", "what is {drug} normally given for?")),
    Family("capabilities", _D, ("what can you do?", "how can you help me?", "who are you?", "what can I ask you?",
                                "help", "what are you?"), context=False),
    Family("define", _D, ("what is {drug}?", "what is {cond}?", "define {cond}", "what is a {term}?",
                          "what is meant by {term}?", "what are {drug}s?")),
    Family("mechanism", _D, ("how does {drug} work?", "explain how {drug} works", "why does {drug} cause {reaction}?",
                             "explain the mechanism of action of {drug}", "how does {drug} lower blood pressure?")),
    Family("management", _D, ("how do I manage {cond} in adults?", "how should I treat {cond}?",
                              "what's the first-line treatment for {cond}?", "how is {cond} usually managed?",
                              "what causes {cond}?")),
    Family("negated_write", _D, ("don't prescribe {drug} yet", "hold off on the prescription, I'll review tomorrow",
                                 "no need to add the allergy, it's already on file", "please dont save any note for this one",
                                 "don't add anything to {pos} record yet", "do not prescribe {drug} for now",
                                 "don't document that allergy yet, just thinking out loud"), context=False),
    Family("already_done", _D, ("I already wrote the note myself", "we documented the allergy earlier, thanks",
                                "I've prescribed the {drug} already", "I already ordered it, thanks",
                                "we recorded that earlier"), context=False),
    Family("write_word_question", _D, ("how do I write a good SOAP note?", "who is allowed to prescribe controlled drugs?",
                                       "what's the best way to document an allergy?",
                                       "when should an allergy be recorded as anaphylaxis?",
                                       "how do you write a discharge summary?", "what should a progress note include?")),
    Family("explain_compare", _D, ("explain the difference between {cond} and {cond2}",
                                   "what are the components of CURB-65?", "what's the target INR for a mechanical valve?",
                                   "explain the CHA2DS2-VASc score", "what is the difference between type 1 and type 2 "
                                   "respiratory failure?", "when would you use PCC rather than FFP?")),
    # ── drug safety (one drug) ──
    Family("safety_fda", _S, ("check FDA warnings for {drug}", "boxed warnings for {drug}", "FDA safety warnings on {drug}?",
                              "what are the FDA warnings for {drug}?", "check the FDA label for {drug}")),
    Family("safety_in_condition", _S, ("is {drug} safe in pregnancy?", "is {drug} safe in {cond}?",
                                       "is {drug} safe while breastfeeding?", "is {drug} safe for the elderly?",
                                       "is it safe to use {drug} in children?")),
    Family("safety_contraindications", _S, ("contraindications for {drug}", "{drug} contraindications?",
                                            "what are the contraindications of {drug}?",
                                            "list the contraindications to {drug}")),
    Family("safety_blackbox", _S, ("black box on {drug}?", "{drug} label warnings", "does {drug} have a black box warning?",
                                   "boxed warning {drug}?", "{drug} - any black box?")),
    Family("safety_renal", _S, ("can I still give {drug} if eGFR is {num}?", "is {drug} ok in the 2nd trimester?",
                                "is {drug} ok if the eGFR is {num}?", "can we use {drug} with an eGFR of {num}?")),
    Family("safety_for_her", _S, ("check {drug} safety given {pos} kidney function", "is {drug} safe for {obj}?",
                                  "check the safety of {drug} for {obj}", "verify {drug} safety before I start it"),
           active=True),
    Family("safety_warnings", _S, ("what are the main warnings for {drug}?", "key safety concerns with {drug}?",
                                   "major warnings for {drug}", "what are the precautions for {drug}?",
                                   "how dangerous is {drug}? any warnings?")),
    # ── interactions (two drugs or more, or one with her medications) ──
    Family("ix_between", _I, ("check interactions between {drug} and {drug2}", "interactions between {drug} and {drug2}?",
                              "check interactions: {drug}, {drug2}", "drug interactions {drug} {drug2}")),
    Family("ix_any_issue", _I, ("{drug} with {drug2} - any issue?", "{drug} + {drug2}, QT concern?",
                                "{drug} and {drug2} together, any concern?", "{drug} plus {drug2} ok together?")),
    Family("ix_already_on", _I, ("can I give {drug} to someone already on {drug2}?",
                                 "ok to use {drug} in a patient on {drug2}?", "is {drug} ok for someone taking {drug2}?",
                                 "can a patient on {drug2} take {drug}?")),
    Family("ix_levels", _I, ("does {drug} affect {drug2} levels?", "will {drug} knock down {drug2} levels?",
                             "does {drug} blunt {drug2}?", "does {drug} raise {drug2} levels?")),
    Family("ix_her_drugs", _I, ("{Pr}'s on {drug}, is {drug2} ok with that?",
                                "I started {obj} on {drug} on Monday, is that OK with {pos} {drug2}?",
                                "{Pr} takes {drug2} - can I add {drug}?"), active=True),
    Family("ix_other_meds", _I, ("is there any interaction between {drug} and {pos} other meds?",
                                 "does {drug} interact with {pos} current medications?",
                                 "any interactions between {drug} and what {pr} is already taking?",
                                 "check {drug} against {pos} medication list for interactions"), active=True),
    Family("ix_three", _I, ("{drug}, {drug2} and {drug3} together - any interactions?",
                            "check {drug}, {drug2} and {drug3} against each other",
                            "interactions between {drug}, {drug2} and {drug3}?")),
    # ── literature ──
    Family("lit_find_studies", _L, ("find studies on {drug} in {cond}", "find studies on {cond} management",
                                    "search for studies on {drug} and {cond}", "find papers on {cond} in children")),
    Family("lit_evidence", _L, ("what's the evidence for {drug} in {cond}?", "find evidence on {drug} for {cond}",
                                "is there good evidence for {drug} in {cond}?", "evidence base for {drug} in {cond}?")),
    Family("lit_latest", _L, ("latest research on {cond}", "recent papers on {cond} treatment",
                              "latest reasearch on {drug} and {cond} outcomes", "new research on {cond}?")),
    Family("lit_reviews", _L, ("systematic reviews on {drug} for {cond}", "meta-analysis of {drug} in {cond}",
                               "Cochrane review on {drug} for {cond}", "any systematic reviews on {cond} screening?")),
    Family("lit_rcts", _L, ("find RCTs comparing {drug} vs {drug2} in {cond}", "randomised trials of {drug} versus {drug2}",
                            "head-to-head studies of {drug} and {drug2} in {cond}")),
    Family("lit_says", _L, ("what does the literature say about {drug} after {cond}?",
                            "published data on {cond} in pregnancy?", "what do the studies show about {drug} in {cond}?",
                            "I want to read articles about treatment of {cond}")),
    # ── trials ──
    Family("trials_recruiting", _T, ("recruiting trials for {cond}", "find recruiting clinical trials for {cond}",
                                     "are there recruiting trials for {cond}?", "recruting trails for {cond}")),
    Family("trials_place", _T, ("open studies near {place} for {cond}", "clinical trials in {place} for {cond}",
                                "any trials near {place} for {cond}?", "trials recruiting in {place} for {cond}")),
    Family("trials_join", _T, ("any trials {pr} could join for {cond}?", "is there a trial {pr} could enrol in for {cond}?",
                               "are there open trials for {cond} my patient could join?"), active=True),
    Family("trials_enrolling", _T, ("enrolling studies for {cond}?", "studies looking for volunteers with {cond}",
                                    "studies accepting patients with {cond}", "any enrolling studies for {cond}?")),
    Family("trials_drug", _T, ("find clinical trials of {drug} in {cond}", "ongoing trials of {drug} for {cond}",
                               "experimental trials of {drug} in {cond}", "clinical trials testing {drug} for {cond}")),
    Family("trials_phase", _T, ("phase 3 trials for {cond} recruiting now", "is anyone running a clinical trial on {cond}?",
                                "ongoing clinical trials for {cond}?", "active trials in {cond} right now")),
)

_RECORD: tuple[Family, ...] = (
    # ── a patient named by name: found first (a write or a question about them follows) ──
    Family("patient_find", _P, ("find patient {name}", "please find patient {name}", "find {name}",
                                "search for patient {name}")),
    Family("patient_bare", _P, ("{name} please", "{name}", "{name}?", "patient {name}"), context=False),
    Family("patient_registered", _P, ("is {name} in the system?", "do we have a patient called {name}?",
                                      "is {name} registered here?", "anyone named {name}?")),
    Family("patient_pull_up", _P, ("pull up {name}", "look for {name}", "open {name}'s record", "bring up {name}",
                                   "switch to {name}")),
    Family("patient_question", _P, ("what's {name}'s latest {lab}?", "show me {name}'s chart",
                                    "when was {name} last seen?", "does {name} have any allergies?",
                                    "switch to {name}. how are her kidneys doing?")),
    Family("patient_labs", _P, ("what's {name}'s latest {lab}?", "{name} last {lab}?", "{name}'s {lab}?",
                                "last {lab} for {name}?", "{name} latest {lab} please"), canonical=True),
    Family("patient_record", _P, ("does {name} have any allergies?", "what meds is {name} on?", "is {name} on any meds?",
                                  "{name} allergies?", "{name} problems?", "when did {name} last come in?"), canonical=True),
    Family("patient_write", _P, ("put {name} on {drug} {dose} {freq}", "{name} - start {drug} {dose} {freq}",
                                 "record a {allergen} allergy for {name}", "note for {name}: {body}",
                                 "prescribe {drug} {dose} {freq} for {name}")),
    # ── the active patient's record ──
    Family("chart_show", _C, ("show {pos} chart", "open {pos} chart", "pull up {pos} chart", "show me {pos} chart"),
           active=True),
    Family("chart_summary", _C, ("summarise {pos} record", "give me a summary of {pos} record",
                                 "summarize {pos} record for me", "quick summary of {pos} record please"), active=True),
    Family("chart_short", _C, ("full chart pls", "chart please", "the whole chart", "chart?"), active=True,
           context=False),
    Family("chart_overview", _C, ("overview of {pos} history", "{pos} medical history overview",
                                  "give me {pos} history in brief", "what's {pos} overall history?"), active=True),
    Family("chart_by_id", _C, ("show the chart for patient {mrn}", "open the chart for patient {mrn}",
                               "open the record of patient {mrn}", "chart of patient {mrn} please",
                               "find {ref}'s chart"), canonical=True),
    Family("chart_everything", _C, ("show me everything in {pos} record", "give me the full picture of {pos} record",
                                    "show me {pos} whole record", "everything we have on {obj}, please"), active=True),
    Family("chart_review", _C, ("can you review {pos} chart before I see {obj}?", "review {pos} record quickly",
                                "review {pos} chart", "go through {pos} record"), active=True),
    Family("query_last_lab", _Q, ("what was {pos} last {lab}?", "what is {pos} latest {lab}?", "{pos} most recent {lab}?",
                                  "what's {pos} {lab} now?", "has {pos} {lab} improved since admission?"), active=True),
    Family("query_short", _Q, ("{lab}?", "latest {lab}?", "any allergies?", "{lab} trend", "last {lab}?"), active=True,
           context=False),
    Family("query_meds", _Q, ("what meds is {pr} on?", "show {pos} medications", "is {pr} on any blood thinners?",
                              "what is {pr} taking?", "what are {pos} active medications?",
                              "what's {pr} on at the moment?"), active=True),
    Family("query_allergy_problems", _Q, ("does {pr} have any allergies?", "what's {pos} problem list?",
                                          "what are {pos} diagnoses?", "{pr} have allergy to something?",
                                          "did we ever document {pos} penicillin allergy?",
                                          "is {pr} allergic to anything?", "is {pr} allergic to {drug}?"), active=True),
    Family("query_vitals", _Q, ("show {pos} blood pressure readings", "what are {pos} vitals?", "{pos} weight?",
                                "what are {pos} vital signs?", "show {pos} latest lab results"), active=True),
    Family("query_by_id", _Q, ("{ref} allergies?", "{ref} latest {lab}?", "allergies for {ref}?",
                               "what is the last {lab} of {ref}?", "{ref} {lab}?", "{ref} problems?", "{ref} vitals?",
                               "any allergies for {ref}?", "last {lab} for {ref}?", "{ref} diagnoses?"), canonical=True),
    Family("query_organ", _Q, ("how are {pos} kidneys doing?", "how's {pos} renal function?", "{pos} liver function ok?",
                               "how is {pos} kidney function?", "what's {pos} thyroid doing?"), active=True),
    Family("timeline_last_seen", _H, ("when was {pr} last seen?", "when did we last see {obj}?", "last seen when?",
                                      "when was {pos} last visit?"), active=True),
    Family("timeline_visits", _H, ("which visits did {pr} have this year?", "{pos} visits so far?",
                                   "what visits has {pr} had with us?", "list {pos} visits"), active=True),
    Family("timeline_admissions", _H, ("{pos} admissions?", "any admissions for {obj} recently?",
                                       "how many admissions has {pr} had?", "show {pos} hospital admissions"), active=True),
    Family("timeline_happened", _H, ("what happened at {pos} last visit?", "what happened at {pos} {spec} visits this year?",
                                     "what happened last time {pr} came in?"), active=True),
    Family("timeline_encounters", _H, ("show {pos} encounters", "list {pos} encounters this year", "{pos} encounters?",
                                       "show {pos} appointments"), active=True),
    Family("timeline_by_id", _H, ("when was {ref} last seen?", "{ref} visits?", "visits for {ref} this year",
                                  "{ref} last seen when?"), canonical=True),
    Family("timeline_plain", _H, ("{pos} timeline please", "show {pos} timeline", "timeline of {pos} care",
                                  "{pos} timeline of visits"), active=True),
    Family("conn_item_id", _X, ("what was the {drug} ({uuid}) prescribed for?", "what's the {drug} ({uuid}) for?",
                                "why is {pr} on the {drug} ({uuid})?"), active=True),
    Family("conn_treating", _X, ("what is {pos} {drug} treating?", "what's {pos} {drug} treating?",
                                 "which condition is {pos} {drug} treating?"), active=True),
    Family("conn_related", _X, ("is {pos} {cond} related to {pos} meds?", "how is {pos} {cond} connected to {pos} medications?",
                                "how are {pos} conditions connected?"), active=True),
    Family("conn_started_for", _X, ("what was {drug} started for in {pos} record?", "what was {pos} {drug} prescribed for?",
                                    "what was {pos} {drug} given for?"), active=True),
    Family("conn_led_to", _X, ("what led to {pos} {cond} diagnosis?", "what came out of {pos} last admission?",
                               "what resulted from {pos} {cond}?"), active=True),
    Family("conn_linked", _X, ("what's linked to {pos} {cond}?", "what is linked to {pos} {cond} in the record?",
                               "link between {pos} {cond} and {pos} medications?"), active=True),
    Family("conn_explains", _X, ("could the {drug} be causing {pos} {lab} result?", "would any of {pos} meds explain the {lab}?",
                                 "could {pos} {drug} explain the {lab}?", "what is {pos} {drug} for?"), active=True),
    # ── writes for the active patient ──
    Family("rx_prescribe", _RX, ("prescribe {drug} {dose} {freq} for {obj}", "prescribe {drug} {dose} {freq}",
                                 "prescribe {drug} {dose} {freq} {dur}"), active=True),
    Family("rx_start", _RX, ("start {obj} on {drug} {dose} {freq} {dur}", "start {drug} {dose} {freq}",
                             "start {drug} {dose} {freq} {dur} please"), active=True),
    Family("rx_put_on", _RX, ("put {obj} on {drug} {dose} {freq}", "put {obj} on {drug} {dose} {freq} {dur}",
                              "put {obj} on {drug}"), active=True),
    Family("rx_order", _RX, ("Rx {drug} {dose} po {freq}", "order {drug} {dose} {freq} for {obj}",
                             "order {drug} {dose} {freq} {dur}"), active=True),
    Family("rx_thinking", _RX, ("{Pr}'s got a chest infection, thinking {drug} {dose} {freq} {dur}",
                                "thinking {drug} {dose} {freq} {dur} for {obj}", "I'm thinking {drug} {dose} {freq}"),
           active=True),
    Family("rx_what_about", _RX, ("ok what about {drug} {dose} {freq} {dur} then", "let's go with {drug} {dose} {freq}",
                                  "go with {drug} {dose} {freq} {dur} instead"), active=True),
    Family("rx_give", _RX, ("please give {obj} {drug} {dose} {freq}", "commence {drug} {dose} {freq}",
                            "give {drug} {dose} {freq} {dur}"), active=True),
    Family("allergy_record", _AL, ("record a {allergen} allergy for {obj}", "record {allergen} allergy",
                                   "record an allergy to {allergen} for {obj}"), active=True),
    Family("allergy_gets", _AL, ("{Pr} gets {reaction} with {allergen}, please document it",
                                 "{Pr} gets {reaction} with {allergen} - record it", "{Pr} had {reaction} with {allergen}, "
                                 "add it as an allergy"), active=True),
    Family("allergy_add", _AL, ("add allergy: {allergen} ({reaction})", "add {allergen} allergy, {reaction}",
                                "add an allergy to {allergen} for {obj}"), active=True),
    Family("allergy_document", _AL, ("document that {pr} is allergic to {allergen}", "document a {allergen} allergy",
                                     "please document {pos} {allergen} allergy ({reaction})"), active=True),
    Family("allergy_record_that", _AL, ("record that {pr} gets a {reaction} with {allergen}",
                                        "record that {pr} had {reaction} after {allergen}",
                                        "record that {pr} reacts to {allergen} with {reaction}"), active=True),
    Family("allergy_intolerance", _AL, ("log an intolerance to {allergen}: {reaction}",
                                        "log {allergen} intolerance ({reaction})", "enter an allergy to {allergen}"),
           active=True),
    Family("note_colon", _NO, ("note: {body}", "Note: {body}", "nb: {body}"), active=True, context=False),
    Family("note_progress", _NO, ("save a progress note for {obj}: {body}", "save a progress note: {body}",
                                  "progress note for {obj}: {body}"), active=True),
    Family("note_write", _NO, ("write a note: {body}", "write a clinical note: {body}", "please write a note - {body}"),
           active=True),
    Family("note_document", _NO, ("document in {pos} notes: {body}", "document in the notes: {body}",
                                  "document this in {pos} notes: {body}"), active=True),
    Family("note_add", _NO, ("add to {pos} notes: {body}", "add a note: {body}", "add a note to {pos} record: {body}"),
           active=True),
    Family("note_save_this", _NO, ("save this to {pos} notes: {body}", "save this as a note: {body}",
                                   "save a note: {body}"), active=True),
    # ── an attached image ──
    Family("image_analyze", _IM, ("analyze this chest x-ray for a {finding}", "analyse this image for {finding}",
                                  "analyze this x-ray"), image=True),
    Family("image_is_there", _IM, ("is there a {finding} on this film?", "is there a {finding} on this x-ray?",
                                   "any {finding} on this scan?"), image=True),
    Family("image_whats_on", _IM, ("whats on this xray", "what do you see on this scan?", "what's on this film?",
                                   "what do you see on this chest X-ray?"), image=True),
    Family("image_look_at", _IM, ("pls look at this scan - any {finding}?", "look at this x-ray please",
                                  "look at this image - {finding}?"), image=True),
    Family("image_read", _IM, ("read this CT for me", "interpret this image please", "read this film",
                               "interpret this chest x-ray"), image=True),
    Family("image_here", _IM, ("here it is: is there a {finding}?", "here's the film, {finding}?",
                               "here is the x-ray - {finding} or not?"), image=True),
)

#: The requests the product itself offers as buttons (``agent/ask.py``): always trained on, never measured.
_CANONICAL: tuple[Family, ...] = (
    Family("canon_safety", _S, ("What are the FDA safety warnings for {drug}?", "What are the FDA boxed warnings for "
                                "{drug}?"), canonical=True, context=False),
    Family("canon_ix", _I, ("Check interactions between {drug} and {drug2}", "Check interactions between {drug}, "
                            "{drug2} and {drug3}", "Check interactions between {drug} and this patient's medications"),
           active=True, canonical=True, context=False),
    Family("canon_lit", _L, ("Find recent studies on {drug}", "Find recent studies on {drug} and {drug2}",
                             "Find recent studies on {cond}"),
           canonical=True, context=False),
    Family("canon_trials", _T, ("Find recruiting clinical trials for {cond}",), canonical=True, context=False),
    Family("canon_patient", _P, ("Find patient {name}",), canonical=True, context=False),
    # Whose a hospital number is: the patient search, by the number (the v5 and v6 sets' second looks).
    Family("patient_by_number", _P, ("who is {mrn}?", "which patient is {mrn}?", "{mrn} - who is that",
                                     "whose hospital number is {mrn}?", "find the patient with hospital number {mrn}",
                                     "search for patient {mrn}", "Find patient {mrn}", "who does {mrn} belong to?",
                                     "is {mrn} on the system?", "who's {mrn}", "identify patient {mrn}",
                                     "look up the MRN {mrn}", "{mrn} is which patient?", "search hospital no {mrn}",
                                     "which pt is {mrn}", "find whoever has hospital number {mrn}"), canonical=True),
    Family("canon_chart", _C, ("Show the chart of this patient",), active=True, canonical=True, context=False),
    Family("canon_query", _Q, ("Show this patient's {lab}", "Show this patient's active medications",
                               "Show this patient's allergies", "Show this patient's kidney function"),
           active=True, canonical=True, context=False),
    Family("canon_connections", _X, ("What is this patient's {drug} treating?",), active=True, canonical=True,
           context=False),
    Family("query_on_drug", _Q, ("is {pr} on {drug}?", "is {pr} still taking {drug}?", "is {pr} taking {drug}?",
                                 "has {pr} been on {drug} before?"), active=True, canonical=True),
    # Forms the corpus lacked, found where the router trained with the written families read them as a general
    # dosing question, as visits and as interactions (golden_tests/heldout_test.json: no longer a first pass for
    # these forms; the three families below).
    Family("query_dose_on", _Q, ("what dose of {drug} is {pr} on?", "how much {drug} is {pr} taking?",
                                 "what's {pos} {drug} dose?", "which dose of {drug} does {pr} take?"), active=True,
           canonical=True),
    Family("query_immunisations", _Q, ("which vaccines has {pr} had?", "{pos} immunisations?",
                                       "is {pr} up to date with {pos} vaccinations?", "what vaccinations has {pr} had?"),
           active=True, canonical=True),
    Family("safety_a_problem", _S, ("is {drug} a problem in elderly patients with {cond}?", "is {drug} a problem in {cond}?",
                                    "is {drug} a concern in older patients with {cond}? what does the label say",
                                    "any issue giving {drug} to someone with {cond}?"), canonical=True),
    # Two drugs "a problem" together are an interaction ("a problem in" one condition is the label's): the retrained
    # router read heldout_test.json's "zopiclone plus donepezil … any problem?" as a label question.
    Family("ix_a_problem", _I, ("{drug} plus {drug2} - any problem?", "is {drug} with {drug2} a problem at {pos} age?",
                                "{drug} and {drug2} together, a problem in the elderly?"), canonical=True),
    # A result's course is a record question (the retrained router read "how has the kidney function changed over
    # time for patient <id>?" as the chart: tests/integration/test_patient_identity.py).
    Family("query_trend", _Q, ("how has {pos} {lab} changed over time?", "how has the kidney function changed over time "
                               "for patient {uuid}?", "is {pos} {lab} getting better or worse?",
                               "{lab} over the last year for {ref}?"), canonical=True),
    Family("query_record_words", _Q, ("meds?", "medications?", "current meds?", "allergies?", "problems?",
                                      "vitals?", "PMH?", "past history?"), active=True, canonical=True, context=False),
    Family("query_lab_by_id", _Q, ("what were {pos} last {lab} results? patient {uuid}",
                                   "latest {lab} for patient {uuid}", "{lab} for patient {mrn}?"), canonical=True),
    Family("rx_by_id", _RX, ("start {drug} {dose} {freq} for patient {uuid}", "prescribe {drug} {dose} {freq} for {ref}",
                             "start {drug} {dose} {freq} for {ref}"), canonical=True),
    Family("canon_timeline", _H, ("When was this patient last seen?",), active=True, canonical=True, context=False),
    Family("canon_rx", _RX, ("Prescribe {drug} {dose} {freq} for this patient", "Prescribe {drug} for this patient",
                             "Prescribe {drug} {dose} {freq} {dur} for this patient"), active=True, canonical=True,
           context=False),
    Family("canon_allergy", _AL, ("Record an allergy to {drug} for this patient",), active=True, canonical=True,
           context=False),
    Family("canon_note", _NO, ("Note for this patient: {body}",), active=True, canonical=True, context=False),
    # A patient's diagnoses, and a numbered patient's medicines and results, are her record's query (no search comes
    # first; the sets written apart label them so, and taught the router that "diagnosis" goes with the map).
    Family("canon_diagnoses", _Q, ("what are the diagnoses of {obj}?", "what diagnoses does {pr} have?",
                                   "list {pos} diagnoses", "{pos} active diagnoses?", "what is {pos} diagnosis?"),
           active=True, canonical=True),
    Family("canon_meds_by_id", _Q, ("what meds is {ref} on", "is {ref} on any meds?", "{ref} meds?",
                                    "{ref} medications?", "labs for {ref}?", "{ref} labs?", "any meds for {ref}?",
                                    "is {ref} taking anything?", "current medications of {ref}"), canonical=True),
    # A write for a patient named by number is that write, its patient given (never a search for the number).
    Family("canon_note_by_id", _NO, ("write a note for patient {mrn}", "note for {ref}: {body}",
                                     "add a note to {ref}'s record: {body}", "save a note for patient {mrn}",
                                     "write a progress note for {ref}"), canonical=True),
    Family("canon_order_by_id", _RX, ("Prescribe {drug} {dose} {freq} for patient {mrn}", "start {drug} {dose} {freq} for {ref}",
                                      "order {drug} {dose} {freq} {dur} for patient {mrn}",
                                      "Prescribe {drug} {dose} {freq} for patient {ref}"), canonical=True),
)

#: More ways of asking, written apart from the rules in a JSON file (one session, given only the labels and the
#: slots): always trained on, never measured, and after the families above so the corpus's turns stay the same.
WRITTEN = Path(__file__).with_name("router_families_written.json")
#: Turns of each written family: fewer than the corpus's own, chosen on the dev families (40 moved golden record
#: questions the rules read rightly to unsure).
WRITTEN_TURNS = 15
#: The sets of families written apart that were measured first (sealed, run once: their first passes are in
#: ``bench/results/results_router_heldout_v{2..8}_first_pass.md``), trained on after their second looks (v2-v4 from
#: the stop after theirs, v5-v8 from the stop after v8's). Left out of v2-v4: the two families whose label is not the
#: design's (a general question about an attached image is answered from the vision step, DIRECT; a record opened by
#: a patient's name and hospital number is the chart, not a search). The set written last (v9) is never here.
MEASURED = Path(__file__).with_name("router_families_measured.json")


CONTEXT = ("{Pr}'s got a chest infection, ", "{Pr}'s febrile again. ", "bloods are back. ", "on the ward round now - ",
           "quick question: ", "ok, ", "so ", "{Pr} is 67 with {cond}. ", "sorry, one more: ", "{Pr}'s been dizzy. ")


def demo_patients() -> list[dict[str, str]]:
    """The demo roster's patients: id (the bundle's uuid), name, family name, gender and MRN."""
    bundle = json.loads(DEMO_PATIENTS.read_text(encoding="utf-8"))
    out = []
    for entry in bundle["entry"]:
        resource = entry["resource"]
        if resource["resourceType"] != "Patient":
            continue
        name = resource["name"][0]
        mrn = next((i["value"] for i in resource.get("identifier", [])), "")
        out.append({"id": entry["fullUrl"].rsplit(":", 1)[-1], "name": f"{name['given'][0]} {name['family']}",
                    "family": name["family"], "gender": resource.get("gender", "female"), "mrn": mrn})
    return out


def _drugs() -> list[str]:
    """The corpus's drug vocabulary (``router_drugs.json``): the dose table's drugs when the weights were trained,
    pinned so that a new dose row does not silently change the training data (combinations as the table writes them,
    "+" between the parts; :func:`_drug_word` writes them as pharmacists do)."""
    return list(json.loads((Path(__file__).with_name("router_drugs.json")).read_text())["drugs"])


def _drug_word(rng: random.Random, drug: str) -> str:
    """A drug as written: its generic name, or (one time in three) a shortening or brand clinicians use."""
    short = SHORTENINGS.get(drug)
    if short and rng.random() < 0.4:
        return rng.choice(short)
    return drug.replace("+", "-")


def _patient_slots(rng: random.Random, patients: list[dict[str, str]], family: Family) -> dict[str, str]:
    """The patient slots: the active patient (when the family has one), a named patient who is another, pronouns."""
    active = family.active if family.active is not None else rng.random() < 0.5
    current = rng.choice(patients) if active else None
    others = [p for p in patients if p is not current]
    named = rng.choice(others)
    female = (current or named)["gender"] == "female"
    # A patient outside the record one time in four; a name in lower case one time in three (clinicians type
    # "does amina okafor have …"), surname first now and then.
    full = rng.choice(VOCAB["other"]) if rng.random() < 0.25 else named["name"]
    given, family_name = full.split(" ", 1)
    shown = rng.choice((full, full, full.lower(), full.lower(), f"{family_name}, {given}", full))
    return {"name": shown, "surname": shown.split()[-1], "mrn": named["mrn"], "uuid": named["id"],
            "ref": rng.choice((named["mrn"], f"Patient/{named['id']}", f"patient {named['mrn']}")),
            "active_name": current["name"] if current else "", "pr": "she" if female else "he",
            "Pr": "She" if female else "He", "pos": "her" if female else "his", "Pos": "Her" if female else "His",
            "obj": "her" if female else "him"}


def _slots(rng: random.Random, patients: list[dict[str, str]], family: Family) -> dict[str, str]:
    """Every slot a template may use, drawn at random (three different drugs, two different conditions)."""
    drugs = rng.sample(_drugs(), 3)
    conds = rng.sample(VOCAB["cond"], 2)
    slots = {key: rng.choice(values) for key, values in VOCAB.items()}
    slots.update(drug=_drug_word(rng, drugs[0]), drug2=_drug_word(rng, drugs[1]), drug3=_drug_word(rng, drugs[2]),
                 cond=conds[0], cond2=conds[1])
    slots.update(_patient_slots(rng, patients, family))
    slots["body"] = slots["body"].format(**slots)  # a note's text may name a drug, a dose, a reaction
    return slots


def _typo(rng: random.Random, text: str) -> str:
    """One slip of the keyboard in one longer word: a letter dropped, doubled or swapped with the next."""
    words = text.split(" ")
    long = [i for i, w in enumerate(words) if len(w) >= 6 and w.isalpha()]
    if not long:
        return text
    i = rng.choice(long)
    word, at = words[i], rng.randrange(1, len(words[i]) - 2)
    kind = rng.randrange(3)
    words[i] = (word[:at] + word[at + 1:] if kind == 0 else word[:at] + word[at] + word[at:] if kind == 1
                else word[:at] + word[at + 1] + word[at] + word[at + 2:])
    return " ".join(words)


def _vary(rng: random.Random, text: str, family: Family, slots: dict[str, str], typo: bool) -> str:
    """The variations: a context sentence in front, a typo (when ``typo``), lower case, no final punctuation."""
    if family.context and rng.random() < 0.25:
        prefix = rng.choice(CONTEXT).format(**slots)
        text = prefix + (text[:1].lower() + text[1:] if not text[:2].isupper() else text)
    if typo:
        text = _typo(rng, text)
    if rng.random() < 0.2:
        text = text.lower()
    if rng.random() < 0.3:
        text = text.rstrip("?.!")
    return " ".join(text.split())


def splits(seed: int = SEED) -> dict[str, Split]:
    """Each family's split: within a label, shuffled by the seed; every sixth to test, the one before to dev (the
    canonical families always train)."""
    rng = random.Random(seed)
    out: dict[str, Split] = {f.name: "train" for f in FAMILIES if f.canonical}
    for label in sorted({f.label for f in FAMILIES}, key=lambda label: (label in LATER_LABELS, label)):
        names = sorted(f.name for f in FAMILIES if f.label == label and not f.canonical)
        rng.shuffle(names)
        for i, name in enumerate(names):
            out[name] = "test" if i % 6 == 5 else "dev" if i % 6 == 4 else "train"
    return out


def load_families(path: Path) -> tuple[Family, ...]:
    """Families written in a JSON file (a list of {name, label, templates, active, image, context}): a set written
    apart, generated with the same vocabularies and variations as the corpus (``bench/bench_router.py --families``)."""
    rows = json.loads(path.read_text(encoding="utf-8"))
    return tuple(Family(str(r["name"]), str(r["label"]), tuple(r["templates"]), r.get("active"), bool(r.get("image")),
                        bool(r.get("context", True))) for r in rows)


FAMILIES: tuple[Family, ...] = _KNOWLEDGE + _RECORD + _CANONICAL + tuple(
    Family(f.name, f.label, f.templates, f.active, f.image, f.context, canonical=True, turns=WRITTEN_TURNS)
    for f in (*load_families(WRITTEN), *load_families(MEASURED))) + (
    # Issue 42 item 6: "NKDA" asked to be written is the coded "no known drug allergy" entry (add_allergy's card),
    # never a negated write. Last, so the turns above stay the same; canonical: the forms the safety tests pin.
    Family("allergy_nkda", _AL, ("document NKDA for {obj}", "record NKDA", "please record NKDA for {obj}",
                                 "{Pr} has no known drug allergies, please document", "document no known drug allergies",
                                 "no known drug allergies - please record that", "add NKDA to {pos} allergy list",
                                 "NKDA, please document", "Document NKDA for this patient",
                                 "record no known allergies for {obj}"), active=True, canonical=True),
) + (
    # Issue 42 item 6: removing an allergy label on record (a status change of the entry, with its reason). Last,
    # so the turns above stay the same; its label is split after the others' (``LATER_LABELS``).
    Family("rm_delabel", _RM, ("delabel {pos} {allergen} allergy: negative challenge",
                               "de-label {allergen} for {obj} - tolerated a test dose",
                               "please delabel the {allergen} allergy, negative skin test"), active=True),
    Family("rm_remove", _RM, ("remove {pos} {allergen} allergy, {pr} tolerated a full course",
                              "remove the {allergen} allergy from {pos} record - entered in error",
                              "please remove the {allergen} allergy label, negative oral challenge"), active=True),
    Family("rm_challenge", _RM, ("{Pr} tolerated an oral {allergen} challenge today, remove the allergy label",
                                 "passed a {allergen} challenge - please remove the allergy",
                                 "negative {allergen} skin test, remove the allergy label"), active=True),
    Family("rm_take_off", _RM, ("take the {allergen} allergy off {pos} list, it was entered in error",
                                "take {pos} {allergen} allergy off the record - wrong patient",
                                "can you take the {allergen} allergy off, {pr} has had it since without problems"),
           active=True),
    Family("rm_mark_refuted", _RM, ("mark {pos} {allergen} allergy as refuted: tolerated challenge",
                                    "mark the {allergen} allergy inactive, negative testing",
                                    "inactivate the {allergen} allergy - tolerated a course last month"), active=True),
    Family("rm_label_removed", _RM, ("{allergen} allergy label was removed after a negative challenge, update the record",
                                     "the allergy clinic delabelled {obj} from {allergen}, please record",
                                     "{allergen} allergy label removed by the allergy clinic - please update"),
           active=True),
    # The short forms without a reason (the card then asks for it): the forms the tests pin, always trained.
    Family("rm_short", _RM, ("delabel {drug}", "delabel {allergen}", "de-label {pos} {allergen} allergy",
                             "remove {pos} {allergen} allergy", "remove the {allergen} allergy label",
                             "delabel {obj} from {drug}", "take the {allergen} allergy off"), active=True,
           canonical=True, context=False),
    Family("rm_clear", _RM, ("clear the {allergen} allergy from {pos} chart - tolerated a test dose",
                             "delete the {allergen} allergy entry, it was a mistake",
                             "retire {pos} {allergen} allergy, reason: negative challenge"), active=True),
)
#: Labels added after the corpus was first split: shuffled after the others, so the earlier families keep theirs.
LATER_LABELS = (_RM,)


def generate(seed: int = SEED, per_family: int = PER_FAMILY, families: tuple[Family, ...] | None = None,
             split_as: Split | None = None) -> list[Turn]:
    """The corpus: ``per_family`` distinct turns of each family (fewer where its templates give fewer).
    ``families``: other families than the corpus's, every turn in split ``split_as``."""
    rng = random.Random(seed)
    patients = demo_patients()
    split = splits(seed) if families is None else {f.name: split_as or "test" for f in families}
    turns: list[Turn] = []
    for family in FAMILIES if families is None else families:
        seen: set[str] = set()
        typos = 0
        wanted = min(per_family, family.turns or per_family)
        for _ in range(wanted * 4):
            if len(seen) >= wanted:
                break
            slots = _slots(rng, patients, family)
            template = rng.choice(family.templates)
            # About one turn in seven has a typo, never more: a family of few short phrasings is not made up of
            # misspellings to reach its count.
            typo = rng.random() < 0.15 and typos < wanted * 0.15
            text = _vary(rng, template.format(**slots), family, slots, typo)
            if text.lower() in seen:
                continue
            typos += typo
            seen.add(text.lower())
            named = slots["name"] if "{name}" in template else ""
            turns.append(Turn(text, family.label, family.name, split[family.name], bool(slots["active_name"]),
                              family.image, named=named, active_name=slots["active_name"]))
    return turns


def main() -> int:
    """Write the corpus as JSON lines to stdout (for a look; the trainer and the bench generate it themselves)."""
    import sys

    for turn in generate():
        sys.stdout.write(json.dumps(asdict(turn)) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
