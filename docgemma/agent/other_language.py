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


def reply(language: str) -> str:
    """What this mode understands, in ``language`` ("fr", "pt", "es", "sw"), with the English examples."""
    return _SAID[language] + "\n" + "\n".join(f"- {example}" for example in EXAMPLES)
