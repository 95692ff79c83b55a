"""FHIR R4 REST client: the embedded record (in-process transport) or any R4 server (Medplum, HAPI).

Authorization, when the server needs it: OAuth2 client credentials with a client secret (Medplum;
``DOCGEMMA_FHIR_CLIENT_ID`` / ``_SECRET`` / ``_TOKEN_URL``), SMART Backend Services (the token endpoint
discovered from ``.well-known/smart-configuration``, the client authenticated by a JWT signed with its private
key, ``private_key_jwt``; ``DOCGEMMA_FHIR_CLIENT_ID`` / ``_PRIVATE_KEY`` / ``_KEY_ID``), or a fixed bearer token
(``DOCGEMMA_FHIR_TOKEN``). Tokens are cached until shortly before they expire, and fetched again once if the
server answers 401.
Errors are :class:`FhirClientError` with the status and the server's OperationOutcome text.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Protocol

import httpx

from docgemma.http_client import http_client

FHIR_JSON = "application/fhir+json"


class FhirClientError(Exception):
    """A failed FHIR interaction."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(f"HTTP {status}: {message}")
        self.status = status
        self.message = message


class TokenSource(Protocol):
    """Something that gives the ``Authorization`` header of the next request."""

    def header(self) -> dict[str, str]:
        """``{"Authorization": "Bearer ..."}``."""
        ...

    def invalidate(self) -> None:
        """Forget the cached token (the server refused it)."""
        ...


class BearerToken:
    """A fixed bearer token (``DOCGEMMA_FHIR_TOKEN``: e.g. the token of ``docgemma ehr serve`` on another host)."""

    def __init__(self, token: str) -> None:
        self.token = token

    def header(self) -> dict[str, str]:
        """``Authorization: Bearer <token>``."""
        return {"Authorization": f"Bearer {self.token}"}

    def invalidate(self) -> None:
        """Nothing to refresh: a refused fixed token is refused again (the 401 is reported)."""


class _CachedToken:
    """An OAuth2 access token from a token endpoint, cached until a minute before it expires."""

    def __init__(self, http: httpx.Client) -> None:
        self.http = http
        self._token: str | None = None
        self._expires = 0.0
        self._lock = threading.Lock()

    def _token_request(self) -> tuple[str, dict[str, str]]:
        """(token endpoint, form fields)."""
        raise NotImplementedError

    def header(self) -> dict[str, str]:
        """``Authorization: Bearer ...``."""
        with self._lock:
            if self._token is None or time.monotonic() > self._expires:
                url, form = self._token_request()
                try:
                    response = self.http.post(url, data=form)
                except httpx.HTTPError as exc:
                    raise FhirClientError(503, f"token endpoint unreachable ({type(exc).__name__})") from exc
                if response.status_code != 200:
                    raise FhirClientError(response.status_code, "token request refused")
                body = response.json()
                self._token = str(body["access_token"])
                self._expires = time.monotonic() + float(body.get("expires_in", 3600)) - 60
            return {"Authorization": f"Bearer {self._token}"}

    def invalidate(self) -> None:
        """Forget the cached token."""
        with self._lock:
            self._token = None


class ClientCredentials(_CachedToken):
    """OAuth2 client credentials with a client secret (Medplum)."""

    def __init__(self, token_url: str, client_id: str, client_secret: str, http: httpx.Client) -> None:
        super().__init__(http)
        self.token_url, self.client_id, self.client_secret = token_url, client_id, client_secret

    def _token_request(self) -> tuple[str, dict[str, str]]:
        return self.token_url, {"grant_type": "client_credentials", "client_id": self.client_id,
                                "client_secret": self.client_secret}


