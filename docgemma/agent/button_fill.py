"""What an unsure turn's buttons are filled with (:mod:`docgemma.agent.ask`): every drug the message named, spelt
so that the button's own words decide surely; a name the message may give in lower case; what a connection
question starts from.

A button is a question put to the clinician: its click is the confirmation. So a drug misspelt in the message is
offered spelt right (the clinician sees the name), and a lower-case name the patterns could not be sure of is
offered as a patient search — never as the active patient's record.
"""

from __future__ import annotations

import re

from docgemma.agent.state import AgentState, PatientRef
from docgemma.clinical.drug_classes import CLASSES
from docgemma.clinical.drug_spelling import unread_drugs
from docgemma.clinical.entities import _CLINICAL_SUFFIX_RE as CLINICAL_SUFFIX_RE
from docgemma.clinical.entities import _CLINICAL_WORDS as CLINICAL_WORDS
from docgemma.clinical.entities import COLLEAGUE_TITLES, NOT_SINGLE_NAMES, DrugDictionary
from docgemma.clinical.function_words import FUNCTION_WORDS
from docgemma.clinical.record_concepts import RECORD_CONCEPT_RE, RESULT_CONCEPT_RE
from docgemma.clinical.request_spelling import REQUEST_WORDS

#: A drug class the dictionary names by its MeSH heading ("hydroxymethylglutaryl-coa reductase inhibitors"): the
#: button says the clinician's word for it ("statins"). A heading is several words, or a comma.
_HEADING_RE = re.compile(r",|\b(?:inhibitors|agents|analgesics|antagonists|agonists|blockers|symporter|drugs)\b")
_CLASS_WORDS = frozenset(w for c in CLASSES for w in c.words)


def is_class_name(name: str) -> bool:
    """True when a drug name a button shows is a class ("antibiotics", "statins", a MeSH heading), not one drug
    (penicillin is both: the drug)."""
    lowered = name.lower()
    if _HEADING_RE.search(lowered) or (lowered in _CLASS_WORDS and lowered.endswith("s")):
        return True
    return any(_HEADING_RE.search(found) for found in DrugDictionary.find(lowered))


def _clinical_name(written: str, name: str) -> str:
    """The drug's name for a button: the dictionary's generic name, or for a class the clinician's word, plural."""
    if not (_HEADING_RE.search(name) or written.lower() in _CLASS_WORDS) or written.lower() == name:
        return name
    # "statin" → "statins", "ACE inhibitor" → "ACE inhibitors"; "NSAIDs" stays.
    return written if written.lower().endswith("s") else f"{written}s"


def drugs_named(state: AgentState) -> list[str]:
    """Every drug the message names, in order: the dictionary's (a class by the clinician's word), then those only
    the dose table or one slip of the keyboard tells ("tiootropium" → tiotropium)."""
    query = state.get("user_query", "")
    lowered = query.lower()
    found: list[tuple[int, str]] = []
    known: set[str] = set()
    for written, name in DrugDictionary.mentions(query):
        if RESULT_CONCEPT_RE.fullmatch(written):  # "ferritin", "albumin": a result the record holds, not a drug asked about
            continue
        found.append((lowered.find(written.lower()), _clinical_name(written, name)))
        known.add(name)
    for written, name in unread_drugs(query):
        found.append((lowered.find(written.lower()), name))
    known |= {d for _at, d in found}
    # A drug the entities hold that the mentions do not (an alias read another way) keeps its place at the end.
    found += [(len(query), d) for d in state["extracted_entities"]["drug_mentions"]
              if d not in known and not RESULT_CONCEPT_RE.fullmatch(d)]
    return list(dict.fromkeys(name for _at, name in sorted(found)))


