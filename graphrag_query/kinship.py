"""Questions about someone's relative, read one relation at a time. Kinship words name
chains of relations: a paternal grandfather is the father's father, a father-in-law the
spouse's father, a stepmother the father's wife. No sentence says "X's paternal
grandfather is Z"; one says who X's father is, another whose son he was. So the relative
is found hop by hop, each from the words that say a relation of a sentence's subject
("Godomar II, son of king Gundobad"), and the question is then asked about them ("Where
did X's father die?" becomes "Where did Y die?").
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from graphrag_common.lexical import NAME_JOINERS

# The word, and the relations it chains, the nearest relative first.
CHAINS = {
    "paternal grandfather": ("father", "father"),
    "paternal grandmother": ("father", "mother"),
    "maternal grandfather": ("mother", "father"),
    "maternal grandmother": ("mother", "mother"),
    "grandfather": ("parent", "father"),
    "grandmother": ("parent", "mother"),
    "grandson": ("child", "son"),
    "granddaughter": ("child", "daughter"),
    "grandchild": ("child", "child"),
    "father-in-law": ("spouse", "father"),
    "mother-in-law": ("spouse", "mother"),
    "son-in-law": ("daughter", "husband"),
    "daughter-in-law": ("son", "wife"),
    "child-in-law": ("child", "spouse"),
    "stepfather": ("mother", "husband"),
    "stepmother": ("father", "wife"),
    "paternal uncle": ("father", "brother"),
    "maternal uncle": ("mother", "brother"),
    "paternal aunt": ("father", "sister"),
    "maternal aunt": ("mother", "sister"),
}
RELATIONS = {
    **{word: (word,) for word in "father mother husband wife spouse son daughter child brother sister".split()},
    **CHAINS,
}


def _key(word: str) -> str:
    """A kinship word however it is joined: "father-in-law", "father in law", "step-mother"."""
    return re.sub(r"[-\s]+", "", word.lower())


_BY_KEY = {_key(word): relations for word, relations in RELATIONS.items()}
# Each word as written with or without hyphens or spaces between its parts; longest first
# ("father-in-law" before "father").
_WORD = "|".join(
    r"[-\s]?".join(re.escape(part) for part in re.split(r"[-\s]|(?<=^step)|(?<=^grand)|(?<=\sgrand)", word) if part)
    for word in sorted(RELATIONS, key=len, reverse=True)
)
# Questions longer than this are no question about a relative (and a long text would make
# the patterns below slow).
MAX_QUESTION = 300
# "the paternal grandfather of X", "X's paternal grandfather": in lower case, as a question
# writes a relation ("Son Of Frankenstein" is a film's title), right after "the" ("the first
# wife of X" asks which wife, not who the wife is).
_OF = re.compile(rf"\bthe\s+(?P<word>{_WORD})\s+of\s+(?P<named>[^?]+?)(?P<rest>\s*\?|\s*$)")
_POSSESSIVE = re.compile(rf"['’]s?\s+(?P<word>{_WORD})\b")
_INNER_OF = re.compile(rf"the\s+(?P<word>{_WORD})\s+of\s+(?P<named>.+)$")
# Nouns a kinship word makes a compound with: "Apple's sister company" is no relative.
_COMPOUNDS = set(
    """company companies city cities ship ships school station publication paper project organisation
    organization brand site network channel label tongue language figure firm group church house""".split()
)
# Words a question opens with, before the name it asks about ("Did X's father ...").
_OPENERS = set("did does do is was were are has had have will can could who whom what when where which how why".split())
# The words after the name that end a question about what a relative did ("Where was the
# father of X *born*?", "Which country is X's father *from*?"); "the victim of the Lindbergh
# kidnapping" ends in no such word.
_ASKED_AFTER = set(
    """born die died live lived work worked study studied graduate graduated come came from detained buried
    educated marry married retire retired reside resided teach taught play played found founded in at""".split()
)
_ROLE_PLAYED = re.compile(r"\b(?:played|plays|portrayed|portrays|starred|stars|cast)\b")  # "played the son of X"
_FILTER = re.compile(r"\b(?:that|who|which|whose|whom)\b")  # "the grandson of X that founded ...": which one
# A relative described by a relation to a name ("the director of film X"), to be read first.
_DESCRIBED = re.compile(r"the\s+[a-z]+\s+of\s+.*[A-Z]")


_ASKS_WHO = re.compile(r"(?i)\s*(?:who\s+(?:is|was)|what\s+(?:is|was)\s+the\s+name\s+of)\s*\??\s*")


@dataclass(frozen=True)
class Chain:
    """A question about someone's relative: the one ``named`` (or described: "the director
    of film X"), the ``relations`` leading from them to the relative, nearest first, and
    ``then``, the question with the relative's name in place of the words for them."""

    named: str
    relations: tuple[str, ...]
    then: Callable[[str], str]

    @property
    def described(self) -> bool:
        return not _names(self.named)

    @property
    def asks_who(self) -> bool:
        """The question asks only who the relative is ("Who is X's stepmother?", "What is
        the name of X's father?")."""
        return _ASKS_WHO.fullmatch(self.then("")) is not None


