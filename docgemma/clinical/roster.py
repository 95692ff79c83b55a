"""The record's own patients, found in a message however the clinician writes them.

The entity patterns (``clinical/entities.py``) find a name by its form: capitalised, after "patient", before
"'s chart". A clinician types "does amina okafor have any allergies?", "OKAFOR, AMINA", "DG-1003" or
"Patient/<id>": forms a pattern cannot tell from ordinary words, but the record can, because it knows its
patients. :func:`known_patients_in` matches each patient of the roster (given and family name in either order,
any case, whole words, with the possessive; a family name after a title or "patient"; the record's identifiers
such as an MRN; ``Patient/<id>`` references and bare ids) and :func:`with_known_patients` adds what it found to
the message's entities, so that every later rule sees the patient the message names and never reads the
active patient's record in their place.

The roster is handed in by whoever owns the record (``tools/ehr_tools.record_roster``): this module never reads it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache

from docgemma.clinical.entities import _CLINICAL_SUFFIX_RE, _CLINICAL_WORDS, COLLEAGUE_TITLES, ExtractedEntities
from docgemma.clinical.function_words import FUNCTION_WORDS
from docgemma.clinical.request_spelling import REQUEST_WORDS


@dataclass(frozen=True)
class KnownPatient:
    """One patient of the record, as the roster gives it: the record id, the name shown, the name's parts, the
    birth date (``YYYY-MM-DD``) and the identifiers it carries (MRNs and the like, as written)."""

    id: str
    name: str
    given: tuple[str, ...]
    family: str
    birth_date: str | None = None
    identifiers: tuple[str, ...] = ()


#: Letters and digits of a word: what a family name is indexed by and a message is looked up by.
_CHUNK_RE = re.compile(r"[a-z0-9]+")
#: An identifier-shaped token ("DG-1003", a UUID, "mrn.0012"): what ids and identifiers are looked up by.
_TOKEN_RE = re.compile(r"[a-z0-9]+(?:[\-.][a-z0-9]+)*")


@dataclass(frozen=True)
class Roster:
    """The record's patients, indexed so that a message is matched against the few whose family name or
    identifier it contains (a record of thousands is read in a millisecond, not a regex per patient)."""

    patients: tuple[KnownPatient, ...]
    _by_word: dict[str, list[int]] = field(default_factory=dict, init=False, repr=False, compare=False)
    _by_token: dict[str, list[int]] = field(default_factory=dict, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        for index, patient in enumerate(self.patients):
            for chunk in set(_CHUNK_RE.findall(patient.family.lower())):
                self._by_word.setdefault(chunk, []).append(index)
            for value in {patient.id.lower(), *(i.lower() for i in patient.identifiers)}:
                self._by_token.setdefault(value, []).append(index)

    def candidates(self, text: str) -> list[KnownPatient]:
        """The patients whose family name or an identifier the message contains, in the roster's order."""
        lowered = text.lower()
        hits = {i for chunk in set(_CHUNK_RE.findall(lowered)) for i in self._by_word.get(chunk, ())}
        hits |= {i for token in set(_TOKEN_RE.findall(lowered)) for i in self._by_token.get(token, ())}
        return [self.patients[i] for i in sorted(hits)]


#: The record's patients, or None when the record could not be read (the turn then says so).
PatientRoster = Callable[[], Roster | None]


@dataclass
class RosterMatch:
    """What of the roster a message names: display names (a name two patients share stays a name, for the search
    to ask which), record ids (an identifier, a reference or an id names exactly one), and the identifiers as
    written mapped to the record id they stand for."""

    names: list[str] = field(default_factory=list)
    ids: list[str] = field(default_factory=list)
    aliases: dict[str, str] = field(default_factory=dict)
    spans: list[str] = field(default_factory=list)
    #: Names written right beside an identifier that are not its patient's ("ines duarte, DG-1009" where DG-1009 is
    #: James Wilson): the message names two patients, and the turn must ask which, never open the id's record.
    disagreeing: list[str] = field(default_factory=list)


_EDGE_BEFORE = r"(?<![A-Za-z0-9\-'’])"
_EDGE_AFTER = r"(?:['’]s\b|s['’]|['’])?(?![A-Za-z0-9\-])"
#: Words that introduce a family name on its own: "mrs oduya" in any case; "Mr. Wilson", "patient Okafor" with the
#: family name capitalised, since in lower case "ms white matter", "patient white cell count" or "pt young and
#: fit" are words, not a patient (never "Dr": a colleague may share a patient's family name).
_TITLE = r"(?:mrs\.?\s+|(?:mr|ms|miss|mx|patient|pt)\.?\s+(?=(?-i:[A-Z])))"


def _words(part: str) -> str:
    """A name part as a pattern: its words in any case, any run of spaces (or a hyphen) between them."""
    return r"[\s\-]+".join(re.escape(w) for w in part.split())


