"""The offline drug-drug interactions, each pair with its source: what the prescription card and the named-drug
safety line check a drug against the patient's active orders with when no FDA label can be read (and beside the
labels when one can). Two sources: a short hand-written table of the interactions a prescriber must never miss
(bleeding on warfarin, methotrexate toxicity, hyperkalaemia, nitrate hypotension, serotonin syndrome, QT
prolongation, statin myopathy, lithium toxicity...), and the ANSM national thesaurus of October 2020
(:mod:`docgemma.clinical.ansm`, 3,139 interactions, French texts). Where both state a pair, the more serious
severity is kept and both sources are cited. A pair neither lists is NOT a safe pair: the checks that use them
say which sources were read. Data and one pure function; ingredient names as :mod:`docgemma.clinical.ingredients`
spells them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from itertools import product

from docgemma.clinical import ansm

#: Groups of ingredients an interaction is stated for (generic names as the ingredient resolver spells them).
GROUPS: dict[str, tuple[str, ...]] = {
    "warfarin": ("warfarin", "acenocoumarol", "phenprocoumon"),
    "nsaid": ("aspirin", "ibuprofen", "naproxen", "diclofenac", "ketoprofen", "indomethacin", "ketorolac", "celecoxib",
              "etoricoxib", "meloxicam", "piroxicam", "etodolac", "mefenamic acid", "nabumetone", "flurbiprofen",
              "dexketoprofen", "sulindac", "tolfenamic acid", "diflunisal", "oxaprozin", "fenoprofen", "tenoxicam"),
    "macrolide": ("clarithromycin", "erythromycin", "azithromycin", "telithromycin"),
    "azole": ("fluconazole", "miconazole", "voriconazole", "itraconazole", "ketoconazole", "posaconazole"),
    "metronidazole": ("metronidazole", "tinidazole"),
    "co-trimoxazole": ("sulfamethoxazole", "trimethoprim"),
    "methotrexate": ("methotrexate",),
    "acei_arb": ("captopril", "enalapril", "lisinopril", "ramipril", "perindopril", "quinapril", "fosinopril",
                 "benazepril", "trandolapril", "moexipril", "losartan", "valsartan", "candesartan", "irbesartan",
                 "olmesartan", "telmisartan", "azilsartan", "eprosartan"),
    "potassium": ("potassium chloride", "potassium citrate", "potassium bicarbonate", "potassium gluconate",
                  "spironolactone", "eplerenone", "amiloride", "triamterene", "finerenone"),
    "nitrate": ("nitroglycerin", "isosorbide mononitrate", "isosorbide dinitrate", "amyl nitrite"),
    "pde5": ("sildenafil", "tadalafil", "vardenafil", "avanafil", "riociguat"),
    "ssri_snri": ("citalopram", "escitalopram", "fluoxetine", "fluvoxamine", "paroxetine", "sertraline", "venlafaxine",
                  "desvenlafaxine", "duloxetine", "milnacipran", "clomipramine"),
    "maoi": ("phenelzine", "tranylcypromine", "isocarboxazid", "moclobemide", "selegiline", "rasagiline", "safinamide",
             "linezolid", "methylene blue"),
    "serotonergic_opioid": ("tramadol", "meperidine", "methadone", "fentanyl", "tapentadol"),
    "qt": ("amiodarone", "sotalol", "dofetilide", "dronedarone", "citalopram", "escitalopram", "haloperidol",
           "methadone", "ondansetron", "domperidone", "erythromycin", "clarithromycin", "levofloxacin", "moxifloxacin",
           "quinine", "hydroxychloroquine", "chlorpromazine", "pimozide", "droperidol", "flecainide"),
    "clopidogrel": ("clopidogrel",),
    "cyp2c19_ppi": ("omeprazole", "esomeprazole"),
    "cyp3a4_statin": ("simvastatin", "lovastatin", "atorvastatin"),
    "strong_cyp3a4_inhibitor": ("clarithromycin", "erythromycin", "itraconazole", "ketoconazole", "posaconazole",
                                "voriconazole", "ritonavir", "cobicistat"),
    "lithium": ("lithium",),
    "lithium_raisers": ("hydrochlorothiazide", "bendroflumethiazide", "chlorthalidone", "indapamide"),
    "thiopurine": ("azathioprine", "mercaptopurine"),
    "xanthine_oxidase": ("allopurinol", "febuxostat"),
    "digoxin": ("digoxin",),
    "digoxin_raisers": ("amiodarone", "clarithromycin", "verapamil", "dronedarone"),
    "doac": ("apixaban", "rivaroxaban", "edoxaban", "dabigatran"),
    "heparins": ("heparin", "enoxaparin", "dalteparin", "tinzaparin", "fondaparinux"),
    "antiplatelet": ("clopidogrel", "prasugrel", "ticagrelor", "ticlopidine", "dipyridamole", "cilostazol"),
    "nsaid_full_dose": ("ibuprofen", "naproxen", "diclofenac", "ketoprofen", "indomethacin", "ketorolac", "celecoxib",
                        "etoricoxib", "meloxicam", "piroxicam", "etodolac", "mefenamic acid", "nabumetone",
                        "flurbiprofen", "dexketoprofen", "sulindac", "tolfenamic acid", "diflunisal", "oxaprozin",
                        "fenoprofen", "tenoxicam"),
    "aspirin": ("aspirin",),
    "strong_inducer": ("rifampicin", "rifampin", "rifabutin", "carbamazepine", "phenytoin", "phenobarbital",
                       "st john's wort", "hypericum"),
    "paracetamol": ("acetaminophen",),
    "amiodarone": ("amiodarone",),
    "fluoroquinolone": ("ciprofloxacin", "levofloxacin", "moxifloxacin", "ofloxacin", "norfloxacin"),
    "acei": ("captopril", "enalapril", "lisinopril", "ramipril", "perindopril", "quinapril", "fosinopril",
             "benazepril", "trandolapril", "moexipril"),
    "arb": ("losartan", "valsartan", "candesartan", "irbesartan", "olmesartan", "telmisartan", "azilsartan",
            "eprosartan"),
    "trimethoprim": ("trimethoprim",),
    "k_sparing": ("spironolactone", "eplerenone", "amiloride", "triamterene", "finerenone"),
    "colchicine": ("colchicine",),
    "clozapine": ("clozapine",),
    "marrow_suppressant": ("carbamazepine", "co-trimoxazole", "sulfamethoxazole", "methotrexate", "azathioprine",
                           "mercaptopurine", "chloramphenicol", "mirtazapine"),
    "triptan": ("sumatriptan", "rizatriptan", "zolmitriptan", "eletriptan", "naratriptan", "almotriptan",
                "frovatriptan"),
    "cyp3a4_critical": ("amiodarone", "dronedarone", "quinidine", "pimozide", "sirolimus", "tacrolimus",
                        "cyclosporine", "everolimus", "ergotamine", "dihydroergotamine", "midazolam", "triazolam",
                        "lurasidone", "alfuzosin", "ivabradine", "ticagrelor", "ranolazine", "lomitapide"),
    "strong_cyp3a4_inhibitor_all": ("clarithromycin", "itraconazole", "ketoconazole", "posaconazole", "voriconazole",
                                    "ritonavir", "cobicistat", "nirmatrelvir"),
    "tizanidine": ("tizanidine",),
    "strong_cyp1a2_inhibitor": ("ciprofloxacin", "fluvoxamine"),
    "cyp1a2_narrow": ("theophylline", "clozapine"),
    "ssri_snri_all": ("citalopram", "escitalopram", "fluoxetine", "fluvoxamine", "paroxetine", "sertraline",
                      "venlafaxine", "desvenlafaxine", "duloxetine"),
}

#: Ingredients the resolver spells with a salt or form that still belong to a group.
_POTASSIUM_SALT = re.compile(r"^potassium\b")


@dataclass(frozen=True)
class Interaction:
    """One stated interaction between two groups: how serious, what happens, and where it is stated."""

    first: str
    second: str
    #: "contraindicated" or "major" (must interrupt: an override with a reason), "moderate" (a warning), "minor"
    #: (the ANSM thesaurus' "à prendre en compte": said, never interrupting).
    severity: str
    effect: str
    source: str


TABLE: tuple[Interaction, ...] = (
    Interaction("warfarin", "nsaid", "major", "raised bleeding risk (antiplatelet effect and GI injury)",
                "Coumadin (warfarin) label, 7 Drug Interactions; BNF Appendix 1 (coumarins)"),
    Interaction("warfarin", "macrolide", "major", "raised INR and bleeding risk",
                "Coumadin (warfarin) label, 7 Drug Interactions; BNF Appendix 1 (coumarins)"),
    Interaction("warfarin", "azole", "major", "raised INR and bleeding risk (CYP2C9/3A4 inhibition)",
                "Coumadin (warfarin) label, 7 Drug Interactions; BNF Appendix 1 (coumarins)"),
    Interaction("warfarin", "metronidazole", "major", "raised INR and bleeding risk (CYP2C9 inhibition)",
                "Coumadin (warfarin) label, 7 Drug Interactions; BNF Appendix 1 (coumarins)"),
    Interaction("warfarin", "co-trimoxazole", "major", "raised INR and bleeding risk",
                "Coumadin (warfarin) label, 7 Drug Interactions; BNF Appendix 1 (coumarins)"),
    Interaction("methotrexate", "co-trimoxazole", "major", "methotrexate toxicity (bone-marrow suppression: additive "
                "antifolate effect, reduced renal clearance)", "methotrexate label, 7 Drug Interactions; MHRA Drug "
                "Safety Update 2020 (methotrexate); BNF Appendix 1"),
    Interaction("methotrexate", "nsaid", "major", "methotrexate toxicity (reduced renal clearance)",
                "methotrexate label, 7 Drug Interactions; BNF Appendix 1"),
    Interaction("acei_arb", "potassium", "major", "hyperkalaemia",
                "ACE inhibitor and ARB labels (e.g. Zestril, Cozaar), Drug Interactions; BNF Appendix 1"),
    Interaction("nitrate", "pde5", "contraindicated", "profound hypotension",
                "Viagra (sildenafil) and Cialis (tadalafil) labels, 4 Contraindications; Adempas label, 4"),
    Interaction("ssri_snri", "maoi", "contraindicated", "serotonin syndrome",
                "SSRI/SNRI labels (e.g. Zoloft, Effexor), 4 Contraindications; BNF Appendix 1"),
    Interaction("serotonergic_opioid", "maoi", "contraindicated", "serotonin syndrome or opioid toxicity",
                "Ultram (tramadol) and meperidine labels, 4 Contraindications; BNF Appendix 1"),
    Interaction("ssri_snri", "serotonergic_opioid", "major", "serotonin syndrome; tramadol also lowers the seizure "
                "threshold", "Ultram (tramadol) label, 5 Warnings (serotonin syndrome) and 7 Drug Interactions"),
    Interaction("qt", "qt", "major", "additive QT prolongation (torsades de pointes)",
                "CredibleMeds QTdrugs list (known risk of TdP); the drugs' labels, Warnings (QT prolongation)"),
    Interaction("clopidogrel", "cyp2c19_ppi", "major", "reduced antiplatelet effect of clopidogrel (CYP2C19 "
                "inhibition); avoid, a PPI such as pantoprazole is preferred", "Plavix (clopidogrel) label, 5.1 and "
                "7; MHRA Drug Safety Update 2010"),
    Interaction("cyp3a4_statin", "strong_cyp3a4_inhibitor", "major", "myopathy and rhabdomyolysis (raised statin "
                "levels); simvastatin and lovastatin: contraindicated", "Zocor (simvastatin) label, 4 "
                "Contraindications and 7; Lipitor (atorvastatin) label, 7"),
    Interaction("lithium", "nsaid", "major", "lithium toxicity (reduced renal clearance)",
                "lithium label, 7 Drug Interactions; BNF Appendix 1"),
    Interaction("lithium", "acei_arb", "major", "lithium toxicity (reduced renal clearance)",
                "lithium label, 7 Drug Interactions; BNF Appendix 1"),
    Interaction("lithium", "lithium_raisers", "major", "lithium toxicity (thiazides reduce its clearance)",
                "lithium label, 7 Drug Interactions; BNF Appendix 1"),
    Interaction("thiopurine", "xanthine_oxidase", "major", "azathioprine/mercaptopurine toxicity (bone-marrow "
                "suppression): the thiopurine dose must be cut to a quarter or less", "Imuran (azathioprine) label, "
                "7 Drug Interactions; Zyloprim (allopurinol) label"),
    Interaction("digoxin", "digoxin_raisers", "major", "digoxin toxicity (raised digoxin levels)",
                "Lanoxin (digoxin) label, 7 Drug Interactions; BNF Appendix 1"),
    # The anticoagulant pairs of the ONC high-priority list (Phansalkar et al., JAMIA 2012) and the DOAC labels.
    Interaction("doac", "nsaid_full_dose", "major", "raised bleeding risk (antiplatelet effect and GI injury)",
                "Eliquis (apixaban) label, 5.2 and 7.3; Xarelto label, 7.3; BNF Appendix 1; Phansalkar 2012"),
    Interaction("doac", "aspirin", "major", "raised bleeding risk (unless a specialist intends dual therapy)",
                "Eliquis label, 7.3; Xarelto label, 7.3; BNF Appendix 1"),
    Interaction("doac", "antiplatelet", "major", "raised bleeding risk (unless a specialist intends dual therapy)",
                "Eliquis label, 7.3; Xarelto label, 7.3; BNF Appendix 1"),
    Interaction("doac", "warfarin", "contraindicated", "two oral anticoagulants together (switch, never combine)",
                "Eliquis label, 2.4 (switching) and 5.2; BNF Appendix 1"),
    Interaction("doac", "heparins", "major", "two anticoagulants together (bleeding), except when switching",
                "Eliquis label, 7.3; Lovenox label, 7; BNF Appendix 1"),
    Interaction("warfarin", "heparins", "major", "two anticoagulants together (bleeding), except when bridging",
                "Coumadin label, 7; BNF Appendix 1"),
    Interaction("doac", "strong_cyp3a4_inhibitor", "major", "raised DOAC levels and bleeding (combined CYP3A4 and "
                "P-gp inhibition)", "Eliquis label, 7.1; Xarelto label, 7.2; BNF Appendix 1"),
    Interaction("doac", "strong_inducer", "major", "much reduced anticoagulation (stroke, clot): avoid together",
                "Eliquis label, 7.2; Xarelto label, 7.2; BNF Appendix 1"),
    Interaction("warfarin", "antiplatelet", "major", "raised bleeding risk",
                "Coumadin label, 7; BNF Appendix 1; Phansalkar 2012"),
    Interaction("warfarin", "amiodarone", "major", "raised INR and bleeding (reduce the warfarin dose, check INR)",
                "Coumadin label, 7; Cordarone label, 7; BNF Appendix 1"),
    Interaction("warfarin", "fluoroquinolone", "major", "raised INR and bleeding risk",
                "Coumadin label, 7; BNF Appendix 1"),
    Interaction("warfarin", "strong_inducer", "major", "reduced INR (loss of anticoagulation)",
                "Coumadin label, 7; BNF Appendix 1"),
    Interaction("warfarin", "paracetamol", "moderate", "regular paracetamol (over about 2 g a day for several days) "
                "raises the INR: check the INR", "Coumadin label, 7; BNF Appendix 1 (paracetamol)"),
    # Potassium, serotonergic, CYP3A4 and marrow pairs a formulary lists.
    Interaction("acei", "arb", "major", "dual renin-angiotensin blockade: hyperkalaemia, renal failure, hypotension",
                "ACE inhibitor and ARB labels, 5 Warnings (dual blockade); MHRA 2014; BNF Appendix 1"),
    Interaction("trimethoprim", "acei_arb", "major", "hyperkalaemia", "Bactrim label, 5; BNF Appendix 1"),
    Interaction("trimethoprim", "k_sparing", "major", "hyperkalaemia", "Bactrim label, 5; BNF Appendix 1"),
    Interaction("potassium", "potassium", "major", "hyperkalaemia (a potassium supplement with a potassium-sparing "
                "diuretic, or two of them)", "Aldactone label, 4 and 7; BNF Appendix 1"),
    Interaction("colchicine", "strong_cyp3a4_inhibitor", "major", "fatal colchicine toxicity (CYP3A4 and P-gp "
                "inhibition)", "Colcrys label, 4 Contraindications (renal or hepatic impairment) and 7; MHRA 2010"),
    Interaction("clozapine", "marrow_suppressant", "major", "agranulocytosis (additive bone-marrow suppression)",
                "Clozaril label, 5.1 and 7; BNF Appendix 1"),
    Interaction("cyp3a4_critical", "strong_cyp3a4_inhibitor_all", "contraindicated", "large rises in the drug's "
                "level (arrhythmia, toxicity, rejection-drug overexposure)", "Paxlovid and Norvir labels, 4 "
                "Contraindications; Vfend label, 4 (sirolimus); clarithromycin label, 4; BNF Appendix 1"),
    Interaction("tizanidine", "strong_cyp1a2_inhibitor", "contraindicated", "profound hypotension and sedation "
                "(tizanidine levels raised about tenfold)", "Zanaflex label, 4 Contraindications; BNF Appendix 1"),
    Interaction("cyp1a2_narrow", "strong_cyp1a2_inhibitor", "major", "theophylline or clozapine toxicity (CYP1A2 "
                "inhibition)", "theophylline and Clozaril labels, 7; BNF Appendix 1"),
    Interaction("ssri_snri_all", "triptan", "moderate", "serotonin syndrome (rare): warn the patient",
                "triptan labels, 5 Warnings; BNF Appendix 1"),
    Interaction("ssri_snri_all", "nsaid_full_dose", "moderate", "raised GI bleeding risk: consider a PPI",
                "SSRI labels, 5 Warnings (abnormal bleeding); BNF Appendix 1"),
)


#: Most serious first; "contraindicated" and "major" interrupt (an override with a reason), "moderate" warns,
#: "minor" is said only.
RANK = ansm.RANK
INTERRUPTING = frozenset({"contraindicated", "major"})


@dataclass(frozen=True)
class Found:
    """An interaction of one ingredient of the new drug with one ingredient of an active drug."""

    ingredient: str
    other: str
    interaction: Interaction


def groups_of(ingredient: str) -> frozenset[str]:
    """The groups ``ingredient`` belongs to (a potassium salt counts as potassium)."""
    name = ingredient.lower().strip()
    found = {key for key, members in GROUPS.items() if name in members}
    if _POTASSIUM_SALT.match(name):
        found.add("potassium")
    return frozenset(found)


def _local(a: str, b: str) -> Interaction | None:
    """The most serious entry of the hand-written table between two ingredients, or None."""
    ga, gb = groups_of(a), groups_of(b)
    best: Interaction | None = None
    for entry in TABLE:
        stated = (entry.first in ga and entry.second in gb) or (entry.second in ga and entry.first in gb)
        if stated and (best is None or RANK[entry.severity] < RANK[best.severity]):
            best = entry
    return best


def from_ansm(entry: ansm.Entry) -> Interaction:
    """A thesaurus entry as an interaction: its mechanism as the thesaurus words it (French), and as its source the
    thesaurus, the pair as it prints it and its levels with their conditions."""
    return Interaction(entry.a, entry.b, entry.severity, entry.mechanism,
                       f"{ansm.SOURCE}: {entry.shown} — {entry.levels}")


def _both(local: Interaction, french: Interaction) -> Interaction:
    """One interaction stated by both sources: the more serious severity, both effects and both sources."""
    severity = min(local.severity, french.severity, key=RANK.__getitem__)
    return Interaction(local.first, local.second, severity, f"{local.effect}; ANSM: {french.effect}",
                       f"{local.source}; {french.source}")


def interaction_of(a: str, b: str) -> Interaction | None:
    """The interaction stated between two ingredients by the local table, the ANSM thesaurus or both, or None."""
    local, entry = _local(a, b), ansm.between(a, b)
    french = from_ansm(entry) if entry else None
    if local and french:
        return _both(local, french)
    return local or french


def interactions_between(new: tuple[str, ...], active: tuple[str, ...]) -> list[Found]:
    """Every stated interaction between an ingredient of ``new`` and one of ``active``, contraindicated first
    (one per pair of ingredients; an ingredient never interacts with itself here: that is a duplicate order)."""
    out: list[Found] = []
    for a, b in dict.fromkeys(product(new, active)):
        if a == b:
            continue
        found = interaction_of(a, b)
        if found:
            out.append(Found(a, b, found))
    return sorted(out, key=lambda f: RANK[f.interaction.severity])