_WORD = r"[a-z][a-z'\-]{1,20}"
#: Forms where only a person's name can stand, written in lower case: "mei chen's latest bp", "does ines duarte
#: have …", "switch to thomas banda", "reyes, daniel".
_LOWER_NAME_RES = (
    # Not an eponym's possessive: "cushing's syndrome", "crohn's flare", "hashimoto's thyroiditis".
    re.compile(rf"\b({_WORD},?\s+{_WORD})['’]s\b(?!\s+(?:syndrome|disease|flare|thyroiditis|palsy|sign|test|"
               rf"criteria|phenomenon|sarcoma|lymphoma|ulcer|contracture|encephalopathy|triad|law)\b)", re.IGNORECASE),
    re.compile(rf"\b(?:does|did|has|is|what['’]?s|what\s+is)\s+({_WORD},?\s+{_WORD})\s+(?:have|had|got|take|taking|been|on)\b",
               re.IGNORECASE),
    re.compile(rf"\b(?:switch(?:ing)?\s+(?:over\s+)?to|mov(?:e|ing)\s+on\s+to|next\s+patient(?:\s+is)?)\s+"
               rf"(?:patient\s+)?({_WORD},?\s+{_WORD})\b", re.IGNORECASE),
    # "when is mei chen due back in clinic?", "when was thomas banda last seen?"
    # "when was karim, ahmed last reviewed?": any word after the name (its words are checked, not the verb).
    re.compile(rf"\bwhen\s+(?:is|was|did|does|will|has)\s+({_WORD},?\s+{_WORD})\s+[a-z]", re.IGNORECASE),
    # "remind me what reyes, daniel is allergic to": a name surname first, what they are or have.
    re.compile(rf"\b(?:what|which|how|why|where|when)\s+({_WORD},\s*{_WORD})\s+(?:is|was|has|had|does|did)\b",
               re.IGNORECASE),
    # "ok, rosa Delgado - when was the last admission": a name the message opens with, as a heading.
    re.compile(rf"^\s*(?:(?:ok|okay|so|right|and|next)\s*,?\s+)?({_WORD},?\s+{_WORD})\s*[-–:]\s+\S", re.IGNORECASE),
    # "how is thomas banda doing today", "what was noted about mei chen yesterday", "is thomas banda documented as
    # having CKD": a name in a question about how that patient is or what her record says.
    re.compile(rf"\bhow\s+(?:is|was|are)\s+({_WORD},?\s+{_WORD})\s+(?:doing|getting\s+on|coping|today|now|since|after|"
               rf"overnight|this)\b", re.IGNORECASE),
    re.compile(rf"\b(?:noted|documented|written|recorded|said|known)\s+(?:about|on|for|re)\s+({_WORD},?\s+{_WORD})\s*"
               rf"(?:[?.!,;]|$|\s+(?:yesterday|today|overnight|this|last|on|in|at|since))", re.IGNORECASE),
    re.compile(rf"\b(?:is|was|has)\s+({_WORD},?\s+{_WORD})\s+(?:documented|recorded|coded|listed|up\s+to\s+date|due|booked)\b",
               re.IGNORECASE),
    # "sorry, one more: for sofia haddad, which meds go with which condition": a name as the heading of a question.
    re.compile(rf"(?:^|[.?!:;]\s*|\b(?:so|ok|okay|and)\s+)(?:for|re:?|regarding)\s+({_WORD},?\s+{_WORD})\s*,\s+"
               rf"(?=(?:which|what|how|any|is|are|does|has|have|when|show|list|can|could|pls|please)\b)", re.IGNORECASE),
    # "write up ftaima bello for ergonovine 25 mcg …": whom an order is for ("put IV contrast on …" names no one).
    re.compile(rf"\b(?:write|writing)\s+up\s+({_WORD},?\s+{_WORD})\s+for\b", re.IGNORECASE),
    # "document for thomas banda - chest infection, plan …", "save a note on margaret oduya: …": whose note it is,
    # as the heading of what follows.
    # (right after the write's word: "plan re home oxygen: …", "advice on smoking cessation - …" name no one)
    re.compile(rf"\b(?:document|documenting|note|notes|save\s+(?:a\s+)?note|write|record|entry|add\s+(?:a\s+)?note)\s+"
               rf"(?:for|on|re:?|regarding|about)\s+({_WORD},?\s+{_WORD})\s*[-–:]\s+\S", re.IGNORECASE),
    # "Mwangi, Joseeph": two capitalised words, surname first, anywhere (a place, "Accra, Ghana", is asked about too).
    re.compile(r"(?<![\w'’])((?-i:[A-Z][a-z'\-]+),\s*(?-i:[A-Z][a-z'\-]+))(?![\w'’])"),
    # "is there a mei chen registered with us?", "do we have a leo martins on the system"
    re.compile(rf"\b(?:is\s+there|do\s+we\s+have|have\s+we\s+got)\s+(?:a|an|any)\s+({_WORD},?\s+{_WORD})\s+"
               rf"(?:registered|on\s+(?:the|our)\s+(?:system|books|list)|in\s+the\s+system|with\s+us)\b", re.IGNORECASE),
    # "nwosu, amara?", "reyes, daniel's chart": surname first, the whole message or a possessive.
    re.compile(rf"^\s*({_WORD},\s*{_WORD})(?:['’]s\b|\s*(?:please|pls)?\s*[?.!]*\s*$)", re.IGNORECASE),
)
#: Words that are no part of a name in these forms.
_NOT_NAME_WORDS = frozenset({"show", "me", "what", "what's", "whats", "how", "when", "last", "latest", "new", "old",
                             "today", "yesterday", "week", "month", "year", "morning", "night", "ward", "team", "unit",
                             "there", "here", "now", "ok", "okay", "quick", "question", "sorry", "one", "more",
                             "again", "back", "still", "just", "well", "good", "bad", "doing", "any", "all",
                             "tonight", "tomorrow", "evening", "afternoon", "weekend", "day", "omit", "hold", "give",
                             "monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday",
                             # verbs a request starts with: "explain cushing's …", "check tom's bp"
                             "explain", "check", "diagnose", "manage", "treat", "review", "describe", "assess",
                             "start", "stop", "about", "regarding", "re", "managing", "treating", "explaining",
                             "checking", "reviewing", "assessing", "starting", "stopping",
                             # words that ask for a patient ("pt called leo martins")
                             "called", "named", "patient", "pt", "find", "up",
                             # a write's or a note's head ("add allergy: aspirin - GI bleed", "plan - continue")
                             "add", "update", "log", "put", "enter", "mark", "flag", "save", "write", "change",
                             "switch", "increase", "reduce", "continue", "plan", "impression", "assessment",
                             "known", "no", "yes", "query", "issue", "problem", "dose", "drug", "drugs",
                             # a verb's forms and ward words a heading holds ("when has dialysis been booked?",
                             # "Gen med - bed 12 …", "Fluid balance: +2L")
                             "been", "being", "got", "gone", "done", "gen", "med", "bed", "fluid", "balance", "handover",
                             "bloods", "obs", "sats", "input", "output", "social", "discharge", "admission",
                             # a duration ("for two weeks", "for a few days"): never a name
                             "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "few",
                             "several", "couple", "days", "weeks", "months", "hours", "years", "hour", "nights",
                             "doses"})


