"""What a walk through the page on the embedded model showed (docs/screenshots/embedded/): the record's
section headings rendered as page-size titles in the chat, a prescription's arguments were cut in the
timeline without a sign (its frequency missing), and the status line named the demo model twice."""

from __future__ import annotations

from docgemma.agent.assistant import TurnResult
from docgemma.ui.messages import final_markdown, status_line, timeline_markdown

CHART = ("**Patient Record**\n\n## Safety\nRENAL FUNCTION: eGFR 33\n\n## Latest observations\n- eGFR: 33\n"
         "### Last encounter ##\n2026-10-28 review")
LABEL = "SmolLM2-135M-Instruct (embedded CPU demo model — not clinically meaningful)"


def test_record_headings_in_an_answer_are_bold_lines_not_titles() -> None:
    text = final_markdown(TurnResult(answer=CHART))
    assert not [line for line in text.splitlines() if line.lstrip().startswith("#")], text
    assert "**Safety**" in text and "RENAL FUNCTION: eGFR 33" in text
    assert "- eGFR: 33\n\n**Last encounter**\n" in text  # its own paragraph, not the list's last item


def test_a_cut_timeline_detail_says_it_was_cut_and_keeps_a_prescriptions_frequency() -> None:
    args = ("arguments: {'patient_id': '3f159ed0-6e3c-5f0f-8b6a-c6a53849850d', 'medication_name': 'amoxicillin', "
            "'dosage': '500 mg', 'frequency': 'three times daily'}")
    step = {"node": "tool_select", "label": "Choosing a resource", "decision": "Prescription",
            "detail": "decided by rule: the request still needs it; arguments by rule (no model call); " + args,
            "duration_ms": 0.0, "llm_calls": 0, "prompt_tokens": 0}
    assert "three times daily" in timeline_markdown(TurnResult(answer="", timeline=[step]), pending=True)
    step["detail"] = "x" * 1000
    text = timeline_markdown(TurnResult(answer="", timeline=[step]))
    assert "x…" in text and "x" * 400 not in text


def test_the_status_line_names_the_model_once_and_still_says_it_is_not_clinically_meaningful() -> None:
    line = status_line(f"{LABEL} · CPU", f"CUDA is not available: running {LABEL} instead of MedGemma.", "offline")
    assert line.count("SmolLM2-135M-Instruct") == 1 and "not clinically meaningful" in line
    assert "running this model instead of MedGemma" in line
