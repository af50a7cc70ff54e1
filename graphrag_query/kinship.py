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
# Longest first: "father-in-law" before "father".
_WORD = "|".join(
    re.escape(word).replace(r"\-", r"[-\s]?").replace(r"\ ", r"\s+")
    for word in sorted(RELATIONS, key=len, reverse=True)
)
# "the paternal grandfather of X", "X's paternal grandfather"; in lower case, as a question
# writes a relation: "Son Of Frankenstein" is a film's title.
_OF = re.compile(rf"\b(?:the\s+)?(?P<word>{_WORD})s?\s+of\s+(?P<named>[^?]+?)(?P<rest>\s*\?|\s*$)")
_POSSESSIVE = re.compile(rf"(?P<named>\S[^?]*?)['’]s?\s+(?P<word>{_WORD})s?\b")
# Lower-case words inside a name ("Margaret of Bavaria", "Ailéan mac Ruaidhrí").
_JOINERS = {"of", "de", "da", "del", "der", "di", "du", "la", "le", "van", "von", "y", "al", "bin", "ibn", "mac"}
# Where a name ends: at its first lower-case word that joins no name ("X born", not "Margaret of Bavaria").
_AFTER_NAME = re.compile(r"\s+(?!(?:of|de|da|del|der|di|du|la|le|van|von|y|al|bin|ibn|the|and)\b)[a-z]")
# A relative described by a relation to a name ("the director of film X"), to be read first.
_DESCRIBED = re.compile(r"the\s+[a-z]+\s+of\s+.*[A-Z]")


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
        return not (self.named[:1].isupper() or self.named[:1].isdigit())

    @property
    def asks_who(self) -> bool:
        """The question asks only who the relative is ("Who is X's stepmother?")."""
        return re.fullmatch(r"(?i)\s*who\s+(?:is|was)\s*\??\s*", self.then("")) is not None


def _relations(word: str) -> tuple[str, ...]:
    return RELATIONS[re.sub(r"[-\s]+", lambda gap: "-" if gap.group().strip() == "-" else " ", word.lower())]


def _name_before(text: str) -> int:
    """Where the name that ends the text begins: after its last lower-case word that joins
    no name ("the place of death of *Maurice, Prince Of Orange*")."""
    start = 0
    for word in re.finditer(r"[^\s,]+", text):
        if word.group()[:1].islower() and word.group() not in _JOINERS:
            start = word.end()
    return re.compile(r"[\s,]*(?:(?:of|de|the)\s+)*").match(text, start).end()


def kinship_chain(question: str) -> Chain | None:
    """The relative a question asks about, as a chain of relations from a name, or None."""
    found = _OF.search(question)
    if found is not None:
        named = found.group("named")
        # "Where was the ... of X born?": the name ends before "born"; a relative described
        # ("the director of film X") runs on to its name.
        first_capital = next((i for i, c in enumerate(named) if c.isupper() or c.isdigit()), 0)
        if (verb := _AFTER_NAME.search(named, first_capital)) is not None:
            named = named[: verb.start()]
        before, after = question[: found.start()], question[found.start("named") + len(named) :]
    else:
        found = _POSSESSIVE.search(question)
        if found is None:
            return None
        start = found.start("named") + _name_before(found.group("named"))
        named = question[start : found.end("named")].strip()
        before, after = question[:start], question[found.end() :]
    if not named or (not (named[:1].isupper() or named[:1].isdigit()) and not _DESCRIBED.match(named)):
        return None
    return Chain(named, _relations(found.group("word")), lambda name: f"{before}{name}{after}")


# What a sentence says of its subject's relatives: the words before the relative's name.
# ``rel`` names which relative when the words say it; else the asked one is read from the
# order of two names ("son of A and B": A the father, B the mother).
_POSSESSED = r"['’]s?\s+(?P<rel>father|mother)\s*,?\s+"  # "Raghnall's father, Y": said of whoever owns it
_PARENT_WORDS = (
    r"\b(?:son|daughter|child|heir|offspring)\s+of\s+(?:the\s+)?",
    r"\bborn\b[^.;]{0,60}?\b(?:to|from\s+the\s+marriage\s+of)\s+",
    r"\b(?:his|her|their)\s+(?P<rel>father|mother)\s*,?\s+",
    _POSSESSED,
    r"\b(?P<rel>father|mother)\s+(?:was|is)\s+",
)
_SPOUSE_WORDS = (
    r"\b(?:wife|husband|widow|widower|spouse)\s+of\s+(?:the\s+)?",
    r"\bmarri(?:ed|age)(?:\s+(?:firstly|secondly|thirdly|in\s+\d{3,4}))*\s+(?:to|with)\s+",
    r"\b(?:his|her)\s+(?:\w+\s+)?(?P<rel>wife|husband|spouse)\s*,?\s+",
)
_CHILD_WORDS = (
    r"\b(?:his|her|their)\s+(?:\w+\s+)?(?P<rel>son|daughter|child)\s*,?\s+",
    r"\b(?:father|mother|parent)\s+of\s+(?:the\s+)?",
)
_SIBLING_WORDS = (r"\b(?:his|her)\s+(?:\w+\s+)?(?P<rel>brother|sister)\s*,?\s+", r"\b(?P<rel>brother|sister)\s+of\s+")

