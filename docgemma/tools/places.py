"""Place names a trial request may give: a city with its coordinates (for ClinicalTrials.gov's distance filter
and for ordering a trial's sites nearest first) or a country (matched by name only).

No geocoding service is on the tools' allow-list, so the coordinates are a small built-in table: city centres,
rounded to two decimals (about 1 km), of capitals and large cities of the regions this app is built for and a
few reference cities. A place not in the table is still searched by name (``query.locn``); only a distance
cannot be applied to it, and the result says so.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

#: City (lower case) → (latitude, longitude).
CITIES: dict[str, tuple[float, float]] = {
    # East Africa
    "nairobi": (-1.29, 36.82), "mombasa": (-4.04, 39.67), "kisumu": (-0.09, 34.77), "eldoret": (0.51, 35.27),
    "kampala": (0.35, 32.58), "mbarara": (-0.61, 30.66), "dar es salaam": (-6.79, 39.21), "moshi": (-3.35, 37.34),
    "mwanza": (-2.52, 32.90), "dodoma": (-6.16, 35.75), "kigali": (-1.95, 30.06), "addis ababa": (9.03, 38.74),
    "mogadishu": (2.05, 45.32), "juba": (4.85, 31.58), "khartoum": (15.50, 32.56),
    # Southern Africa
    "lusaka": (-15.39, 28.32), "harare": (-17.83, 31.05), "blantyre": (-15.79, 35.01), "lilongwe": (-13.96, 33.79),
    "maputo": (-25.97, 32.57), "johannesburg": (-26.20, 28.05), "soweto": (-26.27, 27.86), "pretoria": (-25.75, 28.19),
    "cape town": (-33.92, 18.42), "durban": (-29.86, 31.02), "gaborone": (-24.65, 25.91), "windhoek": (-22.56, 17.08),
    # West and Central Africa
    "lagos": (6.52, 3.38), "ibadan": (7.38, 3.95), "abuja": (9.06, 7.50), "kano": (12.00, 8.52),
    "accra": (5.60, -0.19), "kumasi": (6.69, -1.62), "dakar": (14.72, -17.47), "bamako": (12.64, -8.00),
    "ouagadougou": (12.37, -1.52), "abidjan": (5.36, -4.01), "freetown": (8.48, -13.23), "monrovia": (6.30, -10.80),
    "conakry": (9.64, -13.58), "yaounde": (3.87, 11.52), "douala": (4.05, 9.77), "kinshasa": (-4.44, 15.27),
    "niamey": (13.51, 2.11),
    # North Africa and the Middle East
    "cairo": (30.04, 31.24), "alexandria": (31.20, 29.92), "tunis": (36.81, 10.18), "casablanca": (33.57, -7.59),
    "beirut": (33.89, 35.50), "amman": (31.95, 35.93),
    # South Asia
    "mumbai": (19.08, 72.88), "delhi": (28.70, 77.10), "new delhi": (28.61, 77.21), "chennai": (13.08, 80.27),
    "kolkata": (22.57, 88.36), "bengaluru": (12.97, 77.59), "bangalore": (12.97, 77.59), "hyderabad": (17.39, 78.49),
    "pune": (18.52, 73.86), "vellore": (12.92, 79.13), "dhaka": (23.81, 90.41), "karachi": (24.86, 67.01),
    "lahore": (31.55, 74.34), "islamabad": (33.68, 73.05), "kathmandu": (27.72, 85.32), "colombo": (6.93, 79.86),
    # South-East and East Asia
    "hanoi": (21.03, 105.85), "ho chi minh city": (10.82, 106.63), "bangkok": (13.76, 100.50),
    "yangon": (16.84, 96.17), "phnom penh": (11.56, 104.92), "jakarta": (-6.21, 106.85), "manila": (14.60, 120.98),
    "kuala lumpur": (3.14, 101.69), "singapore": (1.35, 103.82), "beijing": (39.90, 116.41),
    "shanghai": (31.23, 121.47), "tokyo": (35.68, 139.69), "seoul": (37.57, 126.98),
    # Americas
    "lima": (-12.05, -77.04), "bogota": (4.71, -74.07), "quito": (-0.18, -78.47), "la paz": (-16.50, -68.15),
    "sao paulo": (-23.55, -46.63), "rio de janeiro": (-22.91, -43.17), "buenos aires": (-34.60, -58.38),
    "santiago": (-33.45, -70.67), "mexico city": (19.43, -99.13), "guatemala city": (14.63, -90.51),
    "port-au-prince": (18.59, -72.31), "havana": (23.11, -82.37), "new york": (40.71, -74.01),
    "boston": (42.36, -71.06), "baltimore": (39.29, -76.61), "bethesda": (38.98, -77.10), "houston": (29.76, -95.37),
    "chicago": (41.88, -87.63), "los angeles": (34.05, -118.24), "seattle": (47.61, -122.33), "toronto": (43.65, -79.38),
    # Europe and Oceania
    "london": (51.51, -0.13), "oxford": (51.75, -1.26), "paris": (48.86, 2.35), "geneva": (46.20, 6.14),
    "amsterdam": (52.37, 4.90), "berlin": (52.52, 13.40), "madrid": (40.42, -3.70), "rome": (41.90, 12.50),
    "sydney": (-33.87, 151.21), "melbourne": (-37.81, 144.96),
}

#: Countries, searched by name (``query.locn``): ClinicalTrials.gov's own spelling where it differs.
COUNTRIES: frozenset[str] = frozenset({
    "afghanistan", "algeria", "angola", "argentina", "australia", "austria", "bangladesh", "belgium", "benin",
    "bolivia", "botswana", "brazil", "burkina faso", "burundi", "cambodia", "cameroon", "canada", "chad", "chile",
    "china", "colombia", "congo", "cote d'ivoire", "cuba", "denmark", "ecuador", "egypt", "eritrea", "eswatini",
    "ethiopia", "finland", "france", "gabon", "gambia", "germany", "ghana", "greece", "guatemala", "guinea", "haiti",
    "honduras", "india", "indonesia", "iran", "iraq", "ireland", "israel", "italy", "japan", "jordan", "kenya",
    "korea", "laos", "lebanon", "lesotho", "liberia", "libya", "madagascar", "malawi", "malaysia", "mali",
    "mexico", "morocco", "mozambique", "myanmar", "namibia", "nepal", "netherlands", "new zealand", "nicaragua",
    "niger", "nigeria", "norway", "pakistan", "peru", "philippines", "poland", "portugal", "rwanda", "saudi arabia",
    "senegal", "sierra leone", "somalia", "south africa", "south sudan", "spain", "sri lanka", "sudan", "sweden",
    "switzerland", "syria", "taiwan", "tanzania", "thailand", "togo", "tunisia", "turkey", "uganda", "ukraine",
    "united kingdom", "uk", "united states", "usa", "us", "vietnam", "yemen", "zambia", "zimbabwe",
})
#: Spellings a clinician writes → the name the registry uses.
_ALIASES: dict[str, str] = {
    "uk": "United Kingdom", "usa": "United States", "us": "United States",
    "bogotá": "Bogota", "são paulo": "Sao Paulo", "yaoundé": "Yaounde", "saigon": "Ho Chi Minh City",
    "bombay": "Mumbai", "calcutta": "Kolkata", "madras": "Chennai",
}
EARTH_RADIUS_KM = 6371.0


@dataclass(frozen=True)
class Place:
    """A named place; ``point`` is known for the cities of :data:`CITIES`."""

    name: str
    point: tuple[float, float] | None = None


def lookup(text: str) -> Place | None:
    """The place ``text`` names (a city or a country, any case), or None when it names neither."""
    key = re.sub(r"\s+", " ", text.strip().lower().rstrip(".,;?!"))
    key = _ALIASES.get(key, key).lower()
    if key in CITIES:
        return Place(_title(key), CITIES[key])
    if key in COUNTRIES:
        return Place(_ALIASES.get(key, _title(key)))
    return None


def _title(key: str) -> str:
    small = {"es", "de", "la", "of"}
    return " ".join(w if w in small and i else w[:1].upper() + w[1:] for i, w in enumerate(key.split(" ")))


def distance_km(a: tuple[float, float], b: tuple[float, float]) -> float:
    """Great-circle distance (haversine)."""
    lat1, lon1, lat2, lon2 = map(math.radians, (*a, *b))
    h = math.sin((lat2 - lat1) / 2) ** 2 + math.cos(lat1) * math.cos(lat2) * math.sin((lon2 - lon1) / 2) ** 2
    return 2 * EARTH_RADIUS_KM * math.asin(math.sqrt(h))