def _names(text: str) -> bool:
    """The text opens with a name (capitalised or a number), not a description."""
    return text[:1].isupper() or text[:1].isdigit()


def kinship_chain(question: str) -> Chain | None:
    """The relative a question asks about, as a chain of relations from a name, or None."""
    if len(question) > MAX_QUESTION:
        return None
    found = _OF.search(question)
    if found is not None:
        relations = _BY_KEY.get(_key(found.group("word")))
        named = _without_asked_after(found.group("named"))
        before, after = question[: found.start()], question[found.start("named") + len(named) :]
        inner = _inner_chain(named)
        if relations is None or inner is None:
            return None
        named, nearer = inner
        relations = nearer + relations
    else:
        found = _POSSESSIVE.search(question)
        if found is None or (relations := _BY_KEY.get(_key(found.group("word")))) is None:
            return None
        start = _name_before(question[: found.start()])
        named, end = question[start : found.start()].strip(), found.end()
        # "X's husband's father": one relation after the other.
        while (more := _POSSESSIVE.match(question, end)) is not None and _BY_KEY.get(_key(more.group("word"))):
            relations, end = relations + _BY_KEY[_key(more.group("word"))], more.end()
        if _COMPOUNDS & set(re.findall(r"\w+", question[end:])[:1]):
            return None
        before, after = question[:start], question[end:]
    if (
        not named
        or named.lower() in _OPENERS
        or _FILTER.search(named)
        or not (_names(named) or _DESCRIBED.match(named))
    ):
        return None
    return Chain(named, relations, lambda name: f"{before}{name}{after}")


def _without_asked_after(named: str) -> str:
    """The name without the words after it that say what the question asks of the relative."""
    words = named.split(" ")
    end = len(words)
    while end > 1 and words[end - 1][:1].islower():
        end -= 1
    cut = next((k for k in range(end, len(words)) if words[k] in _ASKED_AFTER), len(words))
    return " ".join(words[:cut])


def _inner_chain(named: str) -> tuple[str, tuple[str, ...]] | None:
    """The one a relative's relative is named through, and the relations to them: "the
    husband of X" is X's husband, "X's husband" too."""
    inner = _INNER_OF.match(named)
    if inner is not None:
        relations = _BY_KEY.get(_key(inner.group("word")))
        deeper = _inner_chain(inner.group("named"))
        return None if relations is None or deeper is None else (deeper[0], deeper[1] + relations)
    owned = _POSSESSIVE.search(named)
    if owned is not None and owned.end() == len(named):
        relations = _BY_KEY.get(_key(owned.group("word")))
        return None if relations is None else (named[: owned.start()], relations)
    return named, ()


def _name_before(text: str) -> int:
    """Where the name that ends the text begins: after its last lower-case word that joins
    no name, and after the word opening the question ("the place of death of *Maurice,
    Prince Of Orange*", "Did *Anna Lind*")."""
    start = 0
    for word in re.finditer(r"[^\s,]+", text):
        if word.group()[:1].islower() and word.group() not in NAME_JOINERS:
            start = word.end()
    start = re.compile(r"[\s,]*(?:(?:of|de|the)\s+)*").match(text, start).end()
    opener = re.match(r"(\w+)['’]?\s+", text[start:])
    if opener is not None and opener.group(1).lower() in _OPENERS:
        start += opener.end()
    return start


