"""Drug names as clinicians shorten them on a ward ("amox", "co-amox", "pip-taz", "vanc", "gent", "TMP-SMX"), each
mapped to the name the drug dictionary gives the full word, so that a shortened drug is the same drug as the full
one everywhere (rules, arguments, safety lines) and is never dropped from a list. Only shortenings that name one
drug are here: "levo" (levofloxacin or levothyroxine), "pred" (prednisolone or prednisone), "nitro"
(nitroglycerin or nitrofurantoin) and "dex" are ambiguous and left out, so they are never guessed.
"""

from __future__ import annotations

#: Shortening (lower case) → the name the dictionary gives the full drug name.
SHORTENINGS: dict[str, str] = {
    # Penicillin combinations: "co-amox" must never be read as amoxicillin alone (the clavulanate is dropped), nor
    # "co-trimox" as amoxicillin (the dictionary reads "trimox" as an amoxicillin brand).
    "co-amox": "amoxicillin-clavulanate", "coamox": "amoxicillin-clavulanate", "co-amoxi": "amoxicillin-clavulanate",
    "coamoxiclav": "amoxicillin-clavulanate", "amoxiclav": "amoxicillin-clavulanate",
    "amox/clav": "amoxicillin-clavulanate", "amoxi-clav": "amoxicillin-clavulanate",
    "pip-taz": "piperacillin-tazobactam", "pip/taz": "piperacillin-tazobactam", "piptaz": "piperacillin-tazobactam",
    "pip-tazo": "piperacillin-tazobactam", "pip/tazo": "piperacillin-tazobactam", "piptazo": "piperacillin-tazobactam",
    "tmp-smx": "trimethoprim-sulfamethoxazole", "tmp/smx": "trimethoprim-sulfamethoxazole",
    "smx-tmp": "trimethoprim-sulfamethoxazole", "smx/tmp": "trimethoprim-sulfamethoxazole",
    "co-trimox": "trimethoprim-sulfamethoxazole", "cotrimox": "trimethoprim-sulfamethoxazole",
    "amox": "amoxicillin", "amoxi": "amoxicillin",
    "fluclox": "flucloxacillin", "flucl": "flucloxacillin",
    "benpen": "penicillin g", "pen-v": "phenoxymethylpenicillin",
    # Other antimicrobials.
    "vanc": "vancomycin", "vanco": "vancomycin", "gent": "gentamicin", "genta": "gentamicin",
    "metro": "metronidazole", "cipro": "ciprofloxacin", "doxy": "doxycycline", "clari": "clarithromycin",
    "clarith": "clarithromycin", "clarithro": "clarithromycin", "azithro": "azithromycin", "erythro": "erythromycin",
    "clinda": "clindamycin", "levoflox": "levofloxacin", "nitrofur": "nitrofurantoin", "fluco": "fluconazole",
    "ceftriax": "ceftriaxone", "ceftri": "ceftriaxone", "cefurox": "cefuroxime", "cefotax": "cefotaxime",
    "ceftaz": "ceftazidime", "cefalex": "cephalexin", "cephalex": "cephalexin",
    # Cardiovascular, analgesic and other common short forms.
    "amio": "amiodarone", "spiro": "spironolactone", "atorva": "atorvastatin", "simva": "simvastatin",
    "rosuva": "rosuvastatin", "amlo": "amlodipine", "warf": "warfarin", "enox": "enoxaparin",
    "hydrocort": "hydrocortisone", "salbut": "albuterol", "mtx": "methotrexate", "txa": "tranexamic acid",
    "nac": "acetylcysteine", "apap": "acetaminophen", "pcm": "acetaminophen", "hctz": "hydrochlorothiazide",
}

#: Shortenings that are also ordinary words or places ("Metro Manila", "Gent"): a drug only when written in lower
#: case or all capitals, never capitalised as a name.
NOT_CAPITALISED = frozenset({"metro", "gent", "spiro", "doxy", "nac", "warf"})


def shortening(token: str) -> str | None:
    """The drug a shortened name stands for, or None (a word such as "Metro" capitalised is not one)."""
    lowered = token.lower()
    name = SHORTENINGS.get(lowered)
    if name is None:
        return None
    if lowered in NOT_CAPITALISED and token not in (lowered, token.upper()):
        return None
    return name
