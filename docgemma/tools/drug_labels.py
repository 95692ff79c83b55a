"""The one openFDA drug-label client (``/drug/label.json``): a label search, newest first, through the shared HTTP
client. The drug-safety report (:mod:`docgemma.tools.openfda`), the interaction check and the label facts the
ingredient resolver asks for (:mod:`docgemma.tools.interactions`) all search through it."""

from __future__ import annotations

from typing import Any

from docgemma.tools.http import HttpClient, HttpError


class DrugLabels:
    """Label searches through the shared HTTP client."""

    def __init__(self, http: HttpClient, base_url: str, api_key: str | None = None) -> None:
        self.http = http
        self.url = f"{base_url}/drug/label.json"
        self.api_key = api_key

    def search(self, search: str, limit: int = 5) -> list[dict[str, Any]]:
        """The newest ``limit`` labels matching the openFDA ``search`` (none when nothing matches). Raises
        HttpError when the service does not answer or answers something else than a results list."""
        params: dict[str, Any] = {"search": search, "limit": limit, "sort": "effective_time:desc"}
        if self.api_key:
            params["api_key"] = self.api_key
        try:
            body = self.http.get_json(self.url, params)
        except HttpError as exc:
            if exc.error_type == "not_found":  # openFDA answers 404 "No matches found!" for an empty search
                return []
            raise
        results = body.get("results") if isinstance(body, dict) else None
        if not isinstance(results, list):
            raise HttpError("invalid_response", "label search answer has no results list")
        return [r for r in results if isinstance(r, dict)]