#: A family name's possessive that is a patient's, not an eponym's ("wilson's disease", "cushing's syndrome").
_NOT_EPONYM = (r"(?=['’]s\s)(?!['’]s\s+(?:disease|syndrome|sign|test|palsy|criteria|phenomenon|law|ulcer|lymphoma|"
               r"sarcoma|encephalopathy|triad|contracture|thyroiditis|flare|"
               # a colleague's, not a patient's: "under Kariuki's team", "Oduya's clinic"
               r"team|clinic|firm|list|ward|care|service|patients?|letter|referral|bay|unit|department|office|"
               r"secretary|registrar|consultant|round)\b)")
#: A professional title: "Dr Mensah's patient", "Prof. Oduya", "Sister Bello" name a colleague, never the patient.
_COLLEAGUE_RE = re.compile(rf"\b(?:{'|'.join(sorted(COLLEAGUE_TITLES))})\.?\s*$", re.IGNORECASE)


def _name_forms(patient: KnownPatient) -> list[str]:
    """The ways a clinician writes this patient's name: given family, family given, "family, given" (with the
    first given name or all of them), and a family name after a title."""
    family = _words(patient.family)
    givens = {g for g in (" ".join(patient.given), patient.given[0] if patient.given else "") if g}
    forms = [rf"{_words(g)}\s+{family}" for g in givens]
    forms += [rf"{family}\s*,?\s+{_words(g)}" for g in givens]
    forms.append(_TITLE + family)
    # "mr mwangi inr": "mr" in lower case before a family name the record holds ("nifedipine mr 30mg" names none; "ms"
    # in lower case is multiple sclerosis).
    forms.append(r"mr\.?\s+" + family)
    # "egfr of Asante", "labs for Bello": a known family name, capitalised, after "of" or "for"; "the mensah lady":
    # before the word for a person (a review found these answered from the active patient's record).
    forms.append(r"(?:(?<=\bof\s)|(?<=\bfor\s))(?=(?-i:[A-Z]))" + family + r"(?!\s+(?-i:[A-Z]))")
    forms.append(r"(?<=\bthe\s)" + family + r"(?=\s+(?:lady|man|woman|gentleman|gent|patient|boy|girl|chap)\b)")
    # "kariuki's HbA1c today?", "mwangi's TSH": a family name in the possessive (not an eponym: "wilson's disease").
    forms.append(family + _NOT_EPONYM)
    # "okafor cholesterol?", "Bello weight?": a known family name opening a short question (a few words after it),
    # never an eponym's ("wilson disease?"). Only the record's own family names are read so: "overnight obs?" and
    # "manual bp?" have the same shape.
    forms.append(r"(?<![\s\S])\s*" + family + r"(?=\s+(?!(?:disease|syndrome|sign|test|criteria|score|palsy)\b)"
                 r"(?:\S+\s+){0,3}\S+\s*[?.!]*\s*$)")
    return forms


@lru_cache(maxsize=16384)
def _name_pattern(patient: KnownPatient) -> re.Pattern[str] | None:
    if not patient.family.strip():
        return None
    return re.compile(_EDGE_BEFORE + "(?:" + "|".join(_name_forms(patient)) + ")" + _EDGE_AFTER, re.IGNORECASE)


def _id_pattern(value: str) -> re.Pattern[str]:
    """An identifier or id as a whole token, any case; as a ``Patient/<id>`` reference too."""
    return re.compile(rf"(?<![A-Za-z0-9\-./]){re.escape(value)}(?![A-Za-z0-9\-])", re.IGNORECASE)


def _is_identifier(value: str) -> bool:
    """An id or identifier worth finding on its own in text: with a digit and four characters or more (a record
    whose ids are words, "example", is only found as ``Patient/example``)."""
    return len(value) >= 4 and bool(re.search(r"\d", value))


def _identified(text: str, patient: KnownPatient, match: RosterMatch, roster: Roster) -> None:
    """The patient's ids and identifiers the message gives: ``Patient/<id>``, a bare id, an MRN."""
    reference = re.search(rf"\bPatient/{re.escape(patient.id)}(?![A-Za-z0-9\-.])", text, re.IGNORECASE)
    written = [reference.group(0)] if reference else []
    for value in (patient.id, *patient.identifiers):
        if _is_identifier(value) and (found := _id_pattern(value).search(text)):
            written.append(found.group(0))
    if written and patient.id not in match.ids:
        match.ids.append(patient.id)
    for token in written:
        match.aliases[token.lower()] = patient.id
        match.spans.append(token)
    match.disagreeing += [n for n in _disagreeing(text, patient, written, roster) if n not in match.disagreeing]