_READ_BY_RELATION = {
    relation: tuple(re.compile(pattern, re.IGNORECASE) for pattern in patterns)
    for relations, patterns in (
        (("father", "mother", "parent"), _PARENT_WORDS),
        (("spouse", "wife", "husband"), _SPOUSE_WORDS),
        (("son", "daughter", "child"), _CHILD_WORDS),
        (("brother", "sister"), _SIBLING_WORDS),
    )
    for relation in relations
}
_EITHER = {"parent", "spouse", "child"}  # asked without saying which: a father answers "parent"
# A rank or title before a name is not part of it ("son of king Gundobad", "to Prince Norodom Sutharot").
_RANKS = set(
    """king queen prince princess duke duchess count countess earl lord lady sir emperor empress
    landgrave margrave elector archduke archduchess baron baroness tsar sultan pharaoh chief saint
    infante infanta marquess marchioness viscount""".split()
)
_ROMAN = re.compile(r"[IVX]+$")
_STYLE = re.compile(r",\s+(?:\d+(?:st|nd|rd|th)\s+)?(?P<rank>[A-Z][a-z]+)\s+of\s+(?=[A-Z])")
_NAME_TOKEN = re.compile(r"[^\W\d_][\w'’-]*|\d+")
_PRONOUN = re.compile(r"(?i)\b(?:he|she|his|her)\b")
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
    """The name the text opens with (a rank, or up to two words saying what they were,
    left out: "son of writer Gisela Elsner", "the late king Gundobad") and where it ends."""
    words = []
    position = 0
    described = 0
    for token in _NAME_TOKEN.finditer(text):
        gap = text[position : token.start()]
        if words and gap != " " or not words and gap.strip():
            break
        word = token.group()
        if not words and word.lower() in _RANKS:
            position = token.end()
            continue
        if not words and word.islower() and word not in _NOT_DESCRIBING and described < 2:
            described += 1
            position = token.end()
            continue
        joins = word.lower() in _JOINERS or word == "the"  # "Nicholas the Small", "William the Silent"
        if word[:1].isupper() or _ROMAN.match(word) or (words and joins):
            words.append((word, token.end()))
            position = token.end()
            continue
        break
    while words and (words[-1][0].lower() in _JOINERS or words[-1][0] == "the"):
        words.pop()
    if not words or not words[0][0][:1].isupper():
        return None
    start, end = text.index(words[0][0]), words[-1][1]
    # The title after a comma is part of the name: two Christian Augusts are "Christian
    # August, Prince of Anhalt-Zerbst" and "Christian August, Duke of Holstein-Gottorp".
    if (styled := _STYLE.match(text, end)) is not None and styled.group("rank").lower() in _RANKS:
        title = _read_name(text[styled.end() :])
        if title is not None:
            end = styled.end() + title[1]
    return text[start:end], end


def _spellings(named: str) -> tuple[list[str], list[str]]:
    """How a sentence may name someone: in full or up to the comma of a title ("Margaret
    of Bavaria"); and, only where its passage names them so, by the first name or by the
    surname of a name without joiners ("Raghnall's father")."""
    words = named.split()
    title_dropped = named.split(",")[0]
    full = [named, title_dropped] if " " in title_dropped else [named]
    short = [words[0]] if len(words) > 1 and len(words[0]) >= 4 and words[0].lower() not in _RANKS else []
    if len(words) > 1 and not {w.lower() for w in words} & _JOINERS and len(words[-1]) >= 4:
        short.append(words[-1])
    return [s.casefold() for s in dict.fromkeys(full)], [s.casefold() for s in short]


def _heading(text: str) -> str:
    """A passage's title as a name: without its dates in brackets or the title after a comma."""
    return re.sub(r"\s*\([^()]*\)$", "", text).split(",")[0].casefold()


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
    found: dict[str, tuple] = {}
    for order, (sentence, citation) in enumerate(candidates):
        spellings = full + short if citation in spelled_out else full
        for pattern in _READ_BY_RELATION.get(relation, ()):
            for match in pattern.finditer(sentence):
                strength = _said_of_subject(sentence[: match.start()], full, spellings, citation in titled, pattern)
                said = (match.groupdict().get("rel") or "").lower()
                if strength is None or (said and said != relation and relation not in _EITHER):
                    continue
                name = _relative_named(sentence[match.end() :], relation, said, named)
                # The one named is no relative of theirs ("Albert III" of "Albert III, Duke of
                # Bavaria"); a namesake by one name is ("Ailéan mac Ruaidhrí" of "Ruaidhrí").
                if name is None or any(s in name.casefold() for s in full) or name.casefold() in spellings:
                    continue
                ranked = (strength, order, match.start(), name, sentence, citation)
                found[name.casefold()] = min(found.get(name.casefold(), ranked), ranked)
    return [(name, sentence, citation) for *_, name, sentence, citation in sorted(found.values())]


def _said_of_subject(before: str, full: list[str], spellings: list[str], titled: bool, pattern) -> int | None:
    """Whether the relation the words after ``before`` say is the subject's: 0 when the
    name is written before them in full, 1 when a pronoun stands for it in the passage
    titled with it, 2 when a first name or surname does; None when it is another's."""
    other = _APPOSITION.search(before)
    if other and other.group(1)[:1].isupper() and not any(other.group(1).casefold() in s for s in spellings):
        return None
    folded = before.casefold()
    if any(s in folded for s in full):
        return 0
    if any(s in folded for s in spellings):
        return 2
    # In the passage titled with the name, the subject is that one unless the words
    # before speak of another's relative ("His mother's brother ..."); "Y's father" is Y's.
    if titled and pattern.pattern != _POSSESSED and (_PRONOUN.search(before) or not _OTHERS_KIN.search(before)):
        return 1
    return None


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
