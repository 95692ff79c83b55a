"""Task-pattern matching: which tools a query needs, decided by keywords, never by the model.

Each tool's keywords are on its spec (``ToolSpec.keywords``); every tool whose keywords match contributes (a
query may need several tools: "find patient X, check her chart and verify metformin safety"), which
generalises the seed's single-pattern match. The other signals (a named patient, a chart, an order verb with a
drug, a drug's safety, a risk question about two drugs, a dictated note, a question about the record) ask the
registry for the tool by flag or role, never by name. Each signal is a rule family: :func:`tool_signals` names
the family that required each tool, and ``bench/bench_rules.py`` measures each family's precision on phrasings
it was not written from. A signal fires only on a form it is sure of; everything else is left to the model.

Every pattern the rules read is in this one table, compiled one way (:func:`phrase`): the signals' and the
whole-message forms :func:`docgemma.agent.rules.decide` reads first (a greeting, "nothing to do", a definition).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from docgemma.agent.state import AgentState
from docgemma.clinical.drug_spelling import one_edit
from docgemma.clinical.entities import DrugDictionary
from docgemma.clinical.function_words import only_function_words
from docgemma.clinical.ingredients import resolve_local
from docgemma.clinical.negation import negations, not_written, without_negations
from docgemma.clinical.note_head import dash_note
from docgemma.clinical.record_concepts import RECORD_CONCEPT_RE, RESULT_CONCEPT_RE, RESULT_WORDS, asks_medication_map
from docgemma.tools.extract import REACTION_WORDS, STUDY_WORDS, asks_about_own_medicines
from docgemma.tools.order_extract import KNOWN_ALLERGENS, allergy_args
from docgemma.tools.registry import ToolRegistry, ToolSpec
from docgemma.tools.routing import Role


def phrase(pattern: str) -> re.Pattern[str]:
    """A message form, matched in any case: how every pattern of this table is compiled (the rules' one
    flag, written once)."""
    return re.compile(pattern, re.IGNORECASE)


# "record" is also a verb ("record an allergy"): it names the chart only after a possessive or article.
_CHART_RE = phrase(
    # Not a "drug chart" (her medications), nor "chart the following: …" (a note).
    r"\b(?<!drug\s)(?<!med\s)(?<!medication\s)(chart|summary|synopsis|(?<!encounter\s)(?<!visit\s)(?<!admission\s)(?<!attendance\s)(?<!contact\s)history(?!\s+of\s+(?:visits|admissions|encounters|"
    r"appointments|attendances))|overview|whole\s+lot|the\s+lot|background|run\s+me\s+through|"
    # "get Samuel Kariuki up on screen pls": the patient on the screen is her chart ("get her meds up on screen" is
    # her medications)
    r"(?:get|bring|put|pull|have)\s+(?!(?:her|his|their|the|my|its)\s+[\w\-]+\s+up\b)(?:[\w'’\-]+,?\s+){1,2}"
    r"up\s+on(?:to)?\s+(?:the\s+|my\s+)?screen|"
    # "bring up everything we have on maria garcia"
    r"everything\s+(?:we\s+have|we've\s+got|on\s+(?:file|record))(?!\s+(?:tried|done|given|used|got\s+to)\b)|"
    # "bring up the notes for amina okafor", "open his case notes": the notes as a whole are the chart
    r"(?:(?:bring|pull|call|dig)\s+up|open|get)\s+(?:the\s+|all\s+(?:the\s+)?|(?:her|his|their|(?:this\s+)?[a-z]+'s)\s+)?"
    r"(?:case\s+|medical\s+|clinical\s+)?notes)\b"
    r"(?!\s+(?:the|this|that)\b)"
    r"|\b(her|his|their|the|patient(?:'?s)?|medical|health|[a-z]+'s)\s+records?\b",
)
#: Sections of the record: for a patient the message names in words ("find John Smith and check his meds") they are a
#: chart review; about the active patient ("what meds is she on?") or one named by number, the record query.
_SECTION_RE = phrase(r"\b(meds|medications|labs)\b")
#: How findings relate, or what an item was for: the connections tool (the model judges which record item to
#: start from unless the message gives its id).
CONNECTION_RE = phrase(
    r"\b(connect\w*|linked|link between|relat(?:ed|es|ion)\s+(?:to|between)|treating|(?:prescribed|given|started)\s+for|"
    r"came\s+out\s+of|resulted\s+from|(?:led|leads?)\s+to|arose\s+from|"
    # "could any of her meds explain the low platelets?", "which drug goes with which diagnosis", "link up her
    # conditions with her medications"
    r"(?:meds?|medications?|medicines|drugs|tablets)\s+(?:explain|cause|account\s+for)|"
    # "could the rivaroxaban be causing her low platelets", "would any of her drugs explain the creatinine"
    r"(?:could|might|would|can|is|are)\s+(?:the|her|his|their|[a-z]+['’]s|any\s+of\s+(?:her|his|their))\s+[\w\-]+(?:\s+[\w\-]+)?\s+"
    r"(?:be\s+)?(?:causing|explain\w*|behind|responsible\s+for|contributing\s+to)|"
    r"which\s+(?:drugs?|med\w*|medicines?|tablets?)\s+(?:goes|go|is|are|belongs?)\s+(?:with|for|to)\s+which|link\s+up|"
    # "how does everything in her record tie together - meds vs problems"
    r"tie\s+(?:together|up)|(?:meds?|medications?|drugs)\s+(?:vs\.?|versus|against)\s+(?:problems|diagnoses|conditions)|"
    # Why a drug of hers is there, and which of hers treat what: "why is he on X?", "remind me why she takes X",
    # "the indication for her X", "which of her meds are for her gout?", "what's she taking for her asthma?"
    r"why\s+(?:is|was)\s+(?:she|he|they|the\s+patient)\s+(?:on|taking)|why\s+(?:does|did)\s+(?:she|he|they)\s+take|"
    r"why\s+(?:she|he|they)(?:\s+takes?|\s+is\s+on|['’]s\s+on|\s+are\s+on|['’]re\s+on)|"
    # "why has Maria Garcia been put on pantoprazole", "why was he started on X"
    r"why\s+(?:has|have|had|was|were|is)\s+(?:[\w'’\-]+,?\s+){1,2}(?:been\s+)?(?:put|started|commenced|placed|kept)\s+on\b|"
    r"why\s+(?:was|is)\s+(?:her|his|their|the)?\s*[\w\-]+\s+started|indication\s+for\s+(?:her|his|their)|"
    r"(?:meds?|medications?|medicines|drugs|tablets)\s+(?:are|is)\s+for\b|"
    # "what is her lisinopril for?", "what's he taking warfarin for?": the question ends on "for".
    r"what(?:['’]s|\s+is|\s+are)\s+(?:(?:her|his|their)\s+(?!(?:appointment|referral|bed|follow|bloods?|scan|tests?|"
    r"review|visit|admission|surgery|op|procedure|clinic|" + RESULT_WORDS + r")\b)[\w\-]+(?:\s+[\w\-]+)?|"
    r"(?:she|he|they)\s+(?:on|taking)\s+"
    r"[\w\-]+(?:\s+[\w\-]+)?)\s+for(?=\s*(?:[?.!]|$))|"
    r"taking\s+for\s+(?:her|his|their)|(?:on\s+(?:her|his|their)\s+list|being\s+used)\s+(?:to\s+)?(?:treat|manage)|"
    # "join the dots between her diagnoses and her drugs", "how does her X tie in with her Y", "what's covering his AF"
    r"join\s+the\s+dots|between\s+(?:her|his|their)\s+[\w\- ]{2,30}\s+and\s+(?:her|his|their)\b|tie\s+in\s+with|"
    r"covering\s+(?:her|his|their)\b|because\s+of\s+(?:her|his|their)\b|"
    # "how her problems and meds relate", "is his gout tied to his diuretic?"
    r"tied\s+to|(?:relate|interrelate|fit\s+together|tie\s+together|tie\s+in)(?=\s*[?.!]*\s*$)|"
    # "is her eGFR down to one of her meds?", "map his meds to his diagnoses", "how his drugs match up with his
    # problem list", "any relationship in her record between the gout and the diuretic", "what is each medication
    # being used for", "would his bisoprolol explain the bradycardia" (a drug of his explaining a finding)
    r"down\s+to\s+(?:one\s+of\s+|any\s+of\s+)?(?:her|his|their|the)\s+(?:meds?|medications?|medicines|drugs|tablets)|"
    r"map\s+(?:her|his|their|[a-z]+(?:'s|s'|')|[a-z]+,\s+[a-z]+'s|[a-z]+\s+[a-z]+'s)\s+(?:meds?|medications?|medicines|drugs)\s+"
    r"(?:to|onto|against|with)|match(?:es|ing)?\s+up\b|relationships?\s+(?:in\s+[\w'’, ]{1,40}?\s+)?between|"
    r"(?:what\s+is\s+)?each\s+(?:of\s+(?:her|his|their)\s+)?(?:meds?|medications?|medicines?|drugs?|tablets?)\s+"
    r"(?:is\s+)?(?:being\s+used\s+|prescribed\s+|given\s+)?for|"
    r"(?:her|his|their)\s+[a-z][\w\-]+(?:\s+[a-z][\w\-]+)?\s+(?:explain|be\s+causing)\s+(?:the|her|his|their|this|that)\b|"
    # "is the indapamide behind her abnormal sodium", "does his CKD have anything to do with his gout"
    r"behind\s+(?:her|his|their)\b|(?:have|has)\s+(?:anything|something)\s+to\s+do\s+with|relate\s+to|"
    # "wondering if something he's on explains the AF", "does anything in her record explain the migraine"
    r"(?:something|anything)\s+(?:(?:she|he|they)(?:['’]s|\s+is|\s+are)\s+(?:on|taking)|in\s+(?:her|his|their|the|"
    r"[\w\-/]+['’]s)\s+record)\s+(?:explains?|causes?|accounts?\s+for|(?:could|might|would)\s+(?:explain|cause)))\b",
)


def connection_asked(text: str) -> bool:
    """How items of the record relate (:data:`CONNECTION_RE`), or which of the record's medications is for which
    condition, asked of the whole record (the connections tool's map: ``clinical/record_concepts``)."""
    return bool(CONNECTION_RE.search(text)) or asks_medication_map(text)


#: Asking whose a hospital number is: "who is DG-1003?", "which patient is dg-1009", "look up who hospital number
#: DG-1001 belongs to", "search for pt with hospital no DG-1005", "find the patient with MRN DG-1001".
_IDENTIFY_RE = phrase(
    r"\bwho(?:'s|\s+is)\b|\bwhich\s+(?:patient|pt|person)\b|\bwhose\b|\bbelongs?\s+to\b|"
    r"\b(?:find|search\s+for|search|look\s+up|locate|identify|trace)\s+(?:the\s+|a\s+|this\s+)?(?:pt|patient|person)\b|"
    r"\b(?:exists?|registered)\b|\b(?:on|in)\s+the\s+(?:system|database)\b|^\W*(?:\w+\W+){0,4}?(?:search|find|locate|trace)\b",
)
_REVIEW_RE = phrase(r"\b(chart|summary|review)\b")
#: A drug's label question: with one drug named, these words ask for its warnings.
_SAFE_RE = phrase(
    r"\b(safe|safety|dangerous|danger|toxicity|contraindications|contraindicated|label|labelling|labeling|warnings?|"
    r"teratogen\w*|"
    r"precautions|(?:ok|okay|alright|fine)\s+to\s+(?:prescribe|give|use|start|take)|"
    # "is doxycycline ok in the 2nd trimester?", "can I still give nitrofurantoin if eGFR is 28?"
    r"(?:ok|okay|alright|fine)\s+(?:in|for|during|if)|can\s+(?:i|we)\s+(?:still\s+)?(?:give|use)|"
    # "pregnant, 18 weeks - can she have acyclovir", "does ramipril need avoiding in severe renal impairment?"
    r"can\s+(?:she|he|they)\s+(?:still\s+)?(?:have|take)|avoid(?:ed|ing)?\s+in|"
    # "adverse event reports for sertraline", "any recalls on levothyroxine" (never "can you recall when …"): the
    # label's adverse reactions, the reports and the recalls
    r"adverse\s+(?:drug\s+)?(?:events?|reactions?)\s+(?:reports?|reported|data|get\s+reported)|faers|recalls|"
    r"recalled|(?:any|a|drug|product|fda|batch)\s+recall)\b",
)
#: A drug's adverse effects asked of the drug itself ("valsartan side effects?", "what adverse reactions does
#: carbamazepine cause"): the label's; read only when no patient is referred to ("has she reported side effects on
#: sertraline" is a question of her record).
_LABEL_EFFECTS_RE = phrase(r"\b(?:side[\s-]effects?|adverse\s+(?:drug\s+)?(?:effects?|reactions?|events?))\b")
#: The label's dosing for the kidneys or the liver, asked of one drug: "max dose of gabapentin if eGFR is 25?", "does
#: cefixime need adjusting for an eGFR of 40", "fluticasone renal dosing". Read only where no other look-up was asked
#: for (a tool of its own for renal doses answers in its place).
_LABEL_DOSING_RE = phrase(
    r"\b(?:(?:max(?:imum)?\s+)?(?:dose|dosing)\b[^?.!]{0,40}\b(?:if|when|with|in|at)\s+(?:an?\s+|the\s+)?"
    r"(?:egfr|crcl|creatinine\s+clearance|renal|kidney|hepatic|liver|dialysis|hd\b)|"
    r"need(?:s)?\s+(?:\w+\s+)?adjust\w*|renal(?:ly)?\s+dos\w*|dose\s+adjust\w*)",
)
_PATIENT_RE = phrase(r"\b(patient|his|her|their)\b")
#: The message refers to a patient (the active one when no id or name is given).
PATIENT_REF_RE = phrase(
    r"\b(she|he|her|his|hers|him|they|their|them|(my|this|the|our)\s+patient('?s)?|pt)\b",
)
TIMELINE_RE = phrase(
    r"\b(visits?|encounters?|admissions?|appointments?|timeline|what happened|last time|previous notes?|last seen|"
    # "did she turn up to her renal follow-up?", "has he attended clinic?"
    r"seen last|follow-?ups?|turn(?:ed)?\s+up|attend(?:ed|s|ance)?|dna'?d|"
    # "has he had his follow up since the admission", "did she ever come back for the review", "her hospital
    # contacts over time"
    r"(?:had|have|got|missed|for|booked)\s+(?:her|his|their|a|the|any)?\s*follow\s+ups?|"
    r"c(?:o|a)me\s+back\s+(?:for|to)\b|(?:hospital|clinic|healthcare|gp)\s+contacts?|due\s+back|"
    r"next\s+(?:appointment|review|clinic|visit)|chronolog\w*|appts?|hospital\s+stays?|inpatient\s+stays?|"
    # "what's gone on with her over the last 18 months"
    r"(?:gone\s+on|been\s+going\s+on|been\s+happening)\s+with\s+(?:her|him|them)(?=\s*(?:[?.!]|$|over|in\s+the|since|during|this|lately|"
    r"recently))|"
    # "when was he last in clinic?", "last at the hospital"
    r"last\s+(?:in|at|to)\s+(?:the\s+)?(?:clinic|hospital|ward|ed|a&e|opd|surgery)|"
    # "when did she last come in", "when did Kofi Asante last come in to see us"
    r"when\s+(?:did|was|has)\s+(?:[\w'’\-]+,?\s+){1,2}last\s+(?:come|came|been|popped|dropped)\s+in)\b",
)
#: Words that make a short question general rather than about the patient's own record ("BP targets?").
_GENERAL_WORDS_RE = phrase(
    r"\b(targets?|goals?|normal|ranges?|guidelines?|defin\w*|causes?|caused|treat\w*|manag\w*|doses?|dosing|dosage|"
    r"side effects|interpret\w*|mean\w*|explain|why|how|should|recommend\w*|first[- ]line|choice|pregnan\w*|"
    r"children|kids|adults|elderly|vs|versus|what\s+is|what\s+are|what's\s+a|next|what\s+to\s+do|"
    # A topic after a preposition ("potassium in DKA?", "meds for hypertension?") or a value the clinician gives
    # ("INR 4.5 what to do?") makes it a question about that, not about what the record holds.
    r"in|for|with|during|after|before|when|if|to)\b|\b\d+(?:[.,]\d+)?\b",
)
#: A question: it asks about something, so it never requests a write ("Should I start metformin?",
#: "does she have an allergy?"). "Can you ..." / "Could you ..." are requests, not questions.
_QUESTION_RE = phrase(
    r"^\s*(what|which|who|whom|whose|when|where|why|how|is|are|was|were|does|do|did|has|have|had|should|shall|"
    r"can (i|we|she|he|they)|could (i|we)|may|might|would (i|we|it)|will|any)\b",
)
#: Where a clause begins: the start, punctuation, a spaced dash ("Joseph Mwangi - start ceftriaxone"),
#: "and"/"then"/"please", a polite opener.
_CLAUSE_START = (
    r"(?:^|[,;:.!]\s*|\s[-–]\s*|\b(?:and|then|now|also|please|pls|plz|kindly)\s+(?:to\s+)?|\b(?:can|could|would) you\s+|"
    r"\bgo ahead and\s+|"
    r"\bi(?: want|'d like| would like| need) to\s+|\blet'?s\s+)"
)
#: A write verb in command position (see ``_CLAUSE_START``); "Rx" is how prescriptions are written.
_WRITE_CLAUSE_RE = phrase(
    _CLAUSE_START + r"(prescribe|order|start|record|document|add|save|write|log|enter|put|rx|flag|mark|"
    # "update allergies: latex, rash": an update of what the record holds (never "update me on …").
    r"update(?=\s+(?:(?:her|his|their|the)\s+)?(?:allerg|intoleran|notes?\b|record\b))|"
    # "switch him to …", "change her antibiotic to …": an order (never "switch to <a patient>").
    r"(?:switch|change)(?=\s+(?:her|him|his|them|their)\b)|"
    # "please note a penicillin allergy on his record" (a noun "note" is no verb: "note: …", "her notes").
    r"note(?=\s+(?:a|an|the|her|his|their)\s+[\w\- ]{0,30}\ballerg)|"
    # "get that on the record as an allergy", "new allergy: latex, …"
    r"get(?=\s+(?:that|this|it)\s+on\s+(?:the|her|his|their)\s+record)|"
    # "please get that documented on her allergies"
    r"get(?=\s+(?:that|this|it)\s+(?:documented|recorded|added|noted|written\s+down)\b)|"
    r"new(?=\s+allerg\w*\s*:))\b",
)
#: Words that tell the assistant not to do something ("don't", "no need to", "hold off"): the rules' one list.
NEGATION = r"don'?t|dont|do\s+not|no\s+need\s+to|hold\s+(?:off|fire)|not\s+yet"
_NEGATED_CLAUSE_RE = phrase(rf"^\s*(?:ok(?:ay)?,?\s+|no,?\s+)?(?:{NEGATION}|never)\b")
#: "Put her on nifedipine …", "Put Amina Okafor on dapagliflozin …": an order, as clinicians say it.
_PUT_ON = r"put\s+(?:him|her|them|the\s+patient|this\s+patient|pt|[A-Z][\w'\-]*(?:\s+[A-Z][\w'\-]*){0,3})\s+on"
#: Verbs of a medication order (with a drug named): "Start lisinopril 10 mg daily for abc-123".
_ORDER_RE = phrase(
    r"(?:^|[,;:.!]\s*|\s[-–—]\s*|\b(?:and|then|please|pls|plz|ok|okay|so|now)\s+(?:to\s+)?|"
    # "can you start amoxicillin 500 mg tds for her": a request with the drug and its dose, never a question of
    # whether ("could you start metformin if eGFR is 35?", "would you give ibuprofen in CKD 4?")
    r"\b(?:can|could)\s+(?:you|u)\s+(?:please\s+|pls\s+)?(?=[a-z]+\s+(?:(?:her|him|them)\s+(?:on\s+)?)?"
    r"[a-z][\w\-]*(?:\s+[a-z][\w\-]*)?,?\s+\d)(?![^?]*\b(?:if|whether|or\s+(?:is|should|would|not))\b))"
    r"(prescribe|order|start|"
    # "can you chart doxycycline 100 mg bd": to chart a drug with its dose is to prescribe it (the drug chart)
    r"chart(?=\s+[a-z][\w\-]*(?:\s+[a-z][\w\-]*)?\s+\d)|"
    r"give(?!\s+(?:me|us)\b)|rx\b|"
    + _PUT_ON + r")\b",
)
#: A note the clinician dictates: "Note: …", "Note for Grace Mensah: …", "Progress note, Kofi Asante: …". The
#: words before the colon are the request; the rest is the note's text, which requests nothing.
_DICTATION_RE = phrase(
    r"(?:^|(?<=[.!;])\s+|\s[-–—]\s+)\s*(?:(?:ok(?:ay)?|just|then|now|so|please|pls)[,]?\s+)*"
    r"(?:(?:write|save|add|make|put|enter|record)\s+(?:a|an|the|this|her|his|their|my)?\s*)?"
    r"(?:(?:progress|clinical|consult(?:ation)?|ward|nursing|discharge|procedure|soap|follow-up|brief|quick)\s+)?"
    r"(?:note|document|documentation)\b(?P<head>[^:\n]{0,60}):\s*\S",
)
#: Where a write goes: "on her chart", "to Joseph Mwangi's chart", "into the record".
_WRITE_PLACE_RE = phrase(r"\b(?:on|to|in|into|onto)\s+"
                         r"(?:her|his|their|the|this\s+patient's|(?:[\w\-]+[\s,]+){0,2}[\w\-]+['’]s)\s+"
                         r"(?:chart|record|notes|file)\b")
#: The record as where a fact is looked for: "… up to date on the record", "anything in her record about …".
_WHERE_TO_LOOK_RE = phrase(r"\b(?:on|in)\s+(?:the|her|his|their)\s+records?$")
#: Words that ask to read the chart besides a write ("review her chart and record …", "show me the summary").
_READ_TOO_RE = phrase(r"\b(?:review\w*|summary|show|open|pull\s+up|look\s+(?:at|through)|read)\b")
#: A dictated allergy: a substance, an arrow, its reaction ("latex -> facial swelling", "penicillin → rash").
_ALLERGY_BODY_RE = phrase(r"^(?P<substance>[A-Za-z][\w\- ]{1,40}?)\s*(?:->|→|=>|-->|—>)\s*"
                          r"(?P<reaction>[A-Za-z][\w\- ,]{1,60})[.!]?$")
#: "Record that she had a rash with doxycycline": documenting a reaction is an allergy entry.
_REACTION_VERB_RE = phrase(_CLAUSE_START + r"(record|document|log|enter|add|"
                           # "please get that documented on his allergies"
                           r"get\s+(?:that|this|it)\s+(?:documented|recorded|added|noted))\b")
#: A study that enrols patients is a trial: "enrolling studies for …", "studies looking for volunteers".
#: Trials named as a kind of publication ("randomised controlled trials of …", "controlled trials").
_PUBLISHED_TRIALS_RE = phrase(r"\b(?:randomi[sz]ed\s+(?:controlled\s+|clinical\s+)?|controlled\s+)trials?\b")
#: Any other word the trials tool answers to.
_TRIAL_WORD_RE = phrase(r"\b(?:trials?|recruiting|experimental|enrolling|clinicaltrials(?:\.gov)?|ct\.gov)\b")
_ENROLMENT_RE = phrase(
    r"\b(enrol\w*|enroll\w*|recruit\w*|volunteers?|accepting\s+(?:new\s+)?(?:patients|participants|volunteers)|"
    r"(?:could|can)\s+join|join(?:ing)?\s+(?:a|an|the|this)\s+(?:study|trial)|take\s+part\s+in|participate\s+in|"
    # "a research study she could be screened for", "what's open to enrolment on the registry"
    r"(?:be|being|get)\s+screened\s+for|"
    r"eligible\s+(?:for|to\s+join)|looking\s+for\s+(?:participants|volunteers|patients|subjects)|"
    r"taking\s+(?:on\s+)?(?:new\s+)?(?:patients|participants)|randomi[sz]ed\s+into|"
    # "nairobi: open uti studies", "open heart failure trials near Accra": studies open to patients
    r"open\s+(?:[\w\-']+\s+){0,3}(?:studies|trials)|"
    r"sign(?:ing)?\s+up|open\s+to\s+(?:recruitment|enrolment|enrollment))\b",
)
#: Research a patient takes part in: "take part in research", "participate in clinical research".
_JOINS_RESEARCH_RE = phrase(r"\b(?:tak(?:e|ing)\s+part|participat(?:e|ing)|join(?:ing)?|enrol\w*|enroll\w*|involved)"
                            r"\s+in\s+(?:\w+\s+)?research\b"
                            # "pt keen on research participation, find trials …": research taken part in
                            r"|\bresearch\s+(?:participation|involvement|enrol\w*|enroll\w*)\b")
#: A patient enrolled on or in something, asked for: "anything he could be enrolled on", "can she be enrolled in".
_ENROLLED_ON_RE = phrase(r"\b(?:be|get|being|getting)\s+enroll?ed\s+(?:on|in|onto|into)\b")
#: A question about two or more drugs given together: harm, levels, effect, QT, serotonin, bleeding, "OK with".
_RISK_RE = phrase(
    r"\b(problems?|issues?|concerns?|concerned|risks?|risky|worr(?:y|ied)|ok|okay|alright|safe(?:ly)?|together|combo|"
    r"combination|combin(?:e|ed|ing)|co-?prescri\w*|co-?administ\w*|levels?|raises?|raised|raising|increases?|"
    r"decreases?|lowers?|reduces?|knock\w*|blunt\w*|potentiat\w*|inhibit\w*|induc(?:e|es|er|ers|ing)|interact\w*|"
    r"interfer\w*|qtc?|serotonin\w*|bleed\w*|toxicit\w*|contraindicated|less\s+effective|effectiveness|affects?|mix\w*|"
    r"on\s+top\s+of|each\s+other|(?:already|patients?|pts?|someone|somebody|person|he'?s|she'?s|who'?s|who\s+is|is|"
    r"are)\s+on|(?:can|could|should|if)\s+(?:i|we)\s+add|(?:taken|used|given|co-?administered)\s+(?:together\s+)?with)\b"
    r"|\+|&",
)
#: "should I worry about metformin with that eGFR?", "any concern giving ibuprofen with his kidneys?": one drug asked
#: about with the patient's kidney or liver — the drug's label, for that organ.
_ORGAN_QUESTION_RE = phrase(
    r"\b(?:worr\w*|concern\w*|problem|issue|ok|okay|alright|fine|safe|caution|careful)\b.*\b(?:with|given|despite)\s+"
    r"(?:her|his|their|that|this|the|a|an)?\s*(?:low\s+|reduced\s+|poor\s+|high\s+|raised\s+|deranged\s+|current\s+)?"
    r"(?:egfr|creatinine|crcl|kidneys?|renal\s+function|kidney\s+function|liver|lfts?|liver\s+function)\b",
)
#: A comparison or a choice between drugs is not a question about giving them together.
_COMPARE_RE = phrase(
    r"\b(vs\.?|versus|compar\w*|differen\w*|better|best|rather\s+than|instead\s+of|switch\w*|alternatives?|"
    r"or|which)\b",
)
#: "How does amiodarone inhibit warfarin metabolism?": a question about how, not whether, is general knowledge.
_MECHANISM_RE = phrase(
    r"^\s*(?:how\s+(?:does|do|is|are|can)|why|explain|describe)\b|\bmechanism|\bpharmacolog\w*",
)
#: A request to look something up, at the start of a clause ("Check warfarin + amiodarone, and find …").
_IMPERATIVE_CLAUSE_RE = phrase(
    r"^\s*(?:please\s+|pls\s+|can you\s+|could you\s+)?(check|look\s+up|verify|review|get|pull|show|give\s+me|"
    r"find|search|run|screen)\b",
)
#: A question about a dose is not a look-up of the drugs it names ("give me the warfarin dose with amiodarone").
_DOSE_QUESTION_RE = phrase(r"\b(doses?|dosing|dosage|titrat\w*|how\s+much)\b")
_CLAUSE_SPLIT_RE = phrase(r"[,;]|\.\s+|\s[-–—]+\s|\band then\b|\bthen\b|\band\s+(?=(?:find|check|look|search|get|show|write|"
                          r"save|record|document|add|prescribe|order|start)\b)")


# ── whole-message forms (what ``rules.decide`` reads before any tool signal) ─────────────────────────────

GREETING_RE = phrase(
    r"^\s*(?:ok(?:ay)?,?\s+|great,?\s+)?(hi|hello|hey|good (morning|afternoon|evening)|thanks|thank you|thx|cheers|bye|"
    r"goodbye)\b[\s\w,!.?']{0,30}$",
)
#: A closing and nothing else ("thanks, that's all", "thank you", "that's all for now", "cheers, bye"): answered by
#: code as a closing, never with the greeting's introduction or buttons to start something new.
CLOSING_RE = re.compile(
    r"^(?:(?:ok|okay|great|perfect|brilliant|lovely|fine|right|good)\s+)*"
    r"(?:(?:thanks|thank you|thank u|thx|ta|cheers|many thanks)(?:\s+(?:so much|very much|a lot|again|doc))?\s*)?"
    r"(?:(?:that's|thats|that is|that will be|that'll be|that'd be|it's|its)\s+all(?:\s+(?:for now|for today|i need|"
    r"thanks|thank you|cheers))?|bye|goodbye|bye for now|see you|nothing else|all done|done for now)?$")
#: The words a closing turns on: a message of only "ok" or "great" is no closing.
_CLOSING_WORD_RE = re.compile(r"\b(?:thanks?|thx|ta|cheers|all|bye|goodbye|see you|nothing else)\b")


def is_closing(query: str) -> bool:
    """True when the whole message is a thanks or a goodbye (see :data:`CLOSING_RE`)."""
    said = " ".join(re.sub(r"[^\w' ]", " ", query.lower().replace("’", "'")).split())
    return bool(said) and bool(CLOSING_RE.match(said)) and bool(_CLOSING_WORD_RE.search(said))


#: "What can you do?": the capabilities, written by code.
CAPABILITY_RE = phrase(
    r"^\s*(?:so\s+|and\s+)?(?:what\s+(?:can|do)\s+you\s+do|what\s+are\s+you|who\s+are\s+you|how\s+can\s+you\s+help"
    r"(?:\s+me)?|what\s+can\s+you\s+help(?:\s+me)?\s+with|what\s+can\s+i\s+ask(?:\s+you)?|help)\s*[?.!]*\s*$",
)
#: "Don't add anything yet", "Hold off on the prescription", "No need to add the allergy", "I already wrote the
#: note": the clinician asks for nothing to be done.
NOTHING_TO_DO_RE = phrase(
    rf"^\s*(?:ok(?:ay)?,?\s+|please\s+|pls\s+|no,?\s+)?(?:{NEGATION}|"
    r"never\s*mind|cancel\s+that|leave\s+it|forget\s+it|scrap\s+that|"
    # A plan not to act: "leave the metoprolol for now", "not starting potassium today", "we won't start it yet".
    r"leave\s+(?:the\s+|her\s+|his\s+|their\s+)?[\w\-]+(?:\s+[\w\-]+)?\s+(?:for\s+now|as\s+(?:it\s+)?is|alone)|"
    r"(?:(?:we're|we\s+are|i'm|i\s+am)\s+)?not\s+(?:starting|prescribing|giving|adding|changing|ordering)|"
    r"(?:we|i)\s+won'?t\s+(?:start|prescribe|give|add|order)|let'?s\s+not\s+(?:start|prescribe|give|add|order)|"
    # A past-tense statement of the clinician's own action: "I already wrote the note", "We documented it earlier".
    r"(?:i|we)(?:'ve|\s+have|\s+had)?\s+(?:already\s+)?(?:wrote|written|done|did|documented|recorded|added|prescribed|"
    r"saved|entered|ordered|sent|charted|noted))\b",
)
#: A later clause that asks for something after all ("…, now prescribe cefalexin", "…, check interactions").
ASKS_RE = phrase(
    r"^\s*(?:please\s+|pls\s+|also\s+|just\s+|can\s+you\s+|could\s+you\s+)?(prescribe|order|start|record|document|add|"
    r"save|write|log|enter|check|find|look|search|show|get|pull|verify|review|give)\b",
)
#: "Note that she is allergic to penicillin": maybe a fact to document, maybe one to keep in mind. Not a read.
NOTE_THAT_RE = phrase(r"^\s*(?:please\s+)?(?:note|nb)\b(?!\s*(?:for\b[^:]*)?:)")
#: A general-knowledge question: definition, mechanism, explanation, who/when/which in general.
EXPLAIN_RE = phrase(
    r"^\s*(please\s+|(?:can|could)\s+you\s+)?(what\s+(is|are|was|were|does|do|causes?|r)|explain|define|describe|"
    r"(?:quick\s+)?refresher\s+on|any\s+tips\s+on|"
    r"how\s+(does|do|is|are)|why\b|"
    r"tell\s+me\s+about|what's|whats|who\s+(?:is|are|can|should|may)\s+(?:allowed|able|eligible|qualified|"
    r"responsible|permitted)|who\s+(?:should|needs?|qualifies)|how\s+(?:should|can|would)\s+(?:i|we|you|one)|"
    r"when\s+(?:would|should|do|does|is|are|can)\s+(?:you|i|we|one|it|a|an|the)\b)\b",
)
#: "What is a phase 2 trial?": a definition, even when it says a tool's word (nothing after it to look up).
DEFINITION_RE = phrase(
    r"^\s*(?:(?:what\s+(?:is|are)\s+(?:a|an)\s+|define\s+|what\s+is\s+meant\s+by\s+)"
    r"(?!.*\b(?:for|on|about|in|with|regarding|comparing|of)\b)[\w\s\-']{1,50}\??\s*$"
    r"|(?:what\s+(?:is|are)|explain|describe)\s+the\s+(?:phases?|types?|kinds?|stages?|steps?|principles?|components?|definition|meaning|"
    r"purpose)\s+of\s+(?:an?\s+|the\s+)?[\w\s\-']{1,40}\??\s*$)",
)
#: A term asked to be explained, as clinicians ask between patients: "whats a p-value in plain english", "can u
#: define cohort study quickly", "remind me what NNT actually means", "explain non-inferiority to me like I'm a
#: student", "in simple terms what is a likelihood ratio". The term is a few words with no preposition (never "what
#: is the evidence for …", "what's new in …"); what follows it only asks for it to be simple.
_TERM = (r"(?P<term>(?:(?!(?:for|on|about|in|with|regarding|of|near|at|the|her|his|their|my|our|"
         # what is looked for, never a term: "what's recruiting", "what's new", "what's available"
         r"recruit\w*|enrol\w*|available|open|new|latest|current|ongoing|out|happening|there|going|up)\b)"
         r"[\w\-']+\s*){1,5}?)")
DEFINITION_ASKED_RE = phrase(
    # A sentence of context may come first ("He's got a chest infection, meaning of cohort study??").
    r"^(?:[^,.?!:]{3,60}[.!,]\s+)?\s*(?:so\s+|ok(?:ay)?,?\s+|quick(?:\s+one)?[,:]?\s+)?(?:(?:can|could)\s+(?:u|you)\s+|please\s+|pls\s+)?"
    r"(?:in\s+(?:simple|plain|lay)\s+(?:terms|english|language),?\s+)?"
    r"(?:what(?:'s|s|\s+is|\s+are)\s+(?:an?\s+|the\s+meaning\s+of\s+(?:an?\s+)?)?|define\s+(?:an?\s+)?|"
    r"(?:the\s+)?(?:meaning|definition)\s+of\s+(?:an?\s+)?|"
    r"explain\s+(?:an?\s+|what\s+an?\s+)?|remind\s+me\s+what\s+(?:an?\s+)?|what\s+does\s+(?:an?\s+)?)" + _TERM +
    r"\s*(?:(?:(?:actually|really)\s+)?(?:means?|is|stands?\s+for)|in\s+(?:plain|simple|lay)\s+(?:english|terms|language)"
    r"|(?:to\s+me|for\s+me|again|quickly|simply|briefly)(?:\b.*)?"
    r"|[?,.!]*\s*(?:i\s+)?(?:always\s+forget|never\s+(?:\w+\s+)?(?:understood|got|remember)|can'?t\s+remember|"
    r"keep\s+forgetting).*)?\s*[?.!]*\s*$",
)


#: What makes a sentence beside a definition a request of its own ("what is a cohort study? find me some on statins").
_ASKS_TOO_RE = phrase(r"\b(?:find|search|look|show|check|get|pull|recruit\w*|trials?|stud(?:y|ies)|papers?|evidence|"
                      r"prescribe|order|start|record|document|save|note|chart|patient)\b")


_DEFINITION_WORDS_RE = phrase(r"\b(?:define|definition|meaning|means?|explain|plain|simple|lay|remind\s+me\s+what|"
                              r"stand\s+for|actually)\b")


def definition_asked(query: str) -> bool:
    """A sentence of the message asks what a term means and the others ask for nothing ("sorry, one more: whats a
    p-value in plain english?", "meaning of NNT?? journal club in ten mins")."""
    sentences = [s for s in re.split(r"(?<=[.:!?])\s+|\s[-–]\s", query.strip()) if s]
    for i, sentence in enumerate(sentences):
        found = DEFINITION_ASKED_RE.match(sentence)
        if not found or PATIENT_REF_RE.search(sentence):
            continue
        # "whats crp?", "what's sodium today": with a patient open, a result's name alone asks for her result; only
        # the words of a definition ("define", "meaning of", "in plain english") make it one.
        if RECORD_CONCEPT_RE.search(found.group("term")) and not _DEFINITION_WORDS_RE.search(sentence):
            return False
        # Context before it may be about the patient ("He is 67 with CKD."); nothing after it asks for more or asks
        # about the patient ("define sepsis. is she septic?").
        return not any(_ASKS_TOO_RE.search(o) or PATIENT_REF_RE.search(o) for o in sentences[i + 1:])
    return False


#: Findings an image is looked at for: naming one asks for the image tool.
_FINDINGS = r"\b(pneumothorax|fracture|effusion|consolidation|nodule|mass|lesion|bleed)\b"
_FINDING_RE = phrase(_FINDINGS)
_IMAGE_WORDS = (r"(?:image|images|x-?rays?|xrays?|film|scan|ct|mri|ultrasound|slide|photo|picture|radiograph|cxr|"
                r"echo|ecg|ekg)")
IMAGE_REQUEST_RE = phrase(
    rf"\b(analy[sz]e|interpret|read|assess|evaluate|look at|review|report|comment(?:\s+on)?|opinion on|have a look at|"
    rf"(?:go|going|talk|walk|run)\s+(?:me\s+)?(?:through|thru|trough|over)|describe|"
    rf"r/o|rule\s+out|exclude)\b.*"
    rf"\b{_IMAGE_WORDS}\b"
    # "ultrasound image attached, comment please": the request after the image
    rf"|\b{_IMAGE_WORDS}\b.*\b(?:comment|report|interpret|analy[sz]e|review|read|assess)\b"
    rf"|\b(?:on|in)\s+(?:this|the|that|these)\s+(?:chest\s+)?{_IMAGE_WORDS}\b"
    rf"|{_FINDINGS}",
)

#: A look asked for with only a general question about the image ("have a look at this image, anything worrying?",
#: "look at this film - does it look normal?"): answered from the attached image's reading, like "what do you see?"
#: (the design's "image + direct"). An analysis, report or a finding named stays the image tool's.
_GENERAL_LOOK_RE = phrase(
    r"^(?:(?:can|could|would)\s+you\s+|pls\s+|please\s+)?(?:have\s+a\s+|take\s+a\s+)?(?:look|glance)\s+(?:at|over)\s+"
    r"(?:this|the|that|these)\s+(?:\w+\s+)?\w+\s*(?:please|pls)?\s*[,;:\-–—]*\s*"
    r"(?:(?:is\s+there\s+|see\s+)?anything\s+(?:\w+\s+)?(?:abnormal|worrying|wrong|off|odd|concerning|of\s+note|"
    r"significant|stand\s+out|jump\s+out|obvious)|(?:does\s+(?:it|this)\s+)?look\s+(?:normal|ok|okay|alright|fine|off)|"
    r"(?:is\s+(?:it|this)\s+)?normal|what\s+do\s+you\s+(?:think|make\s+of\s+it|see|reckon)|thoughts|impressions?)"
    r"(?:\s+to\s+you)?\s*[?.!]*\s*$",
)


def general_image_question(query: str) -> bool:
    """True when an image request is only a look with a general question (see :data:`_GENERAL_LOOK_RE`)."""
    return bool(_GENERAL_LOOK_RE.search(query.strip())) and not _FINDING_RE.search(query)




@dataclass(frozen=True)
class Need:
    """Why a tool is required (the rule family) and where the message asks for it (for the run order)."""

    signal: str
    position: int


# ── message forms ──────────────────────────────────────────────────────────────────────────────────


#: A note dictated with another head than "note": "save my review: …", "please save this plan to the record: …",
#: "log ward round: …", "WR entry: …", "make an entry: …", "would you mind documenting the following: …". Not
#: when the head names what another write records ("update allergies: latex, rash", "log an intolerance to …:").
_DICTATION_HEAD_RE = phrase(
    r"(?:^|(?<=[.!;,])\s*|\s[-–—]\s+)\s*(?:(?:ok(?:ay)?|just|then|now|so|please|pls|(?:could|can|would)\s+you"
    r"(?:\s+mind)?|kindly)[,]?\s+)*"
    r"(?:(?:save|log|file|make|write(?:\s+up)?|document(?:ing)?|jot(?:\s+(?:this|that|it))?\s+down|enter)\b|"
    r"(?:pt\s?wr|wr|ward\s+round)(?=\s*:)|"
    r"(?:i'?d\s+like|i\s+want|please\s+have)\s+(?:this|it|that)\s+(?:saved|documented|recorded|noted)\b|"
    r"(?:ward\s+round|wr|clinic|ed|consult|review)\s+"
    r"(?:entry|update)\b|"
    # "entry for the medical notes, start: …": a note's entry, however its text is bracketed
    r"(?:an?\s+)?entry\s+for\s+(?:the\s+|her\s+|his\s+)?(?:medical\s+|clinical\s+|case\s+)?(?:notes|record|chart)\b)"
    # Not an allergy's head, however it is spelt ("document alergy: peanuts, reaction vomiting" was a note).
    r"(?P<head>(?:(?!a+l+e?r+g|allegr|intoleran|prescri|\border|\bmeds?\b|medication|\bdrugs?\b|\brx\b)[^:\n?]){0,60}):\s*\S",
)


def dictation(query: str) -> tuple[str, str] | None:
    """(request, note text) of a dictated note ("Note for Grace Mensah: febrile …"), or None. A note that is
    itself a question ("Note: is this dose right?") is not one."""
    found = _DICTATION_RE.search(query) or _DICTATION_HEAD_RE.search(query)
    if query.rstrip().endswith("?"):
        return None
    if not found:
        return dash_note(query)  # "document in her record - K+ 5.4, hold ramipril": only that narrow form
    cut = query.index(":", found.start())
    return query[:cut], query[cut + 1:]


def request_part(query: str) -> str:
    """The part of the message that asks for something: a dictated note's words before the colon (the note's
    text is data, and a "safety-netted" in it asks for no drug label)."""
    dictated = dictation(query)
    return dictated[0] if dictated else query


#: Words asking for more than the recorded facts: a trend, a comparison, a judgement, a second ask, a list of
#: what happened.
_INTERPRET_RE = phrase(
    r"\b(why|should|trend\w*|chang\w*|over (?:the|time)|since|compar\w*|explain|interpret\w*|safe\w*|risk\w*|mean\w*|"
    r"normal|worse\w*|better|improv\w*|significan\w*|concern\w*|and|also|then|happen\w*|details?|notes?|all|full|"
    r"summar\w*|list\s+all|history)\b",
)
#: A short question is answered with the record's facts in one line, written by code.
SHORT_QUESTION_WORDS = 8


def is_short_record_question(query: str) -> bool:
    """A short question for recorded facts ("any allergies?", "her last creatinine?", "when was he last seen?"),
    with no request for a trend, comparison, judgement or details and no second ask (which a clinically
    meaningful model answers better, and for which the demo shows every retrieved line)."""
    return len(query.split()) <= SHORT_QUESTION_WORDS and not _INTERPRET_RE.search(query)


def is_question(query: str) -> bool:
    """True for a question (it may mention a write word without asking for a write)."""
    if re.match(r"^\s*(please|kindly|(can|could|would) you)\b", query, re.IGNORECASE):
        return False
    return bool(_QUESTION_RE.match(query)) or query.rstrip().endswith("?")


#: A few words and a colon before the rest: "PTWR: …", "enter the following in his record: …".
_HEAD_COLON_RE = phrase(r"^[^:?\n]{1,60}:\s*(?=\S)")
#: "her allergy list needs codeine on it": a list of the record that needs an entry.
_LIST_NEEDS_RE = phrase(r"\b(?:allerg\w*|drug|med(?:ication)?s?)\s+list\s+needs?\s+[\w\- ]{2,30}\s+(?:on|adding)\b")


def is_write_request(query: str) -> bool:
    """True when the clinician asks for a write in command form, or dictates a note; questions never are, nor is
    a request whose every write is negated ("He is NOT allergic to latex, please record that": see
    :func:`negated_write`)."""
    if dictation(query):
        return True
    if is_question(query) or negated_write(query) is not None:
        return False
    return bool(_WRITE_CLAUSE_RE.search(query) or _ORDER_RE.search(query) or _LIST_NEEDS_RE.search(query)
                or LABEL_REMOVAL_RE.search(query))


_STOP_VERB_RE = phrase(r"(?:stop|discontinu|ceas|withdr|withh|suspend|hold|d/c)")
#: An allergy label to remove from the record: "delabel penicillin", "remove the penicillin allergy (label)",
#: "the penicillin allergy label was removed", "take the codeine allergy off her list" (never a question about one).
LABEL_REMOVAL_RE = phrase(r"\bde-?label\w*|\b(?:remove|delete|take\s+off|clear|retire|inactivate|mark\s+(?:as\s+)?"
                          r"(?:inactive|refuted))\b[^.;?]{0,40}?\ballerg\w*|\ballerg\w*\s+label\b[^.;?]{0,30}?"
                          r"\b(?:removed|taken\s+off|withdrawn)\b|\btake\s+(?:the\s+|her\s+|his\s+)?(?:[\w\-]+\s+){1,3}?allerg\w*"
                          r"\s+off\b|\ballerg\w*\s+(?:as\s+)?(?:refuted|inactive)\b")
#: "NKDA", "no known drug allergies", "NKA": a statement the record keeps as a coded entry of its own (SNOMED CT
#: "no known (drug) allergy"), never an allergy to "not specified"; asked to be written, it is a write.
NO_KNOWN_ALLERGY_RE = phrase(r"\b(?:nkda|nkma|nka|no\s+known\s+(?:drug\s+|medication\s+|medicine\s+)?allerg(?:y|ies))\b")
#: What a write records, once the negated statements are blanked: an allergy or reaction, a note, an order.
_WRITE_CONTENT_RE = phrase(r"\ballerg\w*|\bintoleran\w*|\banaphyla\w*|\bnotes?\b|\bprescri\w*")
#: A note to save, whatever it says to hold or stop: "WR: …, hold ramipril … - please save", "today's WR entry - …",
#: "please chart the following: …", "record today's review: …".
_NOTE_SAVE_RE = phrase(r"\bsave\w*|\bjot\b|\bentry\b|\bwr\b|\bchart(?=\s+(?:the|this|that)\b)|"
                       r"\b(?:record|document)\s+(?:today'?s\s+|this\s+|my\s+|the\s+)?(?:review|plan|entry|update)\b|"
                       # "falls review, stop oxybutynin, physio referral -- document please": a note of several items
                       # that the verb closes ("stop oxybutynin - document that" alone stays a stopped order)
                       r"^[^,;]*[,;][^,;]*[,;].*\b(?:document|record|file|log)(?:\s+(?:please|pls|that|this|it|the\s+above))?"
                       r"\s*[.!]*\s*$")


def negated_write(query: str, drugs: list[str] | None = None) -> str | None:
    """The one sentence that says what was not written and why, when the message's write content is all negated:
    "NOT allergic to latex", "no known drug allergies", "denies allergies", "stop lisinopril", "no longer on
    metformin" (:mod:`docgemma.clinical.negation`), with nothing positive left to write (an allergy, a reaction, a
    note, an order verb: "stop metformin and start sitagliptin" orders sitagliptin). A question or a dictated note
    never is one. A "stop <X>" counts only when X is one of ``drugs`` (the drugs the message names, found here
    when not given): "stopped smoking" and "stop the bleeding" are not about an order."""
    if dictation(query) or is_question(query):
        return None
    named = DrugDictionary.find(query) if drugs is None else drugs
    found = [n for n in negations(query) if not _STOP_VERB_RE.match(n.words) or _drugs_in(n.words, named)]
    if not found or (all(NO_KNOWN_ALLERGY_RE.fullmatch(n.words) for n in found) and _WRITE_CLAUSE_RE.search(query)):
        return None  # "document NKDA": the coded "no known drug allergy" entry is a write of its own (add_allergy's)
    if LABEL_REMOVAL_RE.search(query) and not any(n.kind == "order" for n in found):
        return None  # "delabel penicillin": removing the label on record is a write of its own (its own card)
    rest = without_negations(query)
    if _WRITE_CONTENT_RE.search(rest) or REACTION_WORDS.search(rest) or _ORDER_RE.search(rest):
        return None
    if all(_STOP_VERB_RE.match(n.words) for n in found):
        # A note that says what to hold or stop ("… - please save", or all of it after a head: "PTWR: K+ 5.4, hold
        # ramipril"); an allergy denied stays denied, whatever is saved.
        head = _HEAD_COLON_RE.match(query)
        if _NOTE_SAVE_RE.search(rest) or (head and all(n.span[0] >= head.end() for n in found)):
            return None
    asked = _WRITE_CLAUSE_RE.search(query) or _ORDER_RE.search(query)
    return not_written(found) if asked or any(n.kind == "order" for n in found) else None


#: The words of a negated allergy statement that name no substance ("no known", "allergy", "- negative", "ruled out",
#: "tolerated … challenge"): what is left of the statement without them is its substance, if any.
_NO_ALLERGY_WORDS_RE = phrase(
    r"\b(?:not|no|never|none|nil|known|negative|allerg\w*|intoleran\w*|sensitivit\w*|reactions?|label|removed|taken|"
    r"off|withdrawn|de-?label\w*|tolerated|challenge|test|dose|oral|skin|ruled|out|excluded|disprov\w*|refuted|false|"
    r"wrong|incorrect|true|real|mistaken|passed|course|developed|reacted|denies|denied|deny|denying|actually|really|"
    r"truly|even|documented|recorded|previous|history|is|are|was|were|has|have|been|had|a|an|the|any|to|with|of|from|"
    r"does|do|did|doesn'?t|don'?t|didn'?t|isn'?t|nkda|nka|nkfa|nkma|drug|drugs|medication|medicine)\b|n't\b|[-–:,.;]")
#: A statement about allergies in its own words (a result "COVID - negative" is none: it names no allergen either).
_ALLERGY_WORD_RE = phrase(r"allerg|intoleran|sensitivit|\bnk(?:d|f|m)?a\b|reaction|\blabel|challenge|test\s+dose")


@dataclass(frozen=True)
class NoAllergy:
    """A message that only says there is no allergy, with no write asked ("sulfa - negative", "penicillin: none
    known", "NKDA"): its statements as typed, the substances they name (each one the resolver identifies), and
    whether "no known drug allergies" is one of its readings (a drug or drug class named, or no substance)."""

    said: tuple[str, ...]
    substances: tuple[str, ...]
    drugs: bool


def no_allergy_statement(query: str) -> NoAllergy | None:
    """The statement when the whole message is negated allergy statements (:mod:`docgemma.clinical.negation`), with
    no write verb, no question and nothing else said; None otherwise (a write asked for is :func:`negated_write`'s).
    Each statement names an allergen the resolver identifies, or says "allergy" in its own words: a result such as
    "COVID - negative" is no allergy statement."""
    if dictation(query) or is_question(query) or is_write_request(query) or LABEL_REMOVAL_RE.search(query):
        return None
    found = negations(query)
    if not found or any(n.kind != "allergy" for n in found) or not only_function_words(without_negations(query)):
        return None
    substances: list[str] = []
    drugs = True
    for negation in found:
        rest = " ".join(_NO_ALLERGY_WORDS_RE.sub(" ", negation.words).split())
        allergen = resolve_local(rest) if rest else None
        if allergen is not None and not (allergen.ingredients or allergen.classes or allergen.non_drug):
            return None  # a word the resolver does not know ("COVID", "troponin"): not read as an allergen
        if allergen is None and not _ALLERGY_WORD_RE.search(negation.words):
            return None
        if allergen is not None:
            substances.append(rest)
            drugs = drugs and not allergen.non_drug
    return NoAllergy(tuple(n.words for n in found), tuple(dict.fromkeys(substances)), drugs)


#: "how's her troponin compared with last time?": a result's trend, not the visits.
_SINCE_LAST_RE = phrase(r"\b(?:since|than|with|from)\s+(?:the\s+)?last\s+time\b")


#: How a result has gone: "has her BNP improved since admission" is the result's course, not her visits.
_TREND_RE = phrase(r"\b(?:trend\w*|chang\w*|(?:gone|going|come|came|coming)\s+(?:up|down)|ris(?:en|ing)|fall(?:en|ing)|"
                   r"improv\w*|better|worse\w*|deteriorat\w*|recover\w*|normali[sz]\w*|settl\w*|drop\w*|"
                   r"climb\w*|increas\w*|decreas\w*|pick(?:ed|ing)\s+up|responded|respond\w*)\b")


def record_role(query: str) -> Role:
    """Which record tool a question about the record needs: how items relate, the visits, or a record query."""
    if connection_asked(query):
        return Role.CONNECTIONS
    visits = [m.group(0) for m in TIMELINE_RE.finditer(query)]
    if visits and RESULT_CONCEPT_RE.search(query) and _TREND_RE.search(query):
        return Role.RECORD_QUERY  # "how's the platelets been trending since admission": a result's course
    if visits and all(v.lower() == "last time" for v in visits) and _SINCE_LAST_RE.search(query) \
            and RESULT_CONCEPT_RE.search(query):
        return Role.RECORD_QUERY
    return Role.RECORD_HISTORY if visits else Role.RECORD_QUERY


def is_short_record_ask(query: str, drugs: list[str]) -> bool:
    """A bare question about one part of the active patient's record, without a pronoun: "any allergies?",
    "meds?", "LFTs?", "latest INR?", "BP trend?", "antenatal visits so far?". Short (six words at most), naming
    a record concept and no drug, and nothing that makes it a general question ("BP targets?")."""
    words = query.split()
    return (0 < len(words) <= 6 and bool(RECORD_CONCEPT_RE.search(query)) and not drugs
            and not _GENERAL_WORDS_RE.search(query) and not is_write_request(query)
            and not (_GENERAL_PREDICATE_RE.search(query) and not _RESULT_STATE_RE.search(query)))


#: A short question that says something of a concept in general, not of what her record holds: a verb first and no
#: word that makes it hers ("is high blood pressure genetic?", "is a low sodium dangerous?", "can potassium be high
#: from haemolysis?"; "is the potassium back?" is the record's).
_GENERAL_PREDICATE_RE = re.compile(
    r"^\s*(?:(?:can|could|does|do|would|will|may|might|should)\s+|(?:is|are|was|were)\s+(?=.*\b(?:genetic|hereditary|"
    r"inherited|contagious|infectious|catching|dangerous|common|rare|curable|reversible|preventable|serious|fatal|"
    r"deadly|painful|familial|a\s+sign\s+of|a\s+symptom\s+of|a\s+risk|linked\s+to|caused\s+by)\b))"
    r"(?!(?:the|her|his|their|this|that|these|those|my|our|today['’]?s|latest|last|any|recent|new|repeat)\b)",
    re.IGNORECASE)
#: ... unless what it says is where a result stands ("are bloods back?", "is K+ ready yet?").
_RESULT_STATE_RE = re.compile(r"\b(?:back|ready|done|available|pending|out|reported|through|in)(?:\s+yet)?\s*[?.!]*\s*$",
                              re.IGNORECASE)


# ── signals ────────────────────────────────────────────────────────────────────────────────────────


def _one_edit(word: str, keyword: str) -> bool:
    """True when ``word`` is ``keyword`` with one letter dropped, added, changed or two swapped, inside the word
    (an inflection — "prescribed", "warning" — is not a typo of its stem)."""
    return not (keyword.startswith(word) or word.startswith(keyword)) and one_edit(word, keyword)


#: Long task words a clinician misspells ("intractions", "reasearch", "recruting"): a word one edit away from
#: one of them is read as it. Only look-up words: a misspelt write verb never writes.
_TYPO_VOCABULARY = ("interaction", "interactions", "research", "literature", "evidence", "warnings", "recruiting",
                    "enrolling", "contraindications", "studies")


def corrected(text: str) -> str:
    """``text`` with misspelt task words (``_TYPO_VOCABULARY``, seven letters or more) spelt right."""
    def fix(match: re.Match[str]) -> str:
        word = match.group(0)
        lowered = word.lower()
        if len(lowered) < 7:
            return word
        return next((k for k in _TYPO_VOCABULARY if _one_edit(lowered, k)), word)

    return re.sub(r"[A-Za-z]+", fix, text)


def _add(needed: dict[str, Need], spec: ToolSpec | None, signal: str, position: int) -> None:
    if spec is not None and spec.name not in needed:
        needed[spec.name] = Need(signal, position)


def _clauses(text: str) -> list[tuple[int, str]]:
    """(start, clause) of the message's clauses."""
    bounds, start = [], 0
    for match in _CLAUSE_SPLIT_RE.finditer(text):
        bounds.append((start, match.start()))
        start = match.end()
    bounds.append((start, len(text)))
    out = []
    for begin, end in bounds:
        clause = text[begin:end]
        stripped = clause.lstrip()
        out.append((begin + len(clause) - len(stripped), stripped))
    return out


def _drugs_in(text: str, drugs: list[str]) -> list[str]:
    lowered = text.lower()
    return [d for d in drugs if d.lower() in lowered or any(part in lowered for part in re.split(r"[-/ ]", d.lower())
                                                            if len(part) > 3)]


@dataclass(frozen=True)
class _Request:
    """What the rules read of one message: its request text, the entities found in it, and the roles they test."""

    state: AgentState
    query: str
    text: str
    #: ``text`` with its negated statements blanked ("NOT allergic to latex"): where a write tool's words count.
    affirmed: str
    writes: bool
    drugs: list[str]
    names: list[str]
    ids: list[str]

    @classmethod
    def of(cls, state: AgentState) -> _Request:
        query = state.get("user_query", "")
        entities = state.get("extracted_entities")
        text = request_part(query)
        return cls(state=state, query=query, text=corrected(text), affirmed=corrected(without_negations(text)),
                   writes=is_write_request(query),
                   drugs=entities["drug_mentions"] if entities else [],
                   names=entities["patient_names"] if entities else [],
                   ids=entities["patient_ids"] if entities else [])


def _write_clauses(q: _Request, tools: ToolRegistry) -> list[tuple[int, str]]:
    """The clauses whose write-tool words count. A write tool's words count in a clause that asks for a write:
    "I documented the allergy, now prescribe cefalexin" asks for a prescription, not an allergy entry. When no
    write clause names what to write ("abc-123 is allergic to latex, please record"), the message does. A clause
    that says not to write ("don't prescribe the clarithro. just document: …") asks for no write."""
    asked = [(start, c) for start, c in _clauses(q.affirmed) if not _NEGATED_CLAUSE_RE.match(c)]
    write_clauses = [(start, c) for start, c in asked if _WRITE_CLAUSE_RE.search(c)] if q.writes else []
    named_in_clause = any(s.writes and s.mention(c) is not None for s in tools for _start, c in write_clauses)
    if q.writes and not named_in_clause and not (q.drugs and _ORDER_RE.search(q.affirmed)):
        write_clauses = asked
    return write_clauses


#: No allergy told: "document alergy: none", "allergies: nil known", "NKDA" (a note, never an allergy to "none").
_NIL_RE = re.compile(r"(?:none|nil|nkda|nka|nkfa|no\s+known|not\s+known|unknown|n/?a)\b", re.IGNORECASE)
#: An allergy's word at the head of a dictation, spelt with a slip or not ("alergy", "allrgy", "intolerance").
_ALLERGY_HEAD_RE = re.compile(r"\ba+l+e?r+g\w*|\ballegr\w*|\bintoleran\w*", re.IGNORECASE)


def _keyword_signals(q: _Request, tools: ToolRegistry, needed: dict[str, Need]) -> None:
    """Tools asked for by their own words (task and write keywords), a dictated note, and trials that enrol."""
    text = q.text
    enrolment = _ENROLMENT_RE.search(text)
    trials = tools.first(Role.TRIALS)
    literature = tools.first(Role.LITERATURE)
    dictated = dictation(q.query)
    allergy = tools.first(Role.ALLERGY_ENTRY)
    # "document alergy: peanuts, reaction vomiting": an allergy's head however it is spelt, or an allergy dictated.
    dictated_allergy = bool(dictated and allergy and (_dictated_allergy(dictated[1])
                                                      or (_ALLERGY_HEAD_RE.search(dictated[0])
                                                          and not _NIL_RE.match(dictated[1].strip()))
                                                      or _told_reaction(q, dictated)))
    if dictated_allergy and dictated:
        # "please document for X: latex -> facial swelling": what is dictated is an allergy and its reaction.
        _add(needed, allergy, "dictated_allergy", len(dictated[0]))
    elif dictated:
        _add(needed, tools.first(Role.NOTE_ENTRY), "dictated_note", len(text))
    write_clauses = _write_clauses(q, tools)
    for spec in tools:
        position = spec.mention(q.affirmed if spec.writes else text)
        if position is not None and spec.writes:
            position = next((start + found for start, c in write_clauses if (found := spec.mention(c)) is not None),
                            None)
        if position is None or (spec.writes and not q.writes):
            continue
        if spec is literature and trials and not enrolment and _JOINS_RESEARCH_RE.search(text) \
                and re.search(r"\btrials?\b", text, re.IGNORECASE):
            # "pt keen on research participation, find trials for gout": research taken part in, and trials asked
            # for, is the trials search alone unless another word asks for the literature.
            other_words = tuple(k for k in spec.keywords if k not in (*STUDY_WORDS, "research"))
            if not any(re.search(rf"\b{re.escape(k)}\b", text, re.IGNORECASE) for k in other_words):
                continue
        if spec is literature and enrolment and trials:
            # "studies looking for volunteers": a study that enrols is a trial; the literature only when a
            # word other than "study" asks for it.
            # "research recruiting volunteers" is a study that enrols; "recruiting trials … and research on …"
            # asks for both.
            trial_word = re.search(r"\btrials?\b", text, re.IGNORECASE)
            # "keen to take part in research for her asthma, any trials?": research taken part in is a trial's.
            joins = _JOINS_RESEARCH_RE.search(text)
            yields = (*STUDY_WORDS, *(() if trial_word and not joins else ("research",)))
            other_words = tuple(k for k in spec.keywords if k not in yields)
            if not any(re.search(rf"\b{re.escape(k)}\b", text, re.IGNORECASE) for k in other_words):
                continue
        if spec is trials and literature and not enrolment and _PUBLISHED_TRIALS_RE.search(text) \
                and not _TRIAL_WORD_RE.search(_PUBLISHED_TRIALS_RE.sub("", text)):
            # "randomised controlled trials of X" names a kind of publication: the literature, filtered by study
            # type; a trial to enrol a patient in says so ("recruiting", "ongoing", "a trial in Nairobi").
            _add(needed, literature, "published_trials", position)
            continue
        if dictated_allergy and Role.NOTE_ENTRY in spec.roles:
            continue  # "Note: latex → hives": the head's word "note" is no second write
        _add(needed, spec, "write_keywords" if spec.writes else "task_keywords", position)
    studied = re.search(rf"\b({'|'.join(STUDY_WORDS)}|research|trials?|registry)\b", text, re.IGNORECASE)
    # "anything she could be enrolled on?": enrolling a patient is a trial's word on its own.
    if enrolment and trials and (studied or _ENROLLED_ON_RE.search(text)):
        _add(needed, trials, "enrolling_trials", enrolment.start())


def _order_and_reaction_signals(q: _Request, tools: ToolRegistry, needed: dict[str, Need]) -> None:
    """A medication order (an order verb with a drug) and a drug reaction to document."""
    text, drugs, writes = q.text, q.drugs, q.writes
    write_tools = {s.name for s in tools if s.writes}
    order = tools.first(Role.MEDICATION_ORDER)
    # An order verb with a drug is a medication order, unless the message asks for another write ("start a
    # note", "add a penicillin allergy").
    ordered = _ORDER_RE.search(text)
    # "start empagliflozin 10mg od and save a note …": the verb's own object is a drug, so it is an order even
    # beside another write.
    object_word = text[ordered.end():].split()[:1] if ordered else []
    drug_object = bool(object_word and _drugs_in(object_word[0], drugs))
    if order and writes and drugs and ordered and (drug_object or not set(needed) & (write_tools - {order.name})):
        _add(needed, order, "put_on" if ordered.group(1).lower().startswith("put") else "order_verb", ordered.start())
    allergy = tools.first(Role.ALLERGY_ENTRY)
    no_known = NO_KNOWN_ALLERGY_RE.search(q.text)
    if allergy and writes and no_known and not (order and order.name in needed):
        _add(needed, allergy, "no_known_allergy", no_known.start())  # "document NKDA": the coded entry
    reaction = REACTION_WORDS.search(q.affirmed)
    allergen = bool(drugs) or _allergen_named(q)
    # A relative's reaction ("her son gets hives with peanuts") is never recorded as the patient's allergy.
    if allergy and writes and reaction and allergen and _REACTION_VERB_RE.search(text) and not (order and order.name in needed) \
            and not _RELATIVE_SAID_RE.search(text):
        # "Record that she had rash with doxycycline and write a note …", "<patient> gets angioedema with
        # ramipril, please document it": documenting a reaction to a drug. A reaction told inside a note's own
        # clause ("document in her note that she had a rash") is the note's text.
        clause = next((c for start, c in _clauses(text) if start <= reaction.start() <= start + len(c)), text)
        note = tools.first(Role.NOTE_ENTRY)
        if not (note and note.mention(clause) is not None):
            _add(needed, allergy, "reaction_entry", reaction.start())


def _told_reaction(q: _Request, dictated: tuple[str, str]) -> bool:
    """"apparently shellfish gives her wheeze, can you add that to the record": what is to be recorded (the text
    before the request; a note's text has a colon, and is the note's) tells a reaction to a substance it names."""
    told = without_negations(dictated[1]) if ":" not in q.query else ""  # "no rash" tells no reaction
    if not (told and REACTION_WORDS.search(told) and _REACTION_LINK_RE.search(told)) or _RELATIVE_SAID_RE.search(told):
        return False
    substance = allergy_args(told, q.state["extracted_entities"], None).get("substance")
    return isinstance(substance, str) and (resolve_local(substance).identified or substance.lower() in KNOWN_ALLERGENS)


#: A reaction told as one: the substance gives it, or the patient gets it ("comes out in hives with eggs").
_REACTION_LINK_RE = re.compile(r"\b(?:gives?|gave|causes?|caused|brings?\s+on|brought\s+on|gets?|got|develop\w*|"
                               r"react\w*|(?:comes?|came|broke|breaks)\s+out\s+in)\b", re.IGNORECASE)
#: A relative's reaction is not the patient's ("her son gets hives with peanuts").
_RELATIVE_SAID_RE = re.compile(r"\b(?:her|his|their|the)\s+(?:son|daughter|mum|mom|mother|dad|father|brother|sister|"
                               r"wife|husband|partner|baby|child|grand\w+)\b", re.IGNORECASE)


def _dictated_allergy(body: str) -> bool:
    """A dictated "substance -> reaction": the left of the arrow a substance the resolver knows (never a reaction:
    "rash -> settling" is a course), a reaction word right of it."""
    found = _ALLERGY_BODY_RE.match(body.strip())
    if not found:
        return False
    substance, reaction = found.group("substance").strip(), found.group("reaction")
    return (not REACTION_WORDS.search(substance) and bool(REACTION_WORDS.search(reaction))
            and resolve_local(substance).identified)


def _allergen_named(q: _Request) -> bool:
    """True when the message names an allergen the resolver knows that is no single drug: a class ("sulfa drugs",
    "ACE inhibitors") — "record that she gets a rash with sulfa drugs" documents a reaction like one to a drug."""
    substance = allergy_args(q.affirmed, q.state["extracted_entities"], None).get("substance")
    return isinstance(substance, str) and (resolve_local(substance).identified or substance.lower() in KNOWN_ALLERGENS)


def _patient_signals(q: _Request, tools: ToolRegistry, needed: dict[str, Need]) -> None:
    """A patient named without an id (searched for), a hospital number asked about, and the chart asked for."""
    text, names, ids = q.text, q.names, q.ids
    write_tools = {s.name for s in tools if s.writes}
    if names and not ids:
        _add(needed, next((s for s in tools if s.patient_search), None), "patient_name", 0)
    elif ids and not names and len(ids) == 1 and _IDENTIFY_RE.search(text) and not q.writes \
            and not (RECORD_CONCEPT_RE.search(text) or TIMELINE_RE.search(text) or connection_asked(text)
                     or _CHART_RE.search(text)):
        # "who is DG-1003?", "find the patient with MRN DG-1001": whose number it is, a patient search (never
        # "find the latest potassium for DG-1001": a question of that record).
        _add(needed, next((s for s in tools if s.patient_search), None), "patient_identifier", 0)
    refers = _PATIENT_RE.search(text) or names or ids or q.state.get("active_patient")
    # In a write, "her medications" / "her record" say where to write; only "chart", "summary" or "review" ask
    # to read the chart too ("Review abc-123's chart and record a penicillin allergy").
    chart_read = not set(needed) & write_tools or _REVIEW_RE.search(text)
    if _chart_asked(q, bool(set(needed) & write_tools)) and refers and chart_read and not connection_asked(text):
        _add(needed, tools.first(Role.CHART), "chart_words", 0)


def _chart_asked(q: _Request, writes: bool) -> bool:
    """The message's words ask to read the chart (or, for a patient it names, a section of it); not where a write
    goes, the drug chart's verb of an order, the visits in order, or the record as where one fact is looked for."""
    text = q.text
    # A section for a patient named by number ("what meds is DG-1002 on") is that record's query, as for the active
    # patient: no search comes first. Named in words, the search comes first and the chart after it.
    found = _CHART_RE.search(text) or (q.names and not q.ids and _SECTION_RE.search(text))
    if not found:
        return False
    word, ordered = found.group(0).lower(), _ORDER_RE.search(text)
    # "record a codeine intolerance on Joseph Mwangi's chart": where to write, not a read
    where_written = writes and _WRITE_PLACE_RE.search(text) and not _READ_TOO_RE.search(text)
    # "chart insulin glargine 10 units nocte": the drug chart's verb, an order
    order_verb = word == "chart" and ordered is not None and ordered.group(1).lower() == "chart"
    # "walk me through her history chronologically": the visits, in order
    visits = word == "history" and TIMELINE_RE.search(text)
    # "is Grace Mensah's flu jab up to date on the record": where to look, not the chart
    where_looked = _WHERE_TO_LOOK_RE.search(text[:found.end()]) and RECORD_CONCEPT_RE.search(text)
    return not (where_written or order_verb or visits or where_looked)


#: Words that ask about drugs together or their risks, beside a question of why the patient takes them.
_INTERACT_WORD_RE = phrase(r"\b(?:interact\w*|combin\w*|together|problems?|issues?|risks?|risky|worr\w*|bleed\w*|"
                           r"toxicit\w*)\b")


def _drug_signals(q: _Request, tools: ToolRegistry, needed: dict[str, Need]) -> None:
    """Questions about the drugs named: interactions between them, one drug's safety, a look-up of one drug."""
    text, drugs, writes = q.text, q.drugs, q.writes
    if (connection_asked(text) and (_PATIENT_RE.search(text) or q.names or q.ids or PATIENT_REF_RE.search(text))
            and not (_SAFE_RE.search(text) or _INTERACT_WORD_RE.search(text))):
        # "remind me why she's on furosemide and spironolactone": why the patient's drugs are there, a question of
        # her record (the connections), not of the drugs together (unless it asks about their safety or risks too).
        return
    lookups = {s.name for s in tools if not s.writes and not s.patient_search} & set(needed)
    dosing = _DOSE_QUESTION_RE.search(text)
    if _own_medicines(q) and not dosing:
        # "is there any interaction between doxycycline and her other meds?": the drug with the active patient's
        # medicines, which the record gives (TOOL_SELECT reads them; never the model).
        _add(needed, tools.first(Role.INTERACTIONS), "own_medicines", 0)
    if len(drugs) >= 2 and not writes:
        together = tools.first(Role.INTERACTIONS)
        # "Check warfarin + amiodarone, and find recent evidence …": a look-up clause naming two drugs.
        for start, clause in _clauses(text):
            in_clause = _drugs_in(clause, drugs)
            if (_IMPERATIVE_CLAUSE_RE.match(clause) and len(in_clause) >= 2 and not dosing
                    and not any(s.mention(clause) is not None for s in tools if s is not together)):
                _add(needed, together, "drug_request", start)
        # "Does omeprazole blunt clopidogrel?", "QT risk if I add X to Y?": a risk question about the drugs.
        if not lookups and _RISK_RE.search(text) and not _COMPARE_RE.search(text) and not _MECHANISM_RE.search(text):
            _add(needed, together, "risk_question", 0)
    # "Is spironolactone safe with her kidney function?": a drug's safety is a label look-up.
    together_needed = any(n.signal in ("risk_question", "drug_request", "own_medicines") for n in needed.values())
    if drugs and not writes and not together_needed and (len(drugs) == 1 or not lookups):
        safe = (_SAFE_RE.search(text) or (_ORGAN_QUESTION_RE.search(text) if len(drugs) == 1 else None)
                or (_LABEL_DOSING_RE.search(text) if not lookups else None)
                or (_LABEL_EFFECTS_RE.search(text) if not lookups and not PATIENT_REF_RE.search(text) else None))
        if safe and (len(drugs) == 1 or len(_drugs_in(text, drugs)) == 1):
            _add(needed, tools.first(Role.DRUG_SAFETY), "drug_safe", safe.start())
        elif _IMPERATIVE_CLAUSE_RE.match(text) and not needed and not dosing:
            # "Check amoxicillin for my patient": a look-up of the one drug named.
            _add(needed, tools.first(Role.INTERACTIONS if len(drugs) >= 2 else Role.DRUG_SAFETY), "drug_request", 0)


def _own_medicines(q: _Request) -> bool:
    """A question about the drugs named with the active patient's own medicines ("does clarithromycin interact with
    anything she's on?", "check citalopram against her other medicines"); only with a patient active and none
    other named, and never a comparison or a write."""
    text = q.text
    return (bool(q.drugs) and not q.writes and not q.names and not q.ids and bool(q.state.get("active_patient"))
            and asks_about_own_medicines(text) and not _COMPARE_RE.search(text)
            and bool(_RISK_RE.search(text) or re.search(r"\bagainst\b", text, re.IGNORECASE)))


def _record_signal(q: _Request, tools: ToolRegistry, needed: dict[str, Need]) -> None:
    """"When was Maria Garcia last seen?", "Samuel Kariuki's liver function?": a question about the record of the
    patient the message names, read once the patient is found."""
    besides_search = set(needed) - {s.name for s in tools if s.patient_search}
    about_record = RECORD_CONCEPT_RE.search(q.text) or connection_asked(q.text) or TIMELINE_RE.search(q.text)
    if (q.names or q.ids) and not q.writes and not besides_search and about_record:
        _add(needed, tools.first(record_role(q.text)), "record_question", len(q.text))


def _label_removal_signal(q: _Request, tools: ToolRegistry, needed: dict[str, Need]) -> None:
    """An allergy label to remove ("delabel penicillin", "tolerated an amoxicillin challenge, remove the penicillin
    allergy"): the removal's own card (a status change of the entry on record), never a new allergy entry."""
    removal = tools.first(Role.ALLERGY_REMOVAL)
    found = LABEL_REMOVAL_RE.search(q.query)
    if removal is None or found is None or not q.writes:  # "should we delabel her?" asks, it does not remove
        return
    # Never a new allergy entry; "from her chart", "update the record" name where the label is, not a read.
    for role in (Role.ALLERGY_ENTRY, Role.CHART, Role.RECORD_QUERY):
        other = tools.first(role)
        if other is not None and (role is Role.ALLERGY_ENTRY or getattr(needed.get(other.name), "signal", "") in
                                  ("chart_words", "record_question")):
            needed.pop(other.name, None)
    _add(needed, removal, "allergy_label_removal", found.start())


#: The rule families, in the order they are applied (a later one reads what the earlier ones found).
_SIGNALS = (_keyword_signals, _order_and_reaction_signals, _patient_signals, _drug_signals, _record_signal,
            _label_removal_signal)


def tool_signals(state: AgentState, tools: ToolRegistry) -> dict[str, Need]:
    """The tools the query needs (only tools of ``tools``: one not registered is never required), each with the
    signal that requires it (its rule family) and where the message asks for it."""
    request = _Request.of(state)
    needed: dict[str, Need] = {}
    for signals in _SIGNALS:
        signals(request, tools, needed)
    return needed


def required_tools(state: AgentState, tools: ToolRegistry) -> set[str]:
    """Names of the tools the query needs (see :func:`tool_signals`)."""
    return set(tool_signals(state, tools))


def succeeded_tools(state: AgentState) -> set[str]:
    """Tools that returned data this turn."""
    return {r["tool_name"] for r in state.get("tool_results", []) if r["status"] == "success"}


def run_order(spec: ToolSpec, need: Need) -> tuple[int, int]:
    """Sort key: a patient search first and the chart next (later tools need the patient), writes last, and
    otherwise in the order the clinician asked for them (where each was asked for)."""
    if spec.patient_search:
        return (0, 0)
    if Role.CHART in spec.roles:
        return (1, 0)
    return (3 if spec.writes else 2, need.position)


def remaining_tools(state: AgentState, tools: ToolRegistry) -> list[str]:
    """Required tools neither done nor given up on, in the order they should run (see :func:`run_order`)."""
    done = succeeded_tools(state) | set(state.get("skipped_tools", []))
    signals = tool_signals(state, tools)
    needed = [s for s in tools if s.name in signals and s.name not in done]
    return [s.name for s in sorted(needed, key=lambda s: run_order(s, signals[s.name]))]
