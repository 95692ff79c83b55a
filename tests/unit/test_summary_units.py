"""A record's units as a clinician reads them (issue 27: the walkthrough's panel showed "Body temperature: 38.2 Cel"):
the UCUM codes Synthea writes are shown in their clinical form, and a braced annotation names a scale, not a unit."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from docgemma.ehr.summary import quantity_text, unit_text

DATA = Path(__file__).parents[2] / "data"


@pytest.mark.parametrize("code, shown", [("Cel", "°C"), ("mm[Hg]", "mmHg"), ("kg/m2", "kg/m²"), ("{score}", ""),
                                         ("mL/min/{1.73_m2}", "mL/min/1.73 m²"), ("10*3/uL", "×10³/µL"),
                                         ("m[IU]/L", "mIU/L"), ("{INR}", ""), ("mg/dL", "mg/dL"), ("{cells}/uL", "/uL")])
def test_a_ucum_code_is_shown_as_a_clinician_writes_it(code: str, shown: str) -> None:
    assert unit_text(code) == shown


def test_a_temperature_and_a_blood_pressure_read_clinically() -> None:
    assert quantity_text({"valueQuantity": {"value": 38.2, "unit": "Cel"}}) == "38.2 °C"
    pressure = {"component": [{"code": {"coding": [{"code": "8462-4"}]}, "valueQuantity": {"value": 80, "unit": "mm[Hg]"}},
                              {"code": {"coding": [{"code": "8480-6"}]}, "valueQuantity": {"value": 130, "unit": "mm[Hg]"}}]}
    assert quantity_text(pressure) == "130/80 mmHg"


def test_every_unit_in_the_shipped_records_is_shown_without_a_code() -> None:
    units = {m for path in DATA.rglob("*.json") for m in _units(json.loads(path.read_text(encoding="utf-8")))}
    assert {"Cel", "mm[Hg]", "{score}"} <= units  # the records do hold codes
    for unit in units:
        shown = unit_text(unit)
        assert not any(mark in shown for mark in "[]{}*"), (unit, shown)
        assert shown not in {"Cel"}, unit


def _units(node: object) -> list[str]:
    if isinstance(node, dict):
        found = [str(node["unit"])] if "valueQuantity" not in node and "unit" in node and "value" in node else []
        return found + [u for value in node.values() for u in _units(value)]
    if isinstance(node, list):
        return [u for value in node for u in _units(value)]
    return []