#: A colleague's title right before a possessive ("Dr Otieno's patient").
_COLLEAGUE_BEFORE_RE = re.compile(rf"\b(?:{'|'.join(sorted(COLLEAGUE_TITLES))})\.?\s*$", re.IGNORECASE)
#: Whose record a note is written in, given by one family name: "Document in Banda's record: …".
_RECORD_OWNER_RE = re.compile(r"\b(?:in|into|on|onto|to|for)\s+([A-Z][a-z'\-]+)['’]s\s+(?:record|notes|chart|file)\b")


#: Whose record a question is about, given by one name in the possessive before what the record holds: "what was
#: Otieno's last sodium", "james's platelets today?" (a set written apart: with another patient active, the question
#: was answered from that patient's record).
_POSSESSIVE_OWNER_RE = re.compile(
    r"(?<![\w'’.])([A-Za-z][a-z'\-]+)['’]s\s+(?:(?:last|latest|recent|most\s+recent|current|"
    r"today'?s|usual|new|full|whole|old)\s+)*(?=" + RECORD_CONCEPT_RE.pattern.removeprefix(r"\b") + r"|(?:record|notes|chart|"
    r"file|meds|medications?|drugs|tablets|summary|visits?|admissions?|history|timeline)\b)", re.IGNORECASE)
