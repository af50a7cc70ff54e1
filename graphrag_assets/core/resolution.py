"""Entity resolution beyond exact names.

Names are first normalised (``name_key``: case, width, punctuation, whitespace); names
with one key are one entity by construction. Beyond that, a similar spelling is no
evidence: "Louis XII"/"Louis XIII", "Michael Herr"/"Michel Herr", "Romania"/"Romanian",
"Andrew"/"Andrews", "Prince of Beira"/"Princess of Beira", "Jack Black"/"Black Jack" are
different things. Two names of compatible types (the same, or one untyped; a lower-case
concept such as "world records" is never a name such as "World Record") are proposed as
one entity only on evidence, which becomes the pair's ``reason``:

- "punctuation, spacing or diacritics": the same letters, in the same words or in words
  only joined or split ("Beyoncé"/"Beyonce", "D'Arcy"/"Darcy", "Front Line"/"Frontline";
  not "George S"/"Georges");
- "inflection": word for word the same but for a plural, in lower-case phrases
  ("leading actor"/"leading actors"); a name's plural only where the two occur together
  and the plural is written as one, after "the" or a count ("the Cratchits", "seven
  Christmas Eves ago"): "inflection in same text unit" (or "... document"). "Rolling
  Stone"/"Rolling Stones", "Andrew"/"Andrews" stay apart;
- "abbreviation": word for word the same but for a word the shorter name abbreviates
  with a full stop after three letters or more ("Xiamen Univ."/"Xiamen University"; "Mr."
  is no "Mrs") or conventionally ("St"/"Saint");
- "honorific dropped": "King Constantine II of Greece"/"Constantine II of Greece", when
  no other honorific goes with the bare name and it begins no longer name ("Henry IV"
  beside "Emperor Henry IV" and "Henry IV of France" is left alone);
- "initials": a name written with initials for some of its words ("J. Strauss II",
  "Robert A. Stemmle") and exactly one name in the corpus spelling them out word for word
  ("Johann Strauss II", "Robert Adolf Stemmle"); beside "John Smith" and "Jane Smith",
  "J. Smith" is left alone;
- "style dropped in same text unit" (or "... document"): a ruler's name and number
  ("Albert III", "Lothair II") and the one longer name in the corpus that adds a style or
  territory to it ("Albert III, Duke of Bavaria", "Lothair II of Lotharingia"), occurring
  together; "Henry IV" beside "Henry IV of France" and "Henry IV of England" is left alone;
- "acronym in same text unit" (or "... document"): an all-capital name whose letters are
  the initials of exactly one other name, the two occurring together
  ("NASA"/"National Aeronautics and Space Administration"): an acronym elsewhere in a
  corpus is too often another name's;
- "hyphenated compound in same text unit" (or "... document"): a name joined by a hyphen
  to lower-case words the corpus also writes on their own ("Christmas-time", "New
  York-based") and that name, occurring together, the name written without the hyphen
  too; not "Kim Ki-duk" and "Kim Ki", nor "Chow Yun" of a spaced "Chow Yun- fat";
- "alias in same text unit" (or "... document"): a one-word name, not a common word, is
  the first or last name of exactly one full name (names only: not "Old Fezziwig", "Duke
  of Buckingham") in the corpus, one of the two is a person, and they occur together:
  "Scrooge"/"Ebenezer Scrooge". "Ali" beside "Ali Khan" and "Ali Hassan", "Day" beside
  "Christmas Day", and, among separate documents, a short name mostly found without the
  full name ("Mecca" beside "Mecca Hart") are left alone, unless both are persons:
  "Gandhi" in many articles and "Mohandas Karamchand Gandhi" in one of them with it;
- "spelling variant, same context": one letter added, dropped, changed or two swapped
  inside a long word (not its first or last letter, where different words and names
  differ: "Romania"/"Romanian", "Julie"/"Juliet"), same type, never in one text unit
  together (where they would be two things), and the sentences around each name share
  most of their words ("Xiamen Universty"/"Xiamen University").

"Together" is one text unit or one source file that is one document (a text file, not
a table of documents). Whatever the rule, names whose numbers, Roman numerals or
generations differ are never merged ("Apollo 11"/"Apollo 13", "Lothair I"/"Lothair II",
"Paul Allen"/"Paul Allen Jr").

Blocking keeps this near-linear: the word rules only compare names equal but for one
word in one position whose differing words share a signature (a singular, a one-letter
deletion, an abbreviation); the others look names up by their letters, initials, first
and last words, or key without honorifics.

These proposals are pairs (``candidate_pairs``). Each pair gets a decision: by default the
rule's own (``rule_decisions``), or a model's verdict (``core.merge_confirmation``).

Accepted pairs are grouped (union-find); a pair is not applied when it would put two
names the decisions told apart into one group. Merged groups take the most frequent name
as canonical (ties: the longer, then the alphabetically first), deterministically. Every
merge, and every proposed pair that was not applied, is returned with the rule's reason
and score, who decided and why, so it can be stored and queried (table ``entity_merges``).
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections import Counter, defaultdict
from dataclasses import dataclass
from itertools import combinations
from typing import NamedTuple

import polars as pl
from rapidfuzz.distance import OSA

from ..configuration import default_of
from .extraction.names import name_key
from .extraction.stopwords import STOPWORDS
from .inputs import TEXT_SUFFIXES

MERGE_COLUMNS = {
    "corpus": pl.String,
    "name_key": pl.String,
    "title": pl.String,
    "merged_into_key": pl.String,
    "merged_into_title": pl.String,
    "reason": pl.String,  # the evidence that proposed the merge
    "score": pl.Float64,
    "decided_by": pl.String,  # "rule", the confirming model's name, or FALLBACK
    "rejected": pl.Boolean,  # proposed but not applied: name_key stays its own entity
    "decision_reason": pl.String,  # the model's reason, or why a pair was not applied
}
PAIR_COLUMNS = {"name_key_a": pl.String, "name_key_b": pl.String, "reason": pl.String, "score": pl.Float64}
DECISION_COLUMNS = PAIR_COLUMNS | {"same": pl.Boolean, "decided_by": pl.String, "decision_reason": pl.String}
RULE = "rule"
FALLBACK = "rule (LLM failed)"

SPELLING = "punctuation, spacing or diacritics"
INFLECTION = "inflection"
ABBREVIATION = "abbreviation"
HONORIFIC = "honorific dropped"
ACRONYM = "acronym"
ALIAS = "alias"
INITIALS = "initials"
STYLE = "style dropped"
VARIANT = "spelling variant, same context"
COMPOUND = "hyphenated compound"


@dataclass(frozen=True)
class ResolutionSettings:
    entity_resolution: bool = default_of("GRAPHRAG_ENTITY_RESOLUTION")
    min_name_length: int = 4  # shorter names are too ambiguous to merge by spelling
    min_variant_length: int = 6  # one letter apart, shorter words are usually different words
    min_context_similarity: float = 0.5  # cosine of the words around two spelling variants


class UnionFind:
    def __init__(self):
        self.parent: dict[str, str] = {}

    def find(self, key: str) -> str:
        self.parent.setdefault(key, key)
        while self.parent[key] != key:
            self.parent[key] = self.parent[self.parent[key]]
            key = self.parent[key]
        return key

    def union(self, a: str, b: str) -> None:
        self.parent[self.find(a)] = self.find(b)


UNTYPED = {"", "OTHER"}
PERSON = "PERSON"
CONCEPT = "CONCEPT"
# Leading words that address a person without being part of the name. Not "saint" ("St
# Louis" is a city) nor family words ("Uncle Tom").
HONORIFICS = frozenset(
    "mr mrs ms miss mister dr sir dame lord lady king queen prince princess emperor empress tsar sultan pope "
    "president senator governor general colonel captain admiral professor prof".split()
)
# Abbreviations written without a full stop, or that lost it in extraction.
CONVENTIONAL_ABBREVIATIONS = {
    "st": {"saint", "street"},
    "mt": {"mount"},
    "ft": {"fort"},
    "univ": {"university"},
    "corp": {"corporation"},
    "co": {"company"},
    "inc": {"incorporated"},
    "ltd": {"limited"},
    "dept": {"department"},
    "intl": {"international"},
    "natl": {"national"},
    "assn": {"association"},
    "bros": {"brothers"},
    "inst": {"institute"},
    "jr": {"junior"},
    "sr": {"senior"},
}
EXPANSIONS = {
    full: {short for short, fulls in CONVENTIONAL_ABBREVIATIONS.items() if full in fulls}
    for fulls in CONVENTIONAL_ABBREVIATIONS.values()
    for full in fulls
}
# Words that an acronym may skip ("NASA": National Aeronautics and Space Administration)
# and after which a word is a place, not a person's name ("Duke of Buckingham").
CONNECTORS = frozenset("of and the for in on at to de du des la le von van da del &".split())
GENERATIONS = {"jr": "jr", "junior": "jr", "sr": "sr", "senior": "sr"}
_ROMAN = re.compile(r"^(?=[ivxlcdm])m{0,3}(cm|cd|d?c{0,3})(xc|xl|l?x{0,3})(ix|iv|v?i{0,3})$")
_NUMERAL_HINT = re.compile(r"\d|\b(?:jr|sr|junior|senior)\b|\s[ivxlcdm]+\b")
_TITLE_TOKEN = re.compile(r"[^\W_]+")
_TITLE_WORD = re.compile(r"[^\s,;:()\[\]]+")
# An apostrophe or hyphen inside a word ("D'Arcy", "Spider-Man"), not a possessive.
_INNER_MARK = re.compile(r"(?<=\w)['’\-‐](?!s\b)(?=\w)")
_ABBREVIATED = re.compile(r"([^\W\d_]+)\.")
_LOWER_WORD = r"\b[a-z]+\b"
# A lower-case word standing on its own, not the syllable after a hyphen, spaced or not
# ("duk" of "Kim Ki-duk", "hwa" of "Jung Sung- hwa").
_WHOLE_LOWER_WORD = re.compile(r"(?<![\w-])(?<!-\s)[a-z]+\b")
_CONTEXT_WORD = re.compile(r"[^\W\d_]{3,}")
# "Christmas-time": a name, a hyphen, lower-case words.
_LOWER_CASE_TAIL = re.compile(r"(?P<name>.*[^\W\d_])-(?P<tail>[a-z]+(?:-[a-z]+)*)")
# A number before a name makes it a plural of things counted ("seven Christmas Eves").
_COUNT = r"\d+|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|hundred|many|several"


class Name(NamedTuple):
    """What the rules know of one name_key."""

    key: str
    title: str
    type: str
    words: tuple[str, ...]
    spelled: tuple[str, ...]  # the words without inner apostrophes, hyphens and diacritics
    units: frozenset[str]  # text units it occurs in
    documents: frozenset[str]  # one-document sources it occurs in
    abbreviated: frozenset[str]  # its words written with a full stop ("univ" in "Xiamen Univ.")
    numerals: tuple[str, ...]  # numbers, Roman numerals, generations: what tells namesakes apart


def _spelled(key: str, title: str) -> tuple[str, ...]:
    if _INNER_MARK.search(title):
        key = name_key(_INNER_MARK.sub("", title))
    if not key.isascii():
        key = "".join(c for c in unicodedata.normalize("NFKD", key) if not unicodedata.combining(c))
    return tuple(key.split())


def _numerals(words: tuple[str, ...], title: str) -> tuple[str, ...]:
    found, capitals = [], None
    if not _NUMERAL_HINT.search(" ".join(words)):
        return ()
    for position, word in enumerate(words):
        if word in GENERATIONS:
            found.append(GENERATIONS[word])
        elif not word.isalpha() and any(c.isdigit() for c in word):
            found.append(word)
        elif position > 0 and _ROMAN.match(word):
            # A Roman numeral follows a name in capitals ("Louis XIV"); "Jet Li" has a word.
            capitals = capitals or set(_TITLE_TOKEN.findall(title))
            if word.upper() in capitals:
                found.append(word)
    return tuple(sorted(found))


def _names(records: pl.DataFrame) -> dict[str, Name]:
    one_document = pl.any_horizontal(
        *(pl.col("source_partition").str.to_lowercase().str.ends_with(s) for s in sorted(TEXT_SUFFIXES))
    )
    scopes = records.group_by("name_key").agg(
        pl.col("text_unit_id").unique().alias("units"),
        pl.col("source_partition").filter(one_document).unique().alias("documents"),
        pl.col("title").filter(pl.col("title").str.contains(".", literal=True)).unique().alias("dotted"),
    )
    names = {}
    for key, title, kind, units, documents, dotted in (
        name_stats(records)
        .join(scopes, on="name_key")
        .select("name_key", "title", "type", "units", "documents", "dotted")
        .iter_rows()
    ):
        words = tuple(key.split())
        abbreviated = {w.casefold() for t in dotted for w in _ABBREVIATED.findall(t)} & set(words)
        names[key] = Name(
            key,
            title,
            kind,
            words,
            _spelled(key, title),
            frozenset(units),
            frozenset(documents),
            frozenset(abbreviated),
            _numerals(words, title),
        )
    return names


def _compatible(a: Name, b: Name) -> bool:
    # A concept is a common noun phrase ("world records"), never a name ("World Record").
    types = {a.type, b.type}
    return (len(types) == 1 or (bool(types & UNTYPED) and CONCEPT not in types)) and a.numerals == b.numerals


def _together(a: Name, b: Name) -> str | None:
    """Where two names occur together, if they do."""
    if a.units & b.units:
        return "text unit"
    if a.documents & b.documents:
        return "document"
    return None


def _pair(a: Name, b: Name) -> tuple[str, str]:
    return (a.key, b.key) if a.key < b.key else (b.key, a.key)


def _respaced(x: tuple[str, ...], y: tuple[str, ...]) -> bool:
    """The same letters split into words differently by joining whole words only, none of
    them a single letter (an initial: "George S" is not "Georges")."""

    def cuts(words):
        return {sum(map(len, words[:i])) for i in range(1, len(words))}

    if min(map(len, x + y)) < 2:
        return False
    return cuts(x) <= cuts(y) or cuts(y) <= cuts(x)


def _same_letters(names: dict[str, Name], settings: ResolutionSettings) -> dict[tuple[str, str], str]:
    by_letters: dict[str, list[Name]] = defaultdict(list)
    for name in names.values():
        letters = "".join(name.spelled)
        if len(letters) >= settings.min_name_length:
            by_letters[letters].append(name)
    return {
        _pair(a, b): SPELLING
        for group in by_letters.values()
        for a, b in combinations(group, 2)
        if _compatible(a, b) and (a.spelled == b.spelled or _respaced(a.spelled, b.spelled))
    }


def _is_inflection(x: str, y: str) -> bool:
    short, long = sorted((x, y), key=len)
    return len(short) >= 3 and (
        long in (short + "s", short + "es") or (short.endswith("y") and long == short[:-1] + "ies")
    )


def _abbreviates(short: Name, word: str, full: str) -> bool:
    # Two letters and a full stop are too short to say which word ("Mr."/"Mrs", "St."/"Stephen").
    return full in CONVENTIONAL_ABBREVIATIONS.get(word, ()) or (
        len(word) >= 3 and word in short.abbreviated and full.startswith(word)
    )


def _is_variant(x: str, y: str, settings: ResolutionSettings) -> bool:
    # Inside the word only: the first and last letters are where different words differ.
    return (
        min(len(x), len(y)) >= settings.min_variant_length
        and x[0] == y[0]
        and x[-1] == y[-1]
        and OSA.distance(x, y) == 1
    )


def _variant_groups(words: set[str], settings: ResolutionSettings) -> list[list[str]]:
    """Groups of long words that share a deletion of one letter inside the word (or that
    one word is the other's deletion): every two words one edit apart inside the word
    share a group."""
    long = pl.DataFrame(
        {"word": sorted(w for w in words if len(w) >= settings.min_variant_length)}, schema={"word": pl.String}
    )
    deleted = (
        long.with_columns(pl.int_ranges(0, pl.col("word").str.len_chars() - 1).alias("at"))
        .explode("at")
        # at 0 stands for the word itself; at i deletes letter i, never the first or last
        .with_columns(
            pl.when(pl.col("at") == 0)
            .then(pl.col("word"))
            .otherwise(pl.col("word").str.slice(0, pl.col("at")) + pl.col("word").str.slice(pl.col("at") + 1))
            .alias("deleted")
        )
        .group_by("deleted")
        .agg(pl.col("word").unique().sort())
        .filter(pl.col("word").list.len() > 1)
    )
    return deleted["word"].to_list()


def _word_pairs(words: set[str], marked: set[str], settings: ResolutionSettings) -> dict[tuple[str, str], str]:
    """(word, other word) -> INFLECTION, ABBREVIATION (the short word first) or VARIANT,
    among the distinct words of all names."""
    found: dict[tuple[str, str], str] = {}
    marked_starts = {m[:3] for m in marked}
    for word in words:
        if word.endswith("s"):
            for singular in (word[:-1], word[:-2], word[:-3] + "y"):
                if singular in words and _is_inflection(singular, word):
                    found[(singular, word)] = INFLECTION
        for short in EXPANSIONS.get(word, ()):
            found[(short, word)] = ABBREVIATION
        if word[:3] in marked_starts:
            found.update(((word[:i], word), ABBREVIATION) for i in range(3, len(word)) if word[:i] in marked)
    for group in _variant_groups(words, settings):
        for x, y in combinations(group, 2):
            if _is_variant(x, y, settings):
                found.setdefault((x, y), VARIANT)
    return found


def _one_word_apart(
    names: dict[str, Name], settings: ResolutionSettings
) -> dict[tuple[str, str], tuple[str, Name, Name, str]]:
    """Name pairs equal but for one word that is an inflection (INFLECTION), an
    abbreviation (ABBREVIATION) or a spelling variant (VARIANT) of the other's, as (rule,
    the name with the singular or short word, the other name, that word); inflections
    and variants still need their evidence checked."""
    # word -> the other words of each name holding it, with its place -> that name
    places: dict[str, dict[str, str]] = defaultdict(dict)
    for name in names.values():
        if len(name.key) >= settings.min_name_length:
            words = name.words
            for position, word in enumerate(words):
                places[word][f"{position}|{' '.join(words[:position])}|{' '.join(words[position + 1 :])}"] = name.key
    marked = set().union(*(n.abbreviated for n in names.values()))
    found: dict[tuple[str, str], tuple[str, Name, Name, str]] = {}
    for (x, y), rule in _word_pairs(set(places), marked, settings).items():
        with_x, with_y = places[x], places[y]
        for place in with_x.keys() & with_y.keys():
            name_x, name_y = names[with_x[place]], names[with_y[place]]
            if not _compatible(name_x, name_y):
                continue
            if (
                rule == INFLECTION
                or (rule == ABBREVIATION and _abbreviates(name_x, x, y))
                or (rule == VARIANT and name_x.type == name_y.type and not name_x.units & name_y.units)
            ):
                found.setdefault(_pair(name_x, name_y), (rule, name_x, name_y, x))
    return found


def _without_honorifics(words: tuple[str, ...]) -> tuple[str, ...]:
    while words and words[0] in HONORIFICS:
        words = words[1:]
    return words


def _honorifics_dropped(names: dict[str, Name]) -> dict[tuple[str, str], str]:
    titled: dict[str, list[Name]] = defaultdict(list)
    for name in names.values():
        bare = _without_honorifics(name.words)
        # A capital: "general theatrical release" has no honorific. One word left is a
        # first or last name, which only the alias rule decides on.
        if (
            name.title[:1].isupper()
            and len(bare) >= 2
            and bare != name.words
            and bare[0] not in CONNECTORS
            and " ".join(bare) in names
        ):
            titled[" ".join(bare)].append(name)
    # A bare name that begins another one is short for several ("Henry IV" of "Emperor
    # Henry IV" and "Henry IV of France").
    longer = set()
    for name in names.values():
        bare = _without_honorifics(name.words)
        longer.update(prefix for n in range(2, len(bare)) if (prefix := " ".join(bare[:n])) in titled)
    found = {}
    for key, forms in titled.items():
        bare = names[key]
        forms = [form for form in forms if _compatible(form, bare)]
        if len(forms) == 1 and key not in longer and len(bare.spelled) >= 2:
            found[_pair(forms[0], bare)] = HONORIFIC
    return found


def _is_initial(word: str) -> bool:
    return len(word) == 1 and word.isalpha()


def _spells_out(short: Name, full: Name) -> bool:
    """``full`` writes out word for word what ``short`` abbreviates to initials."""
    return len(short.words) == len(full.words) and all(
        s == f or (_is_initial(s) and s not in short.numerals and len(f) > 1 and f.startswith(s))
        for s, f in zip(short.words, full.words)
    )


_REGNAL = re.compile(r"[ivx]+")
_TERRITORY_WORDS = frozenset("of de von van di da".split())
_DOTTED_INITIALS = re.compile(r"(?:[^\W\d_]\.)+")
_CAPITAL_LETTER = re.compile(r"[^\W\d_]")


def _written_initials(name: Name) -> int:
    """How many initials the title writes: dotted ("J.", "U.S."), or single capitals in a
    person's name ("B R Chopra"); not the letters an apostrophe leaves ("C'est", "Queen's
    College") nor a letter that is a name ("J Records")."""
    count = 0
    for word in name.title.split():
        if _DOTTED_INITIALS.fullmatch(word):
            count += word.count(".")
        elif name.type == PERSON and _CAPITAL_LETTER.fullmatch(word) and word.isupper():
            count += 1
    return count