# What a sentence says of its subject's relatives: the words before the relative's name.
# ``rel`` names which relative when the words say it; else the asked one is read from the
# order of two names ("son of A and B": A the father, B the mother). Relation words are
# read in lower case ("starred in Son of the Sheik" names no father); ``owned`` marks the
# words said of whoever is named right before them ("Raghnall's father, Y").
_COPULA = r"(?:(?P<copula>was|is)\s+)?"
_PARENT_WORDS = (
    r"\b(?:son|daughter|child|heir|offspring)\s+of\s+(?:the\s+)?",
    r"\b(?i:born)\b[^.;]{0,60}?\b(?:to|from\s+the\s+marriage\s+of)\s+",
    rf"\b(?i:his|her|their)\s+(?P<rel>father|mother)\s*,?\s+{_COPULA}",
    rf"(?P<owned>['’]s?)\s+(?P<rel>father|mother)\s*,?\s+{_COPULA}",
)
_SPOUSE_WORDS = (
    r"\b(?:wife|husband|widow|widower|spouse)\s+of\s+(?:the\s+)?",
    r"\b(?i:marri)(?:ed|age)(?:\s+(?:firstly|secondly|thirdly|in\s+\d{3,4}))*\s+(?:to|with)\s+",
    r"\bmarried\s+(?=[A-Z])",
    rf"\b(?i:his|her)\s+(?:\w+\s+)?(?P<rel>wife|husband|spouse)\s*,?\s+{_COPULA}",
    rf"(?P<owned>['’]s?)\s+(?P<rel>wife|husband|spouse)\s*,?\s+{_COPULA}",
)
_CHILD_WORDS = (
    r"\b(?i:his|her|their)\s+(?:\w+\s+)?(?P<rel>son|daughter|child)\s*,?\s+",
    r"(?P<owned>['’]s?)\s+(?:[a-z]+\s+)?(?P<rel>son|daughter|child)\s*,?\s+",
    r"\b(?:father|mother|parent)\s+of\s+(?:the\s+)?",
)
_SIBLING_WORDS = (
    r"\b(?i:his|her)\s+(?:\w+\s+)?(?P<rel>brother|sister)\s*,?\s+",
    r"(?P<owned>['’]s?)\s+(?:[a-z]+\s+)?(?P<rel>brother|sister)\s*,?\s+",
    r"\b(?P<rel>brother|sister)\s+of\s+",
)
_READ_BY_RELATION = {
    relation: tuple(re.compile(pattern) for pattern in patterns)
    for relations, patterns in (
        (("father", "mother", "parent"), _PARENT_WORDS),
        (("spouse", "wife", "husband"), _SPOUSE_WORDS),
        (("son", "daughter", "child"), _CHILD_WORDS),
        (("brother", "sister"), _SIBLING_WORDS),
    )
    for relation in relations
}
# A spouse named before the words that say so: "his association with Katherine Mansfield,
# whom he married in 1918", "whom he would later marry" (not "whom he married to his
# sister": a marriage he arranged).
_SPOUSE_BEFORE = re.compile(
    r"\s*,\s+whom\s+(?:he|she)\s+(?:[a-z]+\s+){0,2}?(?:married|marry|wed)\b(?!\s+(?:off\s+)?to\b)"
)
# A name where a place or a parent stands: "met Anna in Paris, whom ...", "Maria, daughter
# of the painter Karl Ek, whom ...".
_NO_SPOUSE_BEFORE = re.compile(r"\b(?:in|at|from|of|near)\s+(?:the\s+)?(?:[a-z]+\s+){0,2}$")
_NAME_BEFORE = re.compile(r"[A-Z][\w'’.-]*(?:\s+(?:[A-Z][\w'’.-]*|(?:of|de|von|van|the)(?=\s+[A-Z])))*$")
_EITHER = {"parent", "spouse", "child"}  # asked without saying which: a father answers "parent"
# A rank or title before a name is not part of it ("son of king Gundobad", "to Prince
# Norodom Sutharot"), unless it is all of the name but one word ("Earl Hines", "Duke Ellington").
_RANKS = set(
    """king queen prince princess duke duchess count countess earl lord lady sir emperor empress
    landgrave margrave elector archduke archduchess baron baroness tsar sultan pharaoh chief saint
    infante infanta marquess marchioness viscount""".split()
)
_TITLES = {"dr", "st", "mr", "mrs", "ms", "jr", "sr", "rev", "gen", "col", "capt"}
_ROMAN = re.compile(r"[IVX]+$")
_STYLE = re.compile(r",\s+(?:\d+(?:st|nd|rd|th)\s+)?(?P<rank>[A-Z][a-z]+)\s+of\s+(?=[A-Z])")
_NAME_TOKEN = re.compile(r"[^\W\d_][\w'’-]*|\d+")
_POSSESSIVE_END = re.compile(r"['’]s?$")
_HE = re.compile(r"(?i)\b(?:he|his|him)\b")
_SHE = re.compile(r"(?i)\b(?:she|her|hers)\b")
_HE_OR_SHE = re.compile(r"(?i)\b(?:he|his|him|she|her|hers)\b")
# Someone else's relative ("Oskar's mother's brother"), not the subject's.
_OTHERS_KIN = re.compile(
    r"(?i)['’]s?\s+(?:\w+\s+)?(?:son|daughter|child|father|mother|parent|wife|husband|brother|sister)s?\b"
)
# Another name just before, set off by a comma: the relation is that one's ("he married
# Catherine Keatinge, the only daughter of Maurice Keatinge").
_APPOSITION = re.compile(r"([^\W\d_][\w'’.-]*)\s*,\s+(?:the\s+)?(?:[a-z]+\s+){0,2}$")
# Words that end a description before a name: "son of a farmer in Bavaria" names no parent.
_NOT_DESCRIBING = {"in", "at", "on", "of", "and", "or", "to", "from", "by", "with", "for", "who", "which", "whose"}
_SECOND = re.compile(r"\s*(?:,[^,;.()]{0,40}?,?)?\s+and\s+(?:his\s+wife,?\s+|her\s+husband,?\s+)?")


