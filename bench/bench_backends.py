"""Backend figures on the embedded SmolLM2-135M GGUF, CPU. Run from the root:

    python bench/bench_backends.py [--json] [--reps 3] [--out bench/results/results_backends.json]

1. **Stack overhead**: the transformers backend against raw ``model.generate`` on the same prompt ids,
   decoding the same tokens (greedy; the backend's prefix cache off, so both prefill in full), for free
   text (the backend streams through a worker thread) and for constrained JSON (both with the same Outlines
   logits processor); the llama.cpp backend against raw ``Llama.create_completion`` likewise (text streamed
   by the backend; JSON under the same grammar). Ratio = backend tokens/s ÷ raw tokens/s (target ≥ 0.9).
2. **transformers vs llama.cpp on the same GGUF**: prefill tokens/s (a long prompt, one new token) and decode
   tokens/s ((time for N tokens − time for 1) ÷ (N − 1)). transformers dequantizes the Q4_1 file to float32.
3. **Constrained-JSON overhead on llama.cpp**: decode ms/token with the grammar against without it.
4. **Prefix reuse**: a turn's two calls sharing a long prefix with different endings: the second call's
   prefill time (one new token) with and without reuse, on both backends.
5. ``--server``: llama-cpp-python's OpenAI-compatible server (``python -m llama_cpp.server``, started here on
   a free loopback port; needs ``pip install 'llama-cpp-python[server]'``, or ``--server-path`` naming a
   directory holding pydantic-settings, starlette-context and python-dotenv) against the in-process backend:
   the same streamed text and the same constrained JSON (``json_object`` with the schema: that server
   ignores OpenAI's ``json_schema`` format), same threads.

Both libraries get the same thread count (``--threads``, default: the llama.cpp backend's, half the CPUs).
Timings are medians over ``--reps`` interleaved runs; the load average is recorded: the development machine
is shared, so compare ratios rather than absolutes.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from docgemma.agent.schemas import intent_schema
from docgemma.llm.base import Message
from docgemma.llm.llamacpp_backend import default_threads, load_llamacpp_llm
from docgemma.llm.transformers_backend import embedded_model_file, load_transformers_llm
from docgemma.tools.registry import default_registry

CONTEXT = ("You are a clinical decision-support assistant for a hospital physician. Active patient: Maria "
           "Lopez, 67 years old, female. Problems: atrial fibrillation (since 2019), chronic kidney disease "
           "stage 3b (eGFR 38 mL/min/1.73m2 in March), type 2 diabetes, hypertension, osteoarthritis of both "
           "knees. Medications: dofetilide 250 mcg twice daily, apixaban 2.5 mg twice daily, lisinopril 10 mg "
           "daily, metformin 500 mg twice daily, atorvastatin 40 mg nightly, paracetamol as needed. Allergies: "
           "penicillin (rash), sulfonamides (anaphylaxis). Recent results: potassium 4.1, magnesium 1.9, QTc "
           "452 ms on the last ECG, creatinine 1.6 mg/dL. Conversation so far: the clinician asked whether the "
           "dofetilide dose fits her renal function and whether any of her drugs prolong the QT interval; the "
           "assistant looked up the FDA label and summarised the renal dosing table.")
ENDINGS = ["Classify the next request: check FDA warnings for dofetilide and list boxed warnings.",
           "Write two sentences for the clinician about monitoring dofetilide in this patient."]
DECODE_TOKENS = 64
#: The cap of a constrained JSON call: the answer must close within it, or it does not validate and the bench stops.
#: SmolLM2 under the grammar wrote 74 and 166 tokens on the two endings (2026-12-03: the tool list grew, and 64 cut
#: the first); the time measured is per token, so the cap only has to be large enough.
JSON_TOKENS = 256


def turn(ending: str) -> list[Message]:
    return [Message(role="system", content=CONTEXT), Message(role="user", content=ending)]


def median_time(fn: Callable[[], Any], reps: int) -> float:
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def interleaved(fns: dict[str, Callable[[], Any]], reps: int) -> dict[str, float]:
    """Median seconds of each function, runs interleaved so a load spike hits all of them alike."""
    times: dict[str, list[float]] = {k: [] for k in fns}
    for _ in range(reps):
        for key, fn in fns.items():
            start = time.perf_counter()
            fn()
            times[key].append(time.perf_counter() - start)
    return {k: statistics.median(v) for k, v in times.items()}


def transformers_overhead(tf: Any, reps: int) -> dict[str, Any]:
    import transformers

    tf.prefix_cache = False
    tf.clinically_meaningful = True  # plain greedy decoding on both sides: no repetition settings
    messages = turn(ENDINGS[1])
    inputs = tf.model_inputs(messages)
    schema = intent_schema(default_registry().names)
    tf.prepare_schemas([schema])  # built before timing (once per schema)

    list(tf.generate_text(messages, temperature=0.0, max_tokens=DECODE_TOKENS))
    text_tokens = tf.last_usage.decoded_tokens
    tf.generate_json(messages, schema, temperature=0.0, max_tokens=JSON_TOKENS)
    json_tokens = tf.last_usage.decoded_tokens

    def raw_text() -> None:
        tf.model.generate(**inputs, max_new_tokens=text_tokens, do_sample=False)

    def raw_json() -> None:
        tf.model.generate(**inputs, max_new_tokens=json_tokens, do_sample=False,
                          logits_processor=transformers.LogitsProcessorList([tf.constraints.processor(schema)]))

    times = interleaved({
        "backend_text": lambda: list(tf.generate_text(messages, temperature=0.0, max_tokens=text_tokens)),
        "raw_text": raw_text,
        "backend_json": lambda: tf.generate_json(messages, schema, temperature=0.0, max_tokens=json_tokens),
        "raw_json": raw_json,
    }, reps)
    tf.prefix_cache = True
    return {"prompt_tokens": int(inputs["input_ids"].shape[-1]), "text_tokens": text_tokens,
            "json_tokens": json_tokens, **_ratios(times, text_tokens, json_tokens)}


def llamacpp_overhead(lc: Any, reps: int) -> dict[str, Any]:
    lc.prefix_cache = False
    lc.clinically_meaningful = True
    messages = turn(ENDINGS[1])
    ids = lc.prompt_ids(messages)
    schema = intent_schema(default_registry().names)
    grammar = lc.grammar(schema)
    list(lc.generate_text(messages, temperature=0.0, max_tokens=DECODE_TOKENS))
    text_tokens = lc.last_usage.decoded_tokens
    lc.generate_json(messages, schema, temperature=0.0, max_tokens=JSON_TOKENS)
    json_tokens = lc.last_usage.decoded_tokens

    def raw(max_tokens: int, grammar: Any = None) -> None:
        lc.llama.reset()
        lc.llama.create_completion(ids, max_tokens=max_tokens, temperature=0.0, repeat_penalty=1.0, grammar=grammar)

    times = interleaved({
        "backend_text": lambda: list(lc.generate_text(messages, temperature=0.0, max_tokens=text_tokens)),
        "raw_text": lambda: raw(text_tokens),
        "backend_json": lambda: lc.generate_json(messages, schema, temperature=0.0, max_tokens=json_tokens),
        "raw_json": lambda: raw(json_tokens, grammar),
    }, reps)
    lc.prefix_cache = True
    return {"prompt_tokens": len(ids), "text_tokens": text_tokens, "json_tokens": json_tokens,
            **_ratios(times, text_tokens, json_tokens)}


def _ratios(times: dict[str, float], text_tokens: int, json_tokens: int) -> dict[str, Any]:
    out: dict[str, Any] = {k: round(v, 3) for k, v in times.items()}
    out["text_ratio_backend_over_raw_tokens_per_s"] = round(times["raw_text"] / times["backend_text"], 3)
    out["json_ratio_backend_over_raw_tokens_per_s"] = round(times["raw_json"] / times["backend_json"], 3)
    out["backend_text_tokens_per_s"] = round(text_tokens / times["backend_text"], 1)
    out["backend_json_tokens_per_s"] = round(json_tokens / times["backend_json"], 1)
    return out


def speeds(tf: Any, lc: Any, reps: int) -> dict[str, Any]:
    """Prefill and decode tokens/s of both libraries on the same prompt (no prefix reuse)."""
    inputs = tf.model_inputs(turn(ENDINGS[1]))
    ids = lc.prompt_ids(turn(ENDINGS[1]))

    def tf_run(n: int) -> Callable[[], Any]:
        return lambda: tf.model.generate(**inputs, max_new_tokens=n, min_new_tokens=n, do_sample=False)

    def lc_run(n: int) -> Callable[[], Any]:
        return lambda: raw_tokens(lc.llama, ids, n)

    times = interleaved({"tf_1": tf_run(1), "tf_n": tf_run(DECODE_TOKENS), "lc_1": lc_run(1),
                         "lc_n": lc_run(DECODE_TOKENS)}, reps)
    n = DECODE_TOKENS - 1
    result = {"prompt_tokens": len(ids), "decode_tokens": DECODE_TOKENS,
              "transformers_prefill_tokens_per_s": round(len(ids) / times["tf_1"], 1),
              "llamacpp_prefill_tokens_per_s": round(len(ids) / times["lc_1"], 1),
              "transformers_decode_tokens_per_s": round(n / (times["tf_n"] - times["tf_1"]), 1),
              "llamacpp_decode_tokens_per_s": round(n / (times["lc_n"] - times["lc_1"]), 1)}
    result["llamacpp_over_transformers_decode"] = round(
        result["llamacpp_decode_tokens_per_s"] / result["transformers_decode_tokens_per_s"], 2)
    result["llamacpp_over_transformers_prefill"] = round(
        result["llamacpp_prefill_tokens_per_s"] / result["transformers_prefill_tokens_per_s"], 2)
    return result


def raw_tokens(llama: Any, ids: list[int], n: int, grammar: Any = None) -> None:
    """Exactly ``n`` greedy tokens from the raw token loop (``Llama.generate`` does not stop at end of turn)."""
    llama.reset()
    for i, _ in enumerate(llama.generate(ids, temp=0.0, grammar=grammar)):
        if i + 1 == n:
            break


def grammar_overhead(lc: Any, reps: int) -> dict[str, Any]:
    """Decode ms/token with and without the grammar (the JSON prompt; long free-text field, so both run N)."""
    ids = lc.prompt_ids(turn(ENDINGS[0]))
    schema = intent_schema(default_registry().names)
    grammar = lc.grammar(schema)

    def run(n: int, with_grammar: bool) -> Callable[[], Any]:
        return lambda: raw_tokens(lc.llama, ids, n, grammar if with_grammar else None)

    # A grammar call may finish before N tokens (the JSON closes): count what it decoded.
    lc.prefix_cache = False
    lc.generate_json(turn(ENDINGS[0]), schema, temperature=0.0, max_tokens=JSON_TOKENS)
    n = lc.last_usage.decoded_tokens - 1  # without the end-of-turn token
    lc.prefix_cache = True
    times = interleaved({"grammar_1": run(1, True), "grammar_n": run(n, True), "free_1": run(1, False),
                         "free_n": run(n, False)}, reps)
    per_token = {k: (times[f"{k}_n"] - times[f"{k}_1"]) / max(n - 1, 1) * 1000 for k in ("grammar", "free")}
    return {"tokens": n, "grammar_ms_per_token": round(per_token["grammar"], 2),
            "free_ms_per_token": round(per_token["free"], 2),
            "grammar_overhead_ratio": round(per_token["grammar"] / per_token["free"], 2)}


def prefix_reuse(tf: Any, lc: Any, reps: int) -> dict[str, Any]:
    """The second call of a turn (shared prefix, new ending): prefill seconds with and without reuse."""
    first, second = turn(ENDINGS[0]), turn(ENDINGS[1])
    out: dict[str, Any] = {}
    for name, llm in (("transformers", tf), ("llamacpp", lc)):
        def call(reuse: bool, llm: Any = llm) -> Callable[[], Any]:
            def go() -> None:
                llm.prefix_cache = reuse
                list(llm.generate_text(first, temperature=0.0, max_tokens=1))
                list(llm.generate_text(second, temperature=0.0, max_tokens=1))
            return go

        seconds: dict[str, list[float]] = {"reuse": [], "full": []}
        cached = 0
        for _ in range(reps):
            for key, reuse in (("reuse", True), ("full", False)):
                call(reuse)()
                seconds[key].append(llm.last_usage.seconds)
                if reuse:
                    cached = llm.last_usage.cached_tokens
        llm.prefix_cache = True
        full, reused = statistics.median(seconds["full"]), statistics.median(seconds["reuse"])
        out[name] = {"prompt_tokens": llm.last_usage.prompt_tokens, "cached_tokens": cached,
                     "second_call_s_full_prefill": round(full, 3), "second_call_s_with_reuse": round(reused, 3),
                     "speedup": round(full / reused, 2)}
    return out


def server_vs_in_process(lc: Any, threads: int, reps: int, extra_path: str | None) -> dict[str, Any]:
    """Same calls through llama_cpp.server (HTTP, OpenAI-compatible) and in process."""
    import socket
    import subprocess
    import tempfile

    import httpx

    from docgemma.llm.openai_backend import OpenAICompatLLM

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    env = dict(os.environ)
    if extra_path:
        env["PYTHONPATH"] = os.pathsep.join(p for p in (extra_path, env.get("PYTHONPATH")) if p)
    # A file, not a pipe: llama.cpp's load log would fill a pipe and block the server.
    with tempfile.TemporaryFile() as log:
        server = subprocess.Popen(
            [sys.executable, "-m", "llama_cpp.server", "--model", str(embedded_model_file()), "--n_ctx", "8192",
             "--n_threads", str(threads), "--n_threads_batch", str(threads), "--host", "127.0.0.1", "--port", str(port)],
            env=env, stdout=subprocess.DEVNULL, stderr=log)
        base = f"http://127.0.0.1:{port}/v1"
        try:
            for _ in range(120):
                try:
                    if httpx.get(f"{base}/models", timeout=1).status_code == 200:
                        break
                except httpx.HTTPError:
                    time.sleep(0.5)
            else:
                log.seek(0)
                raise RuntimeError("llama_cpp.server did not start: " + log.read()[-2000:].decode(errors="replace"))
            class Remote(OpenAICompatLLM):
                def _payload(self, *args: Any) -> dict[str, Any]:
                    # llama_cpp.server's default repeat penalty is 1.1; in process decodes without one
                    return {**super()._payload(*args), "repeat_penalty": 1.0}

            remote = Remote(base, "smollm2")
            messages = turn(ENDINGS[1])
            schema = intent_schema(default_registry().names)
            # Both keep their prompt cache (the server always does): the same prompt is then served from it on
            # both sides, and the difference is the per-call cost of HTTP and the server.
            lc.clinically_meaningful = True
            list(lc.generate_text(messages, temperature=0.0, max_tokens=DECODE_TOKENS))
            tokens = lc.last_usage.decoded_tokens

            def remote_json() -> None:
                payload = remote._payload(messages, 0.0, JSON_TOKENS, ())
                payload["response_format"] = {"type": "json_object", "schema": schema.model_json_schema()}
                schema.model_validate_json(remote._post(payload)["choices"][0]["message"]["content"])

            list(remote.generate_text(messages, temperature=0.0, max_tokens=tokens))  # warm-up
            times = interleaved({
                "server_text": lambda: list(remote.generate_text(messages, temperature=0.0, max_tokens=tokens)),
                "in_process_text": lambda: list(lc.generate_text(messages, temperature=0.0, max_tokens=tokens)),
                "server_json": remote_json,
                "in_process_json": lambda: lc.generate_json(messages, schema, temperature=0.0, max_tokens=JSON_TOKENS),
            }, reps)
            remote_usage = remote.last_usage
        finally:
            server.terminate()
            server.wait(timeout=30)
    return {"text_tokens": tokens, **{k: round(v, 3) for k, v in times.items()},
            "text_ratio_in_process_over_server_tokens_per_s": round(times["server_text"] / times["in_process_text"], 3),
            "json_ratio_in_process_over_server_tokens_per_s": round(times["server_json"] / times["in_process_json"], 3),
            "server_stream_reports_usage": remote_usage is not None}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--out", help="also write the results to this file")
    parser.add_argument("--threads", type=int, default=default_threads())
    parser.add_argument("--server", action="store_true", help="also measure llama_cpp.server (see docstring)")
    parser.add_argument("--server-path", help="directory with the server's extra packages (PYTHONPATH)")
    args = parser.parse_args()
    import torch

    threads = args.threads
    torch.set_num_threads(threads)
    tf = load_transformers_llm(str(embedded_model_file()))
    lc = load_llamacpp_llm(n_threads=threads)
    results: dict[str, Any] = {
        "model": str(embedded_model_file().name), "threads": threads, "cpus": os.cpu_count(),
        "load_average_before": [round(x, 2) for x in os.getloadavg()],
        "transformers_backend_vs_raw_generate": transformers_overhead(tf, args.reps),
        "llamacpp_backend_vs_raw_llama": llamacpp_overhead(lc, args.reps),
        "transformers_vs_llamacpp_same_gguf": speeds(tf, lc, args.reps),
        "llamacpp_constrained_json_overhead": grammar_overhead(lc, args.reps),
        "prefix_reuse_second_call": prefix_reuse(tf, lc, args.reps),
    }
    if args.server:
        results["llamacpp_server_vs_in_process"] = server_vs_in_process(lc, threads, args.reps, args.server_path)
    results["load_average_after"] = [round(x, 2) for x in os.getloadavg()]
    text = json.dumps(results, indent=2)
    if args.out:
        Path(args.out).write_text(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
