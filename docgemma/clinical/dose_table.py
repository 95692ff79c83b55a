"""Usual and maximum doses of the common systemic drugs (the WHO Model List of Essential Medicines' and every drug
in the demo record), each row with its source, for the prescription's pre-write dose check (:mod:`.dose_check`).

Figures are adult maxima per dose and per period as the source gives them (US prescribing information on
DailyMed, section 2; the BNF; the WHO Model Formulary), paediatric mg/kg figures from the BNF for Children or the
WHO Model Formulary for Children, and age contraindications with the regulator's warning. They are limits for a
safety card that makes the clinician look again, not dosing advice: renal, hepatic and specialist regimens
differ, and an override with a reason exists for them. Opioids are limited to the opioid-naive starting dose
(ISMP high-alert medicines: a tolerant patient's dose is approved with a reason). Names are the ingredient names
of :mod:`.ingredients` (acetaminophen, albuterol, meperidine: the resolver maps paracetamol, salbutamol, pethidine).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["TABLE", "DoseLimit", "limit_for"]


@dataclass(frozen=True)
class DoseLimit:
    """One drug's dose limits in ``unit`` ("mg", "units", "mmol" or "mL"): ``usual`` a usual adult single dose
    (with ``usual_frequency``), ``dose`` the largest adult single dose, ``total`` the most in ``per_days`` days
    (None: no period maximum), ``source`` where the figures come from.

    ``weekly``: given once a week only (oral methotrexate). ``alert``: why it is a high-alert medicine (ISMP).
    ``kg``/``kg_day``: paediatric maxima per kg per dose and per day (``kg_all``: weight-based for adults too),
    ``child_dose``: a child's fixed maximum per dose where the formulary gives one instead, ``child_source``.
    ``min_age``: contraindicated below that age in years, ``age_source`` says who says so.
    ``count_mg``: mg per puff/tablet where one strength is standard; ``count_max``: most puffs per dose.
    ``mg_per_mmol``: a mass order converted to mmol; ``meq_per_mmol``: mEq in one mmol (2 for Mg, Ca);
    ``units_per_mg``: a drug also ordered in units (enoxaparin anti-Xa units, benzylpenicillin).
    ``parts``: for a combination checked as its first ingredient, the most of each other ingredient in one dose (mg,
    from the row's source), so a strength its name writes without a unit can be read (:mod:`.name_strength`)."""

    drug: str
    unit: str
    usual: float
    usual_frequency: str
    dose: float
    total: float | None
    source: str
    route: str = ""
    per_days: float = 1.0
    weekly: bool = False
    alert: str = ""
    kg: float | None = None
    kg_day: float | None = None
    kg_all: bool = False
    child_dose: float | None = None
    child_source: str = ""
    min_age: float = 0.0
    age_source: str = ""
    count_mg: float | None = None
    count_max: float | None = None
    mg_per_mmol: float | None = None
    meq_per_mmol: float = 1.0
    units_per_mg: float | None = None
    parts: tuple[tuple[str, float], ...] = ()


OPIOID = "ISMP high-alert medicine (opioid): the limit is the opioid-naive starting dose"
ANTICOAG = "ISMP high-alert medicine (anticoagulant)"
INSULIN = "ISMP high-alert medicine (insulin): doses above these are unusual and need confirming"
NARROW = "narrow therapeutic index: toxic not far above the usual dose"
BNF, BNFC, WHO, WHOC = "BNF", "BNF for Children", "WHO Model Formulary", "WHO Model Formulary for Children"
CODEINE_AGE = "MHRA 2013 / FDA 2017: contraindicated under 12 years (ultra-rapid metabolism, fatal respiratory depression)"
TETRA_AGE = "US label: not under 8 years (permanent tooth discolouration); BNF: not under 12"


def _r(drug: str, unit: str, usual: float, frequency: str, dose: float, total: float | None, source: str,
       **extra: object) -> DoseLimit:
    return DoseLimit(drug, unit, usual, frequency, dose, total, source, **extra)  # type: ignore[arg-type]


TABLE: tuple[DoseLimit, ...] = (
    # Analgesics and NSAIDs
    _r("acetaminophen", "mg", 1000, "four times daily", 1000, 4000, "US label (Ofirmev) / OTC Drug Facts",
       kg=15, kg_day=75, child_source=f"{BNFC} (15 mg/kg, max 75 mg/kg/day)"),
    _r("ibuprofen", "mg", 400, "three times daily", 800, 3200, "US label (Motrin)", kg=10, kg_day=30,
       child_source=f"{BNFC} (5-10 mg/kg, max 30 mg/kg/day)"),
    _r("aspirin", "mg", 75, "once daily", 1000, 3900, "US OTC Drug Facts", min_age=16,
       age_source="MHRA/BNF: not under 16 years (Reye's syndrome)"),
    _r("naproxen", "mg", 500, "twice daily", 1000, 1500, "US label (Naprosyn)", kg=7.5, kg_day=15,
       child_source=f"{BNFC} (5-7.5 mg/kg twice daily)"),
    _r("diclofenac", "mg", 50, "three times daily", 75, 150, BNF, kg=1, kg_day=3, child_source=f"{BNFC} (0.3-1 mg/kg)"),
    _r("celecoxib", "mg", 200, "once daily", 400, 400, "US label (Celebrex)"),
    _r("ketorolac", "mg", 10, "every 6 hours", 30, 120,
       "US label (Toradol: 30 mg IV/IM every 6 hours, max 120 mg/day; oral 10 mg, max 40 mg/day; 5 days at most)"),
    _r("indomethacin", "mg", 50, "three times daily", 50, 200, BNF),
    # Opioids (opioid-naive starting doses) and their antagonist
    _r("morphine", "mg", 10, "every 4 hours", 10, 60, f"{BNF} (5-10 mg every 4 hours)", alert=OPIOID, kg=0.4,
       kg_day=2.4, child_source=f"{WHOC} (200-400 micrograms/kg every 4 hours)"),
    _r("oxycodone", "mg", 5, "every 6 hours", 15, 90, "US label (Roxicodone: 5-15 mg every 4-6 hours)", alert=OPIOID,
       kg=0.2, kg_day=1.2, child_dose=5, child_source=f"{BNFC} (200 micrograms/kg, max 5 mg)"),
    _r("fentanyl", "mg", 0.05, "once only", 0.1, 0.3, "US label (fentanyl citrate injection: 50-100 micrograms)",
       alert=OPIOID, kg=0.001, kg_day=0.006, child_source=f"{BNFC} (1 microgram/kg IV)"),
    _r("hydromorphone", "mg", 2, "every 4 hours", 4, 24, "US label (Dilaudid: 2-4 mg every 4-6 hours)", alert=OPIOID),
    _r("codeine", "mg", 30, "four times daily", 60, 240, BNF, alert=OPIOID, min_age=12, age_source=CODEINE_AGE),
    _r("tramadol", "mg", 50, "four times daily", 100, 400, "US label (Ultram)", alert=OPIOID, min_age=12,
       age_source="FDA 2017: contraindicated under 12 years"),
    _r("meperidine", "mg", 50, "every 4 hours", 100, 600, f"{BNF} (pethidine 50-100 mg every 4 hours)", alert=OPIOID),
    _r("methadone", "mg", 5, "every 8 hours", 10, 30, f"{BNF} (pain: 5-10 mg every 6-8 hours)", alert=OPIOID),
    _r("buprenorphine", "mg", 0.2, "every 8 hours", 0.4, 1.6, f"{BNF} (pain, sublingual 200-400 micrograms)",
       alert=OPIOID),
    _r("naloxone", "mg", 0.4, "once only", 2, 10, "US label (naloxone injection)", kg=0.1, kg_day=0.3, child_dose=2,
       child_source=f"{BNFC} (100 micrograms/kg, max 2 mg)"),
    # Antibacterials
    _r("amoxicillin", "mg", 500, "three times daily", 1000, 3000, "US label (Amoxil)", kg=30, kg_day=90,
       child_dose=1000, child_source=f"{BNFC} (high dose 30 mg/kg, max 1 g, three times daily)"),
    _r("amoxicillin+clavulanate", "mg", 500, "three times daily", 1000, 3000,
       "US label (Augmentin), as amoxicillin; clavulanate at most 200 mg (BNF: IV 1.2 g = 1 g + 200 mg)",
       parts=(("clavulanate", 200),), kg=30, kg_day=90, child_dose=1000,
       child_source=f"{BNFC} (as amoxicillin, 30 mg/kg three times daily)"),
    _r("flucloxacillin", "mg", 500, "four times daily", 2000, 8000, f"{BNF} (oral 0.5-1 g, IV up to 2 g, 4 times daily)",
       kg=50, kg_day=200, child_dose=2000, child_source=f"{BNFC} (up to 50 mg/kg four times daily)"),
    _r("penicillin v", "mg", 500, "four times daily", 1000, 4000, BNF, kg=25, kg_day=100, child_dose=1000,
       child_source=f"{WHOC} (12.5-25 mg/kg four times daily)"),
    _r("penicillin g", "mg", 1200, "four times daily", 2400, 14400,
       f"{BNF} (benzylpenicillin; benzathine 2.4 million units = 1.44 g, {WHO})", kg=50, kg_day=300, child_dose=2400,
       child_source=f"{BNFC} (25-50 mg/kg every 4-6 hours)", units_per_mg=1667.0),
    _r("ampicillin", "mg", 1000, "four times daily", 2000, 12000, "US label (ampicillin for injection)", kg=100,
       kg_day=400, child_dose=2000, child_source=f"{WHOC} (50-100 mg/kg every 6 hours)"),
    _r("cephalexin", "mg", 500, "four times daily", 1000, 4000, "US label (Keflex)", kg=25, kg_day=100,
       child_dose=1000, child_source=f"{BNFC} (up to 25 mg/kg four times daily)"),
    _r("ceftriaxone", "mg", 1000, "once daily", 4000, 4000, "US label (Rocephin)", kg=100, kg_day=100,
       child_dose=4000, child_source=f"{BNFC} (50-80 mg/kg daily; meningitis 100 mg/kg)"),
    _r("cefuroxime", "mg", 500, "twice daily", 1500, 6000, BNF),
    _r("cefotaxime", "mg", 1000, "three times daily", 2000, 12000, "US label (Claforan)", kg=50, kg_day=200,
       child_dose=2000, child_source=f"{BNFC} (50 mg/kg every 6-12 hours)"),
    _r("cefazolin", "mg", 1000, "three times daily", 2000, 12000, "US label (cefazolin for injection)"),
    _r("cefixime", "mg", 400, "once daily", 400, 400, "US label (Suprax)", kg=8, kg_day=8, child_dose=400,
       child_source=f"{BNFC} (8 mg/kg daily)"),
    _r("azithromycin", "mg", 500, "once daily", 2000, 2000, "US label (Zithromax; 1-2 g single dose for STIs)",
       kg=10, kg_day=10, child_dose=500, child_source=f"{BNFC} (10 mg/kg once daily)"),
    _r("clarithromycin", "mg", 500, "twice daily", 500, 1000, BNF, kg=7.5, kg_day=15, child_dose=500,
       child_source=f"{BNFC} (7.5 mg/kg twice daily)"),
    _r("erythromycin", "mg", 500, "four times daily", 1000, 4000, BNF, kg=12.5, kg_day=50, child_dose=1000,
       child_source=f"{WHOC} (7.5-12.5 mg/kg four times daily)"),
    _r("doxycycline", "mg", 100, "twice daily", 200, 200, "US label (Vibramycin)", min_age=8, age_source=TETRA_AGE),
    _r("tetracycline", "mg", 500, "four times daily", 500, 2000, BNF, min_age=8, age_source=TETRA_AGE),
    _r("minocycline", "mg", 100, "twice daily", 200, 200, "US label (Minocin)", min_age=8, age_source=TETRA_AGE),
    _r("ciprofloxacin", "mg", 500, "twice daily", 750, 1500, "US label (Cipro)", kg=20, kg_day=40, child_dose=750,
       child_source=f"{BNFC} (up to 20 mg/kg twice daily)"),
    _r("levofloxacin", "mg", 500, "once daily", 750, 1000, "US label (Levaquin) / BNF (500 mg twice daily)"),
    _r("moxifloxacin", "mg", 400, "once daily", 400, 400, "US label (Avelox)"),
    _r("metronidazole", "mg", 400, "three times daily", 2000, 4000, "US label (Flagyl; 2 g single dose)", kg=7.5,
       kg_day=30, child_dose=500, child_source=f"{BNFC} (7.5 mg/kg three times daily)"),
    _r("nitrofurantoin", "mg", 100, "twice daily", 100, 400, "US label (Macrobid/Macrodantin)", kg=1.5, kg_day=6,
       child_dose=100, child_source=f"{BNFC} (750 micrograms/kg four times daily)"),
    _r("trimethoprim", "mg", 200, "twice daily", 200, 400, BNF, kg=4, kg_day=8, child_dose=200,
       child_source=f"{BNFC} (4 mg/kg twice daily)"),
    _r("sulfamethoxazole+trimethoprim", "mg", 800, "twice daily", 2400, 9600,
       "US label (Bactrim, as sulfamethoxazole; PCP up to 100 mg/kg/day; trimethoprim a fifth of it, at most 480 mg "
       "a dose)", parts=(("trimethoprim", 480),), kg=30, kg_day=120, child_dose=2400,
       child_source=f"{BNFC} (as sulfamethoxazole; PCP 120 mg/kg/day in divided doses)"),
    _r("gentamicin", "mg", 350, "once daily", 560, 560, f"{BNF} (5-7 mg/kg once daily, to 80 kg)", kg=7,
       kg_day=7, kg_all=True, child_source=f"{BNFC} (7 mg/kg once daily)"),
    _r("amikacin", "mg", 1000, "once daily", 1500, 1500, f"{BNF} (15 mg/kg once daily, max 1.5 g)", kg=15,
       kg_day=15, kg_all=True, child_source=f"{BNFC} (15 mg/kg once daily)"),
    _r("vancomycin", "mg", 1000, "twice daily", 2000, 4500, f"{BNF} (15-20 mg/kg every 8-12 hours, loading 25-30 mg/kg)",
       kg=20, kg_day=80, child_dose=2000, child_source=f"{BNFC} (15 mg/kg every 6 hours)"),
    _r("clindamycin", "mg", 300, "four times daily", 900, 4800, "US label (Cleocin)", kg=13, kg_day=40,
       child_dose=900, child_source=f"{BNFC} (up to 13 mg/kg three times daily)"),
    _r("chloramphenicol", "mg", 1000, "four times daily", 2000, 8000, f"{BNF} (12.5-25 mg/kg every 6 hours)",
       kg=25, kg_day=100, child_source=f"{BNFC} (12.5-25 mg/kg every 6 hours)"),
    _r("linezolid", "mg", 600, "twice daily", 600, 1200, "US label (Zyvox)", kg=10, kg_day=30, child_dose=600,
       child_source=f"{BNFC} (10 mg/kg three times daily)"),
    _r("meropenem", "mg", 1000, "three times daily", 2000, 6000, "US label (Merrem)", kg=40, kg_day=120,
       child_dose=2000, child_source=f"{BNFC} (10-40 mg/kg every 8 hours)"),
    _r("piperacillin+tazobactam", "mg", 4000, "three times daily", 4000, 16000,
       "US label (Zosyn, as piperacillin; 4.5 g = 4 g + tazobactam 500 mg)", parts=(("tazobactam", 500),), kg=90,
       kg_day=360, child_dose=4000,
       child_source=f"{BNFC} (as piperacillin, 90 mg/kg every 6-8 hours)"),
    _r("fosfomycin", "mg", 3000, "once only", 3000, 3000, "US label (Monurol)"),
    # Antifungals, antivirals, anthelmintics
    _r("fluconazole", "mg", 150, "once only", 800, 800, "US label (Diflucan) / BNF", kg=12, kg_day=12, child_dose=800,
       child_source=f"{BNFC} (3-12 mg/kg daily)"),
    _r("nystatin", "units", 100_000, "four times daily", 1_000_000, 4_000_000, "US label (nystatin oral suspension)",
       child_dose=500_000, child_source=f"{BNFC} (100,000 units four times daily)"),
    _r("acyclovir", "mg", 400, "three times daily", 1000, 4000, f"{BNF} (oral 800 mg 5 times daily; IV 10 mg/kg)",
       kg=20, kg_day=80, child_dose=800, child_source=f"{BNFC} (oral 20 mg/kg four times daily)"),
    _r("oseltamivir", "mg", 75, "twice daily", 75, 150, "US label (Tamiflu)", kg=3.5, kg_day=7, child_dose=75,
       child_source=f"{BNFC} (weight bands, about 3 mg/kg twice daily)"),
    _r("albendazole", "mg", 400, "once only", 400, 800, WHO, child_dose=400, child_source=f"{WHOC} (400 mg from 2 years)"),
    _r("mebendazole", "mg", 100, "twice daily", 500, 500, WHO, child_dose=500,
       child_source=f"{WHOC} (500 mg single dose from 1 year)"),
    _r("praziquantel", "mg", 2400, "once only", 4000, 6000, f"{WHO} (40 mg/kg single dose)", kg=40, kg_day=60,
       kg_all=True, child_source=f"{WHOC} (40 mg/kg single dose)"),
    _r("ivermectin", "mg", 12, "once only", 24, 24, f"{WHO} (150-200 micrograms/kg)", kg=0.4, kg_day=0.4, kg_all=True,
       child_source=f"{WHOC} (150-200 micrograms/kg)"),
    # Tuberculosis
    _r("isoniazid", "mg", 300, "once daily", 300, 300, f"{WHO} (5 mg/kg, max 300 mg daily)", kg=15, kg_day=15,
       child_dose=300, child_source=f"{WHOC} (10 mg/kg, 7-15 mg/kg, daily)"),
    _r("rifampin", "mg", 600, "once daily", 600, 600, f"{WHO} (10 mg/kg, max 600 mg daily)", kg=20, kg_day=20,
       child_dose=600, child_source=f"{WHOC} (15 mg/kg, 10-20 mg/kg, daily)"),
    _r("pyrazinamide", "mg", 1500, "once daily", 2000, 2000, f"{WHO} (25 mg/kg, max 2 g daily)", kg=40, kg_day=40,
       child_dose=2000, child_source=f"{WHOC} (35 mg/kg, 30-40 mg/kg, daily)"),
    _r("ethambutol", "mg", 1200, "once daily", 1600, 1600, f"{WHO} (15 mg/kg daily)", kg=25, kg_day=25,
       child_dose=1600, child_source=f"{WHOC} (20 mg/kg, 15-25 mg/kg, daily)"),
    # HIV (adult fixed doses, WHO consolidated guidelines / US labels)
    _r("tenofovir", "mg", 300, "once daily", 300, 300, "US label (Viread)"),
    _r("lamivudine", "mg", 300, "once daily", 300, 300, "US label (Epivir)"),
    _r("emtricitabine", "mg", 200, "once daily", 200, 200, "US label (Emtriva)"),
    _r("efavirenz", "mg", 600, "once daily", 600, 600, "US label (Sustiva)"),
    _r("dolutegravir", "mg", 50, "once daily", 50, 100, "US label (Tivicay; 50 mg twice daily with inducers)"),
    _r("zidovudine", "mg", 300, "twice daily", 300, 600, "US label (Retrovir)"),
    _r("nevirapine", "mg", 200, "twice daily", 200, 400, "US label (Viramune)"),
    _r("abacavir", "mg", 600, "once daily", 600, 600, "US label (Ziagen)"),
    _r("lopinavir+ritonavir", "mg", 400, "twice daily", 800, 800,
       "US label (Kaletra, as lopinavir; 800/200 mg once daily: ritonavir at most 200 mg)", parts=(("ritonavir", 200),)),
    # Antimalarials
    _r("artemether+lumefantrine", "mg", 80, "twice daily", 80, 160,
       f"{WHO} (as artemether, 4 tablets of 20/120 mg twice daily: lumefantrine at most 480 mg)",
       parts=(("lumefantrine", 480),)),
    _r("artesunate", "mg", 160, "once only", 300, 600, f"{WHO} (2.4 mg/kg IV at 0, 12, 24 h)", kg=3, kg_day=6,
       kg_all=True, child_source=f"{WHOC} (3 mg/kg under 20 kg, 2.4 mg/kg above)"),
    _r("chloroquine", "mg", 600, "once only", 620, 1000, f"{WHO} (as base, 10 mg/kg then 5 mg/kg)", kg=10, kg_day=15,
       child_source=f"{WHOC} (as base, 10 mg/kg then 5 mg/kg)"),
    _r("quinine", "mg", 600, "three times daily", 1400, 2800, f"{WHO} (loading 20 mg/kg, then 10 mg/kg every 8 h)",
       kg=20, kg_day=40, child_source=f"{WHOC} (loading 20 mg/kg, then 10 mg/kg every 8 hours)"),
    _r("primaquine", "mg", 15, "once daily", 45, 30, f"{WHO} (0.25-0.5 mg/kg daily; 0.75 mg/kg weekly)", kg=0.75,
       kg_day=0.5, child_source=f"{WHOC} (0.25-0.5 mg/kg daily)"),
    _r("mefloquine", "mg", 250, "once weekly", 750, 1250, f"{WHO} (treatment 15 mg/kg then 10 mg/kg)"),
    _r("atovaquone+proguanil", "mg", 250, "once daily", 1000, 1000,
       "US label (Malarone, as atovaquone; treatment 4 tablets of 250/100 mg: proguanil at most 400 mg)",
       parts=(("proguanil", 400),)),
    _r("hydroxychloroquine", "mg", 200, "twice daily", 800, 800, "US label (Plaquenil; malaria loading 800 mg)"),
    # Cardiovascular
    _r("lisinopril", "mg", 10, "once daily", 80, 80, "US label (Zestril)"),
    _r("enalapril", "mg", 10, "once daily", 40, 40, "US label (Vasotec)"),
    _r("ramipril", "mg", 5, "once daily", 10, 10, "US label (Altace)"),
    _r("perindopril", "mg", 4, "once daily", 16, 16, "US label (Aceon)"),
    _r("losartan", "mg", 50, "once daily", 100, 100, "US label (Cozaar)"),
    _r("candesartan", "mg", 8, "once daily", 32, 32, "US label (Atacand)"),
    _r("valsartan", "mg", 80, "once daily", 320, 320, "US label (Diovan)"),
    _r("amlodipine", "mg", 5, "once daily", 10, 10, "US label (Norvasc)"),
    _r("nifedipine", "mg", 30, "once daily", 90, 120, "US label (Procardia XL)"),
    _r("diltiazem", "mg", 60, "three times daily", 360, 480, "US label (Cardizem)"),
    _r("verapamil", "mg", 80, "three times daily", 240, 480, "US label (Calan)"),
    _r("bisoprolol", "mg", 5, "once daily", 20, 20, "US label (Zebeta)"),
    _r("atenolol", "mg", 50, "once daily", 100, 100, "US label (Tenormin)"),
    _r("metoprolol", "mg", 50, "twice daily", 200, 450, "US label (Lopressor)"),
    _r("propranolol", "mg", 40, "twice daily", 320, 640, "US label (Inderal)"),
    _r("carvedilol", "mg", 6.25, "twice daily", 50, 100, "US label (Coreg)"),
    _r("labetalol", "mg", 200, "twice daily", 1200, 2400, "US label (Trandate; IV bolus 20-80 mg, total 300 mg)"),
    _r("hydralazine", "mg", 25, "four times daily", 100, 300, "US label (hydralazine tablets)"),
    _r("methyldopa", "mg", 250, "three times daily", 1000, 3000, "US label (methyldopa tablets)"),
    _r("furosemide", "mg", 40, "once daily", 600, 600, "US label (Lasix; oedema up to 600 mg/day)"),
    _r("bumetanide", "mg", 1, "once daily", 10, 10, "US label (Bumex)"),
    _r("hydrochlorothiazide", "mg", 25, "once daily", 50, 50, "US label (Microzide)"),
    _r("chlorthalidone", "mg", 25, "once daily", 100, 100, "US label (Thalitone)"),
    _r("indapamide", "mg", 2.5, "once daily", 5, 5, "US label (Lozol)"),
    _r("spironolactone", "mg", 25, "once daily", 400, 400, "US label (Aldactone)"),
    _r("digoxin", "mg", 0.25, "once daily", 0.5, 1.5,
       f"{BNF} (maintenance 62.5-250 micrograms daily; loading up to 1.5 mg in divided doses)", alert=NARROW,
       kg=0.035, kg_day=0.035, child_source=f"{BNFC} (loading 35 micrograms/kg over 24 hours)"),
    _r("amiodarone", "mg", 200, "once daily", 800, 1600, "US label (Cordarone; loading 800-1600 mg/day)"),
    _r("isosorbide mononitrate", "mg", 30, "once daily", 120, 240, "US label (Imdur)"),
    _r("nitroglycerin", "mg", 0.4, "once only", 0.8, None, "US label (Nitrostat / GTN spray 400-800 micrograms)"),
    _r("atorvastatin", "mg", 20, "once daily", 80, 80, "US label (Lipitor)"),
    _r("simvastatin", "mg", 40, "once daily", 80, 80, "US label (Zocor)"),
    _r("rosuvastatin", "mg", 10, "once daily", 40, 40, "US label (Crestor)"),
    _r("pravastatin", "mg", 40, "once daily", 80, 80, "US label (Pravachol)"),
    _r("clopidogrel", "mg", 75, "once daily", 600, 600, "US label (Plavix; loading 300-600 mg)"),
    _r("ticagrelor", "mg", 90, "twice daily", 180, 360, "US label (Brilinta; loading 180 mg)"),
    _r("epinephrine", "mg", 0.5, "once only", 1, None, f"{BNF} (anaphylaxis 0.5 mg IM; cardiac arrest 1 mg IV)",
       alert="ISMP high-alert medicine (adrenergic agonist)", kg=0.01, kg_day=0.05, child_dose=0.5,
       child_source=f"{BNFC} (10 micrograms/kg, max 500 micrograms)"),
    # Anticoagulants
    _r("warfarin", "mg", 5, "once daily", 10, 10, "US label (Coumadin; usual maintenance 2-10 mg/day)", alert=ANTICOAG),
    _r("heparin", "units", 5000, "twice daily", 15000, 45000, f"{BNF} (treatment 15,000 units every 12 h SC)",
       alert=ANTICOAG, kg=75, kg_day=700, child_source=f"{BNFC} (loading 75 units/kg, then 25 units/kg/hour)"),
    _r("enoxaparin", "mg", 40, "once daily", 150, 200, "US label (Lovenox; 1 mg/kg twice daily or 1.5 mg/kg daily)",
       alert=ANTICOAG, kg=1.5, kg_day=2, kg_all=True, child_source=f"{BNFC} (1-1.5 mg/kg every 12 hours)",
       units_per_mg=100.0),
    _r("apixaban", "mg", 5, "twice daily", 10, 20, "US label (Eliquis; 10 mg twice daily for 7 days)", alert=ANTICOAG),
    _r("rivaroxaban", "mg", 20, "once daily", 20, 30, "US label (Xarelto; 15 mg twice daily for 21 days)",
       alert=ANTICOAG),
    _r("dabigatran", "mg", 150, "twice daily", 150, 300, "US label (Pradaxa)", alert=ANTICOAG),
    # Diabetes (insulins in units: a mass for insulin is a wrong unit)
    _r("metformin", "mg", 500, "twice daily", 2000, 2550, "US label (Glucophage / Glucophage XR)"),
    _r("gliclazide", "mg", 80, "twice daily", 160, 320, BNF),
    _r("glipizide", "mg", 5, "once daily", 20, 40, "US label (Glucotrol)"),
    _r("glyburide", "mg", 5, "once daily", 20, 20, "US label (glyburide tablets)"),
    _r("glimepiride", "mg", 2, "once daily", 8, 8, "US label (Amaryl)"),
    _r("sitagliptin", "mg", 100, "once daily", 100, 100, "US label (Januvia)"),
    _r("empagliflozin", "mg", 10, "once daily", 25, 25, "US label (Jardiance)"),
    _r("dapagliflozin", "mg", 10, "once daily", 10, 10, "US label (Farxiga)"),
    _r("pioglitazone", "mg", 30, "once daily", 45, 45, "US label (Actos)"),
    _r("insulin", "units", 10, "three times daily", 100, 300, "ISMP / US labels (individualised; 0.5-1 unit/kg/day)",
       alert=INSULIN, kg=1, kg_day=2, kg_all=True, child_source=f"{BNFC} (about 0.5-1 unit/kg/day)"),
    _r("insulin glargine", "units", 20, "once daily", 100, 100, "ISMP / US label (Lantus; individualised)",
       alert=INSULIN, kg=1, kg_day=1, kg_all=True, child_source=f"{BNFC} (basal about 0.5 unit/kg/day)"),
    _r("insulin detemir", "units", 20, "twice daily", 100, 200, "ISMP / US label (Levemir)", alert=INSULIN,
       kg=1, kg_day=1.5, kg_all=True, child_source=BNFC),
    _r("insulin degludec", "units", 20, "once daily", 100, 100, "ISMP / US label (Tresiba)", alert=INSULIN,
       kg=1, kg_day=1, kg_all=True, child_source=BNFC),
    _r("insulin aspart", "units", 8, "three times daily", 50, 150, "ISMP / US label (NovoLog)", alert=INSULIN,
       kg=0.5, kg_day=1.5, kg_all=True, child_source=BNFC),
    _r("insulin lispro", "units", 8, "three times daily", 50, 150, "ISMP / US label (Humalog)", alert=INSULIN,
       kg=0.5, kg_day=1.5, kg_all=True, child_source=BNFC),
    _r("insulin isophane", "units", 20, "twice daily", 100, 200, "ISMP / US label (Humulin N)", alert=INSULIN,
       kg=1, kg_day=1.5, kg_all=True, child_source=BNFC),
    # Anticonvulsants and sedatives
    _r("phenytoin", "mg", 100, "three times daily", 2000, 2000, "US label (Dilantin; IV loading 20 mg/kg)",
       kg=20, kg_day=20, kg_all=True, child_source=f"{BNFC} (loading 20 mg/kg)"),
    _r("carbamazepine", "mg", 200, "twice daily", 800, 1600, "US label (Tegretol)", kg=10, kg_day=20,
       child_source=f"{BNFC} (up to 20 mg/kg daily in divided doses)"),
    _r("valproic acid", "mg", 500, "twice daily", 1500, 3000, f"{BNF} (sodium valproate up to 2.5 g daily; 60 mg/kg)",
       kg=30, kg_day=60, child_source=f"{BNFC} (up to 60 mg/kg daily)"),
    _r("levetiracetam", "mg", 500, "twice daily", 4500, 6000, "US label (Keppra; status epilepticus 60 mg/kg, max 4.5 g)",
       kg=60, kg_day=80, child_source=f"{BNFC} (status 40-60 mg/kg; maintenance up to 30 mg/kg twice daily)"),
    _r("lamotrigine", "mg", 100, "twice daily", 350, 700, "US label (Lamictal)"),
    _r("phenobarbital", "mg", 60, "twice daily", 1000, 1000, f"{BNF} (oral 60-180 mg; IV loading 20 mg/kg, max 1 g)",
       kg=20, kg_day=20, child_source=f"{BNFC} (loading 20 mg/kg)"),
    _r("diazepam", "mg", 5, "three times daily", 20, 40, f"{BNF} (status 10 mg IV or 10-20 mg rectally)",
       alert="benzodiazepine: respiratory depression", kg=0.5, kg_day=1, child_dose=20,
       child_source=f"{BNFC} (300 micrograms/kg IV; 500 micrograms/kg rectally)"),
    _r("lorazepam", "mg", 1, "twice daily", 4, 10, "US label (Ativan; status 4 mg IV)", kg=0.1, kg_day=0.2,
       child_dose=4, child_source=f"{BNFC} (100 micrograms/kg, max 4 mg)"),
    _r("midazolam", "mg", 5, "once only", 10, 20, "ISMP high-alert (IV sedation) / BNF (buccal 10 mg)",
       alert="ISMP high-alert medicine (IV moderate sedation)", kg=0.3, kg_day=0.6, child_dose=10,
       child_source=f"{BNFC} (buccal 300 micrograms/kg, max 10 mg)"),
    _r("clonazepam", "mg", 0.5, "three times daily", 4, 20, "US label (Klonopin)"),
    _r("pregabalin", "mg", 150, "twice daily", 300, 600, "US label (Lyrica)"),
    _r("gabapentin", "mg", 300, "three times daily", 1200, 3600, "US label (Neurontin)"),
    _r("magnesium sulfate", "mg", 4000, "once only", 5000, 30000, f"{WHO} (eclampsia: 4 g IV, 5 g IM per buttock)",
       kg=50, kg_day=100, child_dose=2000, child_source=f"{BNFC} (asthma 40 mg/kg, max 2 g)", mg_per_mmol=246.5,
       meq_per_mmol=2.0),
    # Psychiatric and dementia
    _r("sertraline", "mg", 50, "once daily", 200, 200, "US label (Zoloft)"),
    _r("fluoxetine", "mg", 20, "once daily", 80, 80, "US label (Prozac)"),
    _r("citalopram", "mg", 20, "once daily", 40, 40, "US label (Celexa; QT above 40 mg)"),
    _r("escitalopram", "mg", 10, "once daily", 20, 20, "US label (Lexapro)"),
    _r("paroxetine", "mg", 20, "once daily", 60, 60, "US label (Paxil)"),
    _r("mirtazapine", "mg", 15, "at night", 45, 45, "US label (Remeron)"),
    _r("venlafaxine", "mg", 75, "once daily", 225, 375, "US label (Effexor / Effexor XR)"),
    _r("amitriptyline", "mg", 25, "at night", 150, 300, "US label (amitriptyline; inpatients to 300 mg)"),
    _r("haloperidol", "mg", 5, "twice daily", 10, 20, BNF),
    _r("olanzapine", "mg", 10, "once daily", 20, 20, "US label (Zyprexa)"),
    _r("risperidone", "mg", 2, "twice daily", 8, 16, "US label (Risperdal)"),
    _r("quetiapine", "mg", 100, "twice daily", 400, 800, "US label (Seroquel)"),
    _r("chlorpromazine", "mg", 25, "three times daily", 300, 1000, f"{BNF} / US label"),
    _r("lithium", "mg", 400, "once daily", 1200, 2400, "US label (lithium carbonate)", alert=NARROW),
    _r("clozapine", "mg", 100, "twice daily", 450, 900, "US label (Clozaril: target 300-450 mg/day, max 900 mg/day)",
       alert="ISMP high-alert medicine (clozapine: monitoring programme)"),
    _r("flecainide", "mg", 100, "twice daily", 200, 400,
       "US label (Tambocor: max 300 mg/day for PAF/PSVT, 400 mg/day for ventricular arrhythmias)",
       alert="ISMP high-alert medicine (antiarrhythmic)"),
    _r("zopiclone", "mg", 7.5, "at night", 7.5, 7.5, f"{BNF} (7.5 mg at night; 3.75 mg in older adults)"),
    _r("donepezil", "mg", 5, "once daily", 23, 23, "US label (Aricept 5-23 mg)"),
    _r("memantine", "mg", 10, "twice daily", 28, 28, "US label (Namenda / Namenda XR)"),
    # Gastrointestinal
    _r("omeprazole", "mg", 20, "once daily", 80, 160, "US label (Prilosec; IV bolus 80 mg in GI bleeding)"),
    _r("esomeprazole", "mg", 40, "once daily", 80, 160, "US label (Nexium)"),
    _r("pantoprazole", "mg", 40, "once daily", 80, 240, "US label (Protonix; Zollinger-Ellison up to 240 mg)"),
    _r("lansoprazole", "mg", 30, "once daily", 60, 120, "US label (Prevacid)"),
    _r("famotidine", "mg", 20, "twice daily", 40, 80, "US label (Pepcid)"),
    _r("metoclopramide", "mg", 10, "three times daily", 10, 30, "EMA 2013 / BNF (max 30 mg/day)", kg=0.15,
       kg_day=0.5, child_dose=10, child_source=f"{BNFC} (100-150 micrograms/kg, max 500 micrograms/kg/day)",
       min_age=1, age_source="EMA 2013: contraindicated under 1 year (extrapyramidal effects)"),
    _r("ondansetron", "mg", 8, "twice daily", 24, 32, "US label (Zofran; IV single dose max 16 mg)", kg=0.15,
       kg_day=0.45, child_dose=8, child_source=f"{BNFC} (100-150 micrograms/kg)"),
    _r("loperamide", "mg", 2, "four times daily", 4, 16, "US label (Imodium)", min_age=2,
       age_source="US label: contraindicated under 2 years"),
    _r("lactulose", "mL", 15, "twice daily", 45, 180, "US label (lactulose solution)"),
    _r("senna", "mg", 15, "at night", 30, 30, BNF),
    _r("bisacodyl", "mg", 10, "at night", 20, 20, BNF),
    _r("prochlorperazine", "mg", 10, "three times daily", 12.5, 40, BNF),
    _r("cyclizine", "mg", 50, "three times daily", 50, 150, BNF),
    _r("promethazine", "mg", 25, "at night", 50, 100, BNF, min_age=2,
       age_source="FDA boxed warning: contraindicated under 2 years (fatal respiratory depression)"),
    # Respiratory and allergy
    _r("albuterol", "mg", 0.2, "four times daily", 5, None, f"{BNF} (inhaled 100-200 micrograms; nebulised 2.5-5 mg)",
       count_mg=0.1, count_max=10, child_dose=5, child_source=f"{BNFC} (nebulised 2.5-5 mg; up to 10 puffs)"),
    _r("ipratropium", "mg", 0.5, "four times daily", 0.5, 2, f"{BNF} (nebulised 500 micrograms)", count_mg=0.02,
       count_max=8, child_dose=0.5, child_source=f"{BNFC} (nebulised 250-500 micrograms)"),
    _r("beclomethasone", "mg", 0.2, "twice daily", 1, 2, f"{BNF} (inhaled)", count_max=4, child_dose=0.4,
       child_source=f"{BNFC} (inhaled, up to 400 micrograms twice daily)"),
    _r("budesonide", "mg", 0.4, "twice daily", 1.6, 3.2, f"{BNF} (inhaled)", count_max=4, child_dose=0.8,
       child_source=f"{BNFC} (inhaled up to 800 micrograms twice daily)"),
    _r("fluticasone", "mg", 0.25, "twice daily", 1, 2, f"{BNF} (inhaled)", count_max=4, child_dose=0.2,
       child_source=f"{BNFC} (inhaled up to 200 micrograms twice daily)"),
    _r("salmeterol", "mg", 0.05, "twice daily", 0.1, 0.2, "US label (Serevent)", count_max=4),
    _r("tiotropium", "mg", 0.018, "once daily", 0.018, 0.018, "US label (Spiriva HandiHaler)", count_max=2),
    _r("montelukast", "mg", 10, "at night", 10, 10, "US label (Singulair)", child_dose=5,
       child_source="US label (4 mg 2-5 years, 5 mg 6-14 years)"),
    _r("cetirizine", "mg", 10, "once daily", 10, 10, "US label (Zyrtec)", child_dose=10,
       child_source="US label (5-10 mg from 6 years)"),
    _r("loratadine", "mg", 10, "once daily", 10, 10, "US label (Claritin Drug Facts)", child_dose=10,
       child_source="US label (10 mg from 6 years; 5 mg 2-5 years)"),
    _r("chlorpheniramine", "mg", 4, "every 6 hours", 4, 24, "US label (Chlor-Trimeton)", child_dose=2,
       child_source="US label (2 mg every 4-6 hours, 6-11 years)"),
    _r("diphenhydramine", "mg", 25, "every 6 hours", 50, 300, "US label (Benadryl)"),
    # Corticosteroids
    _r("prednisolone", "mg", 40, "once daily", 80, 80, f"{BNF} (usually up to 60 mg daily)", kg=2, kg_day=2,
       child_dose=60, child_source=f"{BNFC} (1-2 mg/kg, max 60 mg)"),
    _r("prednisone", "mg", 40, "once daily", 80, 80, "US label (prednisone 5-60 mg/day)", kg=2, kg_day=2,
       child_dose=60, child_source=f"{BNFC} (1-2 mg/kg, max 60 mg)"),
    _r("hydrocortisone", "mg", 100, "four times daily", 500, 1000, "US label (Solu-Cortef 100-500 mg)", kg=4,
       kg_day=16, child_dose=100, child_source=f"{BNFC} (4 mg/kg every 6 hours, max 100 mg)"),
    _r("dexamethasone", "mg", 6, "once daily", 40, 40, "US label / BNF (up to 40 mg in myeloma)", kg=0.6,
       kg_day=0.6, child_dose=16, child_source=f"{BNFC} (croup 150-600 micrograms/kg)"),
    _r("methylprednisolone", "mg", 125, "once daily", 1000, 1000, "US label (Solu-Medrol; pulse 1 g)", kg=30,
       kg_day=30, child_dose=1000, child_source=f"{BNFC} (pulse 10-30 mg/kg, max 1 g)"),
    # Electrolytes, minerals, vitamins
    _r("potassium chloride", "mmol", 20, "twice daily", 40, 150,
       f"{BNF} (oral 2-4 g, 25-50 mmol, daily; IV no faster than 20 mmol/hour)",
       alert="ISMP high-alert medicine (concentrated potassium)", kg=1, kg_day=3,
       child_source=f"{BNFC} (1 mmol/kg per dose, 2-5 mmol/kg/day)", mg_per_mmol=74.55),
    _r("sodium bicarbonate", "mmol", 50, "once only", 100, 300, f"{BNF} (8.4%: 1 mmol/mL)", kg=1, kg_day=3,
       child_source=f"{BNFC} (1 mmol/kg)", mg_per_mmol=84.0),
    _r("calcium gluconate", "mg", 1000, "once only", 3000, 15000, f"{BNF} (10%: 10-30 mL, 1-3 g)", kg=100, kg_day=500,
       child_dose=2000, child_source=f"{BNFC} (0.5 mL/kg of 10%, 50 mg/kg)", mg_per_mmol=448.0, meq_per_mmol=2.0),
    _r("ferrous", "mg", 200, "twice daily", 325, 975, f"{BNF} / US label (ferrous sulfate 200-325 mg)", kg=10,
       kg_day=30, child_source=f"{BNFC} (as ferrous sulfate, about 10 mg/kg up to 3 times daily)"),
    _r("folic acid", "mg", 5, "once daily", 5, 15, f"{BNF} (5 mg daily; up to 15 mg in malabsorption)",
       child_dose=5, child_source=f"{BNFC} (up to 5 mg daily)"),
    _r("cyanocobalamin", "mg", 1, "once only", 1, 1, f"{BNF} (1 mg IM)"),
    _r("thiamine", "mg", 100, "once daily", 500, 1500, f"{BNF} (Wernicke's: 500 mg three times daily IV)"),
    _r("phytonadione", "mg", 10, "once only", 10, 20, "US label (vitamin K1 injection)", kg=0.3, kg_day=0.3,
       child_dose=10, child_source=f"{BNFC} (neonates 1 mg; 300 micrograms/kg, max 10 mg)"),
    # Endocrine, bone, gout, urology
    _r("levothyroxine", "mg", 0.1, "once daily", 0.3, 0.3, "US label (Synthroid; 1.6 micrograms/kg/day, max 300)",
       kg=0.01, kg_day=0.01, child_source=f"{BNFC} (up to 10 micrograms/kg daily in infants)"),
    _r("carbimazole", "mg", 20, "once daily", 60, 60, BNF),
    _r("propylthiouracil", "mg", 100, "three times daily", 300, 900, "US label (propylthiouracil)"),
    _r("alendronate", "mg", 70, "once weekly", 70, 70, "US label (Fosamax: 10 mg daily or 70 mg once weekly)",
       per_days=7),
    _r("methotrexate", "mg", 10, "once weekly", 25, 25,
       "US label (methotrexate tablets: once weekly, 7.5-25 mg) / ISMP", per_days=7, weekly=True,
       alert="ISMP high-alert medicine: oral methotrexate is given once a week; daily dosing has caused deaths"),
    _r("vincristine", "mg", 1.4, "once weekly", 2, 2,
       "vincristine label (1.4 mg/m2 weekly; a single dose is capped at 2 mg in most protocols)", per_days=7,
       alert="ISMP high-alert medicine (chemotherapy): intravenous only"),
    _r("allopurinol", "mg", 300, "once daily", 600, 900, "US label (Zyloprim)"),
    _r("colchicine", "mg", 0.5, "twice daily", 1.2, 2, "US label (Colcrys: 1.2 mg then 0.6 mg) / BNF (max 2 mg/day)",
       alert=NARROW + " (colchicine: fatal overdoses)"),
    _r("tamsulosin", "mg", 0.4, "once daily", 0.8, 0.8, "US label (Flomax)"),
    _r("finasteride", "mg", 5, "once daily", 5, 5, "US label (Proscar)"),
    _r("oxybutynin", "mg", 5, "twice daily", 5, 20, "US label (Ditropan)"),
    # Obstetrics and haemostasis
    _r("oxytocin", "units", 10, "once only", 10, 40, f"{WHO} (PPH 10 units IM/IV)",
       alert="ISMP high-alert medicine (IV oxytocin)"),
    _r("misoprostol", "mg", 0.6, "once only", 0.8, 1.6, f"{WHO} (PPH 600-800 micrograms)"),
    _r("ergonovine", "mg", 0.2, "once only", 0.5, 1, f"{WHO} (200-500 micrograms IM)"),
    _r("tranexamic acid", "mg", 1000, "three times daily", 1500, 4500, BNF, kg=15, kg_day=45, child_dose=1000,
       child_source=f"{BNFC} (15 mg/kg, max 1 g)"),
    # Oncology (fixed-dose immunotherapy)
    _r("pembrolizumab", "mg", 200, "every 3 weeks", 400, 200,
       "US label (Keytruda: 200 mg every 3 weeks or 400 mg every 6 weeks)", per_days=21, kg=2, child_dose=200,
       child_source="US label (Keytruda: children 2 mg/kg, max 200 mg, every 3 weeks)"),
)

#: Other spellings the resolver gives for a row's ingredient (BNF and US names of one drug).
ALIASES = {"aciclovir": "acyclovir", "beclometasone": "beclomethasone", "chlorphenamine": "chlorpheniramine",
           "sennosides": "senna", "vitamin k": "phytonadione", "vitamin k 1": "phytonadione",
           "isophane insulin": "insulin isophane", "paracetamol": "acetaminophen", "salbutamol": "albuterol"}


def _key(ingredients: tuple[str, ...] | list[str]) -> str:
    return "+".join(sorted(ALIASES.get(i.lower(), i.lower()) for i in ingredients))


_BY_NAME: dict[str, DoseLimit] = {_key(row.drug.split("+")): row for row in TABLE}


def same_ingredient(a: str, b: str) -> bool:
    """One ingredient under two of its names ("paracetamol", "acetaminophen")."""
    return _key([a]) == _key([b])


def reference_ingredient(row: DoseLimit) -> str:
    """The ingredient a combination's figures are given as (its first: "amoxicillin" of amoxicillin+clavulanate)."""
    return row.drug.split("+")[0]


def part_max_mg(ingredient: str, row: DoseLimit) -> float | None:
    """The most of ``ingredient`` in one dose of ``row``'s product, in mg: the row's own maximum for the ingredient
    it is checked as, its ``parts`` for the others, else the ingredient's own row; None when none is in mg."""
    if row.unit == "mg" and same_ingredient(ingredient, reference_ingredient(row)):
        return row.dose
    part = next((most for name, most in row.parts if same_ingredient(name, ingredient)), None)
    if part is not None:
        return part
    own = limit_for((ingredient,))
    return own.dose if own is not None and own.unit == "mg" else None


def limit_for(ingredients: tuple[str, ...] | list[str]) -> DoseLimit | None:
    """The row for a product's ingredients (one drug, or a combination such as amoxicillin+clavulanate, in any
    order); None when the table has no dose range for it."""
    return _BY_NAME.get(_key(ingredients)) if ingredients else None
