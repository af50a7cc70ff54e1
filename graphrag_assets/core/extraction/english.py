"""English entity mentions without a trained model: proper nouns, typed from evidence, and
noun phrases.

A proper noun is a run of capitalised words of any alphabet ("Zoë Saldaña", "Łódź",
"São Paulo"), with connectors inside ("Ghost of Christmas Past", "Ángel Di María", "Pérez
de Guzmán"), initials ("Harold D. Schuster") and a regnal or model number at its end
("Louis XIV", "Frederick I", "Apollo 11", "Heinkel HD 38"). A year after a name is not part
of it ("Paris 1990"); one before an event is ("1972 Summer Olympics"). A capitalised word
that only starts a clause and that the document also writes in lower case is an ordinary
word; so are adjectives of nationality or language on their own ("American", "Hindi").
ALL-CAPS runs (speaker labels in transcripts) are title-cased; short all-caps tokens are
acronyms. Chinese is chinese.py's.

Each mention is typed from the evidence of its sentence (``typing_rules``): what the
sentence says the name is, then the name's own words, then the words around it, then the
place gazetteer. Known names (a document's title) are matched as written first, so that a
title such as "Changed It" is not cut into ordinary words.

Noun phrases are two- or three-word lower-case compounds of content words ("machine
learning"); they only survive graph pruning if they recur across text units.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from graphrag_common.sentences import split_sentences

from .gazetteer import is_place, is_region
from .stopwords import GROUP_ADJECTIVES, NOT_NOUN_WORDS, STOPWORDS
from .typing_rules import (
    AFTER_NOUNS,
    CORPORATE_STYLES,
    CUES,
    DIRECTIONS,
    DROPPED_HONORIFICS,
    EVENT,
    GEO,
    GEO_FIRST_WORDS,
    HONORIFICS,
    KIN_NOUNS,
    MAX_CUE_WORDS,
    OFFICE_MODIFIERS,
    ORGANIZATION,
    PERSON,
    STYLE_MODIFIERS,
    WORK,
    definition_type,
    head_type,
    is_office,
    life_dates,
    noun_type,
    person_after,
    plural_office,
    possessive_type,
    work_year,
)

# Letters and digits of any script but the CJK ones, which chinese.py segments.
_NOT_CJK = "\u2e80-\u9fff\uac00-\ud7af\uf900-\ufaff"
_LETTER = f"[^\\W\\d_{_NOT_CJK}]"
_ALNUM = f"[^\\W_{_NOT_CJK}]"
_WORD = re.compile(f"{_LETTER}{_ALNUM}*(?:['’\\-]{_ALNUM}+)*\\.?")
_TOKEN = re.compile(f"{_WORD.pattern}|\\d+(?:[.,]\\d+)*{_ALNUM}*")
_CONTRACTION = re.compile(r"['’](?:re|ll|ve|d|m|t)$", re.IGNORECASE)
_INITIAL = re.compile(r"[^\W\d_]\.$")
_HYPHEN_GAP = re.compile(r"-\s*")  # "Mecklenburg- Güstrow": a hyphen some sources space out
_LIST_GAP = re.compile(r"\s*(?:,\s*(?:and\s+|or\s+)?|and\s+|or\s+|&\s*)")
_QUOTES = "\"“”‘’'"
# A number that ends a name: a model or sequel number ("Apollo 11", "Boeing 747"), not a year.
_SHORT_NUMBER = re.compile(r"\d{1,3}[^\W\d_]?$")
# A year or ordinal before an event: "1972 Summer Olympics", "65th Academy Awards".
_EVENT_PREFIX = re.compile(r"(?:1\d{3}|20\d{2}|\d{1,3}(?:st|nd|rd|th))$")
_ORDINAL = re.compile(r"\d+(?:st|nd|rd|th)$")
_YEAR = re.compile(r"\d{3,4}$")
_SPACES = re.compile(r"\s+")
# A quoted title: 2Wiki-style sources write it " Title" with the space inside.
_QUOTED = re.compile(r"[\"“]\s*([^\"“”\n]{1,100}?)\s*[\"”]")
_TITLING_WORDS = {"titled", "entitled"}
# ", 2nd " between a name and its style: "John Wallop, 2nd Earl of Portsmouth".
_STYLE_GAP = re.compile(r",\s*(?:\d+(?:st|nd|rd|th)\s+)?")
_ROMAN = re.compile(r"(?=[IVX])X{0,3}(?:IX|IV|V?I{0,3})")
_COMMA_GAP = re.compile(r",\s*")

CONNECTORS = set("of the de van von der den da del della di la le du des dos das do y bin ibn zu mac ap and".split())
_INNER_CONNECTORS = CONNECTORS - {"and"}  # "Anna and Ben" are two names
# Abbreviations after which a full stop does not end a name ("St. Louis", "Warner Bros. Pictures").
_ABBREVIATIONS = HONORIFICS | {"st", "mt", "ft", "jr", "sr", "bros", "co", "inc", "ltd", "corp", "no", "vol", "messrs"}
# Number words that start names ("Third Crusade", "Two Sicilies") though they are stopwords.
_NUMBER_WORDS = set(
    (
        "first second third fourth fifth sixth seventh eighth ninth tenth two three four five six seven eight nine ten"
    ).split()
)
# Function words written with a capital wherever they stand, so a capital says nothing.
_ALWAYS_CAPITALISED = {"i"} | set(
    "january february march april may june july august september october november december "
    "monday tuesday wednesday thursday friday saturday sunday".split()
)
_PREPOSITIONS = set(
    (
        "in of at from near by with for on to into onto under over between through during after before about against "
        "among within via"
    ).split()
)
# Words that a number follows as a count, not as part of a name ("Season 2", "Chapter 11").
_COUNTERS = set(
    "chapter season episode volume vol act scene round stage level day week page number no grade class type version "
    "phase step room "
    "track disc part book game year age figure table section".split()
)
_ORG_SUFFIXES = {"inc", "ltd", "llc", "plc", "gmbh", "corp"}
SPEECH_VERBS = {"said", "says", "asked", "replied", "cried", "told", "thought"}
_SPEECH_AFTER = tuple(f"{verb} " for verb in SPEECH_VERBS)


@dataclass(frozen=True)
class Mention:
    title: str
    type: str
    sentence_index: int


def _bare(token: str) -> str:
    """A token as a lower-case word: no full stop, no possessive."""
    token = token.rstrip(".").lower()
    return token[:-2] if token.endswith(("'s", "’s")) else token


def _numeral(token: str) -> bool:
    return token.isdigit() or _ROMAN.fullmatch(token) is not None


class _Sentence:
    """One sentence's tokens, its proper-noun spans and their types."""

    def __init__(
        self,
        text: str,
        known_lowercase: set[str],
        known_names: Sequence[str],
        known_capitalised: set[str] | None = None,
        known_descriptions: set[str] = frozenset(),
    ):
        self.text = text
        self.known_lowercase = known_lowercase
        self.known_capitalised = known_capitalised
        self.known_descriptions = known_descriptions
        matches = list(_TOKEN.finditer(text))
        self.texts = [m.group() for m in matches]
        self.starts = [m.start() for m in matches]
        self.ends = [m.end() for m in matches]
        self.lower = [t.lower() for t in self.texts]
        self.bare = [_bare(t) for t in self.texts]
        self.cap = [t[0].isupper() for t in self.texts]
        self.number = [t[0].isdigit() for t in self.texts]
        self.claimed = [False] * len(self.texts)
        self.surfaces: dict[tuple[int, int], str] = {}
        self.known = self._find_known(known_names)
        self.known += self._find_quoted_works()

    # -- tokens and the gaps between them ------------------------------------------------

    def _gap(self, k: int) -> str:
        """The text between token k-1 and token k (from the sentence start for k = 0)."""
        return self.text[self.ends[k - 1] if k else 0 : self.starts[k]]

    def _plain(self, k: int) -> bool:
        gap = self._gap(k)
        return not gap or gap.isspace()

    def _abbreviation(self, k: int) -> bool:
        token = self.texts[k]
        return token.endswith(".") and (_INITIAL.match(token) is not None or self.bare[k] in _ABBREVIATIONS)

    def _clause_start(self, k: int) -> bool:
        """A capital after the sentence start, an opening quote, a colon or a dash says
        nothing about the word being a name."""
        if k == 0:
            return True
        gap = self._gap(k).rstrip()
        return (
            gap.endswith(('"', "“", "‘", "'", "(", ":", ";", "—", "–", ".", "!", "?"))
            or "--" in gap
            or (self.texts[k - 1].endswith(".") and not self._abbreviation(k - 1))
        )

    def _continues(self, j: int, k: int) -> bool:
        """Token k may extend a name ending with token j."""
        if self.texts[j].endswith(".") and not self._abbreviation(j):
            return False
        gap = self._gap(k)
        if not gap or gap.isspace():
            return True
        if self.cap[k] and self.cap[j]:
            if _HYPHEN_GAP.fullmatch(gap):
                return True
            if gap[0] in "'’" and gap[1:].isspace() and self.texts[j].endswith("s"):
                return True  # "Girls' Schools Association"
        return False

    # -- known names ----------------------------------------------------------------------

    def _find_known(self, names: Sequence[str]) -> list[tuple[int, int, str, int, str | None]]:
        """(first token, last token, name, end offset) of each whole-word occurrence of a
        known name; its tokens are claimed, so no rule-based name overlaps it."""
        found = []
        for name in names:
            start = self.text.find(name)
            while start >= 0:
                end = start + len(name)
                whole = not (start and self.text[start - 1].isalnum()) and not (
                    end < len(self.text) and self.text[end].isalnum()
                )
                first, last = bisect_right(self.ends, start), bisect_left(self.starts, end) - 1
                if whole and first <= last and not any(self.claimed[first : last + 1]):
                    self.claimed[first : last + 1] = [True] * (last + 1 - first)
                    found.append((first, last, name, end, None))
                start = self.text.find(name, end)
        return found

    def _find_quoted_works(self) -> list[tuple[int, int, str, int, str | None]]:
        """Quoted titles of works, taken whole even with lower-case words in them ("Aldri
        annet enn bråk" (1954), the film "Interview with a Hitman"): a year after them or
        a work noun before them ("the album", "entitled") says they are titles."""
        found = []
        for match in _QUOTED.finditer(self.text):
            title = match.group(1)
            start, end = match.span(1)
            first, last = bisect_right(self.ends, start), bisect_left(self.starts, end) - 1
            if (
                not title[0].isupper()
                or title[-1] in ".,;:"
                or len(title.split()) > 10
                or first > last
                or any(self.claimed[first : last + 1])
            ):
                continue
            before = self.lower[first - 1] if first and self._soft_gap(first, comma=True) else ""
            if work_year(self.text[match.end() :]) or noun_type(before) == WORK or before in _TITLING_WORDS:
                self.claimed[first : last + 1] = [True] * (last + 1 - first)
                found.append((first, last, title, end, WORK))
        return found

    # -- spans ----------------------------------------------------------------------------

    def _spans(self) -> list[tuple[int, int]]:
        """Runs of capitalised words with connectors inside and a short number after."""
        spans, i, n = [], 0, len(self.texts)
        while i < n:
            if not self.cap[i] or self.claimed[i]:
                i += 1
                continue
            j = i
            while j + 1 < n and not self.claimed[j + 1] and self._continues(j, j + 1):
                k = j + 1
                if self.cap[k]:
                    j = k
                    continue
                m = k  # up to two connectors, then a capital: "Pérez de Guzmán", "Planet of the Apes"
                while m < n and m - k < 2 and self.lower[m] in _INNER_CONNECTORS and (m == k or self._plain(m)):
                    m += 1
                if k < m < n and self.cap[m] and not self.claimed[m] and self._plain(m):
                    j = m
                    continue
                break
            if (
                j + 1 < n
                and self.number[j + 1]
                and _SHORT_NUMBER.match(self.texts[j + 1])
                and self._gap(j + 1) == " "  # not a page number across a table of contents
                and not self.claimed[j + 1]
                and not self.texts[j].endswith(".")
                and self.bare[j] not in STOPWORDS | _COUNTERS
            ):
                j += 1  # "Apollo 11", "Heinkel HD 38"; not "May 3" or "Kevin Scott Episode 47"
            spans.append((i, j))
            i = j + 1
        return spans

    def _function_word(self, k: int) -> bool:
        return (
            self.bare[k] in STOPWORDS or self.lower[k] in CONNECTORS or _CONTRACTION.search(self.texts[k]) is not None
        )

    def _shouted(self, k: int) -> bool:
        """An ALL-CAPS word, or a one-letter word before one ("A CHRISTMAS CAROL")."""
        token = self.texts[k].rstrip(".")
        if len(token) > 1:
            return token.isupper()
        return k + 1 < len(self.texts) and len(self.texts[k + 1]) > 1 and self.texts[k + 1].isupper()

    def _capital_inside(self, k: int) -> bool:
        """A function word capitalised inside a sentence is part of a name ("starring in
        The Tender Years", "Great Britain", "Alexander the Great"); not in ALL-CAPS text."""
        return (
            self.cap[k]
            and not self._clause_start(k)
            and self.bare[k] not in _ALWAYS_CAPITALISED
            and not self._shouted(k)
            and not _CONTRACTION.search(self.texts[k])  # "Hi, I’m Kevin Scott"
        )

    def _trim(self, words: list[int]) -> list[int]:
        """Drop function words at either end ("The", "But", "I"), keeping those capitalised
        inside a sentence, a number word that starts a name ("Third Crusade") and a regnal
        "I" ("Frederick I")."""
        while words and self._function_word(words[0]):
            first = words[0]
            if (
                len(words) > 1
                and self.cap[words[1]]
                and (self._capital_inside(first) or self.bare[first] in _NUMBER_WORDS)
            ):
                break
            words = words[1:]
        while words and self._function_word(words[-1]):
            last = words[-1]
            if len(words) > 1 and (
                self._capital_inside(last) or (self.texts[last].rstrip(".") == "I" and self._regnal(words))
            ):
                break
            words = words[:-1]
        return words

    def _regnal(self, words: list[int]) -> bool:
        """ "I" after a name is a numeral unless a verb follows it ("Kevin I think")."""
        last = words[-1]
        if len(words) < 2 or not self.cap[words[-2]] or self._function_word(words[-2]):
            return False
        after = last + 1
        return (
            after >= len(self.texts)
            or not self._plain(after)
            or not self.texts[after][0].islower()
            or self.lower[after] in ("of", "and")
        )

    def _not_a_name(self, words: list[int]) -> bool:
        if all(self.bare[k] in GROUP_ADJECTIVES for k in words):
            return True  # "American", "Italian- American"
        if len(words) > 1:
            # ALL-CAPS with function words inside is shouted prose (a licence, a heading),
            # not a name: "YOU AGREE THAT THE FOUNDATION ...", "STAVE ONE".
            shouted = all(self._shouted(k) for k in words) and any(
                self.bare[k] in STOPWORDS - _INNER_CONNECTORS for k in words
            )
            # Ordinary words a long document capitalises for emphasis: "a great piece of
            # Cold Boiled", "the Invisible World", "Every One"; not a place named once.
            return (
                shouted
                or (
                    all(self._function_word(k) or self._not_spelled_as_name(k) for k in words)
                    and not is_place(self._surface(words))
                )
                or self._of_no_name(words)
                or " ".join(self.bare[k] for k in words) in self.known_descriptions  # "Merry Christmas"
                or self._described(words)
            )
        k = words[0]
        bare = self.bare[k]
        if bare in NOT_NOUN_WORDS or is_office(bare) or _CONTRACTION.search(self.texts[k]):
            return True
        if self._not_spelled_as_name(k):
            return True  # "Hallo!", "Introduce him to me", "cold, rigid, dreadful Death"
        if bare in self.known_descriptions or (bare.endswith("s") and bare[:-1] in self.known_descriptions):
            return True  # "the Ghost", shared by "Ghost of Christmas Past" and "Ghost of Jacob Marley"; "God bless us!"
        if not self._clause_start(k):
            return False
        # A clause's first word the document also writes in lower case, or an -ing/-ed/-ly
        # word before a lower-case one ("Following his death", "Born in Paris").
        after = k + 1
        return bare in self.known_lowercase or (
            len(bare) > 4
            and bare.endswith(("ing", "ed", "ly"))
            and after < len(self.texts)
            and self.texts[after][0].islower()
        )

    def _described(self, words: list[int]) -> bool:
        """A description several names share, after words the document writes in lower
        case: "the Evil Spirit" is an evil spirit, as "the Spirit" is none of its own."""
        return (
            self.bare[words[-1]] in self.known_descriptions
            and all(self.bare[k] in self.known_lowercase and not self._function_word(k) for k in words[:-1])
            and not self._self_typed(words)  # "Black Prince", "Red Sea" are names their words type
        )

    def _description_of(self, words: list[int]) -> list[int]:
        """The name a shared description is "of" in a long document: "Spirit of Tiny Tim"
        and "Ghost of Jacob Marley" are Tiny Tim and Jacob Marley, as "King of Spain" is
        Spain; "Ghost of Christmas Past" stays whole (the document writes no "Christmas
        Past" on its own, nor spells "Past" as a name)."""
        if len(words) < 3 or self.bare[words[0]] not in self.known_descriptions or self.lower[words[1]] != "of":
            return words
        owner = words[2 + (self.lower[words[2]] == "the") :]
        if not owner or not all(self._spelled_as_name(k) for k in owner):
            return words
        if self._name_type(words) is not None or is_place(self._surface(owner)):
            return words  # "University of Oxford", "Isle of Wight", "Sea of Japan" are no Oxford
        return owner if len(owner) == 1 or " ".join(self.bare[k] for k in owner) in self.known_capitalised else words

    def _of_no_name(self, words: list[int]) -> bool:
        """ "X of [the] Y" with one word X is a capitalised description when a long document
        does not spell Y as a name: "Founder of the Feast", "Genius of the Weather"; not
        "Ghost of Christmas Past", "City of London", nor a name its own words type ("Isle
        of Man")."""
        if self.known_capitalised is None or len(words) < 3 or self.lower[words[1]] != "of":
            return False
        of_what = [k for k in words[2:] if not self._function_word(k)]
        return bool(of_what) and all(self._not_spelled_as_name(k) for k in of_what) and not self._self_typed(words)

    def _self_typed(self, words: list[int]) -> bool:
        """The name's own words say what it is ("University of Leiden"), or it is a place."""
        return self._name_type(words) is not None or is_place(self._surface(words))

    def _spelled_as_name(self, k: int) -> bool:
        """A capitalised word a long document spells as a name and not as a description
        (see ``known_descriptions``)."""
        return (
            self.cap[k]
            and not self._function_word(k)
            and not self._not_spelled_as_name(k)
            and self.bare[k] not in self.known_descriptions
        )

    def _not_spelled_as_name(self, k: int) -> bool:
        """A long document does not usually spell this word as a name (capitalised inside a
        sentence): its capital is a clause's start or an emphasis (see
        ``capitalised_vocabulary``)."""
        return self.known_capitalised is not None and self.bare[k] not in self.known_capitalised

    def _without_clause_modifiers(self, first: int, words: list[int]) -> list[int]:
        """A name at a clause start without its leading words that a long document does not
        spell as names (mostly written in lower case, or capitalised only at clause starts):
        "Poor Bob", "Old Marley", "Whereat Scrooge", "A Merry Christmas" are "Bob",
        "Marley", "Scrooge", "Christmas" ("Tiny Tim" stays: the book writes "poor Tiny
        Tim"), and nothing is left of "Cold Roast". A place or a name whose own words type
        it ("Great Britain") keeps its first word."""
        if self.known_capitalised is None or not self._clause_start(first):
            return words
        kept = words
        while len(kept) > 1 and self._not_spelled_as_name(kept[0]):
            kept = kept[1:]
        if kept == words or self._self_typed(words):
            return words
        return [] if len(kept) == 1 and self._not_spelled_as_name(kept[0]) else kept

    def _of_split(self, first: int, last: int) -> list[tuple[int, int]]:
        """A span "X of Y" as two names when X is a name of two or more words on its own
        and Y is no place it would be "of": "Trent Reznor of Nine Inch Nails" is a person
        and a band, "Hershey Bears of the American Hockey League" a team and a league;
        "University of Leiden", "Ghost of Christmas Past", "Louis I of Hesse" (a regnal
        number), "Jimeno Garcés of Pamplona" (a place) and "King of Spain" stay whole."""
        for of in range(first + 2, last):
            if self.lower[of] != "of" or not self._plain(of):
                continue
            head = [k for k in range(first, of) if not self._function_word(k)]
            tail = of + 1 + (self.lower[of + 1] == "the" and of + 2 <= last)
            if (
                len(head) < 2
                or tail > last
                or any(_numeral(self.texts[k].rstrip(".")) or not self.cap[k] for k in head)
                or any(self.bare[k] in HONORIFICS | STYLE_MODIFIERS | _NUMBER_WORDS for k in head)
                or self._name_type(head) is not None
                or self.number[tail]
            ):
                continue
            place = list(range(tail, last + 1))
            if self._name_type(place) == GEO or is_place(self._surface(place)):
                continue
            return [(first, of - 1), (tail, last)]
        return [(first, last)]

    # -- types ------------------------------------------------------------------------------

    def _name_type(self, words: list[int]) -> str | None:
        """What the name's own words say: a country or region, a suffix ("Jr.", "Ltd"), a
        head word ("Jive Records", "University of Leiden"), a place's first word ("Mount
        Everest") or a direction before a place ("Central Norway")."""
        texts = [self.texts[k].rstrip(".") for k in words]
        lowered = [self.bare[k] for k in words]
        if is_region(self._surface(words)):
            return GEO
        if lowered[-1] in ("jr", "sr"):
            return PERSON
        if any(word in _ORG_SUFFIXES for word in lowered):
            return ORGANIZATION
        of = lowered.index("of", 1) if "of" in lowered[1:] else len(lowered)
        heads = [t for t in texts[:of] if not _numeral(t)]
        if heads and (found := head_type(heads[-1])):
            return found
        if of > 1 and _numeral(texts[of - 1]) and not texts[of - 1].isdigit():
            return PERSON  # a regnal number: "Louis XIV", "Lothair II of Lotharingia"
        if len(words) > 1 and lowered[0] in GEO_FIRST_WORDS:
            return GEO
        if len(words) > 1 and lowered[0] in DIRECTIONS and is_place(" ".join(texts[1:])):
            return GEO
        return None

    def _cue_type(self, first: int) -> str | None:
        """The words before a name: a cue ("directed by", "born in"), "<relative> of"
        ("son of"), "<style or place> of" ("king of", "city of"), a year then "in" ("born
        1941 in Palma"), "by" after a work ("a novel by") or a noun ("actor Dhanush", "the
        film Halloween"). Articles and numbers in between are skipped ("at the 65th ...")."""
        p = first - 1
        while p >= 0 and (self.lower[p] in ("the", "a", "an") or self.number[p]) and self._soft_gap(p + 1):
            p -= 1
        if p < 0 or not self._soft_gap(p + 1, comma=True):
            return None
        plain = self._soft_gap(p + 1)
        if plain:
            for size in range(min(MAX_CUE_WORDS, p + 1), 0, -1):
                cue = tuple(self.lower[p - size + 1 : p + 1])
                if cue in CUES and all(self._plain(t) for t in range(p - size + 2, p + 1)):
                    return CUES[cue]
        word = self.lower[p]
        before = self.lower[p - 1] if p > 0 else ""
        if word == "of" and plain and p > 0:
            if before in KIN_NOUNS:
                return PERSON
            if before in HONORIFICS or noun_type(before) == GEO:
                return GEO
            return None
        if word == "in" and p > 0 and _YEAR.match(self.texts[p - 1]):
            return GEO
        if word == "by" and plain and p > 0 and noun_type(before) == WORK:
            return PERSON
        if self.texts[p][0].islower():
            if word in KIN_NOUNS or word in HONORIFICS:
                return PERSON
            return noun_type(word)
        return None

    def _soft_gap(self, k: int, comma: bool = False) -> bool:
        """Only spaces and quotes between token k-1 and k, or, if allowed, a comma before
        a quoted name (`the album, "Fleshwounds"`; in "a researcher, MIT professor" the
        comma separates)."""
        raw = self._gap(k)
        gap = raw.strip().strip(_QUOTES).strip()
        return not gap or (comma and gap == "," and any(q in raw for q in _QUOTES))

    def _type(
        self,
        words: list[int],
        first: int,
        end: int,
        name_type: str | None,
        cue: str | None,
        list_cue: str | None = None,
        follower: list[int] | None = None,
    ) -> str:
        """A mention's type from the strongest evidence: a definition, its own words, life
        dates, the words before it, the words after it, the cue of the list it is in, a
        region after a comma ("Minneapolis, Minnesota"), quotes around a title, and the
        place gazetteer."""
        after = self.text[end : end + 200]
        subject = first == 0 or self.lower[first - 1] not in _PREPOSITIONS
        found = definition_type(after, subject) or name_type
        if found:
            return found
        if life_dates(after):
            return PERSON
        if cue:
            return cue
        if person_after(after) or possessive_type(after):
            return PERSON
        if (next_word := after.split(maxsplit=1)[:1]) and next_word[0].lower() in AFTER_NOUNS:
            return AFTER_NOUNS[next_word[0].lower()]
        if (first > 0 and self.lower[first - 1] in SPEECH_VERBS and self._plain(first)) or after.lstrip(
            " ,"
        ).lower().startswith(_SPEECH_AFTER):
            return PERSON
        if (
            self._clause_start(first)
            and after.startswith(":")
            and all(self._shouted(k) for k in words)
            and len(words) > 1
        ):
            return PERSON  # a transcript's speaker label: "KEVIN SCOTT: ..."
        if list_cue:
            return list_cue
        if follower and is_region(self._surface(follower)):
            return GEO
        quoted = self._gap(first).rstrip().endswith(('"', "“")) and after.lstrip().startswith(('"', "”"))
        if quoted or work_year(after):
            return WORK
        if is_place(self._surface(words)):
            return GEO
        return "OTHER"

    def _surface(self, words: list[int]) -> str:
        """The name as written, without a trailing possessive or full stop (but "U.S.");
        ALL-CAPS runs are title-cased, short all-caps tokens stay acronyms. ``words`` are
        consecutive tokens."""
        span = (words[0], words[-1])
        if span not in self.surfaces:
            self.surfaces[span] = self._spell(words)
        return self.surfaces[span]

    def _spell(self, words: list[int]) -> str:
        tokens = [self.texts[k] for k in words]
        tokens[-1] = self._last_token(words)
        if all(t.isupper() for t in tokens) and not (len(tokens) == 1 and len(tokens[0]) <= 5):
            tokens = [t.capitalize() for t in tokens]  # "KEVIN SCOTT" -> "Kevin Scott"
        return tokens[0] + "".join(self._joint(k) + token for k, token in zip(words[1:], tokens[1:]))

    def _joint(self, k: int) -> str:
        """How token k joins the one before it in a name: "Saxe-Coburg" whether or not
        the source spaced the hyphen, "Girls' Schools", "W.S.", else one space."""
        gap = self._gap(k)
        mark = gap.strip()
        if not gap:
            return ""
        if mark == "-":
            return "-"
        return mark + " " if mark in ("'", "’") else " "

    def _last_token(self, words: list[int]) -> str:
        """The last token without a possessive or full stop, unless the name is all
        initials ("U.S.")."""
        token = self.texts[words[-1]]
        if token.endswith(("'s", "’s")):
            token = token[:-2]
        return token if all(_INITIAL.match(self.texts[k]) for k in words) else token.rstrip(".")

    def _end(self, words: list[int]) -> int:
        """Where the surface form ends in the sentence (before a possessive or full stop)."""
        last = words[-1]
        return self.ends[last] - (len(self.texts[last]) - len(self._last_token(words)))

    # -- mentions ---------------------------------------------------------------------------

    def mentions(self, index: int) -> list[Mention]:
        found = []
        for first, last, name, end, known_type in self.known:
            words = list(range(first, last + 1))
            found.append(
                Mention(
                    name,
                    known_type or self._type(words, first, end, self._name_type(words), self._cue_type(first)),
                    index,
                )
            )
        spans = [part for first, last in self._spans() for part in self._of_split(first, last)]
        list_cue, previous_end, n = None, None, 0
        while n < len(spans):
            first, last = spans[n]
            in_list = previous_end is not None and _LIST_GAP.fullmatch(
                self.text[self.ends[previous_end] : self.starts[first]]
            )
            follower = None  # the name after a comma: "Minneapolis, Minnesota"
            if n + 1 < len(spans):
                next_first, next_last = spans[n + 1]
                if _COMMA_GAP.fullmatch(self.text[self.ends[last] : self.starts[next_first]]):
                    follower = list(range(next_first, next_last + 1))
            cue = self._cue_type(first)
            mention = self._mention(first, last, index, cue, list_cue if in_list else None, follower)
            style = self._style_after(spans, n)
            if mention is not None and style and mention.type not in (GEO, ORGANIZATION, EVENT, WORK):
                # "Albert III, Duke of Bavaria" is how encyclopaedias title him, and
                # "Albert III" how other articles may name him: both are mentioned, and
                # so is his style's place.
                suffix = _SPACES.sub(" ", self.text[self.ends[last] : self._end(style)])
                found.append(Mention(mention.title, PERSON, index))
                found.append(Mention(mention.title + suffix, PERSON, index))
                place = self._mention(spans[n + 1][0], spans[n + 1][1], index, None)
                if place is not None and place.type == GEO:
                    found.append(place)
                list_cue, previous_end, n = cue or (list_cue if in_list else None), spans[n + 1][1], n + 2
                continue
            if mention is not None:
                found.append(mention)
            list_cue, previous_end, n = cue or (list_cue if in_list else None), last, n + 1
        return found

    def _style_after(self, spans: list[tuple[int, int]], n: int) -> list[int] | None:
        """The words of a style that follows span n after a comma: "Duke of Bavaria",
        "Holy Roman Emperor", "2nd Earl of Portsmouth", "1st Baron Mornington"."""
        if n + 1 >= len(spans):
            return None
        first, last = spans[n + 1]
        gap = self.text[self.ends[spans[n][1]] : self.starts[first]]
        if not _STYLE_GAP.fullmatch(gap):
            return None
        words = self._trim(list(range(first, last + 1)))
        if not words or words[0] != first:
            return None
        bare = [self.bare[k] for k in words]
        of = bare.index("of") if "of" in bare else len(bare)
        style = bare[:of]
        if style and all(w in HONORIFICS | STYLE_MODIFIERS for w in style) and any(w in HONORIFICS for w in style):
            return words if of + 1 < len(bare) or len(style) > 1 else None
        has_ordinal = any(c.isdigit() for c in gap)
        return words if has_ordinal and bare[0] in HONORIFICS and len(words) > 1 else None

    def _mention(
        self,
        first: int,
        last: int,
        index: int,
        cue: str | None,
        list_cue: str | None = None,
        follower: list[int] | None = None,
    ) -> Mention | None:
        words = self._without_clause_modifiers(first, self._trim(list(range(first, last + 1))))
        words = self._description_of(words) if words else words
        if not words or self._not_a_name(words):
            return None
        if words[0] > 0 and _ORDINAL.match(self.texts[words[0] - 1]) and self.bare[words[0]] in HONORIFICS:
            return None  # a peerage after a name: "Richard Wesley, 1st Baron Mornington"
        name_type = self._name_type(words)
        first_word = self.bare[words[0]]
        if (is_office(first_word) or first_word in OFFICE_MODIFIERS) and name_type not in (ORGANIZATION, GEO, EVENT):
            words, name_type = self._without_honorific(words, name_type)
            if not words:
                return None
        elif (owner := self._owner_of_style(words)) is not None:
            words, name_type = owner, self._name_type(owner)
        if (
            name_type == EVENT
            and words[0] > 0
            and self.number[words[0] - 1]
            and _EVENT_PREFIX.match(self.texts[words[0] - 1])
            and self._plain(words[0])
        ):
            words = [words[0] - 1, *words]  # "1972 Summer Olympics"
        title = self._surface(words)
        if len(title.replace(".", "")) < 2 or title.isdigit():
            return None
        return Mention(title, self._type(words, first, self._end(words), name_type, cue, list_cue, follower), index)

    @staticmethod
    def _style(words: list[str]) -> bool:
        """Lower-case words that make an office: offices and the words that place them
        ("Chief Editor", "Holy Roman Emperors", "Count Palatine")."""
        return any(is_office(w) for w in words) and all(is_office(w) or w in OFFICE_MODIFIERS for w in words)

    def _owner_of_style(self, words: list[int]) -> list[int] | None:
        """The owner's words of "Franklin D. Roosevelt's Attorney General": a name whose
        possessive is followed by a style alone."""
        for n, k in enumerate(words[:-1]):
            if self.texts[k].endswith(("'s", "’s")) and self._style([self.bare[j] for j in words[n + 1 :]]):
                return words[: n + 1]
        return None

    def _without_honorific(self, words: list[int], name_type: str | None) -> tuple[list[int], str | None]:
        """A style ("King of Italy", "President of the Balearic Islands", "Kings of the
        United Kingdom") names its place; a style alone ("State Senator", "Attorney
        General") is an office, unless "the" makes it someone ("the Lord Mayor"); an
        honorific before a name makes it a person, and a dropped one leaves the name
        ("Mayor Helen Strand" is "Helen Strand")."""
        bare = [self.bare[k] for k in words]
        of = bare.index("of") if "of" in bare else len(bare)
        style = bare[:of]
        if self._style(style):
            if of == len(bare):
                # "the Lord Mayor" is someone; "State Senator (1794)" and "future Kings" an office.
                someone = words[0] > 0 and self.lower[words[0] - 1] == "the" and not plural_office(bare[-1])
                return (words, PERSON) if someone else ([], None)
            place = words[of + 1 :]
            if place and self.bare[place[0]] == "the":
                place = place[1:]
            # A company's officer ("CEO of FYI") is of an organisation, a ruler of a place.
            default = ORGANIZATION if any(w in CORPORATE_STYLES for w in style) else GEO
            return place, (self._name_type(place) or default) if place else None
        if bare[0] not in HONORIFICS:
            return words, name_type
        # "Dr. Jekyll" is Jekyll, but "Dr. Who" is no "Who": a function word is a name only
        # with its honorific.
        while (
            len(words) > 1
            and self.bare[words[0]] in DROPPED_HONORIFICS
            and not all(self.bare[k] in HONORIFICS | STOPWORDS for k in words[1:])
        ):
            words = words[1:]
        if len(words) == 1 and self.bare[words[0]] in HONORIFICS:
            return [], None
        return words, PERSON


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