#: Possessives that are no patient's: when, who else, and the eponyms of conditions, charts and fluids ("today's
#: potassium", "her mum's allergies", "the GP's letter", "Crohn's history", "Hartmann's chart", "Parkinson's meds").
_NOT_OWNERS = frozenset({"today", "yesterday", "tonight", "tomorrow", "week", "month", "year", "morning", "evening",
                         "night", "mum", "mom", "mother", "dad", "father", "wife", "husband", "partner", "son",
                         "daughter", "baby", "child", "family", "patient", "pt", "gp", "team", "lab", "ward",
                         "hospital", "clinic", "pharmacy", "everyone", "someone", "anyone", "somebody", "nobody",
                         "world", "registrar", "surgeon", "brother", "sister", "grandma", "grandpa", "granny", "nan",
                         "nana", "grandmother", "grandfather", "friend", "neighbour", "neighbor", "carer", "caregiver",
                         "aunt", "uncle", "cousin", "boyfriend", "girlfriend", "flatmate", "roommate", "colleague",
                         "company", "manufacturer", "pfizer", "martindale", "goodman", "gilman", "harrison", "bnf",
                         "lugol", "st", "john",
                         "crohn", "parkinson", "alzheimer", "hartmann", "addenbrooke", "cushing", "addison", "graves",
                         "hashimoto", "raynaud", "bell", "hodgkin", "kaposi", "barrett", "meniere", "huntington",
                         "down", "asperger", "tourette", "sjogren", "paget", "duchenne", "marfan", "kawasaki", "still",
                         "behcet", "whipple", "wernicke", "korsakoff", "conn", "dupuytren", "colles", "wells",
                         "centor", "apgar", "glasgow", "ringer", "hartmanns", "guillain", "bence", "creutzfeldt",
                         "tay", "peyronie", "baker", "bowen", "buerger", "caplan", "charcot", "dressler", "ebstein",
                         "fallot", "horner", "kussmaul", "lyme", "mallory", "osler", "pott", "reye", "stokes",
                         "takayasu", "wegener", "wolff", "zollinger"})


#: A possessive and the word after it ("Grace's metoprolol", "karim's lorazepam"): whose drug, when that word is one.
_POSSESSIVE_RE = re.compile(r"(?<![\w'’.])([A-Za-z][a-z'\-]+)['’]s\s+([A-Za-z][\w\-]+)")


def _drug_word(word: str) -> bool:
    """``word`` names a drug (the dictionary's, or one only the dose table or one slip tells)."""
    return bool(DrugDictionary.find(word) or unread_drugs(word))


def record_owner(query: str, active: PatientRef | None) -> str | None:
    """A name the message gives as whose record a write goes to ("Document in Banda's record: …") or whose record a
    question is about ("what was Otieno's last sodium?"), when it is a name (no function, clinical or drug word, not
    a relative or a colleague) and not the active patient's; None otherwise. The rules read no patient there: the
    turn asks."""
    found = _RECORD_OWNER_RE.search(query)
    words = [found.group(1)] if found else []
    words += [m.group(1) for m in _POSSESSIVE_OWNER_RE.finditer(query)
              if m.group(1).lower() not in _NOT_OWNERS and not _COLLEAGUE_BEFORE_RE.search(query[:m.start()])]
    # "could Banda's isosorbide mononitrate explain the swelling": whose drug it is.
    words += [m.group(1) for m in _POSSESSIVE_RE.finditer(query)
              if m.group(1).lower() not in _NOT_OWNERS and not _COLLEAGUE_BEFORE_RE.search(query[:m.start()])
              and _drug_word(m.group(2))]
    own = set(active["name"].lower().split()) if active else set()
    return next((w for w in words if _name_word(w) and w.lower() not in own), None)


