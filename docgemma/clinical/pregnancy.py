"""Pregnancy and breastfeeding: what the record says of them, and which drugs must stop an order.

The record's part is read from its conditions (SNOMED CT codes or words: pregnancy, pre-eclampsia, gestation,
lactation) and observations (LOINC pregnancy and breastfeeding status, gestational age); a woman aged 12 to 50 with
no pregnancy status on record is "of childbearing potential", which the strongest teratogens warn about. The
drug's part is :data:`TABLE`, one row per drug or class with what it does in pregnancy and in breastfeeding and
where that is stated (FDA label sections 4, 5, 8.1 and 8.2, MHRA, BNF). A drug it does not list is NOT vouched
for: the card says the table was used, and which status it read. Data and pure functions.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date
from typing import Any, Literal

from docgemma.fhir import codings, concept_code, display_text

Level = Literal["contraindicated", "caution"]

#: SNOMED CT codes of a current pregnancy (and its disorders) and of lactation.
PREGNANCY_CODES = frozenset({"77386006", "72892002", "398254007", "47200007", "16356006", "237238006",
                             "48194001", "198609003", "15938005", "267306007", "37320007"})
LACTATION_CODES = frozenset({"169741004", "413712001", "169750002", "230001000"})
#: LOINC: pregnancy status, gestational age (estimated and by dates), breastfeeding status.
PREGNANCY_LOINC = frozenset({"82810-3", "11449-6", "49051-6", "11884-4", "11885-1", "57714-8"})
LACTATION_LOINC = frozenset({"63895-7", "95756-2"})
_PREGNANT_WORDS = re.compile(r"\bpregnan|\bgestation|\bpre-?eclampsia|\beclampsia|\bgravid|\bantenatal|"
                             r"\btrimester|\bhellp\b|\bhyperemesis", re.IGNORECASE)
_LACTATION_WORDS = re.compile(r"\blactat|\bbreast-?\s?feed|\bbreastfeeding|\bnursing mother", re.IGNORECASE)
#: Words that say the opposite ("not pregnant", "pregnancy test negative", "history of pre-eclampsia").
_NOT_NOW = re.compile(r"\bnot\b|\bnegative\b|\bno longer\b|\bhistory of\b|\bh/o\b|\bprevious\b|\bpast\b|"
                      r"\bpostpartum\b|\bterminated\b|\bended\b", re.IGNORECASE)
#: SNOMED "not pregnant"; a value that says no.
_NOT_PREGNANT_VALUES = frozenset({"60001007", "LA26683-5", "LA32-8"})
#: A pregnancy recorded longer ago than this, with no end recorded, is said to need confirming.
PREGNANCY_CONFIRM_DAYS = 300
CHILDBEARING_AGES = (12.0, 50.0)


@dataclass(frozen=True)
class Status:
    """What the record says: pregnant / breastfeeding (with the entry that says so and its date), or neither;
    ``childbearing``: a woman of 12-50 with neither on record; ``known``: the sex is recorded."""

    pregnant: str = ""
    pregnant_since: str = ""
    breastfeeding: str = ""
    childbearing: bool = False
    known: bool = True

    def described(self) -> str:
        """The status as the card's check line says it."""
        if self.pregnant:
            return f"pregnant per the record ({self.pregnant}{', since ' + self.pregnant_since if self.pregnant_since else ''})"
        if self.breastfeeding:
            return f"breastfeeding per the record ({self.breastfeeding})"
        if self.childbearing:
            return "a woman of childbearing age with no pregnancy status on record"
        return "no pregnancy or breastfeeding on record" if self.known else "sex not recorded"


@dataclass(frozen=True)
class Row:
    """One drug or class: its members (ingredients) or class keys, what it does in pregnancy and breastfeeding
    (None: nothing that stops an order), why, and where that is stated."""

    name: str
    ingredients: tuple[str, ...]
    classes: tuple[str, ...]
    pregnancy: Level | None
    lactation: Level | None
    why: str
    source: str
    #: One of the strongest teratogens: a woman of childbearing potential is warned even without a pregnancy.
    teratogen: bool = False


_FETAL_RAAS = ("fetal renal toxicity, oligohydramnios, skull hypoplasia and death when used in the second and "
               "third trimesters")