# Lower-case letters, digits or a comma, then spaces with at most one line break: the word
# after them stands inside a sentence. The letter is looked behind, not taken: the word
# after a counted word is read too.
_BEFORE_INSIDE = "[a-z\u00df-\u00ff0-9,;]"
_INSIDE_CAPITAL = re.compile(rf"(?<={_BEFORE_INSIDE})(?:[ \t]*\n?[ \t]+|\n)({_WORD.pattern})")
# A document at least this long writes each of its names inside a sentence somewhere;
# a shorter one may name someone only as the subject of its first sentence.
LONG_DOCUMENT_WORDS = 5000


# A word capitalised inside a sentence only once may be an idiom: "before a man can say
# Jack Robinson".
MIN_INSIDE_CAPITALS = 2


def capitalised_vocabulary(text: str, names: list[list[str]]) -> set[str]:
    """The words a long document spells as names: capitalised inside a sentence more than
    once and at least as often as written in lower case (lower case, without a
    possessive); and the names of several such words it writes on their own ("Jacob
    Marley", not the "Christmas Past" of "Ghost of Christmas Past"); read only of a
    document of ``LONG_DOCUMENT_WORDS`` or more. "Scrooge" and "Spirit" are names of A
    Christmas Carol; "Hallo" (only ever opening a clause) and "Death" (mostly "death") are
    not. Lines end in "\n" (see ``offline._vocabulary``); ``names`` are its
    ``written_names``."""
    inside = Counter(_bare(word) for word in _INSIDE_CAPITAL.findall(text) if word[0].isupper())
    lower = Counter(_bare(word) for word in _WORD.findall(text) if word.islower() and _bare(word) in inside)
    words = {word for word, n in inside.items() if n >= max(lower[word], MIN_INSIDE_CAPITALS)}
    # The names of several such words written on their own, not as what an "of" ends.
    alone = (name for name in names if not {"of", "the"} & set(name) and all(word in words for word in name))
    return words | {" ".join(name) for name in alone}