def _initials(names: dict[str, Name]) -> dict[tuple[str, str], str]:
    """Names with initials and the one name in the corpus that spells them out."""
    by_shape: dict[tuple[str, ...], list[Name]] = defaultdict(list)
    for name in names.values():
        # The last word is a surname or a number, never an initial to expand.
        if len(name.words) >= 2 and not _is_initial(name.words[-1]):
            by_shape[(*(w[0] for w in name.words[:-1]), name.words[-1])].append(name)
    found = {}
    for group in by_shape.values():
        for short in group:
            # A Roman numeral is no initial: "Louis I of Hesse".
            letters = sum(_is_initial(w) and w not in short.numerals for w in short.words)
            if not letters or _written_initials(short) != letters:
                continue
            fuller = [full for full in group if full is not short and _spells_out(short, full)]
            if len(fuller) == 1 and _compatible(short, fuller[0]):
                found[_pair(short, fuller[0])] = INITIALS
    return found


def _styles_dropped(names: dict[str, Name]) -> dict[tuple[str, str], str]:
    """A name ending with its regnal number and the one longer name that adds a style or
    territory after it, when the two occur together."""
    by_start: dict[str, list[Name]] = defaultdict(list)
    for name in names.values():
        for end in range(2, len(name.words)):
            by_start[" ".join(name.words[:end])].append(name)
    found = {}
    for key, longer in by_start.items():
        short = names.get(key)
        # A ruler's number is I, V and X ("Tenacious D", "Wrong Turn 5" are titles).
        if short is None or short.words[-1] not in short.numerals or not _REGNAL.fullmatch(short.words[-1]):
            continue
        # What follows is a style after a comma or a territory: not "Moctezuma I during".
        owners = [
            n
            for n in longer
            if _compatible(short, n) and (n.words[len(short.words)] in _TERRITORY_WORDS or "," in n.title)
        ]
        if len(owners) == 1 and (where := _together(short, owners[0])):
            found[_pair(short, owners[0])] = f"{STYLE} in same {where}"
    return found


