"""Record figures (issue 4): summary compile time for the largest shared Synthea patient, summary tokens per
demo patient (Gemma tokenizer, when cached by the budget test), search p50/p95 on the embedded server over HTTP.

    python bench/bench_ehr.py
"""

from __future__ import annotations

import json
import socket
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from docgemma.ehr.api import FhirApi
from docgemma.ehr.client import FhirClient
from docgemma.ehr.load import load
from docgemma.ehr.service import Ehr
from docgemma.ehr.store import FhirStore
from docgemma.ehr.summary import compile_summary

DATA = Path(__file__).resolve().parents[1] / "data"
TOKENIZER = Path.home() / ".cache" / "docgemma" / "gemma3-tokenizer"


def percentiles(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    return {"p50_ms": round(statistics.median(ordered), 2), "p95_ms": round(ordered[int(len(ordered) * 0.95) - 1], 2)}


def main() -> int:
    figures: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "record.sqlite"
        ehr = Ehr.embedded(path)
        start = time.perf_counter()
        load(ehr.client, DATA / "synthea")
        figures["load_all_synthea_s"] = round(time.perf_counter() - start, 2)

        patients = ehr.client.search("Patient", [], limit=100)
        largest = max(patients, key=lambda p: len(ehr.compartment(p["id"])))
        resources = ehr.compartment(largest["id"])
        runs = []
        for _ in range(20):
            start = time.perf_counter()
            compile_summary(resources)
            runs.append((time.perf_counter() - start) * 1000)
        start = time.perf_counter()
        ehr.compartment(largest["id"])
        fetch_ms = (time.perf_counter() - start) * 1000
        figures["largest_patient"] = {
            "resources": len(resources),
            "compile_ms_p50": round(statistics.median(runs), 1),
            "fetch_everything_ms": round(fetch_ms, 1),
        }

        count = None
        if (TOKENIZER / "tokenizer.json").exists():
            from transformers import AutoTokenizer

            tokenizer = AutoTokenizer.from_pretrained(TOKENIZER)
            count = lambda text: len(tokenizer(text, add_special_tokens=False)["input_ids"])  # noqa: E731
        tokens = {}
        for patient in patients:
            if any(t.get("code") == "synthetic-demo" for t in patient.get("meta", {}).get("tag", [])):
                summary = ehr.summary(patient["id"])
                name = f"{summary.facts['patient']['name']} ({patient['id'][:4]})"
                tokens[name] = count(summary.text) if count else summary.tokens_estimated
        figures["summary_tokens_per_demo_patient"] = {"tokenizer": "gemma3" if count else "estimate", **tokens}

        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        import uvicorn

        from docgemma.ehr.server import make_app

        base = f"http://127.0.0.1:{port}/fhir"
        server = uvicorn.Server(
            uvicorn.Config(make_app(FhirApi(FhirStore(path), base)), host="127.0.0.1", port=port, log_level="error")
        )
        thread = threading.Thread(target=server.run, daemon=True)
        thread.start()
        while not server.started:
            time.sleep(0.05)
        client = FhirClient(base)
        queries = {
            "Patient?name=": ("Patient", [("name", "garcia")]),
            "Observation?patient&code&_sort=-date": (
                "Observation",
                [("patient", largest["id"]), ("code", "http://loinc.org|8302-2"), ("_sort", "-date")],
            ),
            "Condition?patient&status=active": ("Condition", [("patient", largest["id"]), ("status", "active")]),
        }
        search = {}
        for label, (kind, params) in queries.items():
            samples = []
            for _ in range(60):
                start = time.perf_counter()
                client.search(kind, params)
                samples.append((time.perf_counter() - start) * 1000)
            search[label] = percentiles(samples)
        figures["search_over_http"] = search
        server.should_exit = True
        thread.join(5)
    print(json.dumps(figures, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
