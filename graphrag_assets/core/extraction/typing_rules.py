"""Evidence for an entity's type without a trained model (written for this project).

Three kinds of evidence, from the most to the least specific:

- what the text says the name *is*: a definition ("X is an American actor", "X, a village
  in ..."), a parenthesis of life dates ("X (born 1950)"), a title qualifier
  ("Forbidden Ground (2013 film)");
- the name's own words: an honorific ("Princess Yolanda of Savoy"), a head word
  ("Jive Records", "University of Leiden", "Battle of Hastings");
- the words around it: "directed by X", "son of X", "born in X", "the band X".

Types are graphrag's four (PERSON, ORGANIZATION, GEO, EVENT) plus WORK for creative works
(films, songs, books), which make up much of encyclopaedic text and would otherwise be
OTHER.
"""

from __future__ import annotations

import re

# Relatives and pupils (KIN_NOUNS: "son of X", "his wife X") name a person; styles ("king
# of X", "bishop of X") a place, or an organisation ("chancellor of the University of X").
from graphrag_common.people import KIN_NOUNS, PERSON_NOUNS

PERSON, ORGANIZATION, GEO, EVENT, WORK = "PERSON", "ORGANIZATION", "GEO", "EVENT", "WORK"


def _words(text: str) -> set[str]:
    return set(text.split())


# Titles before a personal name. The dropped ones are left out of the name, so that
# "Mayor Helen Strand" and "Helen Strand" are one person; the kept ones are usually part
# of how the person is named ("Princess Yolanda of Savoy" is her article's title, while
# "King Victor Emmanuel III" is titled "Victor Emmanuel III").
DROPPED_HONORIFICS = _words(
    """
mr mrs ms miss dr doctor sir lady lord madam madame mister master monsieur herr frau uncle aunt
professor prof captain capt mayor president governor senator judge justice councillor councilor
minister chairman chairwoman director general gen colonel col lieutenant lt sergeant sgt admiral
commander reverend rev king queen emperor duke duchess count earl baron baroness baronet viscount
marquess marquis margrave landgrave elector chancellor bishop archbishop cardinal sultan tsar czar
caliph emir sheikh shah khan pharaoh regent stadholder ceo cto cfo coo evp svp vp
"""
)
CORPORATE_STYLES = _words("ceo cto cfo coo evp svp vp chairman chairwoman director")
KEPT_HONORIFICS = _words(
    "prince princess archduke archduchess countess empress infante infanta pope sister mother father"
)
HONORIFICS = DROPPED_HONORIFICS | KEPT_HONORIFICS  # not "saint": "Saint Petersburg" and "St. Louis" are places
# Words that may stand before an honorific in a style ("High King of Ireland",
# "Count Palatine of Simmern", "Prime Minister of Canada").
STYLE_MODIFIERS = _words(
    "high grand great prime vice deputy chief crown holy roman supreme acting former palatine lord first"
)
# Offices that are no honorific but, like one, make a style ("Chief Editor of the Royal
# Commission", "Attorney General"), and the words that place an office ("State Senator").
OFFICES = HONORIFICS | _words(
    "editor secretary attorney ambassador consul commissioner treasurer comptroller premier representative delegate"
)
OFFICE_MODIFIERS = STYLE_MODIFIERS | _words("state federal")


def plural_office(word: str) -> bool:
    """A lower-case word is offices ("kings", "duchesses"; "princess" is one office)."""
    return word not in OFFICES and word.endswith("s") and (word[:-1] in OFFICES or word[:-2] in OFFICES)


def is_office(word: str) -> bool:
    """A lower-case word is an office or offices."""
    return word in OFFICES or plural_office(word)