def possible_name(query: str) -> str | None:
    """A patient's name the message may give in lower case, title-cased; None when no such form is there. Read
    only to ask (a patient search), never to act: "does ines duarte have any allergies?" is not about the active
    patient."""
    for pattern in _LOWER_NAME_RES:
        for match in pattern.finditer(query):
            words = [w.strip(",'’") for w in match.group(1).split()]
            words = [w[:-2] if w.lower().endswith(("'s", "’s")) else w for w in words]
            if len(words) != 2 or any(len(w) < 2 or w.lower() in FUNCTION_WORDS | _NOT_NAME_WORDS | REQUEST_WORDS
                                      or w.lower() in CLINICAL_WORDS or CLINICAL_SUFFIX_RE.search(w) for w in words):
                continue
            if DrugDictionary.find(" ".join(words)) or unread_drugs(" ".join(words)):
                continue
            titled = [w[:1].upper() + w[1:] for w in words]
            # "reyes, daniel": family name first; the search reads given then family.
            return " ".join(reversed(titled) if "," in match.group(1) else titled)
    return None


#: One family name in lower case where only a patient can stand: "is nwosu allergic to anything", "what meds is
#: okafor on", "what's banda taking", "for asante - any link between the insulin and his troponin", "latest labs for
#: pt martins" (a set written apart: each was answered from the active patient's record, or not read at all).
_LOWER_FAMILY_NAME_RES = (
    # The question's own order, "is" first ("TSH is high on levothyroxine" names no one).
    re.compile(rf"(?:^|[.?!,;:]\s*|\b(?:and|so|ok|okay|but|also|now)\s+)(?:is|was)\s+({_WORD})\s+"
               rf"(?:allergic|on|taking|still\s+on)\b", re.IGNORECASE),
    # "can banda's fluids be stopped", "did chen's fever settle", "were nwosu's bloods sent": whose it is, after a
    # question's verb (the possessive of a relative, a colleague or an eponym is no one's: see the checks below).
    re.compile(rf"(?:^|[.?!,;:]\s*|\b(?:and|so|ok|okay|but|also|now|did|does|do|is|was|were|are|can|could|would|should|"
               rf"has|have|had|will|might|why|how|when|what)\s+)({_WORD})['’]s\s+(?!(?:syndrome|disease|flare|palsy|"
               rf"sign|test|criteria|phenomenon|sarcoma|lymphoma|ulcer|contracture|encephalopathy|triad|law|solution|"
               rf"wort)\b)[a-z]", re.IGNORECASE),
    re.compile(rf"\b(?:what|which)\s+(?:meds?|medications?|drugs|tablets|pills|medicines)\s+(?:is|was|has)\s+"
               rf"({_WORD})\s+(?:on|taking|been)\b", re.IGNORECASE),
    re.compile(rf"\bwhat(?:['’]?s|\s+is)\s+({_WORD})\s+(?:on|taking)\b(?!\s+about)", re.IGNORECASE),
    re.compile(rf"(?:^|[.?!]\s+)\s*(?:for|re:?|regarding)\s+({_WORD})\s*[-–:,]\s+(?=.*\b(?:his|her|their|he|she|they|him)\b)",
               re.IGNORECASE),
    re.compile(rf"\b(?:patient|pt)\.?\s+({_WORD})\s*(?:[?.!,;]|$)", re.IGNORECASE),
    # ("history of falls" is a history, not a patient's)
    re.compile(rf"\b(?:chart|record|notes|file|meds|medications|allergies|labs|results|bloods|visits?|appointments?|"
               rf"admissions?|encounters?|timeline|obs|vitals)\s+(?:of|for)\s+({_WORD})\s*(?:[?.!,;]|$)", re.IGNORECASE),
    # "kariuki note - INR 3.6, omit tonight's warfarin": a note headed by whose it is.
    re.compile(rf"^\s*({_WORD})\s+(?:note|update|plan|entry)\s*[-–:]", re.IGNORECASE),
    # A search asked for by family name: "look up okafor", "search patients named mensah", "looking for a Bello, not
    # sure of the first name", "is wilson one of ours?", "any patients with the surname okafor", "the whole chart on
    # reyes, bed 12".
    re.compile(rf"(?:^|[.?!,;:]\s*|\b(?:pls|please|can\s+you|could\s+you|now)\s+)look\s+up\s+({_WORD})\s*(?:[?.!,;]|$|"
               rf"\s+(?:on|in)\s+the\s+system)", re.IGNORECASE),
    re.compile(rf"\b(?:patients?|anyone|someone|pt)\s+(?:named|called|with\s+the\s+(?:sur|family\s+|last\s+)?name)\s+"
               rf"({_WORD})\s*(?:[?.!,;:\-–]|$|\s+(?:there|could|might|please|pls|on\s+the|in\s+the))", re.IGNORECASE),
    # "find pattients called okafor, ~25 yrs old": whoever is called it, however the noun before was spelt
    re.compile(rf"\b(?:pat\w*|pts?|anyone|someone|somebody|person|people|lady|ladies|man|men|woman|women|gentleman|"
               rf"chap|guy|one)\s+(?:named|called)\s+({_WORD})\s*(?:[?.!,;:\-–]|$)", re.IGNORECASE),
    # "any Okafors on the system? looking for the one around 50": a family name in the plural, capitalised or said of
    # a person ("any stats on the system?" names no one)
    re.compile(rf"\b(?:any|how\s+many|all\s+the|two|several)\s+((?-i:[A-Z])[a-z'\-]{{1,20}}?|{_WORD}?(?=s\s.*\b(?:the\s+one|"
               rf"aged|years?\s+old|yrs?|y/?o|born|dob)\b))s\s+(?:on\s+(?:the|our)\s+(?:system|books|list|ward)|"
               rf"registered|in\s+the\s+system|do\s+we\s+have)\b", re.IGNORECASE),
    re.compile(rf"\blook(?:ing|in)?\s+for\s+(?:a|an)\s+({_WORD})\s*,?\s+(?:not\s+sure|no\s+first|don['’]?t\s+know|"
               rf"first\s+name)", re.IGNORECASE),
    re.compile(rf"\bis\s+({_WORD})\s+(?:one\s+of\s+(?:ours|our\s+patients)|registered|on\s+(?:the|our)\s+(?:system|books|"
               rf"list))\b", re.IGNORECASE),
    re.compile(rf"\b(?:sur|family\s+|last\s+)name\s+(?:is\s+)?({_WORD})\b", re.IGNORECASE),
    re.compile(rf"\b(?:chart|record|notes|file|summary)\s+on\s+({_WORD})\s*(?:[?.!,;]|$)", re.IGNORECASE),
)
#: The same, in forms that name a patient only in a question about the record (the message must name what the record
#: holds or when she was seen): "was oduya followed up after the last admission", "how many times has kariuki been
#: admitted", "is haddad up to date with immunisations", "for bello: could the allopurinol explain the CRP". ("garcia
#: blood pressure?" is not read: "overnight obs?", "manual bp?" have the same shape.)
_RECORD_FAMILY_NAME_RES = (
    re.compile(rf"(?:^|[.?!,;:]\s*|\b(?:and|so|ok|okay|but|also|now|times|often|when|why|how|where)\s+)"
               rf"(?:is|was|has|have|does|did|had)\s+({_WORD})\s+[a-z]", re.IGNORECASE),
    re.compile(rf"(?:^|[.?!]\s+)\s*(?:for|re:?|regarding)\s+({_WORD})\s*[-–:,]\s+\S", re.IGNORECASE),
)
#: Words these forms may catch that are no one's name: relatives, what a record holds, and how a question goes on.
_NOT_FAMILY_NAMES = frozenset({"mum", "mom", "mother", "dad", "father", "wife", "husband", "partner", "son",
                               "daughter", "baby", "child", "brother", "sister", "everyone", "everybody", "anyone",
                               "anybody", "someone", "somebody", "nobody", "everything", "anything", "something",
                               "nothing", "admission", "review", "follow", "followup", "handover", "discharge",
                               "currently", "actually", "normally", "usually", "already", "regularly", "presently",
                               "meant", "supposed", "allowed", "safe", "ok", "okay", "fine", "left", "right", "due",
                               "planned", "pending", "outstanding", "available", "high", "low", "better", "worse",
                               "stable", "well", "still", "back",
                               # what a heading names that is no one ("for info: her potassium is 5.9")
                               "info", "information", "reference", "ref", "context", "interest", "clarity",
                               "completeness", "background", "awareness", "tto", "ttos", "record", "records", "example",
                               "instance", "now", "today", "tonight", "discussion", "mdt", "ward", "team", "audit",
                               "teaching", "clarification", "note", "notes", "summary", "plan", "update", "entry",
                               # who else is on the ward ("what's consultant on about")
                               "consultant", "registrar", "reg", "sho", "fy1", "fy2", "nurse", "physio", "doctor",
                               "pharmacist", "dietitian", "matron", "student", "micro", "bay", "bed"})