_NAME_WORD = r"[A-Za-z][A-Za-z'’\-]+"
#: What may stand between a name and the identifier written beside it: "Duarte, Ines, DG-1009", "ines duarte
#: (hospital number DG-1009)", "margaret oduya MRN: dg-1006", "DG-1009 - ines duarte".
_ID_CUE = (r"\s*[,(\-–:]?\s*(?:(?:hospital|hosp\.?|patient|pt\.?|record|file)\s+(?:number|no\.?|#|id)"
           r"|mrn|nhs\s+number|id|no\.?|#)?\s*[:#]?\s*")
#: Words beside an identifier that are a request's, not a name ("open the record DG-1009", "chart for DG-1009").
_BESIDE_ID_WORDS = frozenset({"open", "check", "pull", "show", "see", "view", "find", "look", "up", "record", "records",
                            "chart", "notes", "note", "file", "summary", "details", "number", "hospital", "mrn", "id",
                            "can", "you", "could", "would", "just", "ok", "okay", "sorry", "one", "more", "bring",
                            "load", "get", "give", "what", "whats", "what's", "does", "do", "did", "has", "list",
                            "search", "system", "name", "called", "bed", "ward", "room", "round", "now", "quick",
                            "question", "query", "re", "regarding", "urgent", "again", "thanks", "thank", "latest",
                            "last", "today", "yesterday", "tonight", "morning", "night", "labs", "bloods", "meds"})


def _name_like(words: tuple[str, str]) -> bool:
    """Two words that may be a person's name: neither a function, request or clinical word, nor a verb's form
    ("consultant asked DG-1003 …", "new admission DG-1003")."""
    return all(len(w) > 1 and w.lower() not in FUNCTION_WORDS | _BESIDE_ID_WORDS | _CLINICAL_WORDS | REQUEST_WORDS
               and not _CLINICAL_SUFFIX_RE.search(w.lower()) and not w.lower().endswith("ing")
               and w.lower() not in _VERBS for w in words)


#: Verbs that stand before a record number in a sentence, not in a name.
_VERBS = frozenset({"asked", "said", "says", "wants", "needs", "called", "rang", "phoned", "reviewed", "saw", "seen",
                    "admitted", "discharged", "transferred", "moved", "sent", "booked", "is", "was", "has", "had"})


def _is_name_of(words: tuple[str, str], patient: KnownPatient) -> bool:
    """The two words are the patient's given and family name, in either order (any case)."""
    names = {w.lower() for part in (*patient.given, patient.family) for w in part.split()}
    return {re.sub(r"['’]s$", "", w.lower()).strip("'’") for w in words} <= names


def _names_beside(text: str, token: str) -> list[tuple[str, str]]:
    """The two words written right before or right after an identifier (a name given with it, or request words)."""
    at = re.escape(token)
    before = re.finditer(rf"(?<![A-Za-z])({_NAME_WORD})\s*,?\s+({_NAME_WORD})\s*,?{_ID_CUE}{at}(?![A-Za-z0-9\-])",
                         text, re.IGNORECASE)
    # After the identifier only behind a separator ("DG-1003 latest potassium" is a question), and only a capitalised
    # pair ("DG-1003 - Leo Martins"): "DG-1003: worsening breathlessness" is what happened to that patient.
    after = re.finditer(rf"(?<![A-Za-z0-9\-]){at}\s*(?:[,\-–:]|\()\s*([A-Z][a-z'’\-]+)\s*,?\s+([A-Z][a-z'’\-]+)"
                        r"(?![A-Za-z])", text)
    return [(m.group(1), m.group(2)) for m in (*before, *after)]


def _disagreeing(text: str, patient: KnownPatient, written: list[str], roster: Roster) -> list[str]:
    """Names written beside the patient's identifiers that are not the patient's (title-cased, as written): two
    words that may be a name, or one that is another patient's family name ("pull up Bello DG-1003")."""
    out: list[str] = []
    for token in written:
        for words in _names_beside(text, token):
            if _name_like(words) and not _is_name_of(words, patient):
                out.append(" ".join(w[:1].upper() + w[1:] for w in words))
        at = re.escape(token)
        for single in re.finditer(rf"(?<![A-Za-z])([A-Za-z][A-Za-z'’\-]+)\s*,?{_ID_CUE}{at}(?![A-Za-z0-9\-])"
                                  rf"|(?<![A-Za-z0-9\-]){at}\s*[,\-–:(]?\s*([A-Za-z][A-Za-z'’\-]+)(?![A-Za-z])", text,
                                  re.IGNORECASE):
            word = re.sub(r"['’]s$", "", (single.group(1) or single.group(2)).lower())
            # Looked up in the roster's own index of family names (a record of thousands: no pass over them all).
            others = [p.name for p in roster.candidates(word) if p.family.lower() == word and p.id != patient.id]
            if others and word != patient.family.lower():
                out.append(others[-1])
    return out