TABLE: tuple[Row, ...] = (
    Row("ACE inhibitors", (), ("ace_inhibitor",), "contraindicated", None, _FETAL_RAAS,
        "FDA labels (e.g. Zestril): Boxed Warning — fetal toxicity; 5.x and 8.1; BNF: avoid in pregnancy"),
    Row("angiotensin receptor blockers", ("sacubitril", "aliskiren"), ("arb",), "contraindicated", None, _FETAL_RAAS,
        "FDA labels (e.g. Cozaar, Entresto, Tekturna): Boxed Warning — fetal toxicity; 8.1; BNF: avoid"),
    Row("warfarin", ("warfarin", "acenocoumarol", "phenprocoumon"), (), "contraindicated", None,
        "coumarin embryopathy and fetal haemorrhage (a mechanical heart valve is the specialist exception)",
        "Coumadin label, 4 Contraindications and 8.1; BNF: avoid in pregnancy", teratogen=True),
    Row("valproate", ("valproic acid", "divalproex", "sodium valproate", "valproate"), (), "contraindicated", None,
        "neural-tube defects and other major malformations, and impaired neurodevelopment",
        "Depakote label: Boxed Warning and 4; MHRA valproate Pregnancy Prevention Programme (2018, 2024)",
        teratogen=True),
    Row("retinoids", ("isotretinoin", "acitretin", "alitretinoin", "bexarotene", "tretinoin"), (), "contraindicated",
        "contraindicated", "severe birth defects (retinoid embryopathy)",
        "Absorica/Soriatane labels: Boxed Warning, 4 Contraindications, 8.1-8.2 (iPLEDGE); MHRA 2023", teratogen=True),
    Row("tetracyclines", (), ("tetracycline",), "contraindicated", "caution",
        "permanent tooth discolouration and impaired bone growth in the fetus (second half of pregnancy)",
        "tetracycline class labels (e.g. Vibramycin), 5 Warnings and 8.1; BNF: avoid in pregnancy"),
    Row("methotrexate", ("methotrexate",), (), "contraindicated", "contraindicated",
        "embryo-fetal death and malformations", "methotrexate labels: Boxed Warning, 4 Contraindications, 8.1-8.2",
        teratogen=True),
    Row("mycophenolate", ("mycophenolate mofetil", "mycophenolic acid", "mycophenolate"), (), "contraindicated",
        "contraindicated", "first-trimester loss and congenital malformations",
        "CellCept label: Boxed Warning — embryofetal toxicity, 8.1-8.2; MHRA 2015", teratogen=True),
    Row("misoprostol", ("misoprostol",), (), "contraindicated", None,
        "uterine contraction, abortion and birth defects (outside an obstetric indication)",
        "Cytotec label: Boxed Warning and 4 Contraindications"),
    Row("thalidomide and analogues", ("thalidomide", "lenalidomide", "pomalidomide"), (), "contraindicated",
        "contraindicated", "severe, life-threatening birth defects",
        "Thalomid/Revlimid/Pomalyst labels: Boxed Warning, 4 (REMS)", teratogen=True),
    Row("leflunomide", ("leflunomide", "teriflunomide"), (), "contraindicated", "contraindicated",
        "fetal toxicity", "Arava/Aubagio labels: Boxed Warning and 4 Contraindications", teratogen=True),
    Row("ribavirin", ("ribavirin",), (), "contraindicated", None, "teratogenic and embryocidal",
        "ribavirin labels: Boxed Warning and 4 Contraindications"),
    Row("endothelin receptor antagonists", ("bosentan", "ambrisentan", "macitentan"), (), "contraindicated", None,
        "embryo-fetal toxicity", "Tracleer/Letairis/Opsumit labels: Boxed Warning and 4 Contraindications",
        teratogen=True),
    Row("5-alpha-reductase inhibitors", ("finasteride", "dutasteride"), (), "contraindicated", None,
        "abnormal development of a male fetus' genitalia", "Proscar/Avodart labels, 4 Contraindications and 8.1"),
    Row("androgens and danazol", ("testosterone", "danazol"), (), "contraindicated", "contraindicated",
        "virilisation of a female fetus", "testosterone and danazol labels, 4 Contraindications"),
    Row("statins", ("atorvastatin", "simvastatin", "lovastatin", "pravastatin", "rosuvastatin", "fluvastatin",
                    "pitavastatin"), (), "caution", "contraindicated",
        "stop when pregnancy is recognised (FDA 2021 removed the contraindication; most patients should stop); "
        "not while breastfeeding", "FDA Drug Safety Communication 2021 (statins in pregnancy); labels 8.1-8.2; BNF"),
    Row("NSAIDs", ("ibuprofen", "naproxen", "diclofenac", "ketorolac", "celecoxib", "indomethacin", "meloxicam",
                   "etoricoxib", "piroxicam", "ketoprofen", "mefenamic acid"), (), "contraindicated", None,
        "avoid from 20 weeks (fetal renal dysfunction, oligohydramnios) and in the third trimester (ductus "
        "arteriosus closure); before 20 weeks only with a reason; low-dose aspirin is not included",
        "FDA Drug Safety Communication 2020 (NSAIDs at 20 weeks); NSAID labels 5 and 8.1; BNF: avoid"),
    Row("topiramate", ("topiramate",), (), "contraindicated", None,
        "oral clefts, low birth weight and neurodevelopmental disorders; contraindicated for migraine and weight "
        "loss, and in epilepsy unless no other treatment will do", "MHRA Drug Safety Update 2024 (topiramate "
        "Pregnancy Prevention Programme); Topamax label 8.1", teratogen=True),
    Row("antiepileptics with a pregnancy warning", ("carbamazepine", "phenytoin", "phenobarbital"), (),
        "caution", None, "major congenital malformations; a specialist decides (never stop epilepsy treatment "
        "abruptly)", "MHRA topiramate Pregnancy Prevention Programme (2024); labels 8.1; BNF"),
    Row("lithium", ("lithium", "lithium carbonate"), (), "caution", "caution",
        "cardiac malformations (Ebstein's anomaly) and neonatal toxicity; passes into breast milk",
        "lithium labels 8.1-8.2; BNF"),
    Row("direct oral anticoagulants", ("apixaban", "rivaroxaban", "edoxaban", "dabigatran"), (), "caution",
        "caution", "not recommended in pregnancy or breastfeeding (no safety data; bleeding)",
        "Eliquis/Xarelto/Lixiana/Pradaxa labels 8.1-8.2; BNF: avoid"),
    Row("amiodarone", ("amiodarone",), (), "caution", "contraindicated",
        "fetal thyroid and cardiac toxicity; iodine in breast milk", "Cordarone label 8.1-8.2; BNF"),
    Row("fluoroquinolones", (), ("fluoroquinolone",), "caution", "caution",
        "arthropathy in animal studies; other antibiotics are preferred", "fluoroquinolone labels 8.1; BNF"),
    Row("antithyroid drugs", ("carbimazole", "methimazole"), (), "caution", None,
        "embryopathy in the first trimester (propylthiouracil is preferred then)", "MHRA 2019; methimazole label 8.1"),
    Row("codeine and tramadol", ("codeine", "tramadol"), (), None, "contraindicated",
        "life-threatening opioid toxicity in breastfed infants of ultra-rapid metabolisers",
        "FDA 2017 (codeine and tramadol labels, 8.2: breastfeeding not recommended); MHRA 2013"),
)


