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
/* The engineer's trace: one control, closed by default (``ui/timeline.py``). */
#timeline .technical-details summary { cursor: pointer; font-weight: 600; margin-top: .6em; }
#header h2 { margin: 0; }
#header p { margin: .1em 0; }
.field-checks p { margin: .2em 0; }
/* Gradio's container hides its overflow, which makes it a scroll box and stops anything sticking inside it (the
   patient strip on a phone); clip cuts the same overflow without being one. At the top level: Gradio scopes the
   rules inside a media query to the page's content, where this container is not. */
.gradio-container { overflow: clip !important; }
/* Wide screens: the patient panel and the timeline are beside the chat; the strip and the link to the timeline
   are not needed. */
@media (min-width: 701px) {
  #patient-strip, #timeline-link { display: none !important; }
}
/* A phone (390x844): the chat gets most of the height; the active patient's name and safety flags stay in view
   above it while chatting (the panel with them is ~2,500 px further down); the approval card's fields and
   buttons stack, nothing wider than the screen. */
@media (max-width: 700px) {
  #chat { height: 50vh !important; }
  .column { gap: 8px !important; }
  #header h2 { font-size: 1.1em; }
  #header p { font-size: .78em; line-height: 1.3; }
  #status p { font-size: .8em; line-height: 1.3; margin: 0; }
  #patient-strip {
    position: sticky; top: 0; z-index: 1000; min-height: 3.6rem; max-height: 24vh; overflow-y: auto;
    background: var(--body-background-fill, #fff) !important; border-bottom: 2px solid var(--border-color-primary);
    padding: .25rem .5rem !important; font-size: .85em; line-height: 1.35;
  }
  #patient-strip p { margin: 0; }
  /* One short line that takes no gap of its own: the first example stays in view under it (390x844). */
  #timeline-link { margin: -8px 0 -8px 0 !important; padding: 0 !important; min-height: 0 !important; }
  #timeline-link p { margin: 0; font-size: .8em; line-height: 1.2; }
  /* The sticky patient strip would cover the timeline's first lines after the link's jump. */
  #timeline { scroll-margin-top: 25vh; }
  /* What sits above the chat changes height (the strip when another patient becomes active): the browser keeps
     the chat in place, not the header (scroll anchoring), so the chat and the box below it do not move away. */
  #header, #status, #patient-strip { overflow-anchor: none; }
  #approval, #approval * { overflow-wrap: anywhere; }
  #approval .row { flex-direction: column; flex-wrap: nowrap; }
  #approval .row > * { width: 100%; min-width: 0 !important; flex: none !important; }
}
"""


def theme() -> Any:
    """Gradio's default theme with its text font's bold face whole: the default names Source Sans Pro at weights
    400 and 600, and Gradio's 600 file is a subset of 55 glyphs (space, "A", "B" and Cyrillic), so every bold
    heading drew its capital A in another face than the rest (seen in the walkthrough video); the monospace
    font's 600 file likewise. 700 is Gradio's full bold file of each; text asking for 600 takes it too."""
    import gradio as gr

    return gr.themes.Default(
        font=(gr.themes.LocalFont("Source Sans Pro", weights=(400, 700)), "ui-sans-serif", "system-ui", "sans-serif"),
        font_mono=(gr.themes.LocalFont("IBM Plex Mono", weights=(400, 700)), "ui-monospace", "Consolas", "monospace"))


def page_options() -> dict[str, Any]:
    """Keyword arguments for ``gr.mount_gradio_app`` and ``Blocks.launch``: the CSS and the theme, no run history,
    and no footer link to a run history page."""
    return {"css": CSS, "theme": theme(), "run_history": False, "footer_links": ["api", "settings"]}