def known_patients_in(text: str, roster: Roster) -> RosterMatch:
    """The roster's patients the message names (see the module docstring), in the roster's order."""
    match = RosterMatch()
    for patient in roster.candidates(text):
        _identified(text, patient, match, roster)
        pattern = _name_pattern(patient)
        found = next((m for m in pattern.finditer(text) if not _COLLEAGUE_RE.search(text[:m.start()])), None) \
            if pattern else None
        if found and patient.id not in match.ids and patient.name not in match.names:
            match.names.append(patient.name)
            match.spans.append(found.group(0))
    return match


def _covered(name: str, spans: list[str]) -> bool:
    """True when every word of ``name`` (a name the patterns found) is a word of what the roster matched: the
    same patient ("Okafor Amina", "Mrs Oduya"), not a second one."""
    words = {w.lower().strip("'’") for w in re.findall(r"[\w'’\-]+", name)}
    return any(words <= {w.lower().removesuffix("'s").removesuffix("’s").strip("'’")
                         for w in re.findall(r"[\w'’\-]+", span)} for span in spans)


def with_known_patients(entities: ExtractedEntities, text: str, roster: Roster) -> ExtractedEntities:
    """``entities`` with the roster's patients the message names: their display names (the patterns' own reading
    of the same words dropped, so one patient is one name), their record ids (an MRN the patterns took for an id
    is replaced by the record id it stands for) and the identifiers as written (``patient_aliases``)."""
    match = known_patients_in(text, roster)
    if not (match.names or match.ids):
        return entities
    ids = [i for i in entities["patient_ids"] if i.lower() not in match.aliases and i not in match.ids]
    names = [n for n in entities["patient_names"] if not _covered(n, match.spans)]
    # A name the roster knows is kept only when no identifier of the message already says which patient it is
    # (the identifier is exact; the name may be a namesake's).
    named = [n for n in match.names if not any(n == p.name for p in roster.patients if p.id in match.ids)]
    out = ExtractedEntities(**entities)
    out["patient_ids"] = [*match.ids, *ids]
    # A name written beside an identifier that is another patient's stays a name: two patients are named, so the turn
    # asks which (the identifier's record is never opened for a name it does not carry).
    beside = [n for n in match.disagreeing if not any(n.lower() == m.lower() for m in [*named, *names])]
    out["patient_names"] = [*named, *names, *beside]
    out["patient_aliases"] = {**entities.get("patient_aliases", {}), **match.aliases}
    return out


_MONTHS = {m: i for i, m in enumerate(("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov",
                                       "dec"), start=1)}
_BORN = r"(?:born(?:\s+on)?|b\.|dob|d\.o\.b\.?|date\s+of\s+birth|birth\s*date|birthday)\s*[:\-]?\s*"
_DATE = (r"(?P<iso>\d{4}-\d{2}-\d{2})|(?P<d>\d{1,2})[/.](?P<m>\d{1,2})[/.](?P<y>\d{4})"
         r"|(?P<d2>\d{1,2})(?:st|nd|rd|th)?\s+(?P<mon>[A-Za-z]{3,9})\.?,?\s+(?P<y2>\d{4})"
         r"|(?P<mon3>[A-Za-z]{3,9})\.?\s+(?P<d3>\d{1,2})(?:st|nd|rd|th)?,?\s+(?P<y3>\d{4})")
#: A birth date as a message gives it: after "born", "DOB", "date of birth" …, or in brackets right after a name.
_BIRTH_DATE_RE = re.compile(rf"(?:\b{_BORN}|\(\s*(?:{_BORN})?)(?:{_DATE})", re.IGNORECASE)


def _iso(year: str, month: int, day: int) -> str | None:
    if not (1 <= month <= 12 and 1 <= day <= 31):
        return None
    return f"{int(year):04d}-{month:02d}-{day:02d}"


def birth_dates(text: str) -> list[str]:
    """Birth dates the message gives (``YYYY-MM-DD``), in order. A numeric date reads day first ("30/11/1988");
    one that reads both ways ("03/12/1964") is not taken, since it would pick a patient by a guess."""
    found: list[str] = []
    for m in _BIRTH_DATE_RE.finditer(text):
        if m["iso"]:
            date = _iso(m["iso"][:4], int(m["iso"][5:7]), int(m["iso"][8:]))
        elif m["d"]:
            day, month = int(m["d"]), int(m["m"])
            date = _iso(m["y"], month, day) if day > 12 or day == month else None
        else:
            month_word, day_text, year = (m["mon"], m["d2"], m["y2"]) if m["mon"] else (m["mon3"], m["d3"], m["y3"])
            number = _MONTHS.get(month_word[:3].lower())
            date = _iso(year, number, int(day_text)) if number else None
        if date and date not in found:
            found.append(date)
    return found
