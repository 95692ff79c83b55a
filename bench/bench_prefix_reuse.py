"""Is prefix KV reuse identical to a full prefill at temperature 0, with 4-bit weights, by compute dtype?

    flock /tmp/docgemma-heavy.lock python bench/bench_prefix_reuse.py [--save]

The tiny MedGemma-shaped Gemma 3 of ``tests/tiny_gemma.py`` (real Gemma 3 tokenizer, 262,208 vocabulary rows,
sliding window of 64 tokens, random weights) is loaded the way a GPU loads MedGemma — bitsandbytes 4-bit NF4
with double quantization and the backend's skip list — here on CPU, once with bf16 compute (GPUs of compute
capability >= 8.0) and once with float32 compute (T4). For each pair of prompts sharing a prefix (the way a
turn's calls do), the second prompt's next-token logits are computed twice: after a full prefill, and after
the first prompt's cache cropped to the common prefix plus a prefill of the rest (what the backend does).
Reported: the largest absolute logit difference, whether the greedy token is the same, and over a greedy
decode of ``--tokens`` tokens through the backend (reuse on, then off), the first position where the two
decodes part (none = identical).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

OUT_JSON = ROOT / "bench" / "results" / "results_prefix_reuse.json"
MODEL_DIR = Path(tempfile.gettempdir()) / "docgemma-bench-tiny-medgemma"
CONTEXT = ("You are a clinical decision-support assistant. Patient: Maria Lopez, 67, atrial fibrillation, chronic "
           "kidney disease stage 3, on dofetilide 250 mcg twice daily and lisinopril 10 mg daily. Conversation so "
           "far: the clinician asked about QT prolongation and renal dosing. ")
PAIRS = [  # (earlier call's ending, this call's ending)
    ("Classify the request: check FDA warnings for dofetilide.", "Classify the request: what is the renal dose of dofetilide?"),
    ("Classify the request: what is the renal dose of dofetilide?", "Write one sentence for the clinician about dofetilide."),
    ("Which tool answers: interactions of dofetilide and lisinopril?",
     "Arguments for check_drug_interactions: dofetilide, lisinopril."),
    ("Summarise the chart.", "Summarise the chart, then list her last creatinine values with dates."),
]


def messages(ending: str, repeat: int) -> list[dict[str, str]]:
    return [{"role": "system", "content": CONTEXT * repeat}, {"role": "user", "content": ending}]


def load(dtype_name: str) -> Any:
    import torch
    import transformers

    from docgemma.llm.transformers_backend import TransformersLLM, quantization_config

    dtype = getattr(torch, dtype_name)
    model = transformers.AutoModelForImageTextToText.from_pretrained(
        MODEL_DIR, quantization_config=quantization_config(transformers, dtype), dtype=dtype, device_map={"": "cpu"})
    processor = transformers.AutoProcessor.from_pretrained(MODEL_DIR)
    return TransformersLLM(f"tiny-medgemma-4bit-{dtype_name}", model.eval(), processor.tokenizer, processor,
                           quantization="4-bit NF4", prefix_cache=True)


def logits_pair(llm: Any, first: list[int], second: list[int]) -> tuple[Any, Any, int]:
    """Next-token logits of ``second`` after a full prefill, and after reusing ``first``'s cropped cache."""
    import torch

    from docgemma.llm.prefix_cache import PrefixCache

    cache_full = PrefixCache(llm.model)
    with torch.no_grad():
        full = llm.model(input_ids=torch.tensor([second]), past_key_values=cache_full.take(second, False).cache,
                         use_cache=True).logits[0, -1].float()
        kept = PrefixCache(llm.model)
        reuse = kept.take(first, False)
        llm.model(input_ids=torch.tensor([first]), past_key_values=reuse.cache, use_cache=True)
        kept.keep(first, [], reuse.cache)
        again = kept.take(second, False)
        assert again.skipped is None, again.skipped
        p = again.cached_tokens
        reused = llm.model(input_ids=torch.tensor([second[p:]]), past_key_values=again.cache,
                           use_cache=True).logits[0, -1].float()
    return full, reused, p


