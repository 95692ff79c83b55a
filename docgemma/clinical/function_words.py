"""Words that carry no clinical value on their own: pronouns, prepositions, articles, conjunctions. A value of a
write's field made only of them ("on her", "him", "to the") is no substance, drug, reaction or note: it is refused,
never written (issue 26: an allergy's substance was once recorded as "on her")."""

from __future__ import annotations

import re

FUNCTION_WORDS = frozenset({
    # pronouns and possessives
    "i", "me", "my", "we", "us", "our", "you", "your", "he", "him", "his", "she", "her", "hers", "they", "them",
    "their", "theirs", "it", "its", "this", "that", "these", "those", "himself", "herself", "themselves", "one",
    "someone", "patient", "pt",
    # prepositions
    "on", "in", "at", "to", "for", "with", "from", "by", "of", "about", "after", "before", "during", "into", "onto",
    "off", "over", "under", "against", "since", "until", "upon", "via", "per", "without", "within", "as",
    # articles, conjunctions, fillers
    "a", "an", "the", "and", "or", "but", "so", "then", "also", "please", "pls", "any", "some", "is", "was", "be",
    "has", "had", "have", "gets", "got", "get",
    # auxiliaries, modals and question words ("could Banda's amlodipine …" names Banda, not "Could Banda"); "may" and
    # "will" are left out: they are also given names
    "are", "were", "been", "am", "do", "does", "did", "can", "could", "would", "should", "might", "must", "shall",
    "cannot", "what", "which", "who", "whose", "whom", "when", "where", "why", "how",
})
_WORD_RE = re.compile(r"[a-z]+(?:'[a-z]+)?")


def only_function_words(value: str) -> bool:
    """True when ``value`` has no word but function words ("on her", "him", "to the"), or neither a word nor a
    number ("--")."""
    words = [w.split("'")[0] for w in _WORD_RE.findall(value.lower())]
    if not words:
        return not re.search(r"\d", value)
    return all(w in FUNCTION_WORDS for w in words)
