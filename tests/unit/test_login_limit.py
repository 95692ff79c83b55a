"""Failed sign-ins counted per client address and user name, and per address (``ui/login_limit.py``)."""

from __future__ import annotations

import asyncio
from typing import Any

from docgemma.ui.login import LoginGate
from docgemma.ui.login_limit import PER_CLIENT, PER_USER, WINDOW_S, LoginLimiter


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_the_limit_per_user_and_client_slides_with_the_window() -> None:
    clock = Clock()
    limiter = LoginLimiter(clock=clock)
    for _ in range(PER_USER):
        assert limiter.wait_s("10.0.0.1", "ada") == 0
        limiter.failed("10.0.0.1", "ada")
        clock.now += 1
    assert limiter.wait_s("10.0.0.1", "ada") == WINDOW_S - PER_USER
    assert limiter.wait_s("10.0.0.2", "ada") == 0  # another address
    assert limiter.wait_s("10.0.0.1", "bob") == 0  # another user
    clock.now += WINDOW_S - PER_USER + 0.1
    assert limiter.wait_s("10.0.0.1", "ada") == 0  # the oldest failure aged out
    limiter.failed("10.0.0.1", "ada")
    limiter.succeeded("10.0.0.1", "ada")
    assert limiter.wait_s("10.0.0.1", "ada") == 0


def test_many_user_names_from_one_address_hit_the_address_limit() -> None:
    limiter = LoginLimiter(clock=Clock())
    for i in range(PER_CLIENT):
        limiter.failed("10.0.0.1", f"user{i}")
    assert limiter.wait_s("10.0.0.1", "fresh-name") > 0
    assert limiter.wait_s("10.0.0.9", "fresh-name") == 0


def _sign_in(gate: LoginGate, form: bytes, client: str = "10.0.0.1", kind: str | None = None) -> tuple[int, bytes]:
    kind = kind or ("multipart/form-data; boundary=x" if form.startswith(b"--x") else "application/x-www-form-urlencoded")
    sent: list[dict[str, Any]] = []
    messages = [{"type": "http.request", "body": form, "more_body": False}]

    async def receive() -> dict[str, Any]:
        return messages.pop(0) if messages else {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {"type": "http", "method": "POST", "path": "/login", "client": (client, 5555),
             "headers": [(b"content-type", kind.encode())]}
    asyncio.run(gate(scope, receive, send))
    return int(sent[0]["status"]), b"".join(m.get("body", b"") for m in sent[1:])


def test_the_gate_counts_gradios_answers_and_refuses_before_gradio() -> None:
    checked: list[bytes] = []

    async def gradio(scope: Any, receive: Any, send: Any) -> None:  # Gradio's /login: 200 or 400
        body = (await receive())["body"]
        checked.append(body)
        status = 200 if b"wrong" not in body else 400
        await send({"type": "http.response.start", "status": status, "headers": []})
        await send({"type": "http.response.body", "body": b"{}"})

    gate = LoginGate(gradio, gradio_app=lambda: None, limiter=LoginLimiter(clock=Clock()))
    assert _sign_in(gate, b"username=ada&password=right")[0] == 200
    for _ in range(PER_USER):
        assert _sign_in(gate, b"username=ada&password=wrong")[0] == 400
    status, body = _sign_in(gate, b"username=ada&password=right")
    assert status == 429 and b"Too many failed sign-ins" in body and len(checked) == PER_USER + 1
    multipart = (b'--x\r\nContent-Disposition: form-data; name="username"\r\n\r\nbob\r\n--x\r\n'
                 b'Content-Disposition: form-data; name="password"\r\n\r\nright\r\n--x--\r\n')
    assert _sign_in(gate, multipart)[0] == 200  # another user, read from a multipart form


def _gradio_login(scope: Any, receive: Any, send: Any) -> Any:
    async def answer() -> None:
        body = (await receive())["body"]
        await send({"type": "http.response.start", "status": 200 if b"right" in body else 400, "headers": []})
        await send({"type": "http.response.body", "body": b"{}"})

    return answer()


def test_user_names_are_one_user_to_the_limit_whatever_their_spaces_and_case() -> None:
    """Issue 43: "doc " and " doc" counted as different users, so the limit was really the 30 per address."""
    gate = LoginGate(_gradio_login, gradio_app=lambda: None, limiter=LoginLimiter(clock=Clock()))
    spellings = [b"doc", b"doc+", b"+doc", b"DOC", b"Doc+"]
    for name in spellings[:PER_USER]:
        assert _sign_in(gate, b"username=" + name + b"&password=wrong")[0] == 400
    assert _sign_in(gate, b"username=+dOc+&password=right")[0] == 429


def test_a_json_or_malformed_sign_in_body_is_a_400_not_a_500() -> None:
    """Issue 43: a JSON body to /login was a 500 with an IndexError from ui/login.py."""
    gate = LoginGate(_gradio_login, gradio_app=lambda: None, limiter=LoginLimiter(clock=Clock()))
    assert _sign_in(gate, b'{"username": "doc", "password": "x"}', kind="application/json")[0] == 400
    assert _sign_in(gate, b"username=doc&password=right", kind="text/plain")[0] == 400
    assert _sign_in(gate, b'--x\r\nContent-Disposition: form-data; name="username"', kind="multipart/form-data")[0] == 400
    assert _sign_in(gate, b"\xff\xfe garbage", kind="")[0] == 400
