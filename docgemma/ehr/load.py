"""Import Synthea transaction bundles (``*.json``) and bulk-export NDJSON (``*.ndjson``) into a record."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from docgemma.ehr.client import FhirClient

NDJSON_BATCH = 500


def _files(path: Path) -> Iterator[Path]:
    if path.is_dir():
        yield from sorted(p for p in path.rglob("*") if p.suffix in (".json", ".ndjson"))
    else:
        yield path


def load(client: FhirClient, path: Path) -> Counter[str]:
    """Load every bundle and NDJSON file under ``path``; returns resources written per type."""
    counts: Counter[str] = Counter()
    for file in _files(path):
        if file.suffix == ".ndjson":
            batch: list[dict[str, Any]] = []
            with file.open(encoding="utf-8") as handle:
                for line in handle:
                    if line.strip():
                        batch.append(json.loads(line))
                    if len(batch) >= NDJSON_BATCH:
                        counts += _put_all(client, batch)
                        batch = []
            counts += _put_all(client, batch)
        else:
            data = json.loads(file.read_text(encoding="utf-8"))
            if data.get("resourceType") != "Bundle":
                continue
            for entry in client.transaction(list(data.get("entry", []))):
                counts[entry["resource"]["resourceType"]] += 1
    return counts


def _put_all(client: FhirClient, resources: list[dict[str, Any]]) -> Counter[str]:
    """Bulk-export resources carry their ids and ``Type/id`` references: PUT them in one transaction."""
    if not resources:
        return Counter()
    entries = [{"resource": r, "request": {"method": "PUT", "url": f"{r['resourceType']}/{r['id']}"}} for r in resources]
    return Counter(e["resource"]["resourceType"] for e in client.transaction(entries))
