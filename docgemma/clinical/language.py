"""Which language a message is written in, when it is one this mode says it does not understand yet: French,
Portuguese, Spanish or Swahili (issue 26, item 4). Pure and small: common function words of each language (minus
those English shares), and the letters only one of them writes. An English message with a foreign name or word in
it ("Find patient Maria de la Cruz", "trials in São Paulo") is English: a language needs two of its own words and
more than the English ones."""

from __future__ import annotations

import re

_ENGLISH = (
    "the a an and or of to for with in on at by from is are was were be been has have had do does did what which who "
    "when where how why can could should would will any some her his she he they their them it this that these those "
    "me my i we our you your check find show look record prescribe start give please patient patients drug drugs "
    "interaction interactions trial trials study studies about into not no yes ok there"
)
ENGLISH = frozenset(_ENGLISH.split())
#: Function words of each language (English words removed below, so a shared word counts for neither).
_WORDS: dict[str, str] = {
    "fr": "le la les des du un une est et pour avec dans sur pas que qui je il elle vous nous ce cette ces au aux "
          "son sa ses mon ma mes quel quelle quels quelles y bonjour merci peut sont ont avoir être contre chez très "
          "aussi mais ou donc depuis médicament médicaments patiente entre quoi comment pourquoi sont-ils est-ce "
          "faut il-y-a d'interaction l'interaction qu'il c'est j'ai",
    "pt": "o os do da dos das um uma é e para com em no na nos nas por que qual quais há tem paciente medicamento "
          "medicamentos está são seu sua meu minha mas como entre olá obrigado obrigada pode ele ela este esta isso "
          "muito também não você ao pelo pela sobre existe alguma algum interação interações remédio remédios",
    "es": "el la los las de del un una es y para con en por que qué cuál cuáles hay tiene paciente medicamento "
          "medicamentos está son su sus mi pero como cómo entre hola gracias puede ella él este esta muy también se lo "
          "le al alguna algún interacción interacciones existe sobre fármaco fármacos usted",
    "sw": "na ya wa kwa ni za la katika hii huu yeye mimi nini je gani habari daktari mgonjwa dawa anaweza kuna sana "
          "hana ana hapana ndiyo kama lakini pia kutoka bado tafadhali asante leo siku wake yake wangu yangu kati "
          "mwingiliano kuhusu anatumia atumie salama gani? naomba nataka hizi hizo",
}
WORDS: dict[str, frozenset[str]] = {lang: frozenset(words.split()) - ENGLISH for lang, words in _WORDS.items()}
#: Letters one language writes and the others (and English) do not.
_LETTERS = {"fr": re.compile(r"[èêëàâùûîïœç]"), "pt": re.compile(r"[ãõç]"), "es": re.compile(r"[ñ¿¡]")}
_TOKEN_RE = re.compile(r"[^\W\d_]+(?:['’-][^\W\d_]+)*")
NAMES = {"fr": "French", "pt": "Portuguese", "es": "Spanish", "sw": "Swahili"}


def _scores(tokens: list[str], text: str) -> dict[str, float]:
    scores = {lang: float(sum(t in words for t in tokens)) for lang, words in WORDS.items()}
    for lang, letters in _LETTERS.items():
        scores[lang] += 0.5 * min(len(letters.findall(text)), 2)
    return scores


def detect(text: str) -> str | None:
    """"fr", "pt", "es" or "sw" when ``text`` is written in that language; None for English (or too little to
    tell)."""
    lowered = text.lower()
    tokens = _TOKEN_RE.findall(lowered)
    if not tokens:
        return None
    english = sum(t in ENGLISH for t in tokens)
    scores = _scores(tokens, lowered)
    best = max(scores, key=lambda lang: scores[lang])
    runner_up = max(v for lang, v in scores.items() if lang != best)
    if scores[best] >= 2 and scores[best] > english and scores[best] > runner_up:
        return best
    return None
