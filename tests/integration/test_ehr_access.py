"""Who may reach the record: ``ehr serve`` needs a bearer token beyond loopback, and the FHIR
client speaks SMART Backend Services (discovery, ``private_key_jwt``, ``system/*`` scopes) against a mock
authorization server that verifies the client's JWT with its public key."""

from __future__ import annotations

import time
from pathlib import Path
from urllib.parse import parse_qsl

import httpx
import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from starlette.testclient import TestClient

from docgemma.__main__ import main
from docgemma.config import ConfigError, Settings
from docgemma.ehr.api import FhirApi
from docgemma.ehr.client import FhirClient, FhirClientError, SmartBackendServices
from docgemma.ehr.server import check_exposure, make_app, serve
from docgemma.ehr.store import FhirStore
from docgemma.runtime import build_ehr

BASE = "https://ehr.example/fhir/R4"
TOKEN_URL = "https://auth.example/oauth2/token"

# ── ehr serve ─────────────────────────────────────────────────────────────────────────────────────────


@pytest.mark.parametrize("host", ["0.0.0.0", "192.168.1.20", "::", "ehr.clinic.example"])
def test_serve_refuses_a_non_loopback_host_without_a_token(host: str, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="DOCGEMMA_EHR_TOKEN"):
        serve(tmp_path / "r.sqlite", host=host, token=None)
    assert not (tmp_path / "r.sqlite").exists()  # refused before opening the record
    check_exposure(host, "a-long-random-token-of-32-characters")  # with a token it may start
    with pytest.raises(ConfigError, match="32 or more"):  # issue 43: a one-character token was accepted
        serve(tmp_path / "r.sqlite", host=host, token="x")


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost", "::1", "127.0.0.5"])
def test_serve_on_loopback_needs_no_token(host: str) -> None:
    check_exposure(host, None)