# What a common noun says a thing is ("an American actor", "a 1961 Hindi movie"), for
# definitions and for nouns right before a name ("actor Dhanush", "the film Halloween").
_NOUN_LISTS = {
    WORK: """
film movie documentary cartoon anime series miniseries mini-series sitcom soap telenovela serial show
programme program episode song single album ep track ballad anthem hymn aria opera operetta musical
symphony concerto sonata suite composition novel novella book poem story play painting fresco sculpture
statue manga comic videogame game soundtrack memoir autobiography biography essay treatise anthology
screenplay libretto fairy tale fable epic saga thriller comedy drama western musical mixtape remix
""",
    GEO: """
village town city capital municipality commune comune district county province region state country
nation territory island archipelago peninsula river tributary stream creek lake reservoir mountain peak
hill volcano glacier plateau desert forest bay gulf sea ocean strait coast beach cape suburb neighbourhood
neighborhood settlement hamlet locality parish borough quarter ward canton prefecture oblast raion
voivodeship gmina powiat principality duchy kingdom empire republic caliphate sultanate emirate
metropolis port harbour harbor airport street road avenue square bridge castle palace fortress cathedral
church temple mosque monastery abbey stadium arena area place site estate township community
constituency valley canyon waterfall spring island
""",
    ORGANIZATION: """
company corporation firm business manufacturer brand label publisher studio network broadcaster channel
newspaper magazine journal periodical tabloid agency organization organisation institution university
college school academy institute seminary conservatory hospital museum library gallery foundation charity
association society federation confederation union league club team band group duo trio quartet quintet
ensemble orchestra choir party faction army navy regiment division squadron brigade battalion militia
order dynasty government ministry department council committee commission parliament legislature
airline railway bank retailer chain brewery winery distillery cooperative consortium conglomerate
subsidiary startup enterprise outlet franchise
""",
    EVENT: """
battle war siege conflict campaign revolution rebellion uprising revolt insurrection coup massacre attack
bombing raid invasion election referendum tournament championship competition contest race match
festival ceremony event conference summit exhibition fair expo olympics season edition marathon derby
disaster earthquake hurricane storm cyclone typhoon flood fire explosion accident crash shipwreck
pandemic epidemic famine crisis scandal strike protest riot tour concert crusade
""",
}
# A word of two lists is typed by the later one (the people first).
NOUN_TYPES = {word: PERSON for word in PERSON_NOUNS} | {
    word: entity_type for entity_type, words in _NOUN_LISTS.items() for word in words.split()
}

# Head words of names (the last word, or the one before "of"): "Jive Records", "University
# of Leiden", "Battle of Hastings". Different from the nouns above: a "Films" or "Opera"
# at the end of a name is a company, while "a film" or "an opera" is a work.
_HEAD_LISTS = {
    ORGANIZATION: """
company corporation corp inc incorporated ltd limited llc plc gmbh ag co group holdings industries
enterprises university college school academy institute institution seminary conservatory society
association federation confederation league council committee commission agency authority department
ministry office bureau board bank party army navy corps regiment brigade battalion division squadron
fleet club fc team records pictures studios studio films productions entertainment media press
publishing publishers times news post herald gazette journal tribune telegraph observer magazine network
radio television tv broadcasting airlines airways railway railways railroad motors hospital
museum library gallery theatre theater orchestra philharmonic opera ballet choir ensemble band parliament senate
congress assembly government police guard church foundation trust fund center centre laboratory
laboratories labs systems technologies software house dynasty order brotherhood movement organization
organisation court cabinet administration service force forces command brothers bros partners alliance
coalition union
""",
    GEO: """
street avenue road lane boulevard square park city town village county province district region
territory river lake sea ocean bay gulf strait island islands isle peninsula coast mountain
mountains mount hill hills valley plateau desert forest canyon falls springs beach harbor harbour port
airport station bridge castle palace heights creek canal glacier volcano reef kingdom empire republic
caliphate sultanate emirate khanate principality duchy prefecture oblast municipality borough parish
township quarter stadium highway motorway oasis pier wharf dock
""",
    EVENT: """
war wars battle siege revolution rebellion uprising revolt crusade massacre election elections referendum
olympics games cup championship championships tournament festival awards marathon expo exhibition
conference summit incident crisis disaster earthquake hurricane flood bombing attack raid invasion
campaign offensive coup riots
""",
}
HEAD_TYPES = {word: entity_type for entity_type, words in _HEAD_LISTS.items() for word in words.split()}
# First words of place names: "Mount Everest", "Lake Geneva", "Fort Worth".
GEO_FIRST_WORDS = _words("mount mt lake cape fort port isle gulf bay river")
# "Northern Ireland", "Central Norway", "Upper Austria": a direction before a place.
DIRECTIONS = _words(
    "north south east west central northern southern eastern western upper lower greater inner outer new old"
)

_PLURAL = re.compile(r"(?<=[^s])s$")


def noun_type(word: str) -> str | None:
    """The type a common noun names, singular or plural, or the last part of a compound
    ("sub-kingdom", "singer-songwriter")."""
    word = word.lower().strip(".,;:'\"“”‘’")
    for candidate in (word, _PLURAL.sub("", word), word.rsplit("-", 1)[-1]):
        if candidate in NOUN_TYPES:
            return NOUN_TYPES[candidate]
    # Occupations in -ist ("agriculturalist", "geologist"), not "list" or "twist".
    if len(word) > 6 and word.endswith(("ist", "ists")):
        return PERSON
    return None


def head_type(word: str) -> str | None:
    word = word.lower().rstrip(".")
    return HEAD_TYPES.get(word) or HEAD_TYPES.get(_PLURAL.sub("", word))


