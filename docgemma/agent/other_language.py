"""A message in French, Portuguese, Spanish or Swahili (``clinical/language.detect``) is answered, in that language,
with what this mode understands and English examples, by code: no tool, no model call. Full multilingual support is a
later step; until then a clinician writing in another language is told so, never answered as if understood."""

from __future__ import annotations

#: English requests this mode understands, shown as examples in every language.
EXAMPLES = (
    "Check interactions between warfarin and aspirin",
    "What are her active medications?",
    "Find recruiting trials for heart failure",
)

_SAID = {
    "fr": ("Pour l'instant, ce mode ne comprend que les demandes en anglais : sur un médicament (sécurité, "
           "interactions), sur le dossier du patient, ou sur les études et les essais cliniques. Exemples de demandes :"),
    "pt": ("Por enquanto, este modo só entende pedidos em inglês: sobre um medicamento (segurança, interações), sobre o "
           "prontuário do paciente, ou sobre estudos e ensaios clínicos. Exemplos de pedidos:"),
    "es": ("Por ahora, este modo solo entiende solicitudes en inglés: sobre un medicamento (seguridad, interacciones), "
           "sobre la historia clínica del paciente, o sobre estudios y ensayos clínicos. Ejemplos de solicitudes:"),
    "sw": ("Kwa sasa, hali hii inaelewa maombi kwa Kiingereza tu: kuhusu dawa (usalama, mwingiliano wa dawa), kuhusu "
           "rekodi ya mgonjwa, au kuhusu tafiti na majaribio ya kliniki. Mifano ya maombi:"),
}

#: Offline (no internet connection), only the patient record is there: no drug, study or trial look-up is promised.
OFFLINE_EXAMPLES = ("What are her active medications?", "Find patient Grace Mensah")
_SAID_OFFLINE = {
    "fr": ("Pour l'instant, ce mode ne comprend que les demandes en anglais sur le dossier du patient (les recherches "
           "sur les médicaments, les études et les essais ne sont pas disponibles sans connexion internet). "
           "Exemples de demandes :"),
    "pt": ("Por enquanto, este modo só entende pedidos em inglês sobre o prontuário do paciente (as consultas sobre "
           "medicamentos, estudos e ensaios não estão disponíveis sem ligação à internet). Exemplos de pedidos:"),
    "es": ("Por ahora, este modo solo entiende solicitudes en inglés sobre la historia clínica del paciente (las "
           "consultas sobre medicamentos, estudios y ensayos no están disponibles sin conexión a internet). "
           "Ejemplos de solicitudes:"),
    "sw": ("Kwa sasa, hali hii inaelewa maombi kwa Kiingereza tu kuhusu rekodi ya mgonjwa (utafutaji kuhusu dawa, "
           "tafiti na majaribio haupatikani bila mtandao). Mifano ya maombi:"),
}


def reply(language: str, offline: bool = False) -> str:
    """What this mode understands, in ``language`` ("fr", "pt", "es", "sw"), with the English examples; ``offline``:
    the knowledge services cannot be reached, so only the patient record is offered."""
    said, examples = (_SAID_OFFLINE, OFFLINE_EXAMPLES) if offline else (_SAID, EXAMPLES)
    return said[language] + "\n" + "\n".join(f"- {example}" for example in examples)