# A name as a long document writes it: capitalised words, with "of", "the" or "of the"
# between them ("Ghost of Christmas Past", "Marley's Ghost").
_CAPITALISED_WORD = r"[A-Z][^\W_]*(?:['’\-][^\W_]+)*"
_NAME_RUN = re.compile(rf"{_CAPITALISED_WORD}(?:[ \t]*\n?[ \t]+(?:(?:of|the|of the)[ \t]+)?{_CAPITALISED_WORD})+")
_AFTER_THE = re.compile(rf"\b[Tt]he[ \t]*\n?[ \t]+({_CAPITALISED_WORD})")


def written_names(text: str) -> list[list[str]]:
    """The names of two or more words a document writes (``_NAME_RUN``), as bare words,
    without function words at either end ("The Ghost" opening a sentence is no longer name)."""
    names = []
    for run in _NAME_RUN.findall(text):
        words = [_bare(word) for word in run.split()]
        while words and words[0] in STOPWORDS:
            words = words[1:]
        while words and words[-1] in STOPWORDS:
            words = words[:-1]
        if len(words) > 1:
            names.append(words)
    return names


def shared_descriptions(text: str, capitalised: set[str], names: list[list[str]]) -> set[str]:
    """The common nouns a long document (``capitalised``: what it spells as names, see
    ``capitalised_vocabulary``; ``names``: its ``written_names``) capitalises as a
    description several names share: written in lower case too, after "the" ("the
    Ghost", "the Spirit"), and the head of two or more longer names ("Ghost of Christmas
    Past", "Ghost of Jacob Marley", "Marley's Ghost"). "the Ghost" is whichever of them is
    there, and so no name of one; "Present" of "Ghost of Christmas Present" is no head."""
    after_the = {_bare(word) for word in _AFTER_THE.findall(text)} & capitalised
    common_nouns = {_bare(word) for word in _WORD.findall(text) if word.islower() and _bare(word) in after_the}
    headed: dict[str, set[str]] = {word: set() for word in common_nouns}
    for words in names:
        head = words[words.index("of", 1) - 1] if "of" in words[1:] else words[-1]
        if head in headed:
            headed[head].add(" ".join(words))
    return {word for word, names in headed.items() if len(names) >= 2}