def _acronym(name: Name) -> str | None:
    """The letters of an acronym: an all-capital word ("NASA") or spelled-out letters ("U.S.A.")."""
    if len(name.words) == 1 and name.title.isupper() and 2 <= len(name.key) <= 8 and name.key.isalpha():
        return name.key
    if len(name.words) >= 2 and all(len(w) == 1 and w.isalpha() for w in name.words):
        return "".join(name.words)
    return None


def _capitalised(word: str) -> bool:
    return word[:1].isupper() and not (len(word) > 1 and word.isupper())


def _acronyms(names: dict[str, Name]) -> dict[tuple[str, str], str]:
    acronyms = {name.key: letters for name in names.values() if (letters := _acronym(name))}
    by_initials: dict[str, set[str]] = defaultdict(set)
    wanted = set(acronyms.values())
    for name in names.values():
        content = [w for w in name.words if w not in CONNECTORS]
        if len(content) < 2 or name.key in acronyms:
            continue
        for initials in {"".join(w[0] for w in name.words), "".join(w[0] for w in content)} & wanted:
            by_initials[initials].add(name.key)
    found = {}
    for key, letters in acronyms.items():
        short = names[key]
        expansions = [names[k] for k in by_initials.get(letters, ()) if _compatible(short, names[k])]
        # Only a name written with capitals has an acronym ("mentally-ill teen" is no "MIT"),
        # and not one holding an acronym already ("VPL Research" is no "VR").
        expansions = [
            e
            for e in expansions
            if all(_capitalised(w) for w in _TITLE_WORD.findall(e.title) if w.casefold() not in CONNECTORS)
        ]
        if len(expansions) == 1 and (where := _together(short, expansions[0])):
            found[_pair(short, expansions[0])] = f"{ACRONYM} in same {where}"
    return found