def _read_name(text: str) -> tuple[str, int] | None:
    """The name the text opens with and where it ends; a rank, or up to two words saying
    what they were, left out ("son of writer Gisela Elsner", "the late king Gundobad").
    None when the text opens with no name: a capitalised adjective ("a Scottish farmer"),
    or a name that owns what follows ("Olaf Berg's gardener")."""
    tokens = list(_NAME_TOKEN.finditer(text))
    words: list[re.Match] = []
    position, described = 0, 0
    for n, token in enumerate(tokens):
        gap, word = text[position : token.start()], token.group()
        # "John F. Kennedy", "Dr. Olaf Berg": an initial's or title's full stop joins the name.
        initial = words and gap.strip() == "." and (len(words[-1].group()) == 1 or words[-1].group().lower() in _TITLES)
        if (words and gap != " " and not initial) or (not words and gap.strip()):
            break
        if not words and word.lower() in _RANKS and (word.islower() or _longer_name(tokens[n + 1 : n + 4])):
            position = token.end()
            continue
        if not words and word.islower() and word not in _NOT_DESCRIBING and described < 2:
            described, position = described + 1, token.end()
            continue
        joins = word.lower() in NAME_JOINERS or word == "the"  # "Nicholas the Small", "William the Silent"
        if not (word[:1].isupper() or _ROMAN.match(word) or (words and joins)):
            break
        words.append(token)
        position = token.end()
        if _POSSESSIVE_END.search(word):
            return None
    while words and (words[-1].group().lower() in NAME_JOINERS or words[-1].group() == "the"):
        words.pop()
    if not words or not words[0].group()[:1].isupper():
        return None
    if len(words) == 1 and re.match(r" +(?!(?:and|or|the)\b)[a-z]", text[words[0].end() :]):
        return None  # "a Scottish farmer", "a Jewish family": an adjective
    start, end = words[0].start(), words[-1].end()
    # The title after a comma is part of the name: two Christian Augusts are "Christian
    # August, Prince of Anhalt-Zerbst" and "Christian August, Duke of Holstein-Gottorp".
    if (styled := _STYLE.match(text, end)) is not None and styled.group("rank").lower() in _RANKS:
        title = _read_name(text[styled.end() :])
        if title is not None:
            end = styled.end() + title[1]
    return text[start:end], end


