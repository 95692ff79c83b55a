"""FHIR R4 REST client: the embedded record (in-process transport) or any R4 server (Medplum, HAPI).

OAuth2 client credentials (Medplum) come from ``DOCGEMMA_FHIR_CLIENT_ID`` / ``_SECRET`` / ``_TOKEN_URL``.
Errors are :class:`FhirClientError` with the status and the server's OperationOutcome text.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable, Mapping
from typing import Any

import httpx

FHIR_JSON = "application/fhir+json"


class FhirClientError(Exception):
    """A failed FHIR interaction."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(f"HTTP {status}: {message}")
        self.status = status
        self.message = message


class ClientCredentials:
    """OAuth2 client-credentials token, cached until shortly before it expires."""

    def __init__(self, token_url: str, client_id: str, client_secret: str, http: httpx.Client) -> None:
        self.token_url, self.client_id, self.client_secret, self.http = token_url, client_id, client_secret, http
        self._token: str | None = None
        self._expires = 0.0
        self._lock = threading.Lock()

    def header(self) -> dict[str, str]:
        """``Authorization: Bearer ...``."""
        with self._lock:
            if self._token is None or time.monotonic() > self._expires:
                response = self.http.post(self.token_url, data={
                    "grant_type": "client_credentials", "client_id": self.client_id, "client_secret": self.client_secret})
                if response.status_code != 200:
                    raise FhirClientError(response.status_code, "token request refused")
                body = response.json()
                self._token = str(body["access_token"])
                self._expires = time.monotonic() + float(body.get("expires_in", 3600)) - 60
            return {"Authorization": f"Bearer {self._token}"}


class FhirClient:
    """Typed helpers over FHIR REST."""

    def __init__(self, base_url: str, *, transport: httpx.BaseTransport | None = None,
                 credentials: tuple[str, str, str] | None = None, timeout_s: float = 15.0) -> None:
        self.base_url = base_url.rstrip("/")
        self.http = httpx.Client(transport=transport, timeout=httpx.Timeout(timeout_s, connect=2.0),
                                 headers={"Accept": FHIR_JSON})
        self.auth = ClientCredentials(*credentials, http=self.http) if credentials else None

    def _request(self, method: str, url: str, *, params: Iterable[tuple[str, str]] | None = None,
                 json: Any = None, headers: Mapping[str, str] | None = None) -> dict[str, Any]:
        full = url if url.startswith("http") else f"{self.base_url}/{url.lstrip('/')}"
        all_headers = {**(headers or {}), **(self.auth.header() if self.auth else {})}
        if json is not None:
            all_headers["Content-Type"] = FHIR_JSON
        try:
            response = self.http.request(method, full, params=list(params or []), json=json, headers=all_headers)
        except httpx.HTTPError as exc:
            raise FhirClientError(503, f"FHIR server unreachable ({type(exc).__name__})") from exc
        try:
            body = response.json() if response.content else {}
        except ValueError:
            body = {}
        if response.status_code >= 400:
            issues = body.get("issue", []) if isinstance(body, dict) else []
            text = "; ".join(str(i.get("diagnostics") or i.get("details", {}).get("text") or i.get("code")) for i in issues)
            raise FhirClientError(response.status_code, text or response.reason_phrase)
        return body if isinstance(body, dict) else {}

    def read(self, resource_type: str, resource_id: str) -> dict[str, Any]:
        """GET ``Type/id``."""
        return self._request("GET", f"{resource_type}/{resource_id}")

    def search(self, resource_type: str, params: Iterable[tuple[str, str]] | Mapping[str, str] = (),
               limit: int = 500) -> list[dict[str, Any]]:
        """All matches (following ``next`` links) up to ``limit``."""
        pairs = list(params.items()) if isinstance(params, Mapping) else list(params)
        if not any(k == "_count" for k, _ in pairs):
            pairs.append(("_count", str(min(limit, 100))))  # some servers (Medplum) have no default page size
        return self._collect(self._request("GET", resource_type, params=pairs), limit)

    def everything(self, patient_id: str, limit: int = 5000, since: str | None = None) -> list[dict[str, Any]]:
        """``Patient/{id}/$everything`` (only what was updated at or after ``since``, a FHIR instant, if given)."""
        params = [("_count", "1000"), *([("_since", since)] if since else [])]
        return self._collect(self._request("GET", f"Patient/{patient_id}/$everything", params=params), limit)

    def _collect(self, bundle: dict[str, Any], limit: int) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        while True:
            out += [e["resource"] for e in bundle.get("entry", []) if "resource" in e]
            nxt = next((link["url"] for link in bundle.get("link", []) if link.get("relation") == "next"), None)
            if not nxt or len(out) >= limit:
                return out[:limit]
            bundle = self._request("GET", nxt)

    def create(self, resource: dict[str, Any], if_none_exist: str | None = None) -> dict[str, Any]:
        """POST a resource (conditionally with ``If-None-Exist``)."""
        headers = {"If-None-Exist": if_none_exist} if if_none_exist else None
        return self._request("POST", str(resource["resourceType"]), json=resource, headers=headers)

    def transaction(self, entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """POST a transaction Bundle; returns the response entries."""
        bundle = self._request("POST", "", json={"resourceType": "Bundle", "type": "transaction", "entry": entries})
        return list(bundle.get("entry", []))

    def close(self) -> None:
        """Close the connection pool."""
        self.http.close()