def possible_family_name(query: str, active: PatientRef | None) -> str | None:
    """A family name the message gives alone, in lower case, where only a patient can stand, title-cased; None when
    no such form is there or the word may be no name (a function, request, clinical or drug word, a relative, an
    adverb), or it is the active patient's. Read only to ask (a patient search), never to act."""
    own = set(active["name"].lower().split()) if active else set()
    about_record = bool(RECORD_CONCEPT_RE.search(query) or _SEEN_RE.search(query))
    found = [m.group(1) for p in _LOWER_FAMILY_NAME_RES for m in p.finditer(query)]
    found += [m.group(1) for p in _RECORD_FAMILY_NAME_RES for m in p.finditer(query)] if about_record else []
    for written in found:
        word = re.sub(r"['’]s$", "", written).strip("'’")  # "Duarte's platelets": Duarte
        lowered = word.lower()
        if (len(word) < 3 or lowered in own or lowered in _NOT_FAMILY_NAMES | NOT_SINGLE_NAMES or lowered in _NOT_OWNERS
                or lowered.endswith(("ing", "ly", "ed")) or not _name_word(word) or RECORD_CONCEPT_RE.fullmatch(word)):
            continue
        return word[:1].upper() + word[1:]
    return None


#: When a patient was seen, as a question about the record asks it.
_SEEN_RE = re.compile(r"\b(?:admitted|admissions?|seen|visits?|followed\s+up|follow-?up|discharged|appointments?|"
                      r"attended|reviewed)\b", re.IGNORECASE)


