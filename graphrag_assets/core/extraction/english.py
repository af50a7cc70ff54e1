"""English entity mentions without a trained model: proper nouns and noun phrases.

Proper nouns are runs of capitalised words (allowing connectors such as "of" inside
"Ghost of Christmas Past"); a capitalised word that only starts a sentence and appears
lower-case elsewhere in the text unit is an ordinary word, not a name. ALL-CAPS runs
(speaker labels in transcripts) are title-cased; short all-caps tokens are acronyms.
Noun phrases are two- or three-word lower-case compounds of content words
("machine learning"); they only survive graph pruning if they recur across text units.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .stopwords import NOT_NOUN_WORDS, STOPWORDS

_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:['’\-][A-Za-z0-9]+)*\.?")
# A word right after the sentence start, an opening quote, a colon or a dash starts a clause,
# so its capital letter says nothing about it being a name.
_CLAUSE_START = re.compile(r"(?:^|[\"“‘(:;—–]|(?:^|\s)'|--)\s*$")
_CONTRACTION = re.compile(r"['’](?:re|ll|ve|d|m|t)$", re.IGNORECASE)
CONNECTORS = {"of", "the", "de", "van", "von", "da", "del", "la", "le", "du", "and"}
HONORIFICS = {
    "mr", "mrs", "ms", "miss", "dr", "sir", "lady", "lord", "madam", "uncle", "aunt", "mister", "master",
    "professor", "prof", "captain", "saint", "st", "mayor", "president", "governor", "senator", "judge",
    "councillor", "councilor", "minister", "chairman", "chairwoman", "director", "general", "colonel",
}
ORGANIZATION_WORDS = {
    "inc", "corp", "corporation", "company", "co", "ltd", "llc", "institute", "university", "college",
    "council", "bank", "society", "group", "labs", "lab", "foundation", "association", "agency",
    "department", "ministry", "school", "academy", "club", "committee", "office", "museum", "library",
    "hospital", "church", "court", "press", "times", "news", "microsoft", "google", "shipping",
}
GEO_WORDS = {
    "street", "city", "river", "port", "lake", "island", "bay", "road", "mountain", "county", "state",
    "harbor", "harbour", "valley", "square", "park", "avenue", "lane", "coast", "sea", "ocean", "bridge",
    "district", "province", "village", "town", "london", "america", "england", "china", "europe",
    "france", "india", "japan", "california", "seattle", "york", "washington",
}
SPEECH_VERBS = {"said", "says", "asked", "replied", "cried", "told", "thought"}


@dataclass(frozen=True)
class Mention:
    title: str
    type: str
    sentence_index: int


def _clean(token: str) -> str:
    token = token.rstrip(".")
    return re.sub(r"['’]s$", "", token)


def _is_capitalised(token: str) -> bool:
    return token[0].isupper()


def _entity_type(words: list[str], before: str | None, after: str | None) -> str:
    lowered = [w.lower().rstrip(".") for w in words]
    if lowered[0] in HONORIFICS or (before or "").lower().rstrip(".") in HONORIFICS:
        return "PERSON"
    if any(w in ORGANIZATION_WORDS for w in lowered):
        return "ORGANIZATION"
    if any(w in GEO_WORDS for w in lowered):
        return "GEO"
    if (after or "").lower() in SPEECH_VERBS or (before or "").lower() in SPEECH_VERBS:
        return "PERSON"
    return "OTHER"


def _is_honorific(token: str) -> bool:
    return token.rstrip(".").lower() in HONORIFICS


def _surface(run: list[str]) -> str:
    """The name as written, without a trailing possessive or full stop; ALL-CAPS runs
    (transcript speaker labels) are title-cased, short all-caps tokens stay acronyms."""
    words = [w if _is_honorific(w) and k < len(run) - 1 else _clean(w) for k, w in enumerate(run)]
    if all(w.isupper() for w in words) and not (len(words) == 1 and len(words[0]) <= 5):
        words = [w.capitalize() for w in words]  # "KEVIN SCOTT" -> "Kevin Scott"
    return " ".join(w for w in words if w)


def _proper_nouns(sentence: str, known_lowercase: set[str], index: int) -> list[Mention]:
    matches = list(_WORD.finditer(sentence))
    tokens = [m.group() for m in matches]
    clause_start = {k for k, m in enumerate(matches) if _CLAUSE_START.search(sentence[: m.start()])}

    def joined(k: int) -> bool:
        """Token k follows token k-1 with nothing but spaces between them."""
        return not sentence[matches[k - 1].end() : matches[k].start()].strip()

    mentions: list[Mention] = []
    i = 0
    while i < len(tokens):
        if not _is_capitalised(tokens[i]):
            i += 1
            continue
        run, j = [tokens[i]], i + 1
        while j < len(tokens) and joined(j):
            after_stop = run[-1].endswith(".") and not _is_honorific(run[-1])
            if _is_capitalised(tokens[j]) and not after_stop:
                run.append(tokens[j])
                j += 1
            elif (
                tokens[j].lower() in CONNECTORS - {"and"}
                and j + 1 < len(tokens)
                and joined(j + 1)
                and _is_capitalised(tokens[j + 1])
            ):
                run.extend(tokens[j : j + 2])
                j += 2
            else:
                break
        before = tokens[i - 1] if i > 0 else None
        after = tokens[j] if j < len(tokens) else None
        first = i
        # Trim function words at either end ("The", "But", "I").
        while run and (_clean(run[0]).lower() in STOPWORDS or run[0].lower() in CONNECTORS):
            run, first = run[1:], first + 1
        while run and (_clean(run[-1]).lower() in STOPWORDS or run[-1].lower() in CONNECTORS):
            run = run[:-1]
        single = run[0] if len(run) == 1 else None
        if single is not None and (
            _clean(single).lower() in NOT_NOUN_WORDS
            or _is_honorific(single)
            or _CONTRACTION.search(single)
            # A capital that only marks the start of a clause, on a word the document
            # also uses in lower case, is not a name.
            or (first in clause_start and single.rstrip(".").lower() in known_lowercase)
        ):
            run = []
        if run and _is_honorific(run[0]):
            person_type = "PERSON"
            # "Mayor Helen Strand" and "Helen Strand" are one person: drop the title.
            while len(run) > 1 and _is_honorific(run[0]) and not all(_is_honorific(w) for w in run[1:]):
                run = run[1:]
        else:
            person_type = None
        if run:
            title = _surface(run)
            if len(title) >= 2 and not title.isdigit():
                mentions.append(Mention(title, person_type or _entity_type(run, before, after), index))
        i = max(j, i + 1)
    return mentions


def _noun_phrases(sentence: str, index: int) -> list[Mention]:
    words = [w.rstrip(".") for w in _WORD.findall(sentence)]
    mentions = []
    run: list[str] = []
    for word in words + [""]:
        lowered = word.lower()
        if (
            word
            and word.islower()
            and len(word) >= 3
            and lowered not in STOPWORDS
            and lowered not in NOT_NOUN_WORDS
            and not _CONTRACTION.search(word)
        ):
            run.append(lowered)
            continue
        # A compound of 2-3 content words; longer runs keep their last three words.
        if len(run) >= 2 and not run[-1].endswith(("ly", "ed", "ing")) and not run[0].endswith("ly"):
            mentions.append(Mention(" ".join(run[-3:]), "CONCEPT", index))
        run = []
    return mentions


def lowercase_vocabulary(text: str) -> set[str]:
    """Words the text uses in lower case: evidence that a capitalised form is not a name."""
    return {w.rstrip(".") for w in _WORD.findall(text) if w.islower()}


def english_mentions(sentences: list[str], known_lowercase: set[str] | None = None) -> list[Mention]:
    """Mentions in the sentences; ``known_lowercase`` is the lower-case vocabulary of the
    whole document (defaults to that of the sentences themselves)."""
    if known_lowercase is None:
        known_lowercase = lowercase_vocabulary("".join(sentences))
    mentions: list[Mention] = []
    for index, sentence in enumerate(sentences):
        mentions.extend(_proper_nouns(sentence.strip(), known_lowercase, index))
        mentions.extend(_noun_phrases(sentence, index))
    return mentions