def test_cli_refuses_to_expose_the_record_without_a_token(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("DOCGEMMA_DATA_DIR", str(tmp_path))
    monkeypatch.delenv("DOCGEMMA_EHR_TOKEN", raising=False)
    assert main(["ehr", "serve", "--host", "0.0.0.0", "--port", "1"]) == 2
    assert "DOCGEMMA_EHR_TOKEN" in capsys.readouterr().err


def test_a_served_record_with_a_token_refuses_requests_without_it() -> None:
    store = FhirStore(":memory:")
    app = TestClient(make_app(FhirApi(store, "http://127.0.0.1/fhir"), token="s3cret-token"), base_url="http://127.0.0.1")
    patient = {"resourceType": "Patient", "name": [{"family": "Guarded"}]}
    for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": "Basic s3cret-token"}):
        assert app.post("/fhir/Patient", json=patient, headers=headers).status_code == 401
        response = app.get("/fhir/Patient", headers=headers)
        assert response.status_code == 401 and response.json()["issue"][0]["code"] == "login"
        assert response.headers["WWW-Authenticate"].startswith("Bearer")
    assert store.count() == {}
    assert app.get("/fhir/metadata").status_code == 200  # the CapabilityStatement stays public
    good = {"Authorization": "Bearer s3cret-token"}
    assert app.post("/fhir/Patient", json=patient, headers=good).status_code == 201
    assert app.get("/fhir/Patient", headers=good).json()["total"] == 1


# ── SMART Backend Services ────────────────────────────────────────────────────────────────────────────


def keypair(kind: str) -> tuple[bytes, object]:
    key: rsa.RSAPrivateKey | ec.EllipticCurvePrivateKey
    if kind == "rsa":
        key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    else:
        key = ec.generate_private_key(ec.SECP384R1())
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    return pem, key.public_key()


class MockAuthorizationServer:
    """A FHIR server with SMART discovery and a token endpoint that checks the client assertion's signature
    against the registered public key (what a real authorization server does with the client's JWKS)."""

    def __init__(self, public_key: object, client_id: str = "docgemma-backend", kid: str = "key-1") -> None:
        self.public_key, self.client_id, self.kid = public_key, client_id, kid
        self.seen: list[str] = []
        self.assertions: list[dict[str, object]] = []
        self.issued = 0

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.seen.append(f"{request.method} {request.url.path}")
        if request.url.path == "/fhir/R4/.well-known/smart-configuration":
            return httpx.Response(200, json={"token_endpoint": TOKEN_URL, "grant_types_supported": ["client_credentials"],
                                             "token_endpoint_auth_methods_supported": ["private_key_jwt"],
                                             "token_endpoint_auth_signing_alg_values_supported": ["RS384", "ES384"],
                                             "scopes_supported": ["system/*.read", "system/*.write"]})
        if str(request.url) == TOKEN_URL:
            form = dict(parse_qsl(request.content.decode()))
            assert form["grant_type"] == "client_credentials"
            assert form["scope"] == "system/*.read system/*.write"
            assert form["client_assertion_type"] == "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
            header = jwt.get_unverified_header(form["client_assertion"])
            try:
                claims = jwt.decode(form["client_assertion"], self.public_key, algorithms=["RS384", "ES384"],  # type: ignore[arg-type]
                                    audience=TOKEN_URL, issuer=self.client_id,
                                    options={"require": ["exp", "jti", "iss", "sub", "aud"]})
            except jwt.InvalidTokenError:
                return httpx.Response(401, json={"error": "invalid_client"})
            assert claims["sub"] == self.client_id and header["kid"] == self.kid
            assert 0 < int(claims["exp"]) - time.time() <= 300  # short-lived, as the spec requires
            self.assertions.append({**claims, "alg": header["alg"]})
            self.issued += 1
            return httpx.Response(200, json={"access_token": f"tok-{self.issued}", "token_type": "bearer",
                                             "expires_in": 300, "scope": form["scope"]})
        if request.headers.get("Authorization") != f"Bearer tok-{self.issued}" or not self.issued:
            return httpx.Response(401, json={"resourceType": "OperationOutcome", "issue": [{"code": "login"}]})
        return httpx.Response(200, json={"resourceType": "Patient", "id": "p1"})


@pytest.mark.parametrize(("kind", "alg"), [("rsa", "RS384"), ("ec", "ES384")])
def test_smart_backend_services_discovers_signs_and_reuses_the_token(kind: str, alg: str) -> None:
    pem, public = keypair(kind)
    server = MockAuthorizationServer(public)
    client = FhirClient(BASE, transport=httpx.MockTransport(server)).use_smart_backend(
        "docgemma-backend", pem, key_id="key-1")
    assert client.read("Patient", "p1")["id"] == "p1"
    assert client.read("Patient", "p1")["id"] == "p1"
    assert server.seen == ["GET /fhir/R4/.well-known/smart-configuration", "POST /oauth2/token",
                           "GET /fhir/R4/Patient/p1", "GET /fhir/R4/Patient/p1"]
    assert server.assertions[0]["alg"] == alg


def test_a_revoked_token_is_replaced_once() -> None:
    pem, public = keypair("ec")
    server = MockAuthorizationServer(public)
    client = FhirClient(BASE, transport=httpx.MockTransport(server)).use_smart_backend("docgemma-backend", pem, key_id="key-1")
    client.read("Patient", "p1")
    server.issued += 1  # the server forgets tok-1: the next request gets a 401, the client fetches tok-3
    assert client.read("Patient", "p1")["id"] == "p1"
    assert len(server.assertions) == 2 and server.assertions[0]["jti"] != server.assertions[1]["jti"]


def test_a_key_the_server_does_not_know_is_refused() -> None:
    pem, _ = keypair("rsa")
    _, other_public = keypair("rsa")
    client = FhirClient(BASE, transport=httpx.MockTransport(MockAuthorizationServer(other_public))).use_smart_backend(
        "docgemma-backend", pem, key_id="key-1")
    with pytest.raises(FhirClientError) as refused:
        client.read("Patient", "p1")
    assert refused.value.status == 401 and "token request refused" in refused.value.message


def test_settings_wire_smart_backend_services(tmp_path: Path) -> None:
    pem, _ = keypair("ec")
    key = tmp_path / "backend.pem"
    key.write_bytes(pem)
    settings = Settings.from_env({"DOCGEMMA_FHIR_BASE_URL": BASE, "DOCGEMMA_FHIR_CLIENT_ID": "docgemma-backend",
                                  "DOCGEMMA_FHIR_PRIVATE_KEY": str(key), "DOCGEMMA_FHIR_KEY_ID": "key-1"})
    auth = build_ehr(settings).client.auth
    assert isinstance(auth, SmartBackendServices)
    assert (auth.client_id, auth.key_id, auth.scopes, auth.algorithm) == (
        "docgemma-backend", "key-1", "system/*.read system/*.write", "ES384")
    with pytest.raises(ConfigError, match="DOCGEMMA_FHIR_PRIVATE_KEY"):
        build_ehr(Settings.from_env({"DOCGEMMA_FHIR_BASE_URL": BASE, "DOCGEMMA_FHIR_CLIENT_ID": "c",
                                     "DOCGEMMA_FHIR_PRIVATE_KEY": str(tmp_path / "missing.pem")}))


@pytest.mark.slow
def test_the_app_reads_a_token_protected_ehr_serve_over_http(tmp_path: Path) -> None:
    """``ehr serve`` with a token on a real socket, and the app configured with DOCGEMMA_FHIR_TOKEN."""
    import socket
    import threading

    import uvicorn

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    base = f"http://127.0.0.1:{port}/fhir"
    store = FhirStore(tmp_path / "served.sqlite")
    store.upsert([{"resourceType": "Patient", "id": "p1", "name": [{"family": "Remote"}]}])
    server = uvicorn.Server(uvicorn.Config(make_app(FhirApi(store, base), token="t0ken"), host="127.0.0.1", port=port,
                                           log_level="error"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.05)
    try:
        assert httpx.get(f"{base}/Patient/p1").status_code == 401
        app = build_ehr(Settings.from_env({"DOCGEMMA_FHIR_BASE_URL": base, "DOCGEMMA_FHIR_TOKEN": "t0ken"}))
        assert "Remote" in app.summary("p1").text
        wrong = build_ehr(Settings.from_env({"DOCGEMMA_FHIR_BASE_URL": base, "DOCGEMMA_FHIR_TOKEN": "guess"}))
        with pytest.raises(FhirClientError) as refused:
            wrong.client.read("Patient", "p1")
        assert refused.value.status == 401
    finally:
        server.should_exit = True
        thread.join(5)