def _longer_name(tokens: list[re.Match]) -> bool:
    """More than one word of a name follow ("Prince Norodom Sutharot", "Infanta Maria of
    Tessin"): the rank before them is no part of it, as it is of "Earl Hines"."""
    words = [token.group() for token in tokens]
    return (
        len(words) >= 2
        and words[0][:1].isupper()
        and (words[1][:1].isupper() or (len(words) == 3 and words[1] in NAME_JOINERS and words[2][:1].isupper()))
    )


def _spellings(named: str) -> tuple[list[str], list[str]]:
    """How a sentence may name someone: in full or up to the comma of a title ("Margaret
    of Bavaria"); and, only where its passage names them so, by the first name or by the
    surname of a name without joiners ("Raghnall's father")."""
    words = named.split()
    title_dropped = named.split(",")[0]
    full = [named, title_dropped] if " " in title_dropped else [named]
    short = [words[0]] if len(words) > 1 and len(words[0]) >= 4 and words[0].lower() not in _RANKS else []
    if len(words) > 1 and not {w.lower() for w in words} & NAME_JOINERS and len(words[-1]) >= 4:
        short.append(words[-1])
    return [s.casefold() for s in dict.fromkeys(full)], [s.casefold() for s in short]


# What a name or title adds in brackets at its end: an alias ("Tim Cratchit (Tiny Tim)"),
# dates or what tells it from a namesake ("Christine of Hesse-Kassel (1578–1658)").
BRACKETED_END = re.compile(r"\s*\([^()]*\)$")


def _heading(text: str) -> str:
    """A passage's title as a name: without its dates in brackets or the title after a comma."""
    return BRACKETED_END.sub("", text).split(",")[0].casefold()


def titled_with(named: str, headings: Mapping[str, str]) -> set[str]:
    """The citations of the passages titled with the name: whom they are about."""
    spelled = {_heading(spelling) for spelling in _spellings(named)[0]}
    return {citation for citation, heading in headings.items() if _heading(heading) in spelled}


def relatives(
    relation: str, named: str, candidates: Sequence[tuple[str, str]], headings: Mapping[str, str]
) -> list[tuple[str, str, str]]:
    """(name, sentence, citation) of each relative of the kind ``relation`` the sentences
    say ``named`` has: read from words that say it of the sentence's subject ("Godomar II,
    son of king Gundobad"; "He was the husband of Caretene." in the passage titled
    Gundobad), the subject named before them, or a pronoun in the passage titled with the
    name. Those said of the name in full come first, then of a pronoun in its passage, then
    of its first name or surname; each in evidence order, and in a sentence the first said."""
    full, short = _spellings(named)
    titled = titled_with(named, headings)
    spelled_out = titled | {c for sentence, c in candidates if any(s in sentence.casefold() for s in full)}
    pronoun = _pronouns(titled, candidates)
    found: dict[str, tuple] = {}
    for order, (sentence, citation) in enumerate(candidates):
        spellings = full + short if citation in spelled_out else full
        for pattern in _READ_BY_RELATION.get(relation, ()):
            for match in pattern.finditer(sentence):
                before = sentence[: match.start()]
                strength = _said_of_subject(before, full, spellings, citation in titled, pronoun, match)
                said = (match.groupdict().get("rel") or "").lower()
                if strength is None or (said and said != relation and relation not in _EITHER):
                    continue
                name = _relative_named(sentence[match.end() :], relation, said, named)
                # The one named is no relative of theirs ("Albert III" of "Albert III, Duke of
                # Bavaria"); a namesake by one name is ("Ailéan mac Ruaidhrí" of "Ruaidhrí").
                if name is None or any(s in name.casefold() for s in full) or name.casefold() in spellings:
                    continue
                if match.groupdict().get("copula") and " " not in name:
                    continue  # "His father was Norwegian": a word of the kind, not a name
                _keep_first(found, (strength, order, match.start(), name, sentence, citation))
        if relation in ("spouse", "wife", "husband"):
            for match in _SPOUSE_BEFORE.finditer(sentence):
                spouse = _NAME_BEFORE.search(sentence, 0, match.start())
                if spouse is None or _NO_SPOUSE_BEFORE.search(before := sentence[: spouse.start()]):
                    continue
                strength = _said_of_subject(before, full, spellings, citation in titled, pronoun, match)
                name = _read_name(spouse.group())
                if strength is not None and name and not any(s in name[0].casefold() for s in full):
                    _keep_first(found, (strength, order, spouse.start(), name[0], sentence, citation))
    return [(name, sentence, citation) for *_, name, sentence, citation in sorted(found.values())]