# A sentence that ends in an exclamation mark (before any closing quote), and the run of
# capitalised words it opens with, after any quotation mark.
_EXCLAMATION = re.compile(r"!['’\"”)]*\s*$")
_OPENING = re.compile(rf"^[\s'‘\"“(]*({_CAPITALISED_WORD}(?:[ \t]+{_CAPITALISED_WORD})*)")
MIN_INTERJECTION_USES = 3
INTERJECTION_SHARE = 0.4  # of a phrase's uses, those opening an exclamation


def interjections(text: str, capitalised: set[str], lowercase: set[str]) -> set[str]:
    """The capitalised phrases (bare words joined by spaces) a long document uses mostly
    to open an exclamation: "God bless us!", "God forbid!", "Good Heaven!", "Merry
    Christmas!" are oaths and greetings, not names. A character is called out too
    ("Jacob!"), but named far more often otherwise; so at least MIN_INTERJECTION_USES uses,
    INTERJECTION_SHARE of them opening an exclamation. A leading word the document writes
    in lower case ("Good", "Merry") may be part of the phrase or not: both are counted."""
    opened: Counter[tuple[str, ...]] = Counter()
    for sentence in split_sentences(text):
        if _EXCLAMATION.search(sentence) and (opening := _OPENING.match(sentence)):
            words = tuple(opening.group(1).split())
            while words and len(words[0]) <= 2 and len(words) > 1:  # "O God!", "Oh Lord!"
                words = words[1:]
            opened[words] += 1
            plain = words
            while len(plain) > 1 and _bare(plain[0]) in lowercase:
                plain = plain[1:]
            if plain != words:
                opened[plain] += 1
    found = set()
    for words, count in opened.items():
        if count < INTERJECTION_SHARE * MIN_INTERJECTION_USES:
            continue
        written = re.compile(r"(?<![\w'’-])" + r"\s+".join(map(re.escape, words)) + r"(?![\w'’-])")
        uses = len(written.findall(text))
        if uses >= MIN_INTERJECTION_USES and count >= INTERJECTION_SHARE * uses:
            found.add(" ".join(_bare(word) for word in words))
    return found