def _compounds(
    records: pl.DataFrame, names: dict[str, Name], settings: ResolutionSettings
) -> dict[tuple[str, str], str]:
    """A name joined by a hyphen to common lower-case words ("Christmas-time", "New
    York-based") and that name ("Christmas", "New York"), when the two occur together and
    the name is also written on its own: the compound is the name used as a modifier.
    "Kim Ki-duk" ends with a syllable, no word; "Chow Yun" is only ever the start of "Chow
    Yun- fat" in a source that spaces its hyphens."""
    common = _whole_lowercase_words(records)
    candidates = []
    for compound in names.values():
        match = _LOWER_CASE_TAIL.fullmatch(compound.title)
        if match is None or not match["name"][0].isupper():  # "blind man's-buff" is no name
            continue
        if not all(len(word) >= 3 and word in common for word in match["tail"].split("-")):  # not "Mortagne-au"
            continue
        name = names.get(name_key(match["name"]))
        if (
            name is not None
            and len(name.key) >= settings.min_name_length
            and _compatible(name, compound)
            and (where := _together(name, compound))
        ):
            candidates.append((name, compound, where))
    context = _context(records, {name.key for name, _, _ in candidates})
    return {
        _pair(name, compound): f"{COMPOUND} in same {where}"
        for name, compound, where in candidates
        if _written_on_its_own(name, context)
    }


