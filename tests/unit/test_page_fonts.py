"""The page's text font has every letter in each weight it declares: Gradio's default theme named a 600 face
whose file holds 55 glyphs (space, "A", "B" and Cyrillic), so a bold heading drew its capital A in another face
than the rest of the word (issue 47: the walkthrough video's glyph glitch)."""

from __future__ import annotations

import re
import string
from pathlib import Path

import gradio
from fontTools.ttLib import TTFont

from docgemma.ui.style import page_options

FRONTEND = Path(gradio.__file__).parent / "templates" / "frontend"


def test_each_font_file_the_theme_declares_has_every_latin_letter_and_digit() -> None:
    css = page_options()["theme"]._get_theme_css()
    files = re.findall(r"url\('(static/fonts/[^']+)'\)", css)
    assert any("SourceSansPro" in f for f in files)
    wanted = {ord(c) for c in string.ascii_letters + string.digits}
    for name in files:
        covered = set(TTFont(FRONTEND / name).getBestCmap())
        assert wanted <= covered, f"{name} lacks {''.join(sorted(chr(c) for c in wanted - covered))}"


def test_the_bold_face_is_declared() -> None:
    css = page_options()["theme"]._get_theme_css()
    faces = re.findall(r"font-family: 'Source Sans Pro';[^}]*font-weight: (\d+)", css)
    assert sorted(faces) == ["400", "700"]
