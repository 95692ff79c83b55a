"""Whether a compiled summary still matches the record: the version of a patient's compartment.

A summary remembers the newest ``meta.lastUpdated`` it saw and each resource's version. To know whether the
record changed, whoever changed it, ask the server for the patient's resources updated at or after that
instant (``Patient/{id}/$everything?_since=``): an unchanged record answers with the newest resource(s)
only, which this version already has. The server's own timestamps are compared, never this machine's clock.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class RecordVersion:
    """What a summary was compiled from: the newest ``meta.lastUpdated`` and each resource's version."""

    newest: str | None
    versions: frozenset[tuple[str, str, str]]

    @staticmethod
    def key(resource: dict[str, Any]) -> tuple[str, str, str]:
        """(type, id, version): ``meta.versionId``, else ``lastUpdated``, else the content itself."""
        meta = resource.get("meta")
        meta = meta if isinstance(meta, dict) else {}
        version = meta.get("versionId") or meta.get("lastUpdated")
        if not version:
            version = hashlib.sha256(json.dumps(resource, sort_keys=True, default=str).encode()).hexdigest()
        return str(resource.get("resourceType")), str(resource.get("id")), str(version)

    @classmethod
    def of(cls, resources: list[dict[str, Any]]) -> RecordVersion:
        """The version of a compartment."""
        stamps = [str(r["meta"]["lastUpdated"]) for r in resources
                  if isinstance(r.get("meta"), dict) and r["meta"].get("lastUpdated")]
        # Without a timestamp on every resource, "updated since" cannot be asked: fetch all and compare.
        newest = max(stamps) if stamps and len(stamps) == len(resources) else None
        return cls(newest, frozenset(cls.key(r) for r in resources))

    def covers(self, resources: list[dict[str, Any]]) -> bool:
        """True when every resource given is one this version already had, unchanged."""
        return all(self.key(r) in self.versions for r in resources)