def _written_on_its_own(name: Name, context: dict[str, dict[str, list[str]]]) -> bool:
    """A text unit writes the name without a hyphen after it ("Christmas," not only
    "Christmas-time")."""
    alone = re.compile(re.escape(name.title.casefold()) + r"(?![\w'’]|\s*-)")
    return any(alone.search(d) for descriptions in context[name.key].values() for d in descriptions)


def _lowercase_words(records: pl.DataFrame) -> set[str]:
    """The words the descriptions use in lower case: common words, not names ("day" in
    "Christmas Day", "old" in "Old Fezziwig")."""
    found = records.select(pl.col("description").unique().str.extract_all(_LOWER_WORD).explode().unique())
    return set(found.to_series().drop_nulls().to_list())


def _whole_lowercase_words(records: pl.DataFrame) -> set[str]:
    """The lower-case words the descriptions write on their own, not after a hyphen."""
    return {
        word
        for description in records["description"].unique().drop_nulls()
        for word in _WHOLE_LOWER_WORD.findall(description)
    }


def _aliases(names: dict[str, Name], common: set[str]) -> dict[tuple[str, str], tuple[str, float]]:
    """A one-word name as the first or last name of exactly one full name in the corpus,
    when the two occur together; scored by the share of the short name's text units that
    hold the full name too."""
    by_end: dict[str, list[Name]] = defaultdict(list)
    for name in names.values():
        bare = _without_honorifics(name.words)
        if len(name.words) < 2 or not bare or len(set(bare)) < len(bare):  # "Scrooge Scrooge" is a stutter
            continue
        # Only an end that stands as a word of its own ("Geni" in "Saint-Geni" does not).
        for end in {bare[0], bare[-1]} & set(name.spelled):
            # A full name is names only: not "Old Fezziwig", "Duke of Buckingham", "Glamis Castle".
            if all(w not in common and w not in CONNECTORS for w in bare if w != end):
                by_end[end].append(name)
    found = {}
    for short in names.values():
        # Not a common word ("Day" of "Christmas Day") nor an acronym ("CIE" after a name).
        if (
            len(short.words) != 1
            or len(short.key) < 3
            or short.numerals
            or not _capitalised(short.title)
            or short.key in common
        ):
            continue
        owners = [n for n in by_end.get(short.key, ()) if _compatible(short, n)]
        # "Mr. Scrooge" is a way of writing "Scrooge", not another owner of the name,
        # unless no other name owns it ("Itzcoatl" / "Emperor Itzcoatl").
        owners = [n for n in owners if _without_honorifics(n.words) != short.words] or owners
        if len(owners) != 1 or PERSON not in (short.type, owners[0].type):
            continue
        full = owners[0]
        shared = short.units & full.units
        # In a collection of separate documents, a short name found mostly away from the
        # full name names something else too ("Mecca" the city beside "Mecca Hart"),
        # unless both are people who meet somewhere ("Gandhi").
        both_people = short.type == full.type == PERSON
        if short.documents & full.documents or 2 * len(shared) >= len(short.units) or (shared and both_people):
            where = "text unit" if shared else "document"
            found[_pair(short, full)] = (f"{ALIAS} in same {where}", round(len(shared) / len(short.units), 3))
    return found