def _keep_first(found: dict[str, tuple], ranked: tuple) -> None:
    """Keep a relative's best-ranked reading: (strength, evidence order, position, name, ...)."""
    key = ranked[3].casefold()
    found[key] = min(found.get(key, ranked), ranked)


def _pronouns(titled: set[str], candidates: Sequence[tuple[str, str]]) -> re.Pattern | None:
    """The pronouns that stand for whom the passages titled with a name are about: "he, his,
    him" where they outnumber "she, her", the others where they are outnumbered."""
    text = " ".join(sentence for sentence, citation in candidates if citation in titled)
    he, she = len(_HE.findall(text)), len(_SHE.findall(text))
    return _HE if he > she else _SHE if she > he else None


def _said_of_subject(
    before: str, full: list[str], spellings: list[str], titled: bool, pronoun: re.Pattern | None, match: re.Match
) -> int | None:
    """Whether the relation ``match`` says is the subject's: 0 when the name is written
    before it in full, 1 in the passage titled with the name (``pronoun``: the pronouns
    standing for them there, when the passage tells), 2 when their first name or surname
    is written before it. None when it is another's: the relative of someone named between
    ("Tom Ek's son was married to ..."), the relation of a name set off by a comma just
    before, a relation said of its owner ("Y's father") when that is not the name, or said
    with a pronoun for someone else ("her father" in the passage about him)."""
    other = _APPOSITION.search(before)
    if other and other.group(1)[:1].isupper() and not any(other.group(1).casefold() in s for s in spellings):
        return None
    if pronoun is not None and _HE_OR_SHE.search(match.group()) and not pronoun.search(match.group()):
        return None
    folded = before.casefold()
    if match.groupdict().get("owned"):
        return 0 if any(folded.endswith(s) for s in full) else 2 if any(folded.endswith(s) for s in spellings) else None

    def named_until(group: list[str]) -> int:
        return max((folded.rfind(s) + len(s) for s in group if s in folded), default=-1)

    if (at := named_until(full)) >= 0:
        strength = 0
    elif (at := named_until(spellings)) >= 0:
        strength = 2
    elif titled:
        strength = 1
        at = max((m.end() for m in (pronoun or _HE_OR_SHE).finditer(before)), default=0)
    else:
        return None
    # "Tom Ek's son was married to ...": another's relation; "Tom Ek played the son of ...": a role.
    return None if _OTHERS_KIN.search(before[at:]) or _ROLE_PLAYED.search(before[at:]) else strength


def _relative_named(text: str, relation: str, said: str, named: str) -> str | None:
    """The name the text opens with; of two parents ("son of A and B"), the one asked: the
    father is named first, unless only the other bears the child's surname ("son of writer
    Gisela Elsner and the writer Klaus Roehler", of Oskar Roehler)."""
    first = _read_name(text)
    if first is None or said or relation not in {"father", "mother"}:
        return first and first[0]
    rest = text[first[1] :]
    joined = _SECOND.match(rest)
    second = _read_name(rest[joined.end() :]) if joined else None
    if second is None:
        return first[0] if relation == "father" else None
    father, mother = first[0], second[0]
    if _surname(named) and _surname(mother) == _surname(named) != _surname(father):
        father, mother = mother, father
    return father if relation == "father" else mother


def _surname(name: str) -> str:
    words = name.split(",")[0].split()
    return words[-1].casefold() if len(words) > 1 and not _ROMAN.match(words[-1]) else ""
