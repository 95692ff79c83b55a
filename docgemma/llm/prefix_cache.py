"""Prefix KV-cache reuse for the transformers backend: the calls of a turn share a long prompt prefix.

The agent's nodes send prompts that begin alike (role, patient context, conversation so far). After each
call the backend keeps that call's token ids and its KV cache; the next call crops the cache to the longest
common prefix of the two id sequences and lets ``model.generate`` prefill only the rest.

Reuse is not bit-identical to a full prefill: the prefix's keys and values were computed in a prefill of a
different length, and matrix kernels round differently for different shapes. Measured on a tiny Gemma 3 in
4-bit NF4 (``bench/bench_prefix_reuse.py``, ``bench/results/results_prefix_reuse.json``): the next-token logits
differ by at most 4e-7 with float32 compute, and 48-token greedy decodes were identical in 8 of 8 prompt
pairs; with bf16 compute by up to 7e-3, and one decode in 8 parted from the full prefill's (at token 47).
In float32 (CPU, T4) the outputs at temperature 0 are the same as without reuse
(tests/integration/test_prefix_cache.py compares them); with bf16 the backend leaves reuse off unless asked
(``DOCGEMMA_PREFIX_CACHE=on``): an answer must not depend on which call came before it.

Reuse is skipped, and the call prefilled in full, when:

* either call has image inputs (``pixel_values``): image tokens are embedded from the pixels and, on
  Gemma 3, attend to each other in both directions, so ids alone do not say two prefixes are the same;
* a cache layer is of a type this module cannot crop exactly (anything but transformers'
  ``DynamicLayer`` and ``DynamicSlidingWindowLayer``: static, quantized, linear-attention caches);
* a sliding-window layer (Gemma 3 has them) no longer holds every position of the prefix.

Sliding-window layers are created recording their past (``activate_past_recording``: they keep every
position, and attend over the window only). Their own ``crop`` would then keep just the last window, and a
later call whose common prefix is shorter could not be served; so this module truncates them to the prefix
itself and they go on holding every position (memory: as a full-attention layer, for the prompt's length).

Not thread-safe on its own: the backend calls it under its model lock.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any


def unsupported() -> str | None:
    """Why the installed transformers cannot serve a kept prefix exactly (None when it can).

    Sliding-window layers must record their past (``DynamicSlidingWindowLayer.activate_past_recording``,
    transformers 5.15 and later) and, while recording, hand attention only the window its mask is sized for
    (5.18 and later; 5.15-5.17 return every recorded position and the sliding-window mask no longer matches:
    "size of tensor a (320) must match the size of tensor b (64)"). Checked by behaviour, on a 4-token window.
    """
    import torch
    import transformers
    from transformers.cache_utils import DynamicSlidingWindowLayer

    version = transformers.__version__
    if not hasattr(DynamicSlidingWindowLayer, "activate_past_recording"):
        return f"transformers {version} has no DynamicSlidingWindowLayer.activate_past_recording (5.18 or later works)"
    layer = DynamicSlidingWindowLayer(sliding_window=4)
    layer.activate_past_recording()
    states = torch.zeros(1, 1, 6, 2)
    layer.update(states, states)
    step = torch.zeros(1, 1, 1, 2)
    keys, _ = layer.update(step, step)
    if keys.shape[-2] > layer.sliding_window:  # what the mask advertises: window - 1 past positions + the new one
        return (f"transformers {version}'s recording sliding-window layers return {keys.shape[-2]} positions to a "
                f"{layer.sliding_window}-position mask (5.18 or later works)")
    return None


@dataclass
class Reuse:
    """What :meth:`PrefixCache.take` hands to one call: the cache for ``generate`` and what it holds."""

    cache: Any | None
    cached_tokens: int
    #: Why nothing was reused (``None`` when a prefix was): shown in debug logs and pinned by tests.
    skipped: str | None


def common_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    """Length of the longest common prefix of two token id sequences (what a prefix cache can serve)."""
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


class PrefixCache:
    """The previous call's token ids and KV cache, handed to the next call cropped to their common prefix."""

    def __init__(self, model: Any) -> None:
        self.model = model
        self._ids: list[int] = []
        self._cache: Any | None = None

    def clear(self) -> None:
        """Forget the kept cache (the next call prefills in full)."""
        self._ids, self._cache = [], None

    def take(self, ids: list[int], has_pixels: bool) -> Reuse:
        """The cache for a call whose prompt is ``ids``; the kept one is removed (the call owns it now).

        A call with images gets no cache (``generate`` makes its own, which is not kept afterwards).
        """
        kept_ids, kept = self._ids, self._cache
        self.clear()
        if has_pixels:
            return Reuse(None, 0, "image inputs")
        if kept is None:
            return Reuse(self._new_cache(), 0, "no kept cache")
        # At least one prompt token must be prefilled: generate needs the logits of the last one.
        prefix = min(common_prefix(kept_ids, ids), len(ids) - 1)
        if prefix <= 0:
            return Reuse(self._new_cache(), 0, "no common prefix")
        reason = _crop_refusal(kept, prefix)
        if reason is not None:
            return Reuse(self._new_cache(), 0, reason)
        _crop(kept, prefix)
        return Reuse(kept, prefix, None)

    def keep(self, prompt_ids: list[int], new_ids: list[int], cache: Any | None) -> None:
        """After a finished call: keep its cache and the ids the cache holds (the last token is never fed)."""
        if cache is None:
            return
        ids = prompt_ids + new_ids
        held = cache.get_seq_length()
        if held > len(ids):  # cannot happen with generate; refuse rather than keep a cache we cannot name
            return
        self._ids, self._cache = ids[:held], cache

    def _new_cache(self) -> Any:
        from transformers import DynamicCache
        from transformers.cache_utils import DynamicSlidingWindowLayer

        cache = DynamicCache(config=self.model.config)
        for layer in cache.layers:
            if isinstance(layer, DynamicSlidingWindowLayer):
                layer.activate_past_recording()  # keep every position until a crop (see module docstring)
        return cache


def _crop_refusal(cache: Any, prefix: int) -> str | None:
    """Why ``cache`` cannot be cropped exactly to ``prefix`` tokens, or None when it can."""
    from transformers.cache_utils import DynamicLayer, DynamicSlidingWindowLayer

    for layer in cache.layers:
        kind = type(layer)
        if kind is DynamicLayer:
            continue
        if kind is not DynamicSlidingWindowLayer:
            return f"cache layer {kind.__name__} cannot be cropped"
        if layer.is_initialized and (not layer.record_past or layer.keys.shape[-2] != layer.cumulative_length):
            return "sliding window no longer holds the prefix"
    return None


def _crop(cache: Any, prefix: int) -> None:
    """Cut every layer to its first ``prefix`` positions (checked possible by :func:`_crop_refusal`)."""
    from transformers.cache_utils import DynamicSlidingWindowLayer

    for layer in cache.layers:
        if not layer.is_initialized:
            continue
        if isinstance(layer, DynamicSlidingWindowLayer):
            keys, values = layer.keys, layer.values
            if keys is None or values is None:  # initialized layers hold tensors; typed Optional upstream
                continue
            # Not layer.crop: that would also drop the positions before the last window (module docstring).
            layer.keys, layer.values = keys[..., :prefix, :], values[..., :prefix, :]
            layer.cumulative_length = prefix
        else:
            layer.crop(prefix - layer.get_seq_length())  # a negative count: drop the tokens after the prefix