def _context(records: pl.DataFrame, keys: set[str]) -> dict[str, dict[str, list[str]]]:
    """key -> text unit -> the descriptions of that name there, in lower case."""
    context: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    if keys:
        rows = records.filter(pl.col("name_key").is_in(sorted(keys))).select(
            "name_key", "text_unit_id", pl.col("description").fill_null("")
        )
        for key, unit, description in rows.iter_rows():
            context[key][unit].append(description.casefold())
    return context


def _written_as_plural(name: Name, context: dict[str, dict[str, list[str]]]) -> bool:
    """Most text units that mention a plural name write it as a plural: after "the" or a
    count ("the Cratchits", "seven Christmas Eves ago")."""
    written = re.sub(r"^the\s+", "", name.title.casefold())  # the title may hold its article
    plural = re.compile(rf"\b(?:the|{_COUNT}) " + re.escape(written) + r"\b")
    units = context[name.key].values()
    return 2 * sum(any(plural.search(d) for d in descriptions) for descriptions in units) >= len(units) > 0


def _context_similarity(a: Name, b: Name, context: dict[str, dict[str, list[str]]]) -> float:
    """Cosine of the words (not the names' own, nor function words) in the sentences
    around each name, each text unit counting a word once."""
    own = set(a.words) | set(b.words)

    def bag(name: Name) -> Counter:
        words: Counter = Counter()
        for descriptions in context[name.key].values():
            words.update({w for d in descriptions for w in _CONTEXT_WORD.findall(d)} - own - STOPWORDS)
        return words

    x, y = bag(a), bag(b)
    norm = math.sqrt(sum(n * n for n in x.values()) * sum(n * n for n in y.values()))
    return sum(n * y[w] for w, n in x.items()) / norm if norm else 0.0


