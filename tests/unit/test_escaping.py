"""Every value a tool or the record hands the page is text, never a link target or markup of its own: a
source's URL is re-encoded and must lie on the tool's own host; brackets, backslashes and bare URLs in tool,
record and model text make no link and no image."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

import pytest

from docgemma.agent.events import TurnResult
from docgemma.tools.interactions import InteractionLabel
from docgemma.tools.openfda import Label
from docgemma.tools.outcome import Source
from docgemma.ui.markup import SOURCE_HOSTS, escape, safe_source_url
from docgemma.ui.messages import final_markdown, summary_markdown

#: A Markdown link or image, and an HTML tag: what the page's renderer would turn into a fetch or a click.
_LINK = re.compile(r"(?<!\\)\[[^\]]*(?<!\\)\]\(([^)]*)\)")
_TAG = re.compile(r"<(?!span class=\"check-)[a-z/!]", re.I)
EVIL = ['abc"><script>alert(1)</script>', "abc?x=http://evil.example/steal", "abc)![x](https://evil.example/p.png",
        "abc#frag<img src=x onerror=alert(1)>", "abc%22%3E%3Cscript%3E", "../../../evil", "abc\\](https://evil.example)"]


def _targets(markdown: str) -> list[str]:
    return _LINK.findall(markdown)


def _safe(markdown: str) -> None:
    assert not _TAG.search(markdown), markdown
    assert "evil.example" not in markdown.replace("evil&#46;example", "") or all(
        urlsplit(t).hostname in SOURCE_HOSTS for t in _targets(markdown)), markdown
    for target in _targets(markdown):
        parts = urlsplit(target)
        assert parts.scheme == "https" and parts.hostname in SOURCE_HOSTS, target
        assert not re.search(r"[\s\"'<>()\[\]\\]", target), target
        assert "://" not in target[8:] and "evil" not in parts.netloc, target


@pytest.mark.parametrize("set_id", EVIL)
def test_a_set_id_makes_no_attacker_url_and_no_markup(set_id: str) -> None:
    """The openFDA ``set_id`` went raw into the Sources link; Chromium fetched an attacker URL."""
    label = Label(generic="metformin", brands=["Glucophage"], boxed_warning="", contraindications="", warnings="",
                  drug_interactions="", effective_date="2024-01-01", set_id=set_id)
    checker = InteractionLabel(generic="warfarin", brands=(), substances=(), sections=(), effective_date="2024-01-01",
                               set_id=set_id)
    for source in (label.source, checker.source):
        text = final_markdown(TurnResult(answer="See the label.", sources=[source]))
        _safe(text)
        links = _targets(text)
        assert len(links) == 1 and urlsplit(links[0]).hostname == "dailymed.nlm.nih.gov"
        assert "setid=" in links[0] and "evil.example/" not in links[0]


@pytest.mark.parametrize("url", [f"https://dailymed.nlm.nih.gov/dailymed/lookup.cfm?setid={e}" for e in EVIL]
                         + ["https://evil.example/x", "http://pubmed.ncbi.nlm.nih.gov/1/", "javascript:alert(1)",
                            "https://pubmed.ncbi.nlm.nih.gov.evil.example/1", "https://user@pubmed.ncbi.nlm.nih.gov/1",
                            "https://pubmed.ncbi.nlm.nih.gov:8443/1", "https://clinicaltrials.gov/study/NCT1) [x](https://evil.example"])
def test_a_source_links_only_to_the_tools_hosts(url: str) -> None:
    text = final_markdown(TurnResult(answer="x", sources=[Source(title='Study "A"] [x](https://evil.example)',
                                                                 url=url)]))
    _safe(text)


def test_tool_record_and_model_text_makes_no_link_or_image() -> None:
    poisoned = ("[click](https://evil.example) ![p](https://evil.example/a.png) \\[x](https://evil.example) "
                "<img src=https://evil.example/b.png> www.evil.example/c [r]: https://evil.example/d")
    for text in (final_markdown(TurnResult(answer=poisoned)), summary_markdown(poisoned, f"## {poisoned}\n{poisoned}")):
        _safe(text)
        assert _targets(text) == [] and "https://evil" not in text and "www.evil" not in text
    assert escape("a < b & [c]") == "a &lt; b &amp; \\[c\\]"


def test_the_tools_own_links_are_kept() -> None:
    for url in ("https://pubmed.ncbi.nlm.nih.gov/12345/", "https://clinicaltrials.gov/study/NCT01234567",
                "https://europepmc.org/article/PMC/PMC123", "https://dailymed.nlm.nih.gov/dailymed/lookup.cfm?setid=a-b-c"):
        assert safe_source_url(url) == url
        assert _targets(final_markdown(TurnResult(answer="x", sources=[Source(title="t", url=url)]))) == [url]