# A definition's noun phrase ends at a preposition, clause or participle: "a 1961 Hindi
# movie produced by ...", "an American actor and singer from ...".
_PHRASE_END = _words(
    """
in of by for from with who whom whose which that where when based born directed produced written released
starring located situated and or but than as at on to about after before during near under between
within
"""
)
_PHRASE_END_KEEP_GOING = _words("and or")  # "an actor and singer": the last noun still counts


def phrase_type(words: list[str]) -> str | None:
    """The type named by the head of a noun phrase: its last typed noun before a
    preposition or clause ("a Slovak composer and conductor of ..." -> PERSON). A phrase
    like "the oldest of seven high schools" is read past its "of"."""
    typed = None
    for k, word in enumerate(words[:14]):
        lowered = word.lower().strip(",;:'\"“”‘’()")
        if lowered in _PHRASE_END and lowered not in _PHRASE_END_KEEP_GOING:
            if lowered == "of" and typed is None and k <= 3:
                continue  # "one of the", "the oldest of", "the third of"
            break
        found = noun_type(lowered) if lowered not in _PHRASE_END_KEEP_GOING else None
        if found:
            typed = found
        if word.endswith((",", ";", ":")) and typed:
            break
    return typed


# "X (born 1950)", "X( 24 May 1900 – 31 October 1984)", "X (c. 661–679)": life dates.
_LIFE_DATES = re.compile(
    r"^\s*\(\s*(?:[^()]{0,120}?[;,]\s*)?(?:born\b|b\.|died\b|d\.|née\b|nee\b|fl\.|r\.|c\.\s*\d|ca\.\s*\d|"
    r"[^()]{0,60}?\d{3,4}\s*(?:or\s+\d{3,4}\s*)?[–—-]|[–—-]\s*\d)"
)
# "X (1986)" after a quoted title, "X (2013 film)": a work with its year.
_WORK_YEAR = re.compile(r"^[\"”’]?\s*\(\s*\d{4}\s*\)")


def life_dates(after: str) -> bool:
    return _LIFE_DATES.match(after) is not None


def work_year(after: str) -> bool:
    return _WORK_YEAR.match(after) is not None


# A definition right after the name: "X is a ...", "X( born ...) was the ...", "X, a ...".
_DEFINITION = re.compile(
    r"^[\"”’]?\s*(?:\((?:[^()]|\([^()]*\))*\)\s*)*(?:,\s*(?:also\s+)?(?:known|called|styled|nicknamed)\s[^,]{1,60},)?\s*,?\s*"
    r"(?:(?:is|was|are|were|has been|had "
    r"been|became|remains)\s+(?:also\s+|now\s+|currently\s+|once\s+|probably\s+|perhaps\s+)?)?"
    r"(?P<article>a|an|the|one of the|one of)\s+(?P<phrase>.{1,160})"
)
_COPULA_END = re.compile(r"\b(?:is|was|are|were|been|became|remains)\s*$")
_COPULA_ONLY = re.compile(r"^[\"”’]?\s*(?:\((?:[^()]|\([^()]*\))*\)\s*)*,?\s*(?:is|was)\s+(?P<style>[A-Z]\w+)")


def definition_type(after: str, subject: bool = True) -> str | None:
    """The type a definition right after a name gives it ("is an American actor",
    ", a village in", "was Duke of Burgundy"), or None. An appositive needs its comma
    ("X, a ..."), a copula its verb ("X is a ..."); a name that is not the subject (the
    object of a preposition: "The museum in Trondheim is a ...") only takes an appositive."""
    match = _DEFINITION.match(after)
    if match:
        head = after[: match.start("article")]
        copula = _COPULA_END.search(head)
        if (copula and subject) or (not copula and head.rstrip().endswith(",")):
            return phrase_type(match.group("phrase").split())
    style = _COPULA_ONLY.match(after) if subject else None
    if style and style.group("style").lower() in HONORIFICS:
        return PERSON  # "Hugh the Black was Duke of Burgundy"
    return None