def _word_evidence(
    records: pl.DataFrame, apart: dict[tuple[str, str], tuple[str, Name, Name, str]], settings: ResolutionSettings
) -> dict[tuple[str, str], tuple[str, float]]:
    """The pairs one word apart that have their evidence: an abbreviation; an inflection of
    a common noun phrase ("leading actors"), or of a name written as a plural where both
    occur together ("the Cratchits": "Rolling Stone" and "Rolling Stones" never meet); a
    variant in the same context."""
    plurals = {b.key for rule, a, b, _ in apart.values() if rule == INFLECTION and not a.title.islower()}
    variants = {name.key for rule, a, b, _ in apart.values() if rule == VARIANT for name in (a, b)}
    context = _context(records, plurals | variants)
    found = {}
    for pair, (rule, a, b, _) in apart.items():
        if rule == ABBREVIATION:
            found[pair] = (ABBREVIATION, 1.0)
        elif rule == INFLECTION and a.title.islower() and b.title.islower():
            found[pair] = (INFLECTION, 1.0)
        elif rule == INFLECTION and (where := _together(a, b)) and _written_as_plural(b, context):
            found[pair] = (f"{INFLECTION} in same {where}", 1.0)
        elif rule == VARIANT and (similarity := _context_similarity(a, b, context)) >= settings.min_context_similarity:
            found[pair] = (VARIANT, round(similarity, 3))
    return found


def candidate_pairs(records: pl.DataFrame, settings: ResolutionSettings = ResolutionSettings()) -> pl.DataFrame:
    """The merges the rules propose for extracted entity records (text_unit_id,
    source_partition, name_key, title, type, description, mentions), as pairs (PAIR_COLUMNS)."""
    if not settings.entity_resolution or records.is_empty():
        return pl.DataFrame(schema=PAIR_COLUMNS)
    names = _names(records)
    pairs: dict[tuple[str, str], tuple[str, float]] = {}
    # The first rule to find a pair names its evidence: the plainest first.
    for found in (
        _same_letters(names, settings),
        _honorifics_dropped(names),
        _initials(names),
        _styles_dropped(names),
        _acronyms(names),
        _compounds(records, names, settings),
    ):
        for pair, reason in found.items():
            pairs.setdefault(pair, (reason, 1.0))
    apart = {pair: found for pair, found in _one_word_apart(names, settings).items() if pair not in pairs}
    for found in (_word_evidence(records, apart, settings), _aliases(names, _lowercase_words(records))):
        for pair, evidence in found.items():
            pairs.setdefault(pair, evidence)
    rows = [(a, b, reason, score) for (a, b), (reason, score) in sorted(pairs.items())]
    return pl.DataFrame(rows, schema=PAIR_COLUMNS, orient="row")


def name_stats(records: pl.DataFrame) -> pl.DataFrame:
    """One row per name_key of extracted entity records (name_key, title, type, mentions):
    its weight (mentions), title and majority type.

    The title is that of the record with the most mentions; ties (the rule with an LLM,
    which lists a name once per text unit) go to the form written in most records, then
    to one not in capitals ("Scrooge" over "SCROOGE"), then to the alphabetically first.
    Never to the first row: the rules read the title (capitals, initials), and the order
    of the rows is not part of the input (a table read without ORDER BY, an update
    appending a source's records), so equal records must give equal names."""
    forms = records.with_columns(
        pl.len().over("name_key", "title").alias("_records"),
        (pl.col("title") == pl.col("title").str.to_uppercase()).alias("_capitals"),
    )
    return forms.group_by("name_key").agg(
        pl.col("mentions").sum().alias("weight"),
        pl.col("title")
        .sort_by(["mentions", "_records", "_capitals", "title"], descending=[True, True, False, False])
        .first(),
        pl.col("type").filter(pl.col("type") != "").mode().sort().first().fill_null("").alias("type"),
    )


