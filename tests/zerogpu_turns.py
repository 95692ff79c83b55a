"""Whole turns through the real ``spaces`` package in its ZeroGPU mode (``tests/zerogpu_cpu.py``), in a process of
its own: ``python -m tests.zerogpu_turns TINY_MODEL_DIR OUT.json``.

The tiny random Gemma 3 (``tests/tiny_gemma.py``) stands in for MedGemma on the CPU, loaded after ``spaces`` (as
the backend loads on ZeroGPU), and every model call goes through ``spaces.GPU``: its arguments pickled into a
forked worker, its results pickled back. Written to OUT: each agent schema's outcome through the GPU, and each
turn's events, model calls (kind, schema, error), the worker's GPU checks and the device API's requests.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

from tests.zerogpu_cpu import DeviceApi, cpu_torch_for_spaces

#: Each route of a turn: a clinical question answered in a stream, one the rules are unsure of (the model
#: decides the intent and the tool: the two schemas made by ``create_model``), a prescription (its approval card,
#: then approved: the result assessed and the answer streamed); the image turn and a spent quota follow.
TURNS = {
    "streamed answer": "What is the first-line treatment for hypertension in adults?",
    "model decides": "hmm so what do we reckon about the kidneys then",
    "approval card": "Prescribe metformin 500 mg twice daily for Amina Okafor",
}


def main(tiny: Path, out: Path) -> None:
    api = DeviceApi().start()
    os.environ.update(SPACES_ZERO_GPU="true", SPACES_ZERO_DEVICE_API_URL=api.url)
    cpu_torch_for_spaces()
    import spaces  # noqa: F401  -- before the model, as the backend imports it on ZeroGPU
    import transformers

    from docgemma.agent.assistant import Assistant
    from docgemma.agent.events import ApprovalRequest, NodeEnd, Token, TurnDone
    from docgemma.agent.schemas import agent_schemas
    from docgemma.config import Settings
    from docgemma.ehr.service import Ehr
    from docgemma.llm.base import LLMError, Message
    from docgemma.llm.observed import ModelCall
    from docgemma.llm.transformers_backend import TransformersLLM
    from docgemma.ops.conversation_store import open_store
    from docgemma.runtime import build_registry
    from docgemma.tools.ehr_tools import record_write_check
    from tests.fixture_images import noise_png

    checks = out.with_suffix(".gpu-checks")

    def gpu_check() -> None:  # where and how often the backend runs its GPU check
        with checks.open("a") as file:
            file.write(f"{os.getpid()}\n")

    processor = transformers.AutoProcessor.from_pretrained(str(tiny))
    model = transformers.AutoModelForImageTextToText.from_pretrained(str(tiny), dtype="float32").eval()
    llm = TransformersLLM("tiny Gemma 3", model, processor.tokenizer, processor, "cpu", gpu_check=gpu_check)
    report: dict[str, Any] = {"parent": os.getpid(), "wrapped": bool(getattr(llm._generate_ids, "__wrapped__", None))}

    data = out.parent / "data"  # beside the report: the test's temporary folder
    settings = Settings(data_dir=data, backend="transformers")
    store = open_store(settings)
    ehr = Ehr.embedded(data / "record.sqlite")
    registry = build_registry(settings, ehr, in_process=True)
    assistant = Assistant(llm, registry, store.checkpointer, settings, patient_context=ehr.patient_context,
                          write_check=record_write_check(ehr), claims=store.claims)
    calls: list[ModelCall] = []
    assistant.model.observe(calls.append)

    # Every constrained-JSON schema the agent asks for, through the GPU (the random model's answer may not
    # validate: LLMError is its output, not the crossing).
    schemas: dict[str, str] = {}
    for schema, cap in agent_schemas(registry).items():
        try:
            llm.generate_json([Message(role="user", content="Answer in JSON.")], schema, temperature=0.0,
                              max_tokens=min(cap, 64))
            schemas[schema.__name__] = "valid"
        except LLMError as exc:
            schemas[schema.__name__] = f"crossed; {type(exc).__name__}"
    report["schemas"] = schemas

    def turn(name: str, events: Any) -> dict[str, Any]:
        before = len(calls)
        seen: dict[str, Any] = {"tokens": 0, "card": None, "answer": None, "timeline": []}
        for event in events:
            if isinstance(event, Token):
                seen["tokens"] += 1
            elif isinstance(event, ApprovalRequest):
                seen["card"] = event.request["tool"]
            elif isinstance(event, NodeEnd):
                seen["timeline"].append([event.event["node"], event.event["decision"]])
            elif isinstance(event, TurnDone):
                seen["answer"] = event.result.answer
                seen["backend_down"] = event.result.backend_down
                seen["writes"] = event.result.writes
        seen["calls"] = [[c.kind, c.what, c.images, type(c.error).__name__ if c.error else None]
                         for c in calls[before:]]
        return seen

    turns: dict[str, Any] = {}
    for i, (name, message) in enumerate(TURNS.items()):
        turns[name] = turn(name, assistant.stream_turn(f"t{i}", message))
    turns["image"] = turn("image", assistant.stream_turn(
        "image", "What does this chest X-ray show?", {"filename": "cxr.png", "data": noise_png(64, 64)}))
    if turns["approval card"]["card"]:
        card = assistant.pending_approval(f"t{list(TURNS).index('approval card')}")
        assert card is not None
        turns["approved"] = turn("approved", assistant.stream_resume(
            f"t{list(TURNS).index('approval card')}", {"action": "approve", "card_id": card["card_id"]}))
    api.quota_left = 0  # the visitor's ZeroGPU quota is spent
    turns["quota spent"] = turn("quota spent", assistant.stream_turn("t0", TURNS["streamed answer"]))
    report["turns"] = turns
    report["gpu_checks"] = [int(p) for p in checks.read_text().split()] if checks.exists() else []
    report["device_api"] = api.paths()
    out.write_text(json.dumps(report, indent=1))
    api.stop()


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]))