#: What may stand around a bare name: "patient amara nwosu", "pt david ochieng", "wanjiru kamau pls".
_BARE_NAME_RE = re.compile(r"^\s*(?:(?:the\s+)?(?:patient|pt\.?)\s+)?(?P<name>[a-z][a-z'\-]+(?:\s+[a-z][a-z'\-]+){1,2}?)"
                           r"\s*(?:,?\s*(?:please|pls|plz|thanks))?\s*[?.!]*\s*$", re.IGNORECASE)


#: Where a name follows a word that asks for a patient: "change patient to mei chen", "pt called leo martins, can you
#: find them", "look up ahmed karim on the system", "search the system for Martins, Leo", "find kofi asante, MRN …",
#: "any known allergies for daniel reyes?".
_NAME_CUE_RE = re.compile(r"\b(?:patient\s+to|called|named|find|up|for|pt|patient|seeing|name\s+of|locate|get|load|"
                          r"bring|pull|open)\s+", re.IGNORECASE)
_NAME_AT_RE = re.compile(rf"({_WORD},?\s+{_WORD})\b", re.IGNORECASE)


def cued_name(query: str) -> str | None:
    """A name after a word that asks for a patient, title-cased (surname first when a comma says so); None when the
    words are function, clinical or drug words. Read only to offer the patient search."""
    for cue in _NAME_CUE_RE.finditer(query):  # every cue, overlapping ones too ("pt called leo martins")
        match = _NAME_AT_RE.match(query, cue.end())
        if match and (name := _name_of(match.group(1))):
            return name
    return None


