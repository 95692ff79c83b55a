"""The metering model behind the budgets (docgemma/eval/metering.py), without the Gemma tokenizer: a prompt's
cached part is its common prefix with the previous call of the same turn; replies are counted as compact JSON
(or free text at its cap); a backend's own usage report wins."""

from __future__ import annotations

from docgemma.agent.schemas import ResultAssessment, RetryStrategy
from docgemma.eval.metering import PrefixMeter, common_prefix, compact_json
from docgemma.llm.base import Message, Usage
from docgemma.llm.fake import FakeLLM


def words(messages: object, n_images: int) -> list[int]:
    return [hash(w) for m in messages for w in m["content"].split()]  # type: ignore[attr-defined, index]


def ask(text: str) -> list[Message]:
    return [Message(role="system", content="shared system text"), Message(role="user", content=text)]


class Metered:
    """A model observed with a meter: the calls as the budgets see them."""

    def __init__(self, fake: FakeLLM, turn: list[int], meaningful: bool | None = None, **kw: object) -> None:
        self.meter = PrefixMeter(fake, turn_key=lambda: turn[0], prompt_ids=words,  # type: ignore[arg-type]
                                 text_tokens=lambda t: len(t.split()), **kw)
        self.llm = self.meter.observed(meaningful)
        self.calls = self.meter.calls


def meter(fake: FakeLLM, turn: list[int], **kw: object) -> Metered:
    return Metered(fake, turn, **kw)  # type: ignore[arg-type]


def test_cached_tokens_are_the_common_prefix_with_the_previous_call_of_the_same_turn() -> None:
    turn = [1]
    m = meter(FakeLLM([RetryStrategy(strategy="retry_same"), RetryStrategy(strategy="retry_same"),
                       RetryStrategy(strategy="retry_same")]), turn)
    m.llm.generate_json(ask("context question task one"), RetryStrategy, temperature=0, max_tokens=8)
    m.llm.generate_json(ask("context question task two words"), RetryStrategy, temperature=0, max_tokens=8)
    turn[0] = 2  # a new turn: nothing cached from the previous one
    m.llm.generate_json(ask("context question task two words"), RetryStrategy, temperature=0, max_tokens=8)
    assert [(c.usage.prompt_tokens, c.usage.cached_tokens) for c in m.calls] == [(7, 0), (8, 6), (8, 0)]


def test_replies_are_counted_as_compact_json_and_free_text_at_its_cap() -> None:
    assert compact_json(ResultAssessment(quality="no_results")) == '{"quality":"no_results"}'
    m = meter(FakeLLM([ResultAssessment(quality="no_results"), "a short answer"]), [1])
    m.llm.generate_json(ask("x"), ResultAssessment, temperature=0, max_tokens=8)
    assert "".join(m.llm.generate_text(ask("x"), temperature=0.5, max_tokens=256)) == "a short answer"
    assert [c.usage.decoded_tokens for c in m.calls] == [2, 256]  # 1 "word" + the end token; the cap
    real = meter(FakeLLM(["a short answer"]), [1], free_text="reply")
    list(real.llm.generate_text(ask("x"), temperature=0.5, max_tokens=256))
    assert real.calls[0].usage.decoded_tokens == 4  # 3 words + the end token


def test_a_backend_that_reports_its_usage_is_believed_and_the_flag_can_be_forced() -> None:
    fake = FakeLLM([RetryStrategy(strategy="retry_same")], clinically_meaningful=False)

    class Reporting(FakeLLM):
        last_usage: Usage | None = None

        def generate_json(self, *args: object, **kwargs: object):  # type: ignore[no-untyped-def, override]
            out = fake.generate_json(*args, **kwargs)  # type: ignore[arg-type]
            self.last_usage = Usage(100, 90, 5)
            return out

    m = meter(Reporting(clinically_meaningful=False), [1], meaningful=True)
    m.llm.generate_json(ask("x"), RetryStrategy, temperature=0, max_tokens=8)
    assert (m.calls[0].usage.prompt_tokens, m.calls[0].usage.cached_tokens, m.calls[0].usage.decoded_tokens) == (100, 90, 5)
    assert m.llm.clinically_meaningful is True and meter(fake, [1]).llm.clinically_meaningful is False
    assert common_prefix([1, 2, 3], [1, 2, 4, 5]) == 2 and common_prefix([], [1]) == 0