class SmartBackendServices(_CachedToken):
    """SMART Backend Services (HL7 SMART App Launch 2, "backend services"): the client authenticates with a
    short-lived JWT signed by its private key (``private_key_jwt``: RS384 for an RSA key, ES384 for an EC
    P-384 key) and asks for ``system/*`` scopes. The token endpoint comes from the server's
    ``.well-known/smart-configuration`` unless given."""

    ASSERTION_TYPE = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"

    def __init__(self, fhir_base_url: str, client_id: str, private_key_pem: bytes, http: httpx.Client, *,
                 key_id: str | None = None, scopes: str = "system/*.read system/*.write",
                 token_url: str | None = None) -> None:
        super().__init__(http)
        try:
            from cryptography.hazmat.primitives.asymmetric import ec, rsa
            from cryptography.hazmat.primitives.serialization import load_pem_private_key
        except ImportError as exc:
            raise ImportError("SMART Backend Services needs: pip install 'PyJWT[crypto]'") from exc
        self.fhir_base_url, self.client_id, self.key_id, self.scopes = fhir_base_url.rstrip("/"), client_id, key_id, scopes
        self.token_url = token_url
        key = load_pem_private_key(private_key_pem, password=None)
        if isinstance(key, rsa.RSAPrivateKey):
            self.algorithm = "RS384"
        elif isinstance(key, ec.EllipticCurvePrivateKey) and isinstance(key.curve, ec.SECP384R1):
            self.algorithm = "ES384"
        else:
            raise ValueError("SMART Backend Services keys are RSA (RS384) or EC P-384 (ES384)")
        self.key: rsa.RSAPrivateKey | ec.EllipticCurvePrivateKey = key

    def discover(self) -> str:
        """The token endpoint from ``{base}/.well-known/smart-configuration``."""
        url = f"{self.fhir_base_url}/.well-known/smart-configuration"
        try:
            response = self.http.get(url, headers={"Accept": "application/json"})
        except httpx.HTTPError as exc:
            raise FhirClientError(503, f"SMART configuration unreachable ({type(exc).__name__})") from exc
        if response.status_code != 200:
            raise FhirClientError(response.status_code, "no SMART configuration at .well-known/smart-configuration")
        config = response.json()
        methods = config.get("token_endpoint_auth_methods_supported")
        if methods is not None and "private_key_jwt" not in methods:
            raise FhirClientError(400, "the server's authorization does not accept private_key_jwt")
        if not config.get("token_endpoint"):
            raise FhirClientError(400, "the SMART configuration names no token_endpoint")
        return str(config["token_endpoint"])

    def assertion(self, token_url: str) -> str:
        """The signed client assertion: iss = sub = client id, aud = token endpoint, 5 minutes, unique jti."""
        import jwt

        issued = int(time.time())
        claims = {"iss": self.client_id, "sub": self.client_id, "aud": token_url, "iat": issued, "exp": issued + 300,
                  "jti": uuid.uuid4().hex}
        headers = {"typ": "JWT", **({"kid": self.key_id} if self.key_id else {})}
        return jwt.encode(claims, self.key, algorithm=self.algorithm, headers=headers)

    def _token_request(self) -> tuple[str, dict[str, str]]:
        if self.token_url is None:
            self.token_url = self.discover()
        return self.token_url, {"grant_type": "client_credentials", "scope": self.scopes,
                                "client_assertion_type": self.ASSERTION_TYPE,
                                "client_assertion": self.assertion(self.token_url)}


class FhirClient:
    """Typed helpers over FHIR REST."""

    def __init__(self, base_url: str, *, transport: httpx.BaseTransport | None = None,
                 credentials: tuple[str, str, str] | None = None, timeout_s: float = 15.0) -> None:
        self.base_url = base_url.rstrip("/")
        self.http = http_client(timeout_s, 2.0, transport=transport, headers={"Accept": FHIR_JSON})
        self.auth: TokenSource | None = ClientCredentials(*credentials, http=self.http) if credentials else None
        #: Called with every successful response body (a resource or a Bundle): the app's log redaction learns
        #: each patient the record sends (``ops/logsafe.watch``).
        self.observers: list[Callable[[dict[str, Any]], None]] = []

    def use_smart_backend(self, client_id: str, private_key_pem: bytes, *, key_id: str | None = None,
                          scopes: str = "system/*.read system/*.write", token_url: str | None = None) -> FhirClient:
        """Authorize with SMART Backend Services (``private_key_jwt``) from now on; returns the client."""
        self.auth = SmartBackendServices(self.base_url, client_id, private_key_pem, self.http, key_id=key_id,
                                         scopes=scopes, token_url=token_url)
        return self

    def _request(self, method: str, url: str, *, params: Iterable[tuple[str, str]] | None = None,
                 json: Any = None, headers: Mapping[str, str] | None = None) -> dict[str, Any]:
        full = url if url.startswith("http") else f"{self.base_url}/{url.lstrip('/')}"
        for attempt in (1, 2):
            all_headers = {**(headers or {}), **(self.auth.header() if self.auth else {})}
            if json is not None:
                all_headers["Content-Type"] = FHIR_JSON
            try:
                response = self.http.request(method, full, params=list(params or []), json=json, headers=all_headers)
            except httpx.HTTPError as exc:
                raise FhirClientError(503, f"FHIR server unreachable ({type(exc).__name__})") from exc
            if response.status_code != 401 or self.auth is None or attempt == 2:
                break
            self.auth.invalidate()  # expired or revoked before its expiry: one new token, one retry
        try:
            body = response.json() if response.content else {}
        except ValueError:
            body = {}
        if response.status_code >= 400:
            issues = body.get("issue", []) if isinstance(body, dict) else []
            text = "; ".join(str(i.get("diagnostics") or i.get("details", {}).get("text") or i.get("code")) for i in issues)
            raise FhirClientError(response.status_code, text or response.reason_phrase)
        body = body if isinstance(body, dict) else {}
        for observe in self.observers:
            observe(body)
        return body

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