def rule_decisions(pairs: pl.DataFrame) -> pl.DataFrame:
    """Every proposed pair accepted on the rule's word."""
    return pairs.with_columns(
        pl.lit(True).alias("same"), pl.lit(RULE).alias("decided_by"), pl.lit(None, pl.String).alias("decision_reason")
    )


def resolve(
    records: pl.DataFrame,
    corpus: str,
    settings: ResolutionSettings = ResolutionSettings(),
    decisions: pl.DataFrame | None = None,
) -> tuple[dict[str, str], pl.DataFrame]:
    """(name_key -> canonical name_key, merges) from extracted entity records (name_key,
    title, type, mentions; and what ``candidate_pairs`` reads when no decisions are given)
    and the decisions on the proposed pairs (DECISION_COLUMNS; by default the rules'
    proposals, all accepted)."""
    if decisions is None:
        decisions = rule_decisions(candidate_pairs(records, settings))
    if decisions.is_empty():
        return {}, pl.DataFrame(schema=MERGE_COLUMNS)
    info = {row["name_key"]: row for row in name_stats(records).iter_rows(named=True)}

    def rank(key: str) -> tuple:
        return (-info[key]["weight"], -len(key), key)

    groups = UnionFind()
    decisions = decisions.sort("name_key_a", "name_key_b")
    told_apart = [(d["name_key_a"], d["name_key_b"]) for d in decisions.iter_rows(named=True) if not d["same"]]
    evidence: dict[str, dict] = {}
    not_applied: list[dict] = []
    for decision in decisions.iter_rows(named=True):
        a, b = decision["name_key_a"], decision["name_key_b"]
        if not decision["same"]:
            not_applied.append(decision)
            continue
        root_a, root_b = groups.find(a), groups.find(b)
        blocking = next(((x, y) for x, y in told_apart if {groups.find(x), groups.find(y)} == {root_a, root_b}), None)
        if blocking:
            names = " and ".join(info[k]["title"] for k in blocking)
            not_applied.append(
                decision | {"decision_reason": f"not applied: it would join {names}, which were told apart"}
            )
            continue
        groups.union(a, b)
        evidence.setdefault(a, decision)
        evidence.setdefault(b, decision)
    members: dict[str, list[str]] = defaultdict(list)
    for key in list(groups.parent):
        members[groups.find(key)].append(key)

    def row(key: str, into: str, decision: dict, rejected: bool) -> dict:
        return {
            "corpus": corpus,
            "name_key": key,
            "title": info[key]["title"],
            "merged_into_key": into,
            "merged_into_title": info[into]["title"],
            "reason": decision["reason"],
            "score": decision["score"],
            "decided_by": decision["decided_by"],
            "rejected": rejected,
            "decision_reason": decision["decision_reason"],
        }

    mapping, merges = {}, []
    for keys in members.values():
        canonical = min(keys, key=rank)
        for key in keys:
            if key != canonical:
                mapping[key] = canonical
                merges.append(row(key, canonical, evidence[key], False))
    for decision in not_applied:
        into, key = sorted((decision["name_key_a"], decision["name_key_b"]), key=rank)
        merges.append(row(key, into, decision, True))
    return mapping, pl.DataFrame(merges, schema=MERGE_COLUMNS).sort("rejected", "merged_into_key", "name_key")


def apply_resolution(
    entities: pl.DataFrame, relationships: pl.DataFrame, mapping: dict[str, str]
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Extraction records with merged names rewritten to their canonical key; relationships
    that became self-loops are dropped."""
    if not mapping:
        return entities, relationships

    def remap(column: str) -> pl.Expr:
        return pl.col(column).replace(mapping)

    entities = entities.with_columns(remap("name_key"))
    relationships = (
        relationships.with_columns(remap("source_key"), remap("target_key"))
        .with_columns(
            pl.min_horizontal("source_key", "target_key").alias("source_key"),
            pl.max_horizontal("source_key", "target_key").alias("target_key"),
        )
        .filter(pl.col("source_key") != pl.col("target_key"))
    )
    return entities, relationships


def titled_as_entities(merges: pl.DataFrame, entities: pl.DataFrame) -> pl.DataFrame:
    """``merged_into_title`` as the entity it names is titled in the graph, which picks its
    title from every record merged into it (this table's titles see each name alone)."""
    titles = entities.select(pl.col("name_key").alias("merged_into_key"), pl.col("title").alias("entity_title"))
    return (
        merges.join(titles, on="merged_into_key", how="left", maintain_order="left")
        .with_columns(pl.coalesce("entity_title", "merged_into_title").alias("merged_into_title"))
        .select(merges.columns)
    )