def _name_word(word: str) -> bool:
    """A word that may be part of a name: no function, request, clinical or drug word."""
    lowered = word.lower()
    return not (lowered in FUNCTION_WORDS | _NOT_NAME_WORDS | REQUEST_WORDS or lowered in CLINICAL_WORDS
                or CLINICAL_SUFFIX_RE.search(word) or DrugDictionary.find(word) or unread_drugs(word))


def _name_of(written: str) -> str | None:
    """``written`` ("mei chen", "Martins, Leo") as a name to search for, or None when it cannot be one."""
    words = [re.sub(r"['’]s$", "", w.strip(",")) for w in written.split()]  # "Martins, Leo's file": Leo Martins
    if not all(_name_word(w) for w in words):
        return None
    titled = [w[:1].upper() + w[1:] for w in words]
    return " ".join(reversed(titled) if "," in written else titled)


def bare_name(query: str) -> str | None:
    """A name the whole message is (two or three words, "patient" or "please" around it), title-cased; None when a
    word is a function word, a clinical word or a drug. Read only when the router's candidates include the patient
    search, and only to offer that search ("Find patient David Ochieng")."""
    match = _BARE_NAME_RE.match(query)
    return _name_of(match.group("name")) if match else None


#: What a connection question starts from: "what led to his asthma diagnosis?", "what came out of her last
#: admission", "what resulted from his uti?".
_SUBJECT_RE = re.compile(r"\b(?:his|her|their|the\s+patient's|this\s+patient's)\s+([a-z][\w' \-]{1,40}?)"
                         r"(?:\s+diagnosis)?\s*(?:[?.!]|$)", re.IGNORECASE)


#: What a connection question asks the medicines to explain: "could any of her meds explain the low platelets?".
_EXPLAINED_RE = re.compile(r"\b(?:explains?|causes?|causing|accounts?\s+for)\s+(?:the\s+|her\s+|his\s+|this\s+)?"
                           r"([a-z][\w' \-]{1,40}?)"
                           r"\s*(?:[?.!]|$)", re.IGNORECASE)


#: What a connection question asks the medicines to be the cause of, named first: "is her eGFR likely down to one
#: of her meds?", "could his sodium be due to his tablets".
_DOWN_TO_RE = re.compile(r"\b(?:her|his|their|the)\s+([a-z][\w'\-]*(?:\s+(?!(?:be|likely|possibly|really|all)\b)[a-z][\w'\-]*)?)"
                         r"\s+(?:\w+\s+)?(?:be\s+)?"
                         r"(?:down\s+to|due\s+to|caused\s+by|explained\s+by)\b", re.IGNORECASE)


def connection_subject(query: str) -> str | None:
    """The item a connection question starts from, as the message names it; None when it names none."""
    explained = _EXPLAINED_RE.search(query) or _DOWN_TO_RE.search(query)
    if explained:
        return explained.group(1).strip()
    match = _SUBJECT_RE.search(query)
    subject = match.group(1).strip() if match else None
    # "over the last 18 months" is a time, not an item of the record.
    return None if subject and re.match(r"(?:over|in|during|since|for)\b", subject, re.IGNORECASE) else subject