def greedy(llm: Any, ending_a: str, ending_b: str, repeat: int, tokens: int, reuse: bool) -> list[int]:
    """The ids the backend decodes for ``ending_b`` right after a call for ``ending_a`` (reuse on or off)."""
    llm._prefix.clear()
    llm.prefix_cache = reuse
    list(llm.generate_text(messages(ending_a, repeat), temperature=0.0, max_tokens=4))
    generate, outputs = llm.model.generate, []

    def spy(**kwargs: Any) -> Any:
        outputs.append(generate(**kwargs))
        return outputs[-1]

    llm.model.generate = spy
    try:
        list(llm.generate_text(messages(ending_b, repeat), temperature=0.0, max_tokens=tokens))
    finally:
        del llm.model.generate
    assert llm.last_usage is not None and (llm.last_usage.cached_tokens > 0) == reuse
    prompt = llm.last_usage.prompt_tokens
    return [int(t) for t in outputs[0][0, prompt:]]


def run(dtype_name: str, tokens: int) -> dict[str, Any]:
    import torch

    torch.manual_seed(0)
    llm = load(dtype_name)
    rows = []
    for repeat in (1, 3):  # ~90 and ~250 prompt tokens: within and well past the 64-token sliding window
        for a, b in PAIRS:
            first = llm.model_inputs(messages(a, repeat))["input_ids"][0].tolist()
            second = llm.model_inputs(messages(b, repeat))["input_ids"][0].tolist()
            full, reused, prefix = logits_pair(llm, first, second)
            diff = (full - reused).abs()
            with_reuse = greedy(llm, a, b, repeat, tokens, True)
            without = greedy(llm, a, b, repeat, tokens, False)
            parted = next((i for i, (x, y) in enumerate(zip(with_reuse, without, strict=False)) if x != y), None)
            if parted is None and len(with_reuse) != len(without):
                parted = min(len(with_reuse), len(without))
            top2 = full.topk(2).values
            rows.append({"prompt_tokens": len(second), "cached_prefix": prefix,
                         "max_abs_logit_diff": float(diff.max()), "logit_scale": float(full.abs().max()),
                         "top1_top2_gap": float(top2[0] - top2[1]),
                         "same_next_token": int(full.argmax()) == int(reused.argmax()),
                         "decoded": len(without), "first_divergence": parted})
            print(f"{dtype_name:8s} prompt {len(second):4d} prefix {prefix:4d} max|Δlogit| {rows[-1]['max_abs_logit_diff']:.3g} "
                  f"same next {rows[-1]['same_next_token']} first divergence {parted}", file=sys.stderr)
    return {"compute_dtype": dtype_name, "pairs": rows,
            "identical_pairs": sum(r["first_divergence"] is None for r in rows),
            "max_abs_logit_diff": max(r["max_abs_logit_diff"] for r in rows)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, default=48)
    parser.add_argument("--save", action="store_true", help="write bench/results/results_prefix_reuse.json")
    args = parser.parse_args()
    if not (MODEL_DIR / "config.json").exists():
        from tests.tiny_gemma import build_tiny_medgemma

        build_tiny_medgemma(MODEL_DIR)
    start = time.time()
    results = [run(name, args.tokens) for name in ("bfloat16", "float32")]
    summary = {"command": "flock /tmp/docgemma-heavy.lock python bench/bench_prefix_reuse.py --save",
               "model": "tiny MedGemma-shaped Gemma 3, random weights, bitsandbytes 4-bit NF4 on CPU",
               "seconds": round(time.time() - start), "results": results}
    for r in results:
        print(f"{r['compute_dtype']}: {r['identical_pairs']}/{len(r['pairs'])} decodes identical, "
              f"max |Δlogit| {r['max_abs_logit_diff']:.3g}")
    if args.save:
        OUT_JSON.write_text(json.dumps(summary, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