# Words right before a name that say what it is (checked longest first; articles and
# numbers between them and the name are skipped: "at the 65th Academy Awards").
_CUES = {
    PERSON: """
directed by|co-directed by|written by|co-written by|produced by|composed by|performed by|sung by|narrated by|
played by|portrayed by|voiced by|hosted by|edited by|illustrated by|created by|choreographed by|
photographed by|introduced by|painted by|translated by|authored by|lyrics by|music by|script by|
screenplay by|story by|words by|starring|co-starring|stars|starred|featuring|cast includes|cast included|
married|married to|succeeded|composed with|worked with|collaborated with|co-wrote with|
born to|founded by|led by|coached by|assassinated by|murdered by|killed by|
""",
    ORGANIZATION: """
plays for|played for|playing for|signed for|signed with|signed to|studied at|educated at|graduated from|
professor at|lecturer at|works for|worked for|member of|released by|published by|distributed by|
owned by|operated by|acquired by|broadcast by|aired on|manufactured by|
""",
    GEO: """
born in|born at|died in|died at|buried in|buried at|located in|based in|situated in|headquartered in|lives in|
lived in|living in|raised in|grew up in|settled in|moved to|emigrated to|native of|native to|capital of|near|
north of|south of|east of|west of|northeast of|northwest of|southeast of|southwest of|set in|filmed in|
shot in|held in|married in|educated in|stationed in|exiled to|fled to|travelled to|traveled to|
""",
    EVENT: "during|competed at|competed in|participated in|entered into|took part in",
}
CUES = {
    tuple(cue.split()): entity_type for entity_type, cues in _CUES.items() for cue in cues.split("|") if cue.strip()
}
MAX_CUE_WORDS = max(len(cue) for cue in CUES)
# Verbs right after a name that only people do ("X was born", "X, who", "X said").
_PERSON_AFTER = re.compile(
    r"^[\"”’]?\s*(?:\((?:[^()]|\([^()]*\))*\)\s*)?,?\s*(?:who\b|whom\b|was born|is born|died\b|married\b|said\b|says\b|"
    r"told\b|replied\b|asked\b|starred\b|directed\b|wrote\b|composed\b|sang\b|himself\b|herself\b)"
)
# A possessive before a relative or a work: "Guy's widow", "Selma Lagerlöf's novel".
_POSSESSIVE_NOUN = re.compile(r"^['’]s?\s+(\w[\w-]*)")
# A noun right after a name that classifies it: "the United Russia party", "the Thames river".
AFTER_NOUNS = {
    "party": ORGANIZATION,
    "dynasty": ORGANIZATION,
    "family": ORGANIZATION,
    "company": ORGANIZATION,
    "river": GEO,
    "province": GEO,
    "region": GEO,
    "district": GEO,
    "county": GEO,
    "valley": GEO,
    "mountains": GEO,
    "empire": GEO,
    "airport": GEO,
    "war": EVENT,
}


def person_after(after: str) -> bool:
    return _PERSON_AFTER.match(after) is not None


def possessive_type(after: str) -> str | None:
    """ "X's widow" and "X's novel" make X a person."""
    match = _POSSESSIVE_NOUN.match(after)
    if not match:
        return None
    noun = match.group(1).lower()
    return PERSON if noun in KIN_NOUNS or NOUN_TYPES.get(noun) == WORK else None


_KIN_APPOSITIVE = re.compile(r",\s*(?:the\s+)?(?:" + "|".join(sorted(KIN_NOUNS)) + r")\s+of\b")
_FIRST_COPULA = re.compile(r"\b(?:is|was|are|were)\b")
_ORDINAL = re.compile(r"\d+(?:st|nd|rd|th)")
_SPAN_OF_YEARS = re.compile(r"\d{3,4}\s*[–—-]\s*\d{2,4}|\b(?:born|died)\b")


def qualifier_type(qualifier: str) -> str | None:
    """A title's parenthesis: "(2013 film)", "(Skin song)", "(merchant)", "(Bishop of
    Elmham)", "(1620–1659)"."""
    if _SPAN_OF_YEARS.search(qualifier):
        return PERSON
    words = qualifier.split()
    if words and words[0].lower().strip(".") in HONORIFICS:
        return PERSON
    return phrase_type(words)


def style_suffix_type(name: str) -> str | None:
    """A title's style after a comma: "Lambert, Margrave of Tuscany", "Richard Wesley, 1st
    Baron Mornington"."""
    _, comma, suffix = name.partition(", ")
    words = [w for w in suffix.split() if not _ORDINAL.fullmatch(w)]
    return PERSON if comma and words and words[0].lower().strip(".") in HONORIFICS else None


def lead_definition_type(sentence: str) -> str | None:
    """What the first sentence of an article says its subject is: life dates or a
    relative before the first copula ("Lambert( died after 938) was", "Dui Finn, son of
    Sétna, was"), or the copula's noun phrase ("is a 1961 Hindi movie")."""
    copula = _FIRST_COPULA.search(sentence)
    if copula is None:
        return None
    subject = sentence[: copula.start()]
    if any(life_dates(subject[k:]) for k, char in enumerate(subject) if char == "(") or _KIN_APPOSITIVE.search(subject):
        return PERSON
    return definition_type(sentence[copula.start() :])
