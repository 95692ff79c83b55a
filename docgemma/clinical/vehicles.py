"""The infusion fluid an intravenous medicine is named with: "potassium chloride 10 mmol in 100 mL sodium chloride
0.9%", "vancomycin 1 g in 250 mL glucose 5%", "in water for injections". The fluid is the vehicle the medicine is
given in, not a second active ingredient: the dose range, the high-alert list, the duplicate and the interaction
checks are about the medicine (the diluent of a potassium infusion read as an ingredient made the pair a product
with no dose range, and sodium chloride a concentrated electrolyte).

Only the standard infusion fluids at their standard strengths are vehicles (:data:`VEHICLES`, each with its source):
"in sodium chloride 3%" or "in glucose 50%" is no vehicle and stays an ingredient of the order, checked as one.
None of them is a drug allergen. The vehicle is read from the end of the name only ("<medicine> in [<volume>]
<fluid>"), and only when what comes before it names a medicine. Data and pure functions.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["VEHICLES", "Vehicle", "VehicleRead", "named_with"]

_SOURCE = ("BNF, 'Directions for administration' of the injectable medicines (the infusion fluids a medicine is "
           "diluted in); NHS Injectable Medicines Guide")


@dataclass(frozen=True)
class Vehicle:
    """A standard infusion fluid: its name, the ways an order writes it (lower case), and the source."""

    name: str
    spellings: tuple[str, ...]
    source: str = _SOURCE


VEHICLES: tuple[Vehicle, ...] = (
    Vehicle("sodium chloride 0.9%", ("sodium chloride 0.9%", "0.9% sodium chloride", "nacl 0.9%", "0.9% nacl",
                                     "saline 0.9%", "0.9% saline", "normal saline", "ns")),
    Vehicle("glucose 5%", ("glucose 5%", "5% glucose", "dextrose 5%", "5% dextrose", "d5w", "dextrose 5% in water")),
    Vehicle("glucose 4% with sodium chloride 0.18%", (
        "glucose 4% and sodium chloride 0.18%", "glucose 4% with sodium chloride 0.18%",
        "sodium chloride 0.18% and glucose 4%", "sodium chloride 0.18% with glucose 4%", "dextrose saline")),
    Vehicle("water for injections", ("water for injections", "water for injection", "wfi", "sterile water",
                                     "sterile water for injection", "sterile water for injections")),
    Vehicle("compound sodium lactate", ("compound sodium lactate", "sodium lactate compound", "hartmanns",
                                        "hartmanns solution", "lactated ringers", "ringers lactate")),
)
_BY_SPELLING = {spelling: vehicle for vehicle in VEHICLES for spelling in vehicle.spellings}
#: "<medicine> in [<volume> [of]] <fluid>" at the end of the name; the medicine is what comes before the last "in".
_TAIL_RE = re.compile(r"^(?P<medicine>.*\S)\s+in\s+(?:(?P<volume>\d+(?:\.\d+)?\s*(?:ml|mls|l|litres?|liters?))\s+"
                      r"(?:of\s+)?)?(?P<fluid>\S.*?)\s*[.;,]?\s*$", re.IGNORECASE)


@dataclass(frozen=True)
class VehicleRead:
    """The vehicle read off an order's name, with the volume as written ("" when none) and the fluid as written."""

    vehicle: Vehicle
    volume: str
    written: str

    def shown(self) -> str:
        """"sodium chloride 0.9% (100 mL)"."""
        return f"{self.vehicle.name} ({self.volume})" if self.volume else self.vehicle.name


def _normalised(fluid: str) -> str:
    text = re.sub(r"['’`]", "", fluid.lower())
    text = re.sub(r"(\d)\s+%", r"\1%", text)
    text = re.sub(r"\s+(?:solution|infusion|bag|fluid)$", "", " ".join(text.split()))
    return text


def named_with(name: str) -> tuple[str, VehicleRead | None]:
    """(the medicine, the vehicle it is named with) of an order's product name; the name whole and None when it
    names no standard infusion fluid at its end."""
    found = _TAIL_RE.match(name or "")
    if found is None or not re.search(r"[a-z]", found.group("medicine"), re.IGNORECASE):
        return name, None
    vehicle = _BY_SPELLING.get(_normalised(found.group("fluid")))
    if vehicle is None:
        return name, None
    volume = " ".join((found.group("volume") or "").split())
    volume = re.sub(r"(?i)(\d)\s*(mls?|l|litres?|liters?)$", lambda m: f"{m.group(1)} {m.group(2)}", volume)
    return found.group("medicine").strip(), VehicleRead(vehicle, volume, found.group("fluid").strip())
