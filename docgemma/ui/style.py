"""How the page looks and what the browser keeps: the page's CSS (severity badges in words and colour, a chat
that leaves the examples in view at 1440×900 and on a phone) and the serving options every way of serving the
page must pass (``ui/server.py`` mounts it, tests launch it): Gradio's run history off, so no answer, patient
name or value is kept in the browser's storage (it kept 25 runs with names, allergies and values)."""

from __future__ import annotations

from typing import Any

CSS = """
.check-severe, .check-warning, .check-ok, .check-notice {
  display: inline-block; padding: 0 .45em; border-radius: 4px; font-weight: 700; font-size: .85em;
  letter-spacing: .02em; color: #fff; margin-right: .3em;
}
.check-severe { background: #b91c1c; }
.check-warning { background: #a16207; }
.check-ok { background: #15803d; }
.check-notice { background: #1d4ed8; }
#chat { height: min(440px, 48vh) !important; }
/* The chat's label and buttons float over its top edge: the messages scroll below them, not under them (a
   question at the top of the view was cut by the "Conversation" label). */
#chat .bubble-wrap { margin-top: 2.2rem; height: calc(100% - 2.2rem); padding-top: .3rem; }
#timeline { max-height: 78vh; overflow-y: auto; }
#header h2 { margin: 0; }
#header p { margin: .1em 0; }
.field-checks p { margin: .2em 0; }
@media (max-width: 700px) {
  #chat { height: 34vh !important; }
  #header h2 { font-size: 1.1em; }
}
"""


def page_options() -> dict[str, Any]:
    """Keyword arguments for ``gr.mount_gradio_app`` and ``Blocks.launch``: the CSS, no run history, and no
    footer link to a run history page."""
    return {"css": CSS, "run_history": False, "footer_links": ["api", "settings"]}
