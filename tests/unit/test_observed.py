"""The one observed model: observers see every call once; a node run's scope counts only its own calls."""

from __future__ import annotations

import contextvars
import threading

from pydantic import BaseModel

from docgemma.agent.trace import NodeTrace
from docgemma.llm.base import Usage
from docgemma.llm.fake import FakeLLM
from docgemma.llm.observed import ModelCall, ObservedLLM, observed


class Answer(BaseModel):
    text: str


ASK = [{"role": "user", "content": "one two three"}]


def test_observers_see_each_call_with_its_output_and_a_meter_figures_its_usage() -> None:
    seen: list[ModelCall] = []

    class Fixed:
        def measure(self, call: ModelCall, reported: Usage | None) -> Usage:
            return Usage(42, 40, 2, call.seconds)

    model = ObservedLLM(FakeLLM([Answer(text="x"), "streamed text"]), [seen.append], meter=Fixed())
    model.generate_json(ASK, Answer, temperature=0, max_tokens=8)
    assert "".join(model.generate_text(ASK, temperature=0, max_tokens=8)) == "streamed text"
    assert [(c.kind, c.what, c.usage.prompt_tokens) for c in seen] == [("json", "Answer", 42), ("text", "text", 42)]
    assert seen[0].output == Answer(text="x") and seen[1].output == "streamed text"
    assert observed(model) is model  # never wrapped twice


def test_a_node_runs_scope_counts_its_calls_and_no_other_threads() -> None:
    model = ObservedLLM(FakeLLM(responder=lambda call: Answer(text="x")))
    events = {}
    start = threading.Barrier(2)

    def run(name: str, calls: int) -> None:
        trace = NodeTrace("intent_classify", model)
        start.wait()
        for _ in range(calls):
            model.generate_json(ASK, Answer, temperature=0, max_tokens=8)
        events[name] = trace.event("done")

    threads = [threading.Thread(target=contextvars.copy_context().run, args=(run, name, n))
               for name, n in (("a", 3), ("b", 5))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert (events["a"]["llm_calls"], events["b"]["llm_calls"]) == (3, 5)


def test_calls_after_the_event_are_not_counted_in_it() -> None:
    model = ObservedLLM(FakeLLM(responder=lambda call: Answer(text="x")))
    trace = NodeTrace("result_classify", model)
    model.generate_json(ASK, Answer, temperature=0, max_tokens=8)
    first = trace.event("done")
    model.generate_json(ASK, Answer, temperature=0, max_tokens=8)
    assert first["llm_calls"] == 1 and trace.usages and len(trace.usages) == 1
