"""The drug-class table behind the allergy checks: which ingredient belongs to which class, which classes a
clinician expects to cross-react, and the names products are written with (brands, UK/US names, combination
products). Data only; :mod:`docgemma.clinical.ingredients` reads it.

Every class names its source: WHO ATC group codes (the WHO Collaborating Centre for Drug Statistics
Methodology, ATC/DDD Index), FDA Established Pharmacologic Class (EPC) names as openFDA labels carry them in
``openfda.pharm_class_epc``, the BNF chapter, and where a cross-reactivity is stated, the label or guideline
that states it. Member lists are generic (USAN where US and INN/BAN differ; the other spelling is a synonym).
INN stems (WHO, "The use of stems in the selection of INN", 2018) classify a member the list does not name.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class DrugClass:
    """One class: its members, the words an allergy record names it with, and what it cross-reacts with."""

    key: str
    #: How the card names the class ("penicillins").
    name: str
    #: Where the member list comes from.
    source: str
    members: tuple[str, ...]
    #: Words that name the whole class in an allergy record ("penicillins", "sulfa drugs").
    words: tuple[str, ...] = ()
    #: INN stems (regular expressions on a generic name) that place an ingredient not listed in ``members``.
    stems: tuple[str, ...] = ()
    #: Regular expressions on FDA EPC names (``openfda.pharm_class_epc``) that mean this class.
    epc: tuple[str, ...] = ()
    #: Classes with a cross-reactivity worth a warning (not the same-class conflict), and why.
    related: tuple[str, ...] = ()
    related_note: str = ""


CLASSES: tuple[DrugClass, ...] = (
    DrugClass(
        "penicillin", "penicillins",
        "WHO ATC J01CA, J01CE, J01CF, J01CR (penicillins, with beta-lactamase inhibitors); FDA EPC "
        "'Penicillin-class Antibacterial'; BNF 5.1.1",
        ("penicillin", "penicillin g", "penicillin v", "amoxicillin", "ampicillin", "bacampicillin", "pivampicillin",
         "piperacillin", "ticarcillin", "carbenicillin", "mezlocillin", "azlocillin", "flucloxacillin",
         "dicloxacillin", "cloxacillin", "oxacillin", "nafcillin", "methicillin", "temocillin", "mecillinam",
         "pivmecillinam"),
        words=("penicillin", "penicillins", "penicillin antibiotics", "penicillin class", "penicillin-class"),
        stems=(r"cillin$", r"^penicillin"),
        epc=(r"penicillin",),
        related=("cephalosporin", "carbapenem"),
        related_note="penicillin-allergic patients react to a cephalosporin or carbapenem in about 1-2% "
                     "(shared beta-lactam ring and side chains; AAAAI/ACAAI drug allergy practice parameter 2022)",
    ),
    DrugClass(
        "cephalosporin", "cephalosporins",
        "WHO ATC J01DB, J01DC, J01DD, J01DE, J01DI (first to fifth generation, incl. cephamycins); FDA EPC "
        "'Cephalosporin Antibacterial'; BNF 5.1.2.1",
        ("cephalexin", "cefadroxil", "cefazolin", "cephradine", "cephalothin", "cephapirin", "cefaclor", "cefuroxime",
         "cefprozil", "cefoxitin", "cefotetan", "cefamandole", "cefonicid", "cefmetazole", "loracarbef", "cefixime",
         "cefdinir", "cefpodoxime", "ceftibuten", "cefditoren", "cefotaxime", "ceftriaxone", "ceftazidime",
         "cefoperazone", "ceftizoxime", "cefepime", "ceftaroline", "ceftobiprole", "ceftolozane", "cefiderocol"),
        words=("cephalosporin", "cephalosporins", "cephalosporin antibiotics"),
        stems=(r"^cef", r"^ceph"),
        epc=(r"cephalosporin",),
        related=("penicillin", "carbapenem"),
        related_note="cross-reactivity between cephalosporins and other beta-lactams is low but real "
                     "(AAAAI/ACAAI drug allergy practice parameter 2022)",
    ),
    DrugClass(
        "carbapenem", "carbapenems",
        "WHO ATC J01DH (carbapenems), J01DI03 (faropenem); FDA EPC 'Penem Antibacterial'; BNF 5.1.2.2",
        ("imipenem", "meropenem", "ertapenem", "doripenem", "biapenem", "panipenem", "tebipenem", "faropenem",
         "sulopenem"),
        words=("carbapenem", "carbapenems"),
        stems=(r"penem$",),
        epc=(r"\bpenem\b", r"carbapenem"),
        related=("penicillin", "cephalosporin"),
        related_note="carbapenems share the beta-lactam ring; cross-reactivity with penicillins is under 1% "
                     "(AAAAI/ACAAI drug allergy practice parameter 2022)",
    ),
    DrugClass(
        "monobactam", "monobactams",
        "WHO ATC J01DF; FDA EPC 'Monobactam Antibacterial'",
        ("aztreonam",),
        words=("monobactam", "monobactams"),
        epc=(r"monobactam",),
    ),
    DrugClass(
        "sulfonamide", "sulfonamide antibiotics",
        "WHO ATC J01E (sulfonamides and trimethoprim), D06BA (topical), S01AB (ophthalmic), A07EC01 "
        "(sulfasalazine: sulfapyridine); FDA EPC 'Sulfonamide Antibacterial'; BNF 5.1.8",
        ("sulfamethoxazole", "sulfadiazine", "sulfisoxazole", "sulfacetamide", "sulfadoxine", "sulfapyridine",
         "sulfasalazine", "sulfamethizole", "sulfanilamide", "sulfadimidine", "mafenide"),
        words=("sulfa", "sulpha", "sulfa drugs", "sulpha drugs", "sulfa drug", "sulfonamide", "sulfonamides",
               "sulphonamide", "sulphonamides", "sulfonamide antibiotics", "sulphonamide antibiotics",
               "sulfa antibiotics"),
        stems=(r"^sulfa", r"^sulpha"),
        epc=(r"sulfonamide antibacterial",),
    ),
    DrugClass(
        "nsaid", "NSAIDs",
        "WHO ATC M01A (anti-inflammatory and antirheumatic products, non-steroids), N02BA (salicylic acid "
        "derivatives), B01AC06 (aspirin); FDA EPC 'Nonsteroidal Anti-inflammatory Drug'; BNF 10.1.1",
        ("aspirin", "ibuprofen", "dexibuprofen", "naproxen", "ketoprofen", "dexketoprofen", "flurbiprofen",
         "fenoprofen", "oxaprozin", "diclofenac", "aceclofenac", "etodolac", "indomethacin", "sulindac", "tolmetin",
         "ketorolac", "nabumetone", "meloxicam", "piroxicam", "tenoxicam", "lornoxicam", "mefenamic acid",
         "meclofenamate", "tolfenamic acid", "flufenamic acid", "diflunisal", "salsalate",
         "choline magnesium trisalicylate", "celecoxib", "etoricoxib", "parecoxib", "valdecoxib", "rofecoxib",
         "nimesulide", "bromfenac", "nepafenac"),
        words=("nsaid", "nsaids", "nsaid's", "non-steroidal anti-inflammatory", "non-steroidal anti-inflammatories",
               "non-steroidal anti-inflammatory drugs", "nonsteroidal anti-inflammatory",
               "nonsteroidal anti-inflammatory drugs", "anti-inflammatories", "salicylates"),
        stems=(r"profen$", r"coxib$", r"fenac$", r"oxicam$"),
        epc=(r"non-?steroidal anti-?inflammatory",),
    ),
    DrugClass(
        "ace_inhibitor", "ACE inhibitors",
        "WHO ATC C09A, C09B (ACE inhibitors, plain and combinations); FDA EPC 'Angiotensin Converting Enzyme "
        "Inhibitor'; BNF 2.5.5.1",
        ("captopril", "enalapril", "enalaprilat", "lisinopril", "ramipril", "perindopril", "quinapril", "benazepril",
         "fosinopril", "trandolapril", "moexipril", "cilazapril", "imidapril", "zofenopril", "spirapril",
         "delapril"),
        words=("ace inhibitor", "ace inhibitors", "ace-inhibitor", "ace-inhibitors", "acei", "ace-i", "acei's",
               "angiotensin converting enzyme inhibitor", "angiotensin converting enzyme inhibitors",
               "angiotensin-converting enzyme inhibitor", "angiotensin-converting enzyme inhibitors"),
        stems=(r"pril$", r"prilat$"),
        epc=(r"angiotensin.converting enzyme inhibitor",),
        related=("arb",),
        related_note="angioedema on an ACE inhibitor recurs on an angiotensin receptor blocker in a few per cent; "
                     "sacubitril/valsartan is contraindicated after ACE-inhibitor angioedema (Entresto label, 4)",
    ),
    DrugClass(
        "arb", "angiotensin receptor blockers",
        "WHO ATC C09C, C09D; FDA EPC 'Angiotensin 2 Receptor Blocker'; BNF 2.5.5.2",
        ("losartan", "valsartan", "irbesartan", "candesartan", "olmesartan", "telmisartan", "eprosartan",
         "azilsartan", "fimasartan"),
        words=("arb", "arbs", "angiotensin receptor blocker", "angiotensin receptor blockers",
               "angiotensin ii receptor blockers", "angiotensin 2 receptor blockers", "sartans"),
        stems=(r"sartan$",),
        epc=(r"angiotensin (?:2|ii) receptor (?:blocker|antagonist)",),
        related=("ace_inhibitor",),
        related_note="angiotensin receptor blockers and ACE inhibitors share the angioedema risk",
    ),
    DrugClass(
        "opioid", "opioids (morphine type)",
        "WHO ATC N02AA (natural opium alkaloids), N02AE (oripavine derivatives), N02AF (morphinan derivatives), "
        "R05DA (opium alkaloids as cough suppressants); FDA EPC 'Opioid Agonist', 'Partial Opioid Agonist', "
        "'Opioid Agonist/Antagonist'; BNF 4.7.2",
        ("morphine", "codeine", "dihydrocodeine", "hydrocodone", "benzhydrocodone", "hydromorphone", "oxycodone",
         "oxymorphone", "diamorphine", "levorphanol", "buprenorphine", "butorphanol", "nalbuphine", "pholcodine",
         "opium"),
        words=("opioid", "opioids", "opiate", "opiates", "narcotic", "narcotics", "opioid analgesics",
               "narcotic analgesics"),
        epc=(r"opioid agonist",),
        related=("opioid_synthetic",),
        related_note="cross-reactivity between the morphine-type (phenanthrene) opioids and the synthetic ones "
                     "(phenylpiperidines, methadone, tramadol) is low; switching group is the usual advice",
    ),
    DrugClass(
        "opioid_synthetic", "opioids (synthetic)",
        "WHO ATC N02AB (phenylpiperidine derivatives), N02AC (diphenylpropylamine derivatives), N07BC02 "
        "(methadone), N02AX (tramadol, tapentadol), N02AD (benzomorphans), N01AH (opioid anaesthetics); FDA EPC "
        "'Opioid Agonist'; BNF 4.7.2",
        ("fentanyl", "sufentanil", "alfentanil", "remifentanil", "meperidine", "methadone", "tramadol", "tapentadol",
         "pentazocine", "propoxyphene", "oliceridine"),
        # The class words of morphine-type opioids also name these ("opioid allergy"): see ingredients.CLASS_WORDS.
        stems=(r"fentan(?:il|yl)$",),
        epc=(r"opioid agonist",),
        related=("opioid",),
        related_note="cross-reactivity between synthetic and morphine-type opioids is low; the clinician decides",
    ),
    DrugClass(
        "fluoroquinolone", "fluoroquinolones",
        "WHO ATC J01MA (fluoroquinolones), J01MB (other quinolones), S01AE (ophthalmic); FDA EPC "
        "'Fluoroquinolone Antibacterial'; BNF 5.1.12",
        ("ciprofloxacin", "levofloxacin", "moxifloxacin", "ofloxacin", "norfloxacin", "gemifloxacin", "delafloxacin",
         "gatifloxacin", "besifloxacin", "lomefloxacin", "sparfloxacin", "trovafloxacin", "prulifloxacin",
         "enoxacin", "pefloxacin", "finafloxacin", "ozenoxacin", "nalidixic acid", "cinoxacin"),
        words=("fluoroquinolone", "fluoroquinolones", "quinolone", "quinolones", "fluoroquinolone antibiotics",
               "quinolone antibiotics"),
        stems=(r"oxacin$",),
        epc=(r"quinolone",),
    ),
    DrugClass(
        "macrolide", "macrolides",
        "WHO ATC J01FA (macrolides), A07AA12 (fidaxomicin); FDA EPC 'Macrolide Antimicrobial', 'Macrolide "
        "Antibacterial'; BNF 5.1.5",
        ("erythromycin", "clarithromycin", "azithromycin", "roxithromycin", "dirithromycin", "telithromycin",
         "spiramycin", "josamycin", "troleandomycin", "fidaxomicin"),
        words=("macrolide", "macrolides", "macrolide antibiotics"),
        stems=(r"thromycin$",),
        epc=(r"macrolide",),
    ),
    DrugClass(
        "tetracycline", "tetracyclines",
        "WHO ATC J01AA (tetracyclines, incl. glycylcyclines); FDA EPC 'Tetracycline-class Drug', "
        "'Tetracycline-class Antibacterial'; BNF 5.1.3",
        ("tetracycline", "doxycycline", "minocycline", "oxytetracycline", "demeclocycline", "lymecycline",
         "chlortetracycline", "methacycline", "meclocycline", "tigecycline", "eravacycline", "omadacycline",
         "sarecycline"),
        words=("tetracyclines", "tetracycline antibiotics", "tetracycline class", "tetracycline-class"),
        stems=(r"cycline$",),
        epc=(r"tetracycline",),
    ),
    DrugClass(
        "aminoglycoside", "aminoglycosides",
        "WHO ATC J01GA, J01GB; FDA EPC 'Aminoglycoside Antibacterial'; BNF 5.1.4 (cross-allergenicity among "
        "aminoglycosides: gentamicin and tobramycin labels, Warnings)",
        ("gentamicin", "tobramycin", "amikacin", "streptomycin", "neomycin", "kanamycin", "netilmicin", "plazomicin",
         "paromomycin", "framycetin"),
        words=("aminoglycoside", "aminoglycosides"),
        epc=(r"aminoglycoside",),
    ),
    DrugClass(
        "glycopeptide", "glycopeptides",
        "WHO ATC J01XA; FDA EPC 'Glycopeptide Antibacterial', 'Lipoglycopeptide Antibacterial'; BNF 5.1.7",
        ("vancomycin", "teicoplanin", "telavancin", "dalbavancin", "oritavancin"),
        words=("glycopeptide", "glycopeptides"),
        stems=(r"vancin$",),
        epc=(r"glycopeptide",),
    ),
    DrugClass(
        "lincosamide", "lincosamides",
        "WHO ATC J01FF; FDA EPC 'Lincosamide Antibacterial'; BNF 5.1.6",
        ("clindamycin", "lincomycin"),
        words=("lincosamide", "lincosamides"),
        epc=(r"lincosamide",),
    ),
    DrugClass(
        "nitroimidazole", "nitroimidazoles",
        "WHO ATC J01XD, P01AB; FDA EPC 'Nitroimidazole Antimicrobial'; BNF 5.1.11",
        ("metronidazole", "tinidazole", "secnidazole", "ornidazole", "benznidazole"),
        words=("nitroimidazole", "nitroimidazoles"),
        stems=(r"nidazole$",),
        epc=(r"nitroimidazole",),
    ),
    DrugClass(
        "heparin", "heparins",
        "WHO ATC B01AB (heparin group); FDA EPC 'Low Molecular Weight Heparin'; BNF 2.8.1 (heparin-induced "
        "thrombocytopenia and hypersensitivity cross-react with low-molecular-weight heparins)",
        ("heparin", "enoxaparin", "dalteparin", "tinzaparin", "nadroparin", "certoparin", "bemiparin", "reviparin",
         "parnaparin"),
        words=("heparins", "low molecular weight heparin", "low molecular weight heparins", "lmwh"),
        stems=(r"parin$",),
        epc=(r"heparin",),
    ),
    DrugClass(
        "aromatic_antiepileptic", "aromatic antiepileptics",
        "WHO ATC N03AF (carboxamides), N03AB (hydantoins), N03AA (barbiturates), N03AX09 (lamotrigine); "
        "cross-hypersensitivity: Trileptal label 5.2 (25-30% of carbamazepine-hypersensitive patients), Tegretol "
        "label 5, BNF 4.8.1 (antiepileptic hypersensitivity syndrome)",
        ("carbamazepine", "oxcarbazepine", "eslicarbazepine", "phenytoin", "fosphenytoin", "phenobarbital",
         "primidone", "lamotrigine"),
        words=("aromatic anticonvulsant", "aromatic anticonvulsants", "aromatic antiepileptic",
               "aromatic antiepileptics"),
    ),
)

#: Ingredient pairs with a cross-reactivity outside their classes (shared side chain): a warning.
RELATED_INGREDIENTS: tuple[tuple[str, str, str], ...] = (
    ("aztreonam", "ceftazidime", "aztreonam and ceftazidime share an identical R1 side chain "
                                 "(Azactam label, Warnings; AAAAI/ACAAI drug allergy practice parameter 2022)"),
)

#: Ingredients a class allergy contraindicates outright, beyond the class itself: (allergen class, ingredient, why).
#: A direct conflict (override with a reason), not the related-class warning.
CONTRAINDICATED_AFTER: tuple[tuple[str, str, str], ...] = (
    ("ace_inhibitor", "sacubitril", "sacubitril/valsartan is contraindicated in patients with a history of "
                                    "angioedema related to previous ACE inhibitor or ARB therapy (Entresto label, 4)"),
)

#: Words that name several classes at once in an allergy record.
UMBRELLA_WORDS: dict[str, tuple[str, ...]] = {
    "beta-lactam": ("penicillin", "cephalosporin", "carbapenem", "monobactam"),
    "beta-lactams": ("penicillin", "cephalosporin", "carbapenem", "monobactam"),
    "beta lactam": ("penicillin", "cephalosporin", "carbapenem", "monobactam"),
    "beta lactams": ("penicillin", "cephalosporin", "carbapenem", "monobactam"),
    "b-lactam": ("penicillin", "cephalosporin", "carbapenem", "monobactam"),
    "beta-lactam antibiotics": ("penicillin", "cephalosporin", "carbapenem", "monobactam"),
    "opioid": ("opioid", "opioid_synthetic"),
    "opioids": ("opioid", "opioid_synthetic"),
    "opiate": ("opioid", "opioid_synthetic"),
    "opiates": ("opioid", "opioid_synthetic"),
    "narcotic": ("opioid", "opioid_synthetic"),
    "narcotics": ("opioid", "opioid_synthetic"),
    "opioid analgesics": ("opioid", "opioid_synthetic"),
    "narcotic analgesics": ("opioid", "opioid_synthetic"),
}

#: Other spellings of an ingredient (INN/BAN, older names, abbreviations) → the name the table uses.
SYNONYMS: dict[str, str] = {
    "paracetamol": "acetaminophen", "apap": "acetaminophen", "amoxycillin": "amoxicillin", "amox": "amoxicillin",
    "benzylpenicillin": "penicillin g", "benzyl penicillin": "penicillin g", "penicillin g benzathine": "penicillin g",
    "benzathine benzylpenicillin": "penicillin g", "benzathine penicillin": "penicillin g",
    "procaine penicillin": "penicillin g", "procaine benzylpenicillin": "penicillin g",
    "penicillin g procaine": "penicillin g", "pen g": "penicillin g", "penicillin g sodium": "penicillin g",
    "penicillin g potassium": "penicillin g", "crystalline penicillin": "penicillin g",
    "phenoxymethylpenicillin": "penicillin v", "phenoxymethyl penicillin": "penicillin v", "penicillin vk": "penicillin v",
    "pen vk": "penicillin v", "pen v": "penicillin v", "pen v k": "penicillin v", "pen-vee k": "penicillin v",
    "penicillin v potassium": "penicillin v",
    "meticillin": "methicillin", "cefalexin": "cephalexin", "cephalexine": "cephalexin", "cefradine": "cephradine",
    "cefalotin": "cephalothin", "cefapirin": "cephapirin", "cefazoline": "cefazolin", "cephazolin": "cefazolin",
    "cefuroxim": "cefuroxime", "ceftriaxon": "ceftriaxone", "sulfafurazole": "sulfisoxazole",
    "sulphafurazole": "sulfisoxazole", "sulfamethazine": "sulfadimidine", "indometacin": "indomethacin",
    "acetylsalicylic acid": "aspirin", "asa": "aspirin", "acetyl salicylic acid": "aspirin", "ass": "aspirin",
    "pethidine": "meperidine", "dextropropoxyphene": "propoxyphene", "heroin": "diamorphine",
    "clavulanic acid": "clavulanate", "clavulanate potassium": "clavulanate", "clav": "clavulanate",
    "salbutamol": "albuterol", "adrenaline": "epinephrine", "noradrenaline": "norepinephrine",
    "glibenclamide": "glyburide", "frusemide": "furosemide", "rifampicin": "rifampin", "ciclosporin": "cyclosporine",
    "lignocaine": "lidocaine", "bendroflumethiazide": "bendroflumethiazide", "cotrimoxazole": "co-trimoxazole",
    "sulphasalazine": "sulfasalazine", "sulphamethoxazole": "sulfamethoxazole", "sulphadiazine": "sulfadiazine",
    "sulphacetamide": "sulfacetamide", "sulphapyridine": "sulfapyridine", "sulphadoxine": "sulfadoxine",
    "tmp": "trimethoprim", "smx": "sulfamethoxazole", "smz": "sulfamethoxazole", "pip": "piperacillin",
    "hctz": "hydrochlorothiazide", "ntg": "nitroglycerin",
    "glyceryl trinitrate": "nitroglycerin", "gtn": "nitroglycerin", "oestradiol": "estradiol",
    "levothyroxine sodium": "levothyroxine", "thyroxine": "levothyroxine", "valproate": "valproic acid",
    "sodium valproate": "valproic acid", "colecalciferol": "cholecalciferol", "amfetamine": "amphetamine",
    "phenobarbitone": "phenobarbital", "mefenamic": "mefenamic acid", "nalidixic": "nalidixic acid",
    "morphine sulphate": "morphine", "diamorphine hydrochloride": "diamorphine", "ketorolac tromethamine": "ketorolac",
    "amoxicillin sodium": "amoxicillin", "tazobactam sodium": "tazobactam", "sulbactam sodium": "sulbactam",
    # Names the interaction thesaurus states contraindications for, which an order or an active medicine may use:
    # an herbal a patient buys (a strong CYP3A4 and P-gp inducer), and GHB under its chemical name.
    "st johns wort": "st john's wort", "st. john's wort": "st john's wort", "st. johns wort": "st john's wort",
    "hypericum": "st john's wort", "hypericum perforatum": "st john's wort",
    "sodium oxybate": "oxybate", "gamma-hydroxybutyric acid": "oxybate", "gamma hydroxybutyrate": "oxybate",
    "ghb": "oxybate",
}

#: Products (brands, UK/US compound names, abbreviations) → their ingredients, as the table names them.
#: Brand names are US unless marked; the DrugDictionary knows many more (resolved there).
PRODUCTS: dict[str, tuple[str, ...]] = {
    # penicillins and their beta-lactamase-inhibitor combinations
    "augmentin": ("amoxicillin", "clavulanate"), "co-amoxiclav": ("amoxicillin", "clavulanate"),
    "coamoxiclav": ("amoxicillin", "clavulanate"), "amoxiclav": ("amoxicillin", "clavulanate"),
    "amox-clav": ("amoxicillin", "clavulanate"), "amoxi-clav": ("amoxicillin", "clavulanate"),
    "clavulin": ("amoxicillin", "clavulanate"), "amoclan": ("amoxicillin", "clavulanate"),
    "clavamox": ("amoxicillin", "clavulanate"), "moxiclav": ("amoxicillin", "clavulanate"),
    "ampiclox": ("ampicillin", "cloxacillin"), "ospamox": ("amoxicillin",), "flemoxin": ("amoxicillin",),
    "flemoxin solutab": ("amoxicillin",), "hiconcil": ("amoxicillin",), "amoksiklav": ("amoxicillin", "clavulanate"),
    "amoxil": ("amoxicillin",), "moxatag": ("amoxicillin",), "trimox": ("amoxicillin",), "amoxidal": ("amoxicillin",),
    "zosyn": ("piperacillin", "tazobactam"), "tazocin": ("piperacillin", "tazobactam"),
    "pip-tazo": ("piperacillin", "tazobactam"), "piptazo": ("piperacillin", "tazobactam"),
    "pip/tazo": ("piperacillin", "tazobactam"), "tazo": ("tazobactam",),
    "unasyn": ("ampicillin", "sulbactam"), "timentin": ("ticarcillin", "clavulanate"),
    "principen": ("ampicillin",), "omnipen": ("ampicillin",), "penbritin": ("ampicillin",),
    "bicillin": ("penicillin g",), "bicillin l-a": ("penicillin g",), "bicillin c-r": ("penicillin g",),
    "pfizerpen": ("penicillin g",), "permapen": ("penicillin g",), "extencilline": ("penicillin g",),
    "veetids": ("penicillin v",), "v-cillin": ("penicillin v",), "beepen-vk": ("penicillin v",),
    "floxapen": ("flucloxacillin",), "fluclox": ("flucloxacillin",), "dynapen": ("dicloxacillin",),
    "dycill": ("dicloxacillin",), "unipen": ("nafcillin",), "nallpen": ("nafcillin",), "bactocill": ("oxacillin",),
    "selexid": ("pivmecillinam",), "pivya": ("pivmecillinam",), "negaban": ("temocillin",),
    "geocillin": ("carbenicillin",), "magnapen": ("flucloxacillin", "ampicillin"),
    "co-fluampicil": ("flucloxacillin", "ampicillin"),
    "prevpac": ("lansoprazole", "amoxicillin", "clarithromycin"),
    "omeclamox": ("omeprazole", "amoxicillin", "clarithromycin"),
    "omeclamox-pak": ("omeprazole", "amoxicillin", "clarithromycin"),
    "talicia": ("omeprazole", "amoxicillin", "rifabutin"),
    "voquezna triple pak": ("vonoprazan", "amoxicillin", "clarithromycin"),
    "voquezna dual pak": ("vonoprazan", "amoxicillin"),
    # cephalosporins
    "keflex": ("cephalexin",), "ceporex": ("cephalexin",), "daxbia": ("cephalexin",), "duricef": ("cefadroxil",),
    "ancef": ("cefazolin",), "kefzol": ("cefazolin",), "velosef": ("cephradine",), "keflin": ("cephalothin",),
    "ceclor": ("cefaclor",), "distaclor": ("cefaclor",), "ceftin": ("cefuroxime",), "zinnat": ("cefuroxime",),
    "zinacef": ("cefuroxime",), "cefzil": ("cefprozil",), "mefoxin": ("cefoxitin",), "cefotan": ("cefotetan",),
    "lorabid": ("loracarbef",), "suprax": ("cefixime",), "omnicef": ("cefdinir",), "vantin": ("cefpodoxime",),
    "orelox": ("cefpodoxime",), "cedax": ("ceftibuten",), "spectracef": ("cefditoren",), "claforan": ("cefotaxime",),
    "rocephin": ("ceftriaxone",), "fortaz": ("ceftazidime",), "tazicef": ("ceftazidime",), "fortum": ("ceftazidime",),
    "cefobid": ("cefoperazone",), "maxipime": ("cefepime",), "teflaro": ("ceftaroline",), "zinforo": ("ceftaroline",),
    "zevtera": ("ceftobiprole",), "zerbaxa": ("ceftolozane", "tazobactam"), "avycaz": ("ceftazidime", "avibactam"),
    "zavicefta": ("ceftazidime", "avibactam"), "fetroja": ("cefiderocol",), "fetcroja": ("cefiderocol",),
    "exblifep": ("cefepime", "enmetazobactam"),
    # carbapenems and monobactams
    "primaxin": ("imipenem", "cilastatin"), "tienam": ("imipenem", "cilastatin"),
    "recarbrio": ("imipenem", "cilastatin", "relebactam"), "merrem": ("meropenem",), "meronem": ("meropenem",),
    "vabomere": ("meropenem", "vaborbactam"), "vaborem": ("meropenem", "vaborbactam"), "invanz": ("ertapenem",),
    "doribax": ("doripenem",), "azactam": ("aztreonam",), "cayston": ("aztreonam",),
    "emblaveo": ("aztreonam", "avibactam"),
    # sulfonamide antibiotics
    "bactrim": ("trimethoprim", "sulfamethoxazole"), "septra": ("trimethoprim", "sulfamethoxazole"),
    "septrin": ("trimethoprim", "sulfamethoxazole"), "co-trimoxazole": ("trimethoprim", "sulfamethoxazole"),
    "sulfatrim": ("trimethoprim", "sulfamethoxazole"), "cotrim": ("trimethoprim", "sulfamethoxazole"),
    "tmp-smx": ("trimethoprim", "sulfamethoxazole"), "smx-tmp": ("trimethoprim", "sulfamethoxazole"),
    "tmp/smx": ("trimethoprim", "sulfamethoxazole"), "smz-tmp": ("trimethoprim", "sulfamethoxazole"),
    "gantrisin": ("sulfisoxazole",), "silvadene": ("sulfadiazine",), "flamazine": ("sulfadiazine",),
    "ssd": ("sulfadiazine",), "thermazene": ("sulfadiazine",), "bleph-10": ("sulfacetamide",),
    "sulamyd": ("sulfacetamide",), "klaron": ("sulfacetamide",), "ovace": ("sulfacetamide",),
    "azulfidine": ("sulfasalazine",), "salazopyrin": ("sulfasalazine",), "fansidar": ("sulfadoxine", "pyrimethamine"),
    "sulfamylon": ("mafenide",),
    # NSAIDs (aspirin included)
    "advil": ("ibuprofen",), "motrin": ("ibuprofen",), "nurofen": ("ibuprofen",), "brufen": ("ibuprofen",),
    "caldolor": ("ibuprofen",), "nuprin": ("ibuprofen",), "aleve": ("naproxen",), "naprosyn": ("naproxen",),
    "anaprox": ("naproxen",), "naprelan": ("naproxen",), "ec-naprosyn": ("naproxen",), "synflex": ("naproxen",),
    "voltaren": ("diclofenac",), "voltarol": ("diclofenac",), "cataflam": ("diclofenac",), "cambia": ("diclofenac",),
    "zipsor": ("diclofenac",), "zorvolex": ("diclofenac",), "pennsaid": ("diclofenac",), "flector": ("diclofenac",),
    "arthrotec": ("diclofenac", "misoprostol"), "toradol": ("ketorolac",), "sprix": ("ketorolac",),
    "acular": ("ketorolac",), "indocin": ("indomethacin",), "tivorbex": ("indomethacin",), "clinoril": ("sulindac",),
    "tolectin": ("tolmetin",), "relafen": ("nabumetone",), "mobic": ("meloxicam",), "vivlodex": ("meloxicam",),
    "anjeso": ("meloxicam",), "feldene": ("piroxicam",), "ponstel": ("mefenamic acid",),
    "ponstan": ("mefenamic acid",), "dolobid": ("diflunisal",), "daypro": ("oxaprozin",), "lodine": ("etodolac",),
    "ansaid": ("flurbiprofen",), "froben": ("flurbiprofen",), "orudis": ("ketoprofen",), "oruvail": ("ketoprofen",),
    "nalfon": ("fenoprofen",), "celebrex": ("celecoxib",), "elyxyb": ("celecoxib",), "arcoxia": ("etoricoxib",),
    "dynastat": ("parecoxib",), "bextra": ("valdecoxib",), "vioxx": ("rofecoxib",), "nevanac": ("nepafenac",),
    "prolensa": ("bromfenac",), "duexis": ("ibuprofen", "famotidine"), "vimovo": ("naproxen", "esomeprazole"),
    "nurofen plus": ("ibuprofen", "codeine"), "advil pm": ("ibuprofen", "diphenhydramine"),
    "ecotrin": ("aspirin",), "disprin": ("aspirin",), "aspro": ("aspirin",), "bufferin": ("aspirin",),
    "durlaza": ("aspirin",), "vazalore": ("aspirin",), "bayer aspirin": ("aspirin",), "aspirin ec": ("aspirin",),
    "excedrin": ("aspirin", "acetaminophen", "caffeine"), "anacin": ("aspirin", "caffeine"),
    "alka-seltzer": ("aspirin", "sodium bicarbonate", "citric acid"),
    "fiorinal": ("butalbital", "aspirin", "caffeine"), "yosprala": ("aspirin", "omeprazole"),
    "aggrenox": ("aspirin", "dipyridamole"), "percodan": ("oxycodone", "aspirin"),
    "seglentis": ("celecoxib", "tramadol"), "consensi": ("amlodipine", "celecoxib"),
    "treximet": ("sumatriptan", "naproxen"),
    # ACE inhibitors and angiotensin receptor blockers
    "capoten": ("captopril",), "capozide": ("captopril", "hydrochlorothiazide"), "vasotec": ("enalapril",),
    "innovace": ("enalapril",), "epaned": ("enalapril",), "vaseretic": ("enalapril", "hydrochlorothiazide"),
    "zestril": ("lisinopril",), "prinivil": ("lisinopril",), "qbrelis": ("lisinopril",), "carace": ("lisinopril",),
    "zestoretic": ("lisinopril", "hydrochlorothiazide"), "prinzide": ("lisinopril", "hydrochlorothiazide"),
    "altace": ("ramipril",), "tritace": ("ramipril",), "coversyl": ("perindopril",), "aceon": ("perindopril",),
    "prestalia": ("perindopril", "amlodipine"), "coveram": ("perindopril", "amlodipine"),
    "accupril": ("quinapril",), "accuretic": ("quinapril", "hydrochlorothiazide"), "lotensin": ("benazepril",),
    "lotensin hct": ("benazepril", "hydrochlorothiazide"), "lotrel": ("amlodipine", "benazepril"),
    "monopril": ("fosinopril",), "mavik": ("trandolapril",), "gopten": ("trandolapril",),
    "tarka": ("trandolapril", "verapamil"), "univasc": ("moexipril",), "vascace": ("cilazapril",),
    "cozaar": ("losartan",), "hyzaar": ("losartan", "hydrochlorothiazide"), "diovan": ("valsartan",),
    "exforge": ("amlodipine", "valsartan"), "entresto": ("sacubitril", "valsartan"), "avapro": ("irbesartan",),
    "aprovel": ("irbesartan",), "avalide": ("irbesartan", "hydrochlorothiazide"), "atacand": ("candesartan",),
    "amias": ("candesartan",), "benicar": ("olmesartan",), "olmetec": ("olmesartan",),
    "azor": ("amlodipine", "olmesartan"), "micardis": ("telmisartan",), "twynsta": ("telmisartan", "amlodipine"),
    "teveten": ("eprosartan",), "edarbi": ("azilsartan",), "edarbyclor": ("azilsartan", "chlorthalidone"),
    # opioids
    "ms contin": ("morphine",), "oramorph": ("morphine",), "sevredol": ("morphine",), "kadian": ("morphine",),
    "zomorph": ("morphine",), "mst continus": ("morphine",), "avinza": ("morphine",), "arymo": ("morphine",),
    "morphabond": ("morphine",), "duramorph": ("morphine",), "infumorph": ("morphine",), "mitigo": ("morphine",),
    "co-codamol": ("codeine", "acetaminophen"), "cocodamol": ("codeine", "acetaminophen"),
    "tylenol with codeine": ("acetaminophen", "codeine"), "tylenol #3": ("acetaminophen", "codeine"),
    "tylenol 3": ("acetaminophen", "codeine"), "tylenol-codeine": ("acetaminophen", "codeine"),
    "tylex": ("codeine", "acetaminophen"), "solpadeine": ("codeine", "acetaminophen"),
    "zapain": ("codeine", "acetaminophen"), "co-dydramol": ("dihydrocodeine", "acetaminophen"),
    "df118": ("dihydrocodeine",), "df 118": ("dihydrocodeine",), "vicodin": ("hydrocodone", "acetaminophen"),
    "norco": ("hydrocodone", "acetaminophen"), "lortab": ("hydrocodone", "acetaminophen"),
    "lorcet": ("hydrocodone", "acetaminophen"), "hysingla": ("hydrocodone",), "zohydro": ("hydrocodone",),
    "tussionex": ("hydrocodone", "chlorpheniramine"), "apadaz": ("benzhydrocodone", "acetaminophen"),
    "dilaudid": ("hydromorphone",), "exalgo": ("hydromorphone",), "palladone": ("hydromorphone",),
    "jurnista": ("hydromorphone",), "oxycontin": ("oxycodone",), "roxicodone": ("oxycodone",),
    "oxaydo": ("oxycodone",), "xtampza": ("oxycodone",), "oxynorm": ("oxycodone",), "longtec": ("oxycodone",),
    "shortec": ("oxycodone",), "percocet": ("oxycodone", "acetaminophen"), "endocet": ("oxycodone", "acetaminophen"),
    "roxicet": ("oxycodone", "acetaminophen"), "tylox": ("oxycodone", "acetaminophen"),
    "targin": ("oxycodone", "naloxone"), "targinact": ("oxycodone", "naloxone"), "opana": ("oxymorphone",),
    "subutex": ("buprenorphine",), "suboxone": ("buprenorphine", "naloxone"), "zubsolv": ("buprenorphine", "naloxone"),
    "butrans": ("buprenorphine",), "belbuca": ("buprenorphine",), "sublocade": ("buprenorphine",),
    "temgesic": ("buprenorphine",), "buprenex": ("buprenorphine",), "transtec": ("buprenorphine",),
    "stadol": ("butorphanol",), "nubain": ("nalbuphine",), "levo-dromoran": ("levorphanol",),
    "duragesic": ("fentanyl",), "durogesic": ("fentanyl",), "sublimaze": ("fentanyl",), "actiq": ("fentanyl",),
    "fentora": ("fentanyl",), "effentora": ("fentanyl",), "abstral": ("fentanyl",), "instanyl": ("fentanyl",),
    "pecfent": ("fentanyl",), "subsys": ("fentanyl",), "lazanda": ("fentanyl",), "ionsys": ("fentanyl",),
    "dsuvia": ("sufentanil",), "alfenta": ("alfentanil",), "rapifen": ("alfentanil",), "ultiva": ("remifentanil",),
    "demerol": ("meperidine",), "dolophine": ("methadone",), "methadose": ("methadone",), "physeptone": ("methadone",),
    "ultram": ("tramadol",), "conzip": ("tramadol",), "zydol": ("tramadol",), "tramal": ("tramadol",),
    "zamadol": ("tramadol",), "ultracet": ("tramadol", "acetaminophen"), "tramacet": ("tramadol", "acetaminophen"),
    "nucynta": ("tapentadol",), "palexia": ("tapentadol",), "talwin": ("pentazocine",), "darvon": ("propoxyphene",),
    "darvocet": ("propoxyphene", "acetaminophen"), "olinvyk": ("oliceridine",),
    # fluoroquinolones
    "cipro": ("ciprofloxacin",), "ciproxin": ("ciprofloxacin",), "ciloxan": ("ciprofloxacin",),
    "cetraxal": ("ciprofloxacin",), "otiprio": ("ciprofloxacin",), "ciprodex": ("ciprofloxacin", "dexamethasone"),
    "cipro hc": ("ciprofloxacin", "hydrocortisone"), "levaquin": ("levofloxacin",), "tavanic": ("levofloxacin",),
    "iquix": ("levofloxacin",), "quixin": ("levofloxacin",), "avelox": ("moxifloxacin",), "avalox": ("moxifloxacin",),
    "vigamox": ("moxifloxacin",), "moxeza": ("moxifloxacin",), "floxin": ("ofloxacin",), "tarivid": ("ofloxacin",),
    "ocuflox": ("ofloxacin",), "exocin": ("ofloxacin",), "noroxin": ("norfloxacin",), "factive": ("gemifloxacin",),
    "baxdela": ("delafloxacin",), "zymar": ("gatifloxacin",), "zymaxid": ("gatifloxacin",),
    "besivance": ("besifloxacin",), "maxaquin": ("lomefloxacin",), "neggram": ("nalidixic acid",),
    "xepi": ("ozenoxacin",),
    # macrolides
    "ery-tab": ("erythromycin",), "erythrocin": ("erythromycin",), "e.e.s.": ("erythromycin",),
    "e.e.s": ("erythromycin",), "eryped": ("erythromycin",), "pce": ("erythromycin",), "erymax": ("erythromycin",),
    "erythroped": ("erythromycin",), "eryc": ("erythromycin",), "akne-mycin": ("erythromycin",),
    "benzamycin": ("erythromycin", "benzoyl peroxide"), "zineryt": ("erythromycin", "zinc acetate"),
    "biaxin": ("clarithromycin",), "klacid": ("clarithromycin",), "klaricid": ("clarithromycin",),
    "zithromax": ("azithromycin",), "z-pak": ("azithromycin",), "z-pack": ("azithromycin",), "zpak": ("azithromycin",),
    "zmax": ("azithromycin",), "azasite": ("azithromycin",), "azyter": ("azithromycin",), "rulide": ("roxithromycin",),
    "ketek": ("telithromycin",), "dificid": ("fidaxomicin",), "dificlir": ("fidaxomicin",),
    # tetracyclines
    "sumycin": ("tetracycline",), "achromycin": ("tetracycline",), "vibramycin": ("doxycycline",),
    "vibra-tabs": ("doxycycline",), "doryx": ("doxycycline",), "acticlate": ("doxycycline",),
    "oracea": ("doxycycline",), "periostat": ("doxycycline",), "monodox": ("doxycycline",),
    "targadox": ("doxycycline",), "adoxa": ("doxycycline",), "efracea": ("doxycycline",),
    "minocin": ("minocycline",), "solodyn": ("minocycline",), "dynacin": ("minocycline",),
    "minolira": ("minocycline",), "ximino": ("minocycline",), "arestin": ("minocycline",), "amzeeq": ("minocycline",),
    "zilxi": ("minocycline",), "terramycin": ("oxytetracycline",), "declomycin": ("demeclocycline",),
    "ledermycin": ("demeclocycline",), "tetralysal": ("lymecycline",), "tygacil": ("tigecycline",),
    "xerava": ("eravacycline",), "nuzyra": ("omadacycline",), "seysara": ("sarecycline",),
    "pylera": ("bismuth subcitrate potassium", "metronidazole", "tetracycline"),
    # aminoglycosides, glycopeptides, lincosamides, nitroimidazoles
    "garamycin": ("gentamicin",), "cidomycin": ("gentamicin",), "genticin": ("gentamicin",), "gentak": ("gentamicin",),
    "tobrex": ("tobramycin",), "nebcin": ("tobramycin",), "tobi": ("tobramycin",), "bethkis": ("tobramycin",),
    "kitabis": ("tobramycin",), "tobradex": ("tobramycin", "dexamethasone"), "amikin": ("amikacin",),
    "arikayce": ("amikacin",), "zemdri": ("plazomicin",), "neosporin": ("neomycin", "polymyxin b", "bacitracin"),
    "humatin": ("paromomycin",), "kantrex": ("kanamycin",), "netromycin": ("netilmicin",),
    "vancocin": ("vancomycin",), "firvanq": ("vancomycin",), "targocid": ("teicoplanin",), "vibativ": ("telavancin",),
    "dalvance": ("dalbavancin",), "xydalba": ("dalbavancin",), "orbactiv": ("oritavancin",), "kimyrsa": ("oritavancin",),
    "cleocin": ("clindamycin",), "dalacin": ("clindamycin",), "clindesse": ("clindamycin",), "evoclin": ("clindamycin",),
    "clindagel": ("clindamycin",), "duac": ("clindamycin", "benzoyl peroxide"),
    "benzaclin": ("clindamycin", "benzoyl peroxide"), "acanya": ("clindamycin", "benzoyl peroxide"),
    "onexton": ("clindamycin", "benzoyl peroxide"), "ziana": ("clindamycin", "tretinoin"),
    "veltin": ("clindamycin", "tretinoin"), "lincocin": ("lincomycin",), "flagyl": ("metronidazole",),
    "metrogel": ("metronidazole",), "metrocream": ("metronidazole",), "noritate": ("metronidazole",),
    "rozex": ("metronidazole",), "zidoval": ("metronidazole",), "nuvessa": ("metronidazole",),
    "vandazole": ("metronidazole",), "tindamax": ("tinidazole",), "fasigyn": ("tinidazole",), "solosec": ("secnidazole",),
    # heparins, aromatic antiepileptics
    "lovenox": ("enoxaparin",), "clexane": ("enoxaparin",), "inhixa": ("enoxaparin",), "fragmin": ("dalteparin",),
    "innohep": ("tinzaparin",), "fraxiparine": ("nadroparin",), "hep-lock": ("heparin",),
    "tegretol": ("carbamazepine",), "carbatrol": ("carbamazepine",), "equetro": ("carbamazepine",),
    "epitol": ("carbamazepine",), "trileptal": ("oxcarbazepine",), "oxtellar": ("oxcarbazepine",),
    "aptiom": ("eslicarbazepine",), "zebinix": ("eslicarbazepine",), "dilantin": ("phenytoin",),
    "phenytek": ("phenytoin",), "epanutin": ("phenytoin",), "cerebyx": ("fosphenytoin",),
    "pro-epanutin": ("fosphenytoin",), "luminal": ("phenobarbital",), "mysoline": ("primidone",),
    "lamictal": ("lamotrigine",), "subvenite": ("lamotrigine",),
    # common drugs outside the classes, whose brands the dictionary may not know
    "tylenol": ("acetaminophen",), "panadol": ("acetaminophen",), "calpol": ("acetaminophen",),
    "ofirmev": ("acetaminophen",), "glucophage": ("metformin",), "lipitor": ("atorvastatin",),
    "norvasc": ("amlodipine",), "coumadin": ("warfarin",), "plavix": ("clopidogrel",), "protonix": ("pantoprazole",),
    "nexium": ("esomeprazole",), "prilosec": ("omeprazole",), "losec": ("omeprazole",), "zocor": ("simvastatin",),
    "synthroid": ("levothyroxine",), "lasix": ("furosemide",), "eliquis": ("apixaban",), "xarelto": ("rivaroxaban",),
    "ventolin": ("albuterol",), "zoloft": ("sertraline",), "claritin": ("loratadine",), "neurontin": ("gabapentin",),
    # high-alert medicines under their brands (UK and US): each check must see the ingredient, not only allergies
    "trexall": ("methotrexate",), "otrexup": ("methotrexate",), "xatmep": ("methotrexate",),
    "jylamvo": ("methotrexate",), "maxtrex": ("methotrexate",), "metoject": ("methotrexate",),
    "rasuvo": ("methotrexate",), "reditrex": ("methotrexate",), "nordimet": ("methotrexate",),
    "rheumatrex": ("methotrexate",), "zlatal": ("methotrexate",),
    "jantoven": ("warfarin",), "marevan": ("warfarin",), "waran": ("warfarin",),
    "priadel": ("lithium",), "camcolit": ("lithium",), "lithobid": ("lithium",), "eskalith": ("lithium",),
    "liskonum": ("lithium",), "li-liquid": ("lithium",),
    "sando-k": ("potassium chloride",), "slow-k": ("potassium chloride",), "kay-cee-l": ("potassium chloride",),
    "klor-con": ("potassium chloride",), "k-tab": ("potassium chloride",), "micro-k": ("potassium chloride",),
    "k-dur": ("potassium chloride",), "kcl": ("potassium chloride",),
    "potassium phosphate": ("potassium phosphate",), "potassium phosphates": ("potassium phosphate",),
    "oxytocin": ("oxytocin",), "syntocinon": ("oxytocin",), "pitocin": ("oxytocin",),
    "oncovin": ("vincristine",), "tambocor": ("flecainide",), "clozaril": ("clozapine",), "denzapine": ("clozapine",),
    "zaponex": ("clozapine",), "versacloz": ("clozapine",), "prograf": ("tacrolimus",), "advagraf": ("tacrolimus",),
    "envarsus": ("tacrolimus",),
    "accutane": ("isotretinoin",), "absorica": ("isotretinoin",), "claravis": ("isotretinoin",),
    "roaccutane": ("isotretinoin",), "epilim": ("valproic acid",), "depakote": ("valproic acid",),
    "depakine": ("valproic acid",), "cellcept": ("mycophenolate mofetil",), "myfortic": ("mycophenolic acid",),
    "cytotec": ("misoprostol",), "macrobid": ("nitrofurantoin",), "macrodantin": ("nitrofurantoin",),
}

#: Salt, ester and hydrate words: dropped from an ingredient's name ("amoxicillin trihydrate" is amoxicillin),
#: unless nothing else is left ("potassium chloride" is a drug).
SALT_WORDS = frozenset({
    "sodium", "disodium", "potassium", "dipotassium", "calcium", "magnesium", "silver", "hydrochloride", "hcl",
    "dihydrochloride", "hydrobromide", "hbr", "sulfate", "sulphate",
    "bisulfate", "hydrogen", "phosphate", "acetate", "citrate", "tartrate", "bitartrate", "maleate", "mesylate",
    "mesilate", "besylate", "besilate", "fumarate", "hemifumarate", "succinate", "trihydrate", "dihydrate",
    "monohydrate", "sesquihydrate", "hydrate", "anhydrous", "axetil", "proxetil", "pivoxil", "cilexetil",
    "medoxomil", "disoproxil", "hyclate", "benzathine", "procaine", "estolate", "ethylsuccinate", "stearate",
    "lactobionate", "gluceptate", "propionate", "dipropionate", "valerate", "furoate", "bromide", "chloride",
    "nitrate", "lactate", "gluconate", "meglumine", "tromethamine", "trometamol", "olamine", "diethylamine",
    "epolamine", "lysine", "arginine", "carbonate", "bicarbonate", "micronized",
    "micronised", "pamoate", "embonate", "palmitate", "decanoate", "enanthate", "cypionate", "xinafoate",
    "tosylate", "tosilate", "napsylate", "napadisilate", "oxalate", "malate", "pentahydrate", "hemihydrate",
    "ethanolate",
})

#: Words of a product string that are its strength, form, route, release or pack, never an ingredient.
FORM_WORDS = frozenset({
    "mg", "mcg", "µg", "ug", "g", "gm", "gram", "grams", "kg", "ml", "l", "iu", "unit", "units", "mmol", "meq",
    "tablet", "tablets", "tab", "tabs", "tbl", "capsule", "capsules", "cap", "caps", "caplet", "caplets", "oral",
    "po", "iv", "im", "sc", "sq", "subcut", "pr", "sl", "injection", "injectable", "inj", "infusion", "solution",
    "soln", "sol", "suspension", "susp", "syrup", "elixir", "liquid", "drink", "cream", "ointment", "oint", "gel",
    "lotion", "foam", "drops", "drop", "eye", "ear", "nasal", "spray", "inhaler", "inhalation", "nebuliser",
    "nebulizer", "patch", "patches", "transdermal", "er", "xr", "sr", "cr", "la", "xl", "dr", "ec", "ds", "ss", "es",
    "mr", "ir", "cd", "hd", "odt", "duo", "forte", "extended", "release", "released", "delayed", "sustained",
    "modified", "controlled", "immediate", "prolonged", "chewable", "dispersible", "effervescent", "orodispersible",
    "film", "coated", "film-coated", "enteric", "powder", "for", "reconstitution", "vial", "vials", "ampoule",
    "ampule", "bag", "premix", "sachet", "sachets", "granules", "lozenge", "lozenges", "suppository",
    "suppositories", "pessary", "topical", "ophthalmic", "otic", "vaginal", "rectal", "kid", "kids", "pediatric",
    "paediatric", "junior", "infant", "adult", "strength", "regular", "double", "single", "emulgel",
    "dose", "doses", "pack", "pak", "kit", "bottle", "pen", "prefilled", "syringe", "auto-injector", "autoinjector",
    "actuat", "actuation", "metered", "mdi", "hfa", "pfs", "by", "mouth", "intravenous", "intravenously",
    "intramuscular", "subcutaneous", "x", "stat", "bd", "bid", "tds", "tid", "qds", "qid", "od", "daily", "nocte",
    "mane", "prn", "l-a", "c-r", "q", "hr", "hour", "24", "12", "day", "days", "week", "weeks", "brand",
    "generic", "the", "a", "an", "of", "dose-pack", "dosepak", "liquigels", "liquigel", "gelcaps", "softgel",
    "softgels", "chewables", "susp.", "tab.", "cap.", "inj.", "mg/ml", "mg/5ml", "%", "w/v", "w/w", "ready-to-use",
    "continus", "retard", "depot", "uno", "once", "million", "mu", "mega", "international", "mill",
    # Insulin preparations (BNF "Insulin" preparations: soluble, isophane/NPH, biphasic; human or animal): the
    # preparation, not another ingredient. Unread, they made every "insulin isophane" order a high-alert medicine
    # "not recognised", a severe finding on a usual dose (the dose bench's usual orders found it).
    "isophane", "nph", "soluble", "neutral", "biphasic", "human",
})

#: Allergens that are not drugs (foods, latex, venoms, environment, contrast aside): no drug conflicts with them.
NON_DRUG_ALLERGENS = frozenset({
    "latex", "rubber", "natural rubber latex", "peanut", "peanuts", "tree nut", "tree nuts", "nuts", "nut",
    "almond", "almonds", "cashew", "walnut", "hazelnut", "shellfish", "crustacean", "shrimp", "prawn", "prawns",
    "lobster", "crab", "fish", "egg", "eggs", "milk", "cow's milk", "dairy", "lactose", "soy", "soya", "soybean",
    "wheat", "gluten", "sesame", "mustard", "celery", "lupin", "molluscs", "strawberry", "strawberries", "kiwi",
    "banana", "avocado", "bee venom", "bee sting", "bee stings", "wasp venom", "wasp sting", "wasp stings",
    "insect venom", "insect sting", "insect stings", "hymenoptera venom", "fire ant", "bee", "bees", "wasp",
    "wasps", "pollen", "grass pollen", "tree pollen", "weed pollen", "ragweed", "house dust mite", "dust mite",
    "dust mites", "dust", "mould", "mold", "animal dander", "dander", "cat", "cat dander", "dog", "dog dander",
    "horse", "feathers", "cockroach", "nickel", "adhesive", "adhesive tape", "plaster", "plasters",
    "food", "seafood", "sunlight", "cold", "perfume", "fragrance",
})

#: Groups that drug labels name in their interaction sections ("avoid with SSRIs", "oral anticoagulants"):
#: used only to find a label passage that names a drug by its group, never for allergy cross-reactivity.
#: (group name, source, members, words a label uses for the group).
INTERACTION_GROUPS: tuple[tuple[str, str, tuple[str, ...], tuple[str, ...]], ...] = (
    ("SSRIs", "WHO ATC N06AB",
     ("citalopram", "escitalopram", "fluoxetine", "fluvoxamine", "paroxetine", "sertraline"),
     ("selective serotonin reuptake inhibitors", "selective serotonin reuptake inhibitor", "ssris", "ssri",
      "serotonin reuptake inhibitors", "serotonergic drugs", "serotonergic agents", "antidepressants")),
    ("SNRIs", "WHO ATC N06AX16, N06AX21, N06AX23",
     ("venlafaxine", "duloxetine", "desvenlafaxine", "milnacipran", "levomilnacipran"),
     ("serotonin norepinephrine reuptake inhibitors", "snris", "snri", "serotonergic drugs", "serotonergic agents",
      "antidepressants")),
    ("proton pump inhibitors", "WHO ATC A02BC",
     ("omeprazole", "esomeprazole", "lansoprazole", "dexlansoprazole", "pantoprazole", "rabeprazole"),
     ("proton pump inhibitors", "proton pump inhibitor", "ppis", "ppi")),
    ("statins", "WHO ATC C10AA",
     ("atorvastatin", "simvastatin", "lovastatin", "pravastatin", "rosuvastatin", "fluvastatin", "pitavastatin"),
     ("hmg-coa reductase inhibitors", "hmg-coa reductase inhibitor", "statins", "statin")),
    ("anticoagulants", "WHO ATC B01AA, B01AE, B01AF, B01AB",
     ("warfarin", "acenocoumarol", "phenprocoumon", "apixaban", "rivaroxaban", "edoxaban", "dabigatran", "heparin",
      "enoxaparin", "dalteparin"),
     ("anticoagulants", "anticoagulant", "oral anticoagulants", "blood thinners", "blood thinning",
      "vitamin k antagonists", "coumarin anticoagulants")),
    ("antiplatelet agents", "WHO ATC B01AC",
     ("clopidogrel", "prasugrel", "ticagrelor", "ticlopidine", "aspirin", "dipyridamole", "cilostazol"),
     ("antiplatelet agents", "antiplatelet drugs", "antiplatelets", "platelet inhibitors",
      "platelet aggregation inhibitors")),
    ("diuretics", "WHO ATC C03",
     ("hydrochlorothiazide", "chlorthalidone", "indapamide", "bendroflumethiazide", "metolazone", "furosemide",
      "bumetanide", "torsemide", "spironolactone", "eplerenone", "amiloride", "triamterene"),
     ("diuretics", "diuretic", "thiazides", "thiazide diuretics", "loop diuretics")),
    ("beta-blockers", "WHO ATC C07",
     ("metoprolol", "atenolol", "bisoprolol", "propranolol", "carvedilol", "nebivolol", "labetalol"),
     ("beta-blockers", "beta blockers", "beta-adrenergic blocking agents", "beta-adrenergic blockers")),
    ("triptans", "WHO ATC N02CC",
     ("sumatriptan", "rizatriptan", "zolmitriptan", "eletriptan", "naratriptan", "almotriptan", "frovatriptan"),
     ("triptans", "5-ht1 agonists", "serotonergic drugs")),
    ("antidiabetic agents", "WHO ATC A10",
     ("metformin", "glipizide", "glyburide", "glimepiride", "gliclazide", "sitagliptin", "empagliflozin",
      "dapagliflozin", "pioglitazone", "insulin"),
     ("antidiabetics", "antidiabetic agents", "oral hypoglycemic agents", "hypoglycemic agents",
      "insulin secretagogues", "blood glucose lowering")),
)
