"""A fake openFDA ``/drug/label.json`` over the recorded-shape labels (``fixtures/apis/openfda``): answers a
``search`` the way openFDA does for the fields the tools use — a quoted phrase matches a field value that
contains those words in order (``openfda.generic_name:"warfarin"`` matches "WARFARIN SODIUM"), terms joined by
OR, a parenthesised AND group needs all of its terms — newest label first, ``limit`` honoured, 404 "No matches
found!" (the recorded body) when nothing matches. Every request is recorded."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import httpx

FIXTURES = Path(__file__).parent / "fixtures" / "apis" / "openfda"
_TERM = re.compile(r'openfda\.(\w+):"([^"]*)"')


def _labels() -> list[dict[str, Any]]:
    files = [*FIXTURES.glob("label_*__built.json"), *(FIXTURES / "interactions").glob("label_*__built.json")]
    return [record for path in sorted(files) for record in json.loads(path.read_text())["results"]]


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", text.lower())


def _has(record: dict[str, Any], field: str, phrase: str) -> bool:
    wanted = _words(phrase)
    for value in (record.get("openfda") or {}).get(field, []):
        words = _words(str(value))
        if any(words[i:i + len(wanted)] == wanted for i in range(len(words) - len(wanted) + 1)):
            return True
    return False


def matches(record: dict[str, Any], search: str) -> bool:
    """Whether ``record`` answers the openFDA ``search`` (OR of terms or parenthesised AND groups)."""
    for part in re.split(r"\s+OR\s+", search):
        terms = _TERM.findall(part)
        if terms and all(_has(record, field, value) for field, value in terms):
            return True
    return False


class FakeOpenFDA:
    """``transport`` for ``knowledge_clients``; ``searches`` lists each request's ``search`` in order."""

    def __init__(self) -> None:
        self.labels = _labels()
        self.requests: list[httpx.Request] = []

    @property
    def searches(self) -> list[str]:
        return [r.url.params.get("search", "") for r in self.requests]

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        if not request.url.path.endswith("/drug/label.json"):
            return httpx.Response(404, text="not found")
        search = request.url.params.get("search", "")
        limit = int(request.url.params.get("limit", "1"))
        found = sorted((r for r in self.labels if matches(r, search)), key=lambda r: r.get("effective_time", ""),
                       reverse=True)[:limit]
        if not found:
            body = (FIXTURES / "error_404_not_found__biomcp.json").read_bytes()
            return httpx.Response(404, content=body, headers={"Content-Type": "application/json"})
        meta = {"results": {"skip": 0, "limit": limit, "total": len(found)}}
        return httpx.Response(200, json={"meta": meta, "results": found})

    def transport(self) -> httpx.MockTransport:
        return httpx.MockTransport(self)