# "the Past, the Present, and the Future": one capitalised word after each "the", the
# items joined by commas, "and" or "or".
_THE_ITEM = rf"\b[Tt]he\s+{_CAPITALISED_WORD}"
_THE_LIST = re.compile(rf"{_THE_ITEM}(?:\s*(?:,|,?\s*(?:and|or))\s*{_THE_ITEM})+\b")


def coordinated_common_nouns(text: str, capitalised: set[str], lowercase: set[str]) -> set[str]:
    """The capitalised words a long document lists beside a common noun it capitalises
    for emphasis: in "the Past, the Present, and the Future" "Past" is mostly written in
    lower case, so the words listed with it like it ("Present", "Future") are ordinary
    words too, wherever the document capitalises them, when it also writes them in lower
    case. A list of names ("the Thames, the Severn and the Tyne") has no such member."""
    found = set()
    for listed in _THE_LIST.finditer(text):
        words = {_bare(word) for word in re.findall(rf"[Tt]he\s+({_CAPITALISED_WORD})", listed.group())}
        if any(word not in capitalised for word in words):
            found |= {word for word in words if word in lowercase}
    return found


def _matchable(name: str) -> bool:
    """A known name is matched in text only if it has a capitalised word that is not a
    function word: a film titled "Her" must not claim every sentence-initial "Her"."""
    return any(w[0].isupper() and _bare(w) not in STOPWORDS for w in _WORD.findall(name))


