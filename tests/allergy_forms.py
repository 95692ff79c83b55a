"""Generated product forms for the allergy checks: for every class of the table and every member, the ways a
product is written (generic, brand(s), combination with each separator, strength and form, case, salt),
each with the answer a clinician expects for a recorded allergy in that class.

The cases come from the table's member lists and product names, not from one drug: a check tuned to a name
fails on the others. Used by ``tests/unit/test_allergy_forms.py`` and ``bench/allergy_forms.py`` (which also
runs them on an older tree: the cases are plain JSON).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Literal

from docgemma.clinical.drug_classes import CLASSES, PRODUCTS, UMBRELLA_WORDS, DrugClass

Expect = Literal["conflict", "warning", "none"]
SEPARATORS = ("-", "/", " / ", " and ", " with ", " plus ", " + ", "+", " & ")
#: A partner for combination forms: in no class of the table.
PARTNER = "acetaminophen"
#: Drugs in no class of the table (and no relative of one): they must never conflict.
UNRELATED = ("metformin", "atorvastatin", "amlodipine", "omeprazole", "levothyroxine", "sertraline", "acetaminophen",
             "furosemide", "warfarin", "apixaban", "insulin glargine", "albuterol", "loratadine", "prednisone",
             "gabapentin", "hydrochlorothiazide", "metoprolol", "montelukast", "ondansetron", "famotidine",
             "Tylenol 500 mg", "Glucophage 500 mg tablet", "Lipitor 20mg", "paracetamol 1 g", "Norvasc",
             "doxazosin", "trimethoprim", "nitrofurantoin", "fluconazole", "acyclovir")


#: Penicillin-containing products as clinicians and records write them, listed by hand (not from the table):
#: brands (US, UK, international), combinations with every separator, salts, strengths, forms and case.
PENICILLIN_PRODUCTS = (
    "Augmentin 625 mg", "AUGMENTIN 875 MG TABLET", "augmentin duo forte", "Augmentin XR 1000 mg/62.5 mg",
    "Augmentin-Duo 400/57", "co-amoxiclav 625mg", "Co-Amoxiclav 500/125", "amox-clav 875", "Amox/clav",
    "amoxicillin-clavulanate", "amoxicillin/clavulanate potassium 875 mg-125 mg tablet", "amoxicillin with clavulanic acid",
    "amoxicillin plus clavulanate", "amoxicillin + clavulanate", "amoxicillin and clavulanate potassium for oral suspension",
    "amoxicillin trihydrate/potassium clavulanate", "Amoxicillin 500mg caps", "AMOXIL 500MG/5ML SUSP", "amoxycillin",
    "Amoxicillin trihydrate 250 mg", "Moxatag 775 mg", "Clavulin", "piperacillin-tazobactam 4.5 g IV",
    "Piperacillin sodium and tazobactam sodium", "Zosyn (piperacillin/tazobactam) 3.375 g", "Tazocin 4.5g",
    "pip-tazo", "Ticarcillin disodium and clavulanate potassium", "Timentin", "Unasyn 3 g", "ampicillin-sulbactam",
    "Ampicillin sodium 1 g IV", "Ampicillin 500 mg + cloxacillin 250 mg", "Nafcillin 2 g IV", "oxacillin",
    "Dicloxacillin 500 mg capsules", "Flucloxacillin sodium 500mg", "Floxapen", "Co-fluampicil 250/250", "Magnapen",
    "Penicillin V potassium 500 mg", "Pen VK 250 mg", "Phenoxymethylpenicillin 250 mg QDS", "Penicillin G potassium",
    "Benzylpenicillin 1.2 g IV", "Penicillin G benzathine 2.4 MU IM", "Bicillin L-A", "Bicillin C-R",
    "Procaine penicillin G 600,000 units IM", "penicillin", "PENICILLIN", "Pivmecillinam 200 mg", "Selexid",
    "temocillin", "Talampicillin", "Sultamicillin 375 mg", "Prevpac", "Talicia", "Omeclamox-Pak",
)
CEPHALOSPORIN_PRODUCTS = ("Keflex 500mg", "Cefalexin 250mg/5ml", "cephalexin", "cefuroxime axetil 500 mg", "Zinnat",
                          "Ceftriaxone 1 g IV", "Rocephin", "cefdinir", "Omnicef", "cefazolin 2 g", "cefepime",
                          "ceftazidime-avibactam", "Zerbaxa", "cefpodoxime proxetil", "Suprax 400 mg")
UNRELATED_PRODUCTS = ("metformin 500 mg", "Lipitor 20 mg", "amlodipine", "paracetamol 1 g", "Tylenol", "omeprazole",
                      "warfarin sodium 5 mg", "levothyroxine", "aztreonam", "vancomycin 1 g IV", "clindamycin 300 mg",
                      "doxycycline hyclate 100 mg", "ciprofloxacin", "azithromycin", "metronidazole", "gentamicin")
PENICILLIN_ALLERGIES = ("Allergy to penicillin", "Penicillin V allergy", "Amoxicillin", "Augmentin", "penicillins",
                        "Allergy to amoxicillin (substance)", "beta-lactam antibiotics")



@dataclass(frozen=True)
class Case:
    allergy: str
    criticality: str
    product: str
    expect: Expect
    klass: str


def brands_of(member: str) -> list[str]:
    """Product names of the table that contain ``member``."""
    return [name for name, parts in PRODUCTS.items() if member in parts]


def forms(member: str) -> list[str]:
    """The ways ``member`` is written on an order."""
    out = [member, member.upper(), member.title(), f"{member} 500 mg tablet", f"{member.upper()} 250 MG ORAL CAPSULE",
           f"{member} 500mg caps", f"{member.title()} 1 g IV", f"{member} sodium", f"{member} hydrochloride",
           f"{member} trihydrate 500 mg"]
    for sep in SEPARATORS:
        out += [f"{member}{sep}{PARTNER}", f"{PARTNER}{sep}{member}"]
    for brand in brands_of(member):
        out += [brand, brand.upper(), brand.title(), f"{brand} 500 mg", f"{brand.upper()} 875 MG TABLET"]
    return out


def allergens(cls: DrugClass) -> list[str]:
    """How an allergy in the class is recorded: the class word, a member, a brand, as SNOMED-style text."""
    out = [f"Allergy to {w}" for w in cls.words[:1]] + [w for w, keys in UMBRELLA_WORDS.items()
                                                         if cls.key in keys][:1]
    out += [f"Allergy to {cls.members[0]}", cls.members[-1].title()]
    brands = [b for m in cls.members for b in brands_of(m) if len(PRODUCTS[b]) == 1]
    out += [f"{brands[0].title()} allergy"] if brands else []
    return out


def cases() -> list[Case]:
    """Every class × allergen × member form (conflict), related-class members (warning), unrelated (none)."""
    by_key = {c.key: c for c in CLASSES}
    out: list[Case] = []
    for cls in CLASSES:
        for allergy in allergens(cls):
            word = allergy.removeprefix("Allergy to ")
            keys = set(UMBRELLA_WORDS.get(word, (cls.key,)))  # "beta-lactam", "opioids": every class it names
            related = {r for k in keys for r in by_key[k].related} - keys
            for key in sorted(keys):
                for member in by_key[key].members:
                    out += [Case(allergy, "high", f, "conflict", cls.key) for f in forms(member)]
            for key in sorted(related):
                for member in by_key[key].members:
                    out += [Case(allergy, "high", f, "warning", cls.key) for f in forms(member)[:4]]
            others = [c for c in CLASSES if c.key not in keys | related
                      and not set(c.related) & keys]
            for drug in [*UNRELATED, *(c.members[0] for c in others)]:
                out.append(Case(allergy, "high", drug, "none", cls.key))
    return out


def hand_cases() -> list[Case]:
    """The hand-written penicillin, cephalosporin and unrelated products against penicillin allergies."""
    out = []
    for recorded in PENICILLIN_ALLERGIES:
        out += [Case(recorded, "high", p, "conflict", "hand-listed") for p in PENICILLIN_PRODUCTS]
        if not recorded.startswith("beta-lactam"):
            out += [Case(recorded, "high", p, "warning", "hand-listed") for p in CEPHALOSPORIN_PRODUCTS]
            out += [Case(recorded, "high", p, "none", "hand-listed") for p in UNRELATED_PRODUCTS]
    return out


def as_json(items: list[Case]) -> list[dict[str, str]]:
    return [asdict(c) for c in items]