def _active(condition: dict[str, Any]) -> bool:
    status = concept_code(condition, "clinicalStatus")
    return status in ("", "active", "recurrence", "relapse") and not condition.get("abatementDateTime") \
        and not condition.get("abatementPeriod") and concept_code(condition, "verificationStatus") not in (
            "refuted", "entered-in-error")


def _says(resource: dict[str, Any], codes: frozenset[str], words: re.Pattern[str]) -> bool:
    text = display_text(resource)
    if any(c.get("code") in codes for c in codings(resource, ("code",))):
        return not _NOT_NOW.search(text)
    return bool(words.search(text)) and not _NOT_NOW.search(text)


def _observed(observation: dict[str, Any], loinc: frozenset[str], words: re.Pattern[str]) -> bool:
    """A pregnancy or breastfeeding status observation that says yes (or a gestational age, which says so)."""
    if not any(c.get("code") in loinc for c in codings(observation, ("code",))) and not words.search(
            display_text(observation)):
        return False
    if "valueQuantity" in observation:
        return True  # a gestational age
    value = observation.get("valueCodeableConcept") or {}
    shown = " ".join(filter(None, [str(value.get("text") or ""), *(str(c.get("display") or "")
                                                                  for c in value.get("coding", []))]))
    if any(c.get("code") in _NOT_PREGNANT_VALUES for c in value.get("coding", [])) or _NOT_NOW.search(shown) \
            or re.search(r"\bno\b|\bunknown\b", shown, re.IGNORECASE):
        return False
    return bool(value) or observation.get("valueBoolean") is True