def english_mentions(
    sentences: list[str],
    known_lowercase: set[str] | None = None,
    known_names: Sequence[str] = (),
    known_capitalised: set[str] | None = None,
    known_descriptions: set[str] = frozenset(),
) -> list[Mention]:
    """Mentions in the sentences; ``known_lowercase`` is the lower-case vocabulary of the
    whole document (defaults to that of the sentences themselves); ``known_names`` are
    found as written, before any rule (a document's title), with their surface as title;
    ``known_capitalised`` and ``known_descriptions`` are what ``capitalised_vocabulary``
    and ``shared_descriptions`` found in the whole document."""
    if known_lowercase is None:
        known_lowercase = lowercase_vocabulary("".join(sentences))
    known = [name for name in dict.fromkeys(known_names) if _matchable(name)]
    mentions: list[Mention] = []
    for index, sentence in enumerate(sentences):
        sentence = sentence.strip()
        mentions.extend(
            _Sentence(sentence, known_lowercase, known, known_capitalised, known_descriptions).mentions(index)
        )
        mentions.extend(_noun_phrases(sentence, index))
    return mentions


def name_type(name: str) -> str | None:
    """What a name's own words say it is (see ``_Sentence._name_type``), with a leading
    honorific making it a person ("Princess Yolanda of Savoy")."""
    sentence = _Sentence(name, set(), ())
    words = list(range(len(sentence.texts)))
    if not words:
        return None
    found = sentence._name_type(words)
    if found is None and sentence.bare[0] in HONORIFICS and len(words) > 1:
        return PERSON
    return found or (GEO if is_place(name) else None)
