"""The learned router: which action a clinician's turn asks for, by a small linear model (pure numpy, no download).

A turn is read as hashed features — character n-grams (2 to 5, within word boundaries), word unigrams and
bigrams, and a few context flags the turn's state gives (a patient active, an image attached, a patient named,
how many drugs) — and a multinomial logistic regression gives a probability per label: ``"DIRECT"`` or the name
of the first tool, the labels ``bench/bench_rules.py`` uses. Its probabilities are calibrated on held-apart
template families by temperature scaling, and :attr:`RouterModel.threshold` (chosen on them too) is the
probability above which its agreement with the rules makes a decision sure (:mod:`docgemma.agent.decision`).

The weights are shipped in the package (``router_weights.npz``); ``python -m docgemma.eval.train_router``
rebuilds them from the repository (the generated corpus, ``docgemma/eval/router_corpus.py``). Reading a turn
takes well under a millisecond once the weights are loaded.
"""

from __future__ import annotations

import itertools
import re
import threading
import zlib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

WEIGHTS = Path(__file__).with_name("router_weights.npz")
#: Hashed feature space: 2**15 buckets (about 1 MB of weights in float16 for 14 labels).
DIMENSIONS = 1 << 15
_WORD_RE = re.compile(r"[a-z0-9]+(?:['\-/+][a-z0-9]+)*")


def _bucket(feature: str) -> int:
    """A stable bucket (Python's own hash is salted per process, so it cannot be used for saved weights)."""
    return zlib.crc32(feature.encode("utf-8")) % DIMENSIONS


def feature_names(text: str, flags: Iterable[str] = ()) -> list[str]:
    """The features of a turn, as strings (hashed by :func:`features`)."""
    words = _WORD_RE.findall(text.lower())
    out = [f"w:{w}" for w in words]
    out += [f"b:{a} {b}" for a, b in itertools.pairwise(words)]
    out += [f"b:<s> {words[0]}"] if words else []
    for word in words:
        padded = f" {word} "
        for n in range(2, 6):
            out += [f"c:{padded[i:i + n]}" for i in range(max(1, len(padded) - n + 1))]
    out += [f"f:{flag}" for flag in flags]
    return out


def features(text: str, flags: Iterable[str] = ()) -> tuple[np.ndarray, np.ndarray]:
    """(bucket indices, values): each distinct bucket once, counts scaled to unit length."""
    buckets = np.fromiter((_bucket(f) for f in feature_names(text, flags)), dtype=np.int64)
    if buckets.size == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
    index, counts = np.unique(buckets, return_counts=True)
    values = counts.astype(np.float32)
    return index, values / np.float32(np.linalg.norm(values))


@dataclass(frozen=True)
class RouterModel:
    """Weights (``DIMENSIONS`` × labels), bias, the calibration temperature and the sure-threshold."""

    labels: tuple[str, ...]
    weights: np.ndarray
    bias: np.ndarray
    temperature: float = 1.0
    threshold: float = 0.9

    def probabilities(self, text: str, flags: Iterable[str] = ()) -> dict[str, float]:
        """Every label's calibrated probability for the turn, highest first."""
        index, values = features(text, flags)
        logits = (values @ self.weights[index].astype(np.float32) + self.bias) / self.temperature
        exp = np.exp(logits - logits.max())
        probs = exp / exp.sum()
        order = np.argsort(-probs, kind="stable")
        return {self.labels[i]: float(probs[i]) for i in order}

    def ranked(self, text: str, flags: Iterable[str] = (), k: int = 3) -> list[tuple[str, float]]:
        """The ``k`` most probable labels with their probabilities."""
        return list(self.probabilities(text, flags).items())[:k]

    def save(self, path: Path = WEIGHTS) -> None:
        """Write the weights (float16: the predictions do not depend on the lost precision; a test checks it)."""
        np.savez_compressed(path, labels=np.array(self.labels), weights=self.weights.astype(np.float16),
                            bias=self.bias.astype(np.float32),
                            calibration=np.array([self.temperature, self.threshold], dtype=np.float64))


def load(path: Path = WEIGHTS) -> RouterModel:
    """The model saved at ``path``."""
    with np.load(path, allow_pickle=False) as data:
        temperature, threshold = (float(v) for v in data["calibration"])
        return RouterModel(labels=tuple(str(x) for x in data["labels"]), weights=data["weights"],
                           bias=data["bias"], temperature=temperature, threshold=threshold)


_LOCK = threading.Lock()
_SHIPPED: list[RouterModel] = []


def shipped() -> RouterModel:
    """The shipped model, loaded once per process (read-only, shared by all sessions)."""
    with _LOCK:
        if not _SHIPPED:
            _SHIPPED.append(load())
        return _SHIPPED[0]