def status(conditions: list[dict[str, Any]], observations: list[dict[str, Any]], gender: str,
           age: float | None) -> Status:
    """The record's pregnancy and breastfeeding status (see :class:`Status`)."""
    sex = gender.strip().lower()
    if sex == "male":
        return Status()
    pregnant = next((c for c in conditions if _active(c) and _says(c, PREGNANCY_CODES, _PREGNANT_WORDS)), None)
    feeding = next((c for c in conditions if _active(c) and _says(c, LACTATION_CODES, _LACTATION_WORDS)), None)
    observed = sorted(observations, key=lambda o: str(o.get("effectiveDateTime") or ""), reverse=True)
    preg_obs = next((o for o in observed if _observed(o, PREGNANCY_LOINC, _PREGNANT_WORDS)), None)
    feed_obs = next((o for o in observed if _observed(o, LACTATION_LOINC, _LACTATION_WORDS)), None)
    if pregnant is not None or preg_obs is not None:
        entry = pregnant if pregnant is not None else preg_obs
        assert entry is not None
        names = [display_text(c) for c in conditions if _active(c) and _says(c, PREGNANCY_CODES, _PREGNANT_WORDS)]
        since = str(entry.get("onsetDateTime") or entry.get("recordedDate") or entry.get("effectiveDateTime") or "")
        return Status(pregnant=", ".join(dict.fromkeys(names)) or display_text(entry), pregnant_since=since[:10])
    if feeding is not None or feed_obs is not None:
        entry = feeding if feeding is not None else feed_obs
        assert entry is not None
        return Status(breastfeeding=display_text(entry))
    if sex != "female":
        return Status(known=False)
    low, high = CHILDBEARING_AGES
    return Status(childbearing=age is not None and low <= age <= high)


def rows_for(ingredients: tuple[str, ...], classes: frozenset[str]) -> list[Row]:
    """The table's rows that name one of ``ingredients`` or ``classes``."""
    names = {i.lower() for i in ingredients}
    return [r for r in TABLE if names & set(r.ingredients) or classes & set(r.classes)]


@dataclass(frozen=True)
class Finding:
    text: str
    severe: bool


def findings(drug: str, ingredients: tuple[str, ...], classes: frozenset[str], record: Status,
             today: date | None = None) -> list[Finding]:
    """The card's findings for ``drug`` given the record's status: contraindicated → severe (an override with a
    reason), caution → a warning; a strong teratogen for a woman of childbearing potential → a warning."""
    out: list[Finding] = []
    for row in rows_for(ingredients, classes):
        if record.pregnant and row.pregnancy:
            stale = _stale(record.pregnant_since, today)
            out.append(Finding(
                f"PREGNANCY ({row.pregnancy.upper()}): {drug} ({row.name}) — {row.why}. The record says: "
                f"{record.pregnant}{stale} (source: {row.source}).", row.pregnancy == "contraindicated"))
        elif record.breastfeeding and row.lactation:
            out.append(Finding(
                f"BREASTFEEDING ({row.lactation.upper()}): {drug} ({row.name}) — {row.why}. The record says: "
                f"{record.breastfeeding} (source: {row.source}).", row.lactation == "contraindicated"))
        elif record.childbearing and row.teratogen:
            out.append(Finding(
                f"CHILDBEARING POTENTIAL: {drug} ({row.name}) is a known teratogen — {row.why}. No pregnancy status "
                f"is on record: confirm she is not pregnant and uses contraception (source: {row.source}).", False))
    return out


def _stale(since: str, today: date | None) -> str:
    try:
        start = date.fromisoformat(since[:10])
    except ValueError:
        return ""
    days = ((today or date.today()) - start).days
    return f" (recorded {since[:10]}, {days} days ago: confirm she is still pregnant)" \
        if days > PREGNANCY_CONFIRM_DAYS else ""


SOURCE = "pregnancy and breastfeeding table (FDA labels 4, 8.1-8.2; MHRA; BNF), the record's conditions and observations"
