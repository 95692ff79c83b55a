"""Every drug of the dose table is read as a drug by its own name (issue 26: "can I still give senna if eGFR is 40?"
was read as naming no drug, so no rule, button or check could act on it)."""

from __future__ import annotations

from docgemma.clinical.dose_table import TABLE
from docgemma.clinical.entities import DrugDictionary


def test_every_dose_table_drug_is_a_drug_mention() -> None:
    # "ferrous" is a salt's first word: the table's row for ferrous sulfate, which the dictionary reads whole.
    missing = [row.drug for row in TABLE if row.drug != "ferrous" and not DrugDictionary.find(row.drug.replace("+", "-"))]
    assert missing == []
    assert DrugDictionary.find("ferrous sulfate 200 mg bd")


def test_a_drug_the_table_adds_is_read_in_a_question() -> None:
    assert DrugDictionary.find("can I still give senna if eGFR is 40") == ["senna"]
    assert DrugDictionary.find("is thiamine ok in the 2nd trimester?") == ["thiamine"]


def test_the_malaria_combination_is_read_by_its_brand() -> None:
    assert DrugDictionary.find("so order coartem 80/480 bd for her") == ["artemether-lumefantrine"]
