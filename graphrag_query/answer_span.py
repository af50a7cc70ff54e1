"""The phrase that answers: offline, the extractive answer states the name, place, date,
number or cause the question asks for, with the evidence sentence it was read from.

A question's form says what kind of phrase answers it ("Who ..." a person, "How many ..." a
number, "Where ..." a place, "Why did ... die?" a cause). The candidates are the phrases of
that kind in the evidence sentences that cover the question (names: capitalised runs;
numbers and dates: their written forms; causes: what a death is said to come from), minus
what the question itself names. Each is scored by how much of the
question its sentence covers, how close it stands to the question's words there, and
whether the index typed it as that kind; a phrase found in several such sentences gains.
A two-hop question ("the youngest son of Scrooge's clerk") is answered through a bridge:
a name in one sentence covering part of the question, followed to a sentence about it that
covers the rest, whose phrase then answers the whole.
"""

from __future__ import annotations

import itertools
import re
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache

from graphrag_common.lexical import FUNCTION_WORDS, NAME_JOINERS, fold, search_terms

from .kinship import BRACKETED_END, kinship_chain, relatives, titled_with
from .relevance import RelevanceScorer, term_set
from .verb_objects import asked_doers, asked_verbs, object_phrases

PERSON, PLACE, TIME, NUMBER, NAME, NATIONALITY, QUOTE, CAUSE, THING = (
    "person",
    "place",
    "time",
    "number",
    "name",
    "nationality",
    "quote",
    "cause",
    "thing",  # what someone did something to ("What does Scrooge buy?")
)

_NUMBER_WORDS = set(
    """one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen
    seventeen eighteen nineteen twenty thirty forty fifty sixty seventy eighty ninety hundred thousand
    million billion dozen""".split()
)
_MONTHS = set("""january february march april may june july august september october november december""".split())
_WEEKDAYS = set("monday tuesday wednesday thursday friday saturday sunday".split())
# Head nouns of a time phrase ("Christmas Eve", "New Year's Day"): a capitalised run ending
# in one of these is a date.
_TIME_HEADS = set("eve day night morning evening year years week month century decade age era".split())
_TIME_NOUNS = _TIME_HEADS | {"date", "time", "season", "hour", "when"}
_TIME_HEAD_STEMS = {next(iter(search_terms(head)), head) for head in _TIME_HEADS}
_PLACE_NOUNS = set(
    """city town country place village state county province region nation continent island river
    street capital land kingdom birthplace""".split()
)
_TITLES = {"Mr", "Mrs", "Ms", "Dr", "St", "Sr", "Jr", "Prof", "Rev", "Gen", "Col", "Capt", "Lt", "Sgt"}

_TOKEN = re.compile(r"[^\W_]+", re.UNICODE)
_ASIDE = re.compile(r"^\s*\([^()]{1,60}\)")
_YEAR = re.compile(r"^(1[0-9]{3}|20[0-9]{2})$")
_RANGE_DASH = re.compile(r"^\s*(?:[-–—]|to|until)\s*$")
# Question words that ask for the end of a span of dates, or its start.
# Words that say a death ("assassinated" says where someone died as "died" does); with the
# words that end a span of dates, they ask for its end.
_DEATHS = set(search_terms("die died death dies killed assassinated murdered executed"))
_ENDS = _DEATHS | set(search_terms("end ended until"))
# "What does Scrooge *reply* ...": the words someone speaks, as the text quotes them.
_SPEECH_ASKED = set(search_terms("reply say answer respond retort exclaim cry shout whisper tell"))
SPEECH_VERBS = (
    "said|says|replied|replies|returned|answered|cried|exclaimed|asked|whispered|shouted|rejoined|retorted|"
    "responded|observed|added|muttered|faltered|resumed|continued|demanded|inquired|growled|interrupted|pursued"
)

_STARTS = set(search_terms("born birth begin began start started founded established opened built"))
# The question's words that name the kind of phrase asked for ("What *nationality* is ...",
# "the *date* of death"): a sentence holding such a phrase says them, in its own way.
# Words one sentence says in the other's place: a parent is named where the child is
# ("Gia Coppola, daughter of Gian-Carlo Coppola" says who her father is), a spouse where a
# marriage is.
_SAID_ALIKE = (
    frozenset(search_terms("father mother parent parents son sons daughter daughters child children")),
    frozenset(search_terms("spouse husband wife married marry marriage widow widower")),
)
# Nouns that describe someone by their relation to a named thing or person ("the *director*
# of film X", "X's *father*"): a question about such a one asks about a name the evidence
# has to supply first.
_RELATION_NOUNS = (
    "director|performer|composer|author|writer|producer|creator|founder|singer|father|mother|parent|husband|"
    "wife|spouse|son|daughter|child|brother|sister|sibling|uncle|aunt|nephew|niece|cousin|grandfather|"
    "grandmother|stepfather|stepmother"
)
_RELATION = re.compile(rf"\b(?:{_RELATION_NOUNS})s?\b")
_DESCRIBED = re.compile(rf"\b(?:{_RELATION_NOUNS})s?\s+of\s+[^?]*?\b[A-Z0-9]|[\w.]['’]s\s+(?:{_RELATION_NOUNS})s?\b")
_KIND_NOUNS = {
    NATIONALITY: set(search_terms("nationality country citizenship")),
    PLACE: set(search_terms(" ".join(_PLACE_NOUNS))),
    TIME: set(search_terms(" ".join(_TIME_NOUNS | {"year"}))),
}


@dataclass(frozen=True)
class Support:
    sentence: str
    citation: str


@dataclass(frozen=True)
class Statement:
    """The answer phrase, the sentence it was read from and, for a two-hop answer, the
    bridge name and the sentence that led to it."""

    answer: str
    support: Support
    through: str | None = None
    bridge: Support | None = None
    detail: str = ""  # what the answer was chosen over ("1954, against Grey Coast: 1961")
    # Hops read before this statement's own: a relative's relative (``kinship``).
    earlier: tuple[tuple[str, Support], ...] = ()

    def line(self) -> str:
        stated = f"Answer: {self.answer}" + (f" — {self.detail}" if self.detail else "")
        quoted = f'"{self.support.sentence}" [Data: {self.support.citation}]'
        hops = self.hops()
        # A sentence that names the relative and says the answer too is quoted once.
        following = [read for _, read in hops[1:]] + [self.support]
        led = "".join(
            f"through {name}, "
            if read == after
            else f'through {name}: "{read.sentence}" [Data: {read.citation}], then '
            for (name, read), after in zip(hops, following)
        )
        if self.bridge is not None and self.through is None:
            # Read from the scene around the covering sentence, or what its pronoun stands for.
            cited = f" [Data: {self.bridge.citation}]" if self.bridge.citation != self.support.citation else ""
            return f'{stated}, {led}from the passage that says "{self.bridge.sentence}"{cited}, where {quoted}'
        return f"{stated}, {led}{quoted}" if led else f"{stated}, from {quoted}"

    def hops(self) -> tuple[tuple[str, Support], ...]:
        """The names the answer was reached through, each with the sentence it was read from."""
        return self.earlier + (((self.through, self.bridge),) if self.through is not None else ())


_NEXT_QUESTION = re.compile(r",?\s+and\s+(?=(?:who|whom|what|when|where|which|how)\b)|(?<=\?)\s+", re.IGNORECASE)


def question_parts(question: str) -> list[str]:
    """The questions a question asks: "Who gave the ball, and who was the other apprentice
    there?" asks two, each answered by its own phrase."""
    return [part.strip() for part in _NEXT_QUESTION.split(question) if part.strip()]


def state_answers(
    question: str, candidates: Sequence[tuple[str, str]], scorer: RelevanceScorer, **names
) -> list[Statement]:
    """``state_answer`` for each part of the question (``question_parts``), in order; the
    parts no phrase answers are left out. ``scorer`` is the whole question's, reused when
    the question is one part."""
    parts = question_parts(question)
    sentences = [sentence for sentence, _ in candidates]

    def scorer_of(part: str) -> RelevanceScorer:
        return scorer if parts == [question.strip()] else RelevanceScorer(part, sentences)

    found = (
        compare_options(part, candidates, **names)
        if _choice(part)
        else same_or_not(part, candidates, **names)
        if _SAME.match(part.strip())
        else _through_relative(part, candidates, **names) or state_answer(part, candidates, scorer_of(part), **names)
        for part in parts
    )
    headings = names.get("headings") or {}
    return [_as_titled(statement, headings) for statement in found if statement is not None]


def _as_titled(statement: Statement, headings: Mapping[str, str]) -> Statement:
    """A name the passage titled with it writes otherwise ("Born as Leopoldo Torres Nilsson"
    in the passage titled "Leopoldo Torre Nilsson") is stated as titled, as written in
    brackets: the title is the name the collection knows them by."""
    title = headings.get(statement.support.citation, "").strip()
    if not title or not _written_otherwise(statement.answer, title):
        return statement
    return replace(statement, answer=f"{title} ({statement.answer})")


SHARED_PREFIX = 4  # letters two spellings of one word share at least ("Torres", "Torre")


def _written_otherwise(name: str, title: str) -> bool:
    """Two writings of one name: as many words, the first and last the same, each other
    pair sharing its first letters; not the same name."""
    written, titled = [fold(word) for word in _TOKEN.findall(name)], [fold(word) for word in _TOKEN.findall(title)]
    if len(written) < 2 or len(written) != len(titled) or written == titled:
        return False
    if written[0] != titled[0] or written[-1] != titled[-1]:
        return False
    return all(a == b or a[:SHARED_PREFIX] == b[:SHARED_PREFIX] for a, b in zip(written, titled))


NEARER_TRIED = 3  # nearer relatives followed, in evidence order (the first wife, the second)


def _through_relative(question: str, candidates: Sequence[tuple[str, str]], **names) -> Statement | None:
    """A question about someone's relative ("Who is X's paternal grandfather?", "Where did
    X's father die?"), answered one relation at a time (``kinship``): who X's father is,
    whose son he was, then the question asked of that one. The relatives of each hop are
    tried in evidence order (a second marriage's father-in-law). None when the question
    asks about no relative or no chain of them answers it."""
    chain = kinship_chain(question)
    if chain is None:
        return None
    headings = names.get("headings") or {}
    sentences = [sentence for sentence, _ in candidates]
    named, earlier = chain.named, ()
    if chain.described:  # "the mother of the director of film X": who the director is, first
        who = f"Who is {chain.named}?"
        first = state_answer(who, candidates, RelevanceScorer(who, sentences), kind=PERSON, **names)
        if first is None:
            return None
        named = BRACKETED_END.sub("", first.answer)
        earlier = (*first.hops(), (named, first.support))
    for hops in _relatives_along(chain.relations, named, candidates, headings):
        relative, support = hops[-1]
        if chain.asks_who:
            return Statement(relative, support, earlier=(*earlier, *hops[:-1]))
        # Asked of the relative, the question is read in their own passage when there is one:
        # "She was born at Gottorp, the daughter of Christian August" is the daughter's birth.
        own = titled_with(relative, headings)
        read = [candidate for candidate in candidates if candidate[1] in own] or candidates
        then = chain.then(relative)
        scorer = RelevanceScorer(then, [sentence for sentence, _ in read])
        asked = state_answer(then, read, scorer, one_hop=True, own_passage=bool(own), **names)
        if asked is not None and fold(BRACKETED_END.sub("", asked.answer)) not in {fold(relative), fold(named)}:
            return replace(asked, earlier=(*earlier, *hops, *asked.earlier))
    return None


def _relatives_along(
    relations: Sequence[str], named: str, candidates: Sequence[tuple[str, str]], headings: Mapping[str, str]
):
    """Each chain of relatives ``relations`` leads to from ``named``, as (name, the sentence
    saying it) per hop, the nearer relatives tried in evidence order."""
    for name, sentence, citation in relatives(relations[0], named, candidates, headings)[:NEARER_TRIED]:
        hop = ((name, Support(sentence, citation)),)
        if len(relations) == 1:
            yield hop
        else:
            for rest in _relatives_along(relations[1:], name, candidates, headings):
                yield hop + rest


_EARLIER = set(search_terms("first earlier earliest older oldest before sooner"))
_LATER = set(search_terms("later last latest younger youngest recent recently after newer"))
_OPTIONS = re.compile(
    r"^(?P<head>.+?)(?:,\s*|\s+out of\s+|\s+between\s+)(?P<a>.+?)\s+(?:or|and)\s+(?P<b>[^?]+?)\s*\??\s*$",
    re.IGNORECASE,
)
_OPTIONS_OR = re.compile(
    r"^(?P<head>.+?)(?:,\s*|\s+out of\s+|\s+between\s+)(?P<a>.+)\s+or\s+(?P<b>[^?]+?)\s*\??\s*$", re.IGNORECASE
)
# "Was A or B born first?"
_OPTIONS_FIRST = re.compile(
    r"^(?P<verb>was|were|is|did)\s+(?P<a>.+?)\s+or\s+(?P<b>.+?)\s+(?P<head>(?:born|released|founded|established|"
    r"published|made|formed|died)\b[^?]*?)\s*\??\s*$",
    re.IGNORECASE,
)


def _choice(question: str) -> re.Match | None:
    """The question's head and options when it chooses between two ("..., A or B?",
    "Was A or B born first?")."""
    text = question.strip()
    # Options split at "or" before "and": a title may hold "and" ("Love, Honor And Oh-Baby!").
    match = _OPTIONS_FIRST.match(text) or _OPTIONS_OR.match(text) or _OPTIONS.match(text)
    if match is None or not re.match(r"(?i)(which|who|was|were|is|did)\b", text):
        return None
    return match


def compare_options(question: str, candidates: Sequence[tuple[str, str]], **names) -> Statement | None:
    """A question choosing by date between two options ("Which film came out first, A or
    B?", "Who was born later, A or B?"): each option's date, read as a date question about
    it (through a bridge when the date belongs to the option's director or performer), and
    the option the comparison picks. None when the question is no such choice or a date
    is missing."""
    match = _choice(question)
    head_terms = set(search_terms(match["head"])) if match else set()
    if head_terms >= _LONGER_LIFE:
        return _longer_life(match, candidates, **names)
    if not head_terms & (_EARLIER | _LATER):
        return None  # a choice, but not by date: no phrase stated
    pick = min if head_terms & _EARLIER else max
    head = " ".join(w for w in match["head"].split() if not set(search_terms(w)) & (_EARLIER | _LATER))
    sentences = [sentence for sentence, _ in candidates]
    dated = []
    for option in (match["a"].strip(), match["b"].strip()):
        asked = f"{head} {option}"
        statement = state_answer(asked, candidates, RelevanceScorer(asked, sentences), kind=TIME, **names)
        years = re.findall(r"\d{3,4}", statement.answer) if statement else []
        if not years:
            return None
        dated.append((int(years[-1]), option, statement))
    (_, winner, chosen), (_, loser, other) = sorted(dated, key=lambda item: item[0], reverse=pick is max)
    if dated[0][0] == dated[1][0]:
        return None  # the same year: the comparison needs more than years
    return replace(chosen, answer=winner, detail=f"{chosen.answer}, against {loser}: {other.answer}")


_LONGER_LIFE = set(search_terms("lived longer"))


def _longer_life(match: re.Match, candidates: Sequence[tuple[str, str]], **names) -> Statement | None:
    """ "Who lived longer, A or B?": each one's years of birth and death, read as date
    questions about them, and the one whose life spans more years."""
    sentences = [sentence for sentence, _ in candidates]
    lives = []
    for option in (match["a"].strip(), match["b"].strip()):
        years = []
        for asked in (f"When was {option} born?", f"When did {option} die?"):
            statement = state_answer(asked, candidates, RelevanceScorer(asked, sentences), kind=TIME, **names)
            found = re.findall(r"\d{3,4}", statement.answer) if statement else []
            if not found:
                return None
            years.append((int(found[-1]), statement))
        (born, birth), (died, death) = years
        if died <= born:
            return None  # the same date read twice, or a death before the birth: not a life span
        lives.append((died - born, option, birth, death))
    (span, winner, birth, death), (other_span, loser, other_birth, other_death) = sorted(
        lives, key=lambda life: -life[0]
    )
    if span == other_span:
        return None  # the same number of years: the comparison needs the days
    return replace(
        birth,
        answer=winner,
        detail=f"{birth.answer} to {death.answer}, against {loser}: {other_birth.answer} to {other_death.answer}",
    )


# "Are A and B (both) located in the same country?", "Do both films A and B have the
# directors from the same country?", "Were A and B born in the same place?"
_SAME = re.compile(
    r"^(?:are|were|is|was|do|does|did)\s+(?:both\s+)?(?:(?:the\s+)?(?:films?|movies?|directors?\s+of\s+films?|"
    r"places?|people)\s*,?\s+)?(?P<a>.+?)\s+and\s+(?P<b>.+?)\s*,?\s+(?P<rest>(?:both\s+)?(?:located|from|have|"
    r"share|of|born|originate|originated|come|came|in)\b.*\bsame\s+(?P<what>country|nationality|place)\b.*)$",
    re.IGNORECASE,
)


def same_or_not(question: str, candidates: Sequence[tuple[str, str]], **names) -> Statement | None:
    """A question whether two things share a country, a nationality or a place ("Are A and
    B located in the same country?"): each one's, read as a question about it (through its
    director when the question says so), and Yes or No by whether the two are written
    alike. None when either is missing."""
    match = _SAME.match(question.strip())
    if match is None:
        return None
    through = "director of " if re.search(r"(?i)\bdirectors?\b", question) else ""
    kind = PLACE if match["what"].lower() == "place" else NATIONALITY
    asked_for = "place of birth" if kind == PLACE and "born" in match["rest"].lower() else match["what"].lower()
    sentences = [sentence for sentence, _ in candidates]
    found = []
    located = match["what"].lower() == "country" and "located" in match["rest"].lower()
    for option in (match["a"].strip(" ,"), match["b"].strip(" ,")):
        asked = f"What is the {asked_for} of the {through}{option}?"
        statement = (
            _country_of(option, candidates, names.get("known", lambda name: False))
            if located
            else state_answer(asked, candidates, RelevanceScorer(asked, sentences), kind=kind, **names)
        )
        if statement is None or names.get("type_of", lambda name: None)(statement.answer) == "PERSON":
            return None  # no country, nationality or place read for it
        found.append((option, statement))
    (a, first), (b, second) = found
    # "American-Argentine" and "Argentine" share a country.
    same = bool(set(_stems(first.answer)) & set(_stems(second.answer)))
    verdict = "Yes" if same else "No"
    return replace(first, answer=verdict, detail=f"{a}: {first.answer}; {b}: {second.answer}")


def _end_of(words: list[str], sentence: str) -> int | None:
    """Where the words (folded) end in the sentence, as written there: "Gare de La
    Roche-sur- Yon" holds "Gare De La Roche-Sur-Yon"; None when it does not hold them."""
    tokens = _tokens(sentence)
    folded = [fold(token) for token, _, _ in tokens]
    for i in range(len(folded) - len(words) + 1):
        if folded[i : i + len(words)] == words:
            return tokens[i + len(words) - 1][2]
    return None


def _country_of(option: str, candidates: Sequence[tuple[str, str]], known: Callable[[str], bool]) -> Statement | None:
    """Where a place is, as its defining sentence ends its location ("a village in the
    Central District of Chadegan County, Isfahan Province, Iran."; "an island in St.
    Petersburg, Russia, bordered by ..."): the last name of that phrase, the country."""
    words = [fold(token) for token, _, _ in _tokens(option)]
    about = [(s, c, end) for s, c in candidates if words and (end := _end_of(words, s)) is not None]
    if not about:
        return None
    # The sentence that names the place first is the one defining it (a title line alone says nothing).
    for sentence, citation, end in sorted(about, key=lambda item: item[2]):
        rest = sentence[end:]
        where = re.search(r"\b(?:in|at|near|serving)\b", rest)
        rest = rest[where.start() :] if where else rest
        # ", bordered by ...": the location is over; ", western France" goes on.
        ended = re.search(r",\s+(?!in\b|the\b|near\b|(?:north|south|east|west|central)[a-z-]*\b)[a-z]", rest)
        rest = rest[: ended.start()] if ended else rest
        runs = [run for run in _name_runs(rest, _tokens(rest), known) if fold(run.text) not in fold(option)]
        if runs:
            return Statement(runs[-1].text, Support(sentence, citation))
    return None


def expected_kind(question: str) -> str | None:
    """The kind of phrase the question asks for, from its form; None when it asks for an
    explanation or a description ("Why ...", "What does ... do")."""
    words = [fold(w) for w in _TOKEN.findall(question)]
    asks = next(
        (
            i
            for i, w in enumerate(words)
            if w in {"who", "whom", "whose", "what", "which", "when", "where", "how", "why"}
        ),
        None,
    )
    if asks is None:
        return None
    if _ASKS_CAUSE.search(question):
        return CAUSE
    if words[asks] == "why":
        return None  # an explanation
    word, following = words[asks], words[asks + 1 : asks + 3]
    if word == "what" and following[:1] and following[0] in {"do", "does", "did"} and set(words) & _SPEECH_ASKED:
        return QUOTE
    if word == "what" and asked_verbs(question):
        return THING
    if word == "how":
        return NUMBER if following[:1] and following[0] in {"many", "much", "old"} else None
    # The noun naming the kind asked for ends the words after "what": "in what New York *city*".
    noun = _kind_noun(words[asks + 1 :]) if word in {"what", "which"} else None
    if word == "when" or (noun and {noun, following[0]} & _TIME_NOUNS):
        return TIME
    if word in {"what", "which"} and following[:1] and following[0] == "nationality":
        return NATIONALITY
    # "Which country is the composer from?" asks a nationality ("Austrian") as much as a
    # country; "Which country is the tower in?" a place.
    if word in {"what", "which"} and following[:1] == ["country"] and "from" in words[asks + 2 :]:
        return NATIONALITY
    if word == "where" or (noun and {noun, following[0]} & _PLACE_NOUNS):
        return PLACE
    rest = set(words[asks + 1 :])
    if word in {"who", "whom"} or (word == "whose" and "name" not in rest):
        return PERSON
    if rest & {"date", "year"}:
        return TIME
    if rest & {"birthplace"} or {"place", "birth"} <= rest or {"place", "death"} <= rest:
        return PLACE
    if word == "which" or rest & {"name", "named", "called"} or (word == "what" and _kind_named(words[asks + 1 :])):
        return NAME
    # "What is the third spirit ...": a noun phrase asked for by name; "What does X do": no.
    if word == "what" and following[:1] and following[0] in {"is", "was", "are", "were"}:
        return NAME
    return None


def _kind_noun(words: list[str]) -> str | None:
    """The last of the words right after "what" or "which", up to a function word or the
    question's end ("what New York city" -> city, "which year did" -> year); None with no
    such word."""
    run = list(itertools.takewhile(lambda word: word not in FUNCTION_WORDS, words[: MAX_KIND_WORDS + 1]))
    return run[min(len(run), MAX_KIND_WORDS) - 1] if run else None


_AUXILIARIES = {"did", "does", "do", "was", "is", "were", "are", "has", "have", "had", "can", "could", "will", "would"}
MAX_KIND_WORDS = 3


def _kind_named(words: list[str]) -> bool:
    """ "What <kind> <auxiliary> ...": the question names the kind of what it asks for, as
    "Which" does ("What award did X receive?", "What government position was held by
    ..."); not "What happened to X?" or "What makes X ...", whose verb follows "what"."""
    end = next((k for k, word in enumerate(words[: MAX_KIND_WORDS + 1]) if word in _AUXILIARIES), None)
    return bool(end) and not any(word in FUNCTION_WORDS for word in words[:end])


# A question that asks what someone died of. The words of death are read in lower case:
# "What country is the director of Die Hard from?" asks no cause; nor does "How did Mary
# react to her husband's death?", which ends on another verb.
_ASKS_CAUSE = re.compile(
    r"^\s*(?i:why|how)\s+(?i:did|does|do)\s.*\b(?:die|died)\W*$"
    r"|^\s*(?i:what)\s+(?i:did|does|do)\s.*\bdie\s+(?:of|from)\W*$"
    r"|\bcause\s+of\s+(?:[^?]*?['’]s?\s+)?death\b"
    r"|^\s*(?i:what)\s+(?:caused\s+(?:the\s+)?death\b|killed\b)"
)


@dataclass(frozen=True)
class _Span:
    text: str
    start: int  # token positions in the sentence
    end: int
    # A date that opens (-1) or closes (+1) a span of dates ("1 May 1900 – 2 June 1960"):
    # a birth and a death, a reign, a run of years.
    in_range: int = 0
    adjective: bool = False  # a capitalised word used as an adjective ("an American director")
    after: str = ""  # the word before the phrase, folded ("born in *Turin*")
    # How surely the words before make it the kind asked for: a disease someone was
    # "diagnosed with" is their death's cause less surely than one they "died of".
    share: float = 1.0

    @property
    def key(self) -> str:
        return fold(self.text)


def _tokens(sentence: str) -> list[tuple[str, int, int]]:
    """(token, start offset, end offset), possessive "'s" dropped from the token."""
    found = []
    for match in _TOKEN.finditer(sentence):
        token = match.group()
        if token.lower() == "s" and match.start() > 0 and sentence[match.start() - 1] in "'’":
            continue
        found.append((token, match.start(), match.end()))
    return found


_IN_WORD = {"'", "’", "-", "- "}


def _capitalised(token: str) -> bool:
    return token[:1].isupper()


def _name_runs(sentence: str, tokens: list[tuple[str, int, int]], known: Callable[[str], bool]) -> list[_Span]:
    """Runs of capitalised words (with joiners inside them: "Ghost of Christmas Present"),
    broken at punctuation. A run that begins a sentence or a quotation and is one word long is
    a name only if the index knows it ("Marley was dead"), not any capitalised first word."""
    runs, current = [], []

    def close():
        while current and fold(current[-1][0]) in NAME_JOINERS:
            current.pop()
        if current:
            runs.append((current[0][3], current[-1][3] + 1))
        current.clear()

    for position, (token, start, end) in enumerate(tokens):
        gap = sentence[tokens[position - 1][2] : start] if position else ""
        # Only spaces, hyphens or a possessive between the words, or the full stop of an
        # initial or a title ("J. Strauss", "Mrs. Dilber").
        joined = not gap.strip(" -'’") or (
            gap.strip() == "." and (len(tokens[position - 1][0]) == 1 or tokens[position - 1][0] in _TITLES)
        )
        if current and not joined:
            close()
        # The rest of a word a hyphen or an apostrophe cuts is the name's too: "Ja'far",
        # "Woo-ping", "Sang- soo" (as some sources write it), "British-born".
        rest_of_word = bool(current) and current[-1][3] == position - 1 and gap in _IN_WORD
        if _capitalised(token) or rest_of_word or (current and fold(token) in NAME_JOINERS):
            current.append((token, start, end, position))
        else:
            close()
    close()
    spans = []
    for first, last in runs:
        # "The Ghost" is the name "Ghost"; "I" or "But" alone is no name at all.
        while first < last and fold(tokens[first][0]) in FUNCTION_WORDS:
            first += 1
        if first == last:
            continue
        text = sentence[tokens[first][1] : tokens[last - 1][2]]
        before = sentence[: tokens[first][1]].rstrip()
        # A sentence too short to quote alone goes on after the one before it ("... back
        # again. Oh no, no!'"): after its full stop a word opens a sentence too.
        opens = first == 0 or before[-1:] in "'\"‘“:;(—.!?"
        if opens and last - first == 1 and (fold(text) in FUNCTION_WORDS or not known(text)):
            continue
        if all(fold(t) in _NUMBER_WORDS for t, _, _ in tokens[first:last]) or text in _TITLES:
            continue  # "pointed down to One": a number, not a name; "Mrs" alone: a title
        if fold(tokens[first][0]) in _MONTHS | _WEEKDAYS:
            continue  # "December 1945": a date
        # A capitalised word before a lower-case one is most often an adjective ("an
        # American director", "the Welsh language"), not the name of a place or person.
        # An aside in brackets between them changes nothing: "a classical Greek (Athenian) philosopher".
        after = _ASIDE.sub("", sentence[tokens[last - 1][2] :], count=1)
        following = after.lstrip()
        adjective = (
            following[:1].islower()
            and fold(_TOKEN.match(following).group()) not in FUNCTION_WORDS
            and after[: len(after) - len(following)].strip() == ""
        ) or re.match(r"-[a-z]", after) is not None  # "a British-born director"
        spans.append(_Span(text, first, last, adjective=adjective, after=fold(tokens[first - 1][0]) if first else ""))
    return spans


def _number_spans(tokens: list[tuple[str, int, int]]) -> list[_Span]:
    return [
        _Span(token, i, i + 1)
        for i, (token, _, _) in enumerate(tokens)
        if (token.isdigit() and not _YEAR.match(token)) or fold(token) in _NUMBER_WORDS
    ]


def _time_spans(sentence: str, tokens: list[tuple[str, int, int]], names: list[_Span]) -> list[_Span]:
    """Dates as written: years, "12 March 1950", "March 851", weekdays, and named days
    ("Christmas Eve")."""
    spans = [s for s in names if fold(tokens[s.end - 1][0]) in _TIME_HEADS]
    taken = {i for s in spans for i in range(s.start, s.end)}
    i = 0
    while i < len(tokens):
        token = fold(tokens[i][0])
        named = _capitalised(tokens[i][0])  # "May 1950", not "they may"
        month = named and token in _MONTHS
        if i in taken or not (_YEAR.match(token) or month or (named and token in _WEEKDAYS)):
            i += 1
            continue
        start, end = i, i + 1
        if month and start > 0 and tokens[start - 1][0].isdigit() and len(tokens[start - 1][0]) <= 2:
            start -= 1  # "12 March"
        # "March 12, 1950", "20 March 851": a day and a year of any length after a month.
        while (
            end < len(tokens)
            and tokens[end][0].isdigit()
            and (month or _YEAR.match(tokens[end][0]))
            and not sentence[tokens[end - 1][2] : tokens[end][1]].strip(" ,")
        ):
            end += 1
        if month and end - start > 1 or not month:  # a month alone dates nothing
            before = fold(tokens[start - 1][0]) if start else ""
            # "born 8 November 1913 ... – d. 28 March 2003": the word before says which end.
            end_of_life = -1 if before in {"born", "b"} else 1 if before in {"died", "d"} else 0
            spans.append(_Span(sentence[tokens[start][1] : tokens[end - 1][2]], start, end, in_range=end_of_life))
        i = end
    spans.sort(key=lambda span: span.start)
    for n in range(len(spans) - 1):
        first, second = spans[n], spans[n + 1]
        if not (first.in_range or second.in_range) and _ranges(
            sentence[tokens[first.end - 1][2] : tokens[second.start][1]]
        ):
            spans[n], spans[n + 1] = replace(first, in_range=-1), replace(second, in_range=1)
    return spans


def _ranges(gap: str) -> bool:
    """What stands between two dates makes them a span: a dash or "to", perhaps after the
    place of the first ("8 May 1939, Namslau – 17 March 2006", "1690, in Dornburg – 1747")."""
    return bool(
        _RANGE_DASH.match(gap) or (len(gap) <= 40 and re.search(r"[-–—]\s*$", gap) and not re.search(r"[.;()]", gap))
    )


# The words that say what a death came from, and the phrase after them: "died of a heart
# attack", "died from lung cancer", "death from cholera", "succumbed to pneumonia", "the
# cause of his death was ...", "killed in a house fire", "died in a car crash" (a kind of
# event: "died in a hospital" is a place), "committed suicide"; "diagnosed with cancer"
# names a disease, not yet a death. "The death of X" names who died.
_CAUSE_CUE = re.compile(
    r"\b(?:(?:died|dies|die|dying)\s+(?:of|from)|death\s+from|succumbed\s+to"
    r"|cause\s+of\s+(?:(?:his|her|their)\s+)?death\s+(?:was|is)|(?P<event>(?:killed|died)\s+in(?=\s+(?:an?|the)\s))"
    r"|(?P<diagnosed>diagnosed\s+with)|committed(?=\s+suicide\b))\s+",
    re.IGNORECASE,
)
# What "killed in" or "died in" a kind of event names ("a car accident", "the Battle of
# Arras"), not a place ("a hospital in Paris").
_EVENTS = set(
    search_terms(
        """accident crash collision fire blaze explosion blast bombing attack raid ambush shooting
        massacre battle war siege skirmish duel fight brawl riot avalanche earthquake flood storm
        hurricane tornado tsunami eruption shipwreck sinking fall incident epidemic pandemic
        outbreak plague famine drowning"""
    )
)
DIAGNOSED_SHARE = 0.6
MAX_CAUSE_WORDS = 5
# Words that end a cause's phrase: where, when and at what age it came ("died of cancer
# in Lisbon on 3 February", "of plague three years later", "of smallpox at the age of 16").
_CAUSE_ENDS = (
    {"in", "on", "at", "near", "aged", "while", "when", "which", "who", "whom", "with", "and", "but", "or"}
    | {"after", "before", "during", "shortly", "later", "earlier", "soon", "following", "as", "by", "for", "to"}
    | {"that", "year", "years", "month", "months", "though", "although", "because"}
    | _NUMBER_WORDS
)
_CAUSE_OPENERS = {"a", "an", "the", "his", "her", "their", "its"}
_CAUSE_TRAILERS = {"of", "from", "the", "a", "an"}
_COMPLICATIONS = {"complications", "complication"}
# The death of another: a relative or a friend named just before the words ("her husband
# Erik died of cancer", "whose father died of tuberculosis", "Lena's son died from ..."),
# but not one who died with the subject ("Lena and her husband were killed in ...").
_ANOTHERS_DEATH = re.compile(
    r"(?<!\band his )(?<!\band her )\b(?:father|mother|parents?|husband|wife|spouse|son|daughter|child|children|"
    r"brother|sister|uncle|aunt|nephew|niece|cousin|grandfather|grandmother|friend|partner|fiancée?|lover)s?"
    r"(?:\s+[A-Z][\w'’.-]*){0,3}\s*,?\s*(?:had\s+|has\s+|was\s+|were\s+)?$",
    re.IGNORECASE,
)
# A diagnosis that did not end in death.
_SURVIVED = re.compile(r"\b(?:recovered|survived|remission|cured)\b", re.IGNORECASE)


def _cause_spans(sentence: str, tokens: list[tuple[str, int, int]]) -> list[_Span]:
    """The phrases the sentence says the death of its subject came from ("a heroin
    overdose" -> "heroin overdose"; "complications from pneumonia" -> "pneumonia";
    "Parkinson's disease"), not the death of a relative it names."""
    spans = []
    for cue in _CAUSE_CUE.finditer(sentence):
        if _ANOTHERS_DEATH.search(sentence, 0, cue.start()):
            continue
        if cue["diagnosed"] and _SURVIVED.search(sentence, cue.end()):
            continue
        first = next((i for i, (_, start, _) in enumerate(tokens) if start >= cue.end()), len(tokens))
        while first < len(tokens) and fold(tokens[first][0]) in _CAUSE_OPENERS:
            first += 1
        last = first
        while last < len(tokens) and last - first < MAX_CAUSE_WORDS and _in_cause(sentence, tokens, first, last):
            last += 1
        opening = [fold(token) for token, _, _ in tokens[first : first + 2]]
        if last - first > 2 and opening[0] in _COMPLICATIONS and opening[1] in {"of", "from"}:
            first += 2  # the illness, not its complications
        while last > first and fold(tokens[last - 1][0]) in _CAUSE_TRAILERS:
            last -= 1  # "a fall from his horse" is a fall
        if last == first:
            continue
        if cue["event"] and not set(_stems(sentence[tokens[first][1] : tokens[last - 1][2]])) & _EVENTS:
            continue  # "died in a hospital": where, not of what
        share = DIAGNOSED_SHARE if cue["diagnosed"] else 1.0
        text = sentence[tokens[first][1] : tokens[last - 1][2]]
        spans.append(_Span(text, first, last, after=fold(tokens[first - 1][0]) if first else "", share=share))
    return spans


def _in_cause(sentence: str, tokens: list[tuple[str, int, int]], first: int, last: int) -> bool:
    """Token ``last`` goes on the cause phrase that starts at ``first``: no word that ends
    it, no punctuation before it but a hyphen or a possessive ("Parkinson's disease",
    "COVID-19"), and no number but one joined by a hyphen."""
    token = tokens[last][0]
    if last == first:
        return fold(token) not in _CAUSE_ENDS and not token[0].isdigit()
    gap = sentence[tokens[last - 1][2] : tokens[last][1]]
    if token[0].isdigit():
        return gap == "-"
    return fold(token) not in _CAUSE_ENDS and (not gap.strip(" -") or gap.strip() in ("'s", "’s"))


def _spans(sentence: str, kind: str, known: Callable[[str], bool]) -> tuple[list[_Span], list[_Span]]:
    """(answer candidates of the kind, every name): names are also the bridges of two hops."""
    tokens = _tokens(sentence)
    names = _name_runs(sentence, tokens, known)
    if kind == NUMBER:
        return _number_spans(tokens), names
    if kind == CAUSE:
        return _cause_spans(sentence, tokens), names
    if kind == TIME:
        return _time_spans(sentence, tokens, names), names
    return names, names


# How well an index type fits the kind asked for; a name the index did not type (or typed
# OTHER) stays a candidate, at a discount.
_TYPE_FIT = {
    PERSON: {"PERSON": 1.0, "ORGANIZATION": 0.5, "GEO": 0.25, "EVENT": 0.25},
    PLACE: {"GEO": 1.0, "LOCATION": 1.0, "ORGANIZATION": 0.5, "PERSON": 0.25, "EVENT": 0.4},
}
_UNTYPED_FIT = 0.7
ADJECTIVE_SHARE = 0.3  # "American" asked where someone was born
NOT_ADJECTIVE_SHARE = 0.5  # "America" asked for a nationality
# The endings of the words for a people or a country's citizens ("Danish", "American",
# "Chinese", "French", "Israeli", "Icelandic"): "the Dogme restrictions", "the UK charts"
# use a name as an adjective, but not one that says a nationality.
_DEMONYM = re.compile(r"(?:an|sh|ese|ch|i|ic|ek|ss)$")
NOT_DEMONYM_SHARE = 0.5  # "Dogme" asked for a nationality
PERSON_AS_NATIONALITY_SHARE = 0.25  # the performer asked about is no answer to where they are from
NO_PREPOSITION_SHARE = 0.7  # a place not written "in/at/near/from X"
DATE_AS_NAME_SHARE = 0.1  # a named day ("Christmas Day") asked for as a person or a place
_PLACE_PREPOSITIONS = {"in", "at", "near", "from", "to", "outside", "inside"}
OFF_FOCUS_SHARE = 0.7  # a sentence without the question's focus word supports less
UNGROUNDED_SHARE = 0.5  # nor does one naming nothing the question names
CHAINED_FIRST_HOP_SHARE = 0.3  # a chained question's answer read beside the name it gives
BRIDGE_DISCOUNT = 0.9  # a two-hop answer rests on two sentences: on a tie the one-hop wins
PREVIOUS_SENTENCE_SHARE = 0.85  # coverage read with the sentence before ("He ..."): discounted
REPEAT_SHARE = 0.3  # what each further supporting sentence adds to a phrase's best score
REPEATS = 2  # how many further sentences count: a name found everywhere is not thereby the answer
MIN_BRIDGE_GAIN = 0.15  # the share of the question the second sentence must add to the first's
WRONG_END_SHARE = 0.3  # the birth date of a question about a death
NO_EVENT_SHARE = 0.3  # a date in a sentence without the event asked about
SCENE_SHARE = 0.5  # a time or place the passage gives, not the sentence covering the question
SCENE_REACH = 4  # sentences apart at which a scene's time or place counts half as much
TOP_SENTENCES = 25
TOP_BRIDGE_SENTENCES = 8


def _stems(text: str) -> tuple[str, ...]:
    """A phrase's words folded and stemmed as search terms are ("Cratchits" -> "cratchit"),
    function words kept: the form in which a phrase is compared with the question."""
    return tuple(next(iter(search_terms(t)), fold(t)) for t, _, _ in _tokens(text))


class _Question:
    def __init__(self, question: str, scorer: RelevanceScorer):
        tokens = _tokens(question)
        self.words = set(_stems(question))
        runs = _name_runs(question, tokens, lambda text: True)
        self.names = [_stems(run.text) for run in runs]
        self.spelled = [run.text.casefold() for run in runs]
        self.terms = set(scorer.question_terms)
        # The focus: the first word the question asks about beyond the names it gives
        # ("Scrooge's *nephew*", "Which *spirit* ..."); the answer stands beside it.
        named = {stem for name in self.names for stem in name}
        in_order = [stem for stem in _stems(question) if stem in self.terms and stem not in named]
        self.focus = in_order[0] if in_order else None
        self.verbs, self.doers = asked_verbs(question), asked_doers(question)
        self.question = question

    def grounded(self, folded_sentence: str) -> bool:
        """The sentence names something the question names (or the question names nothing):
        the sentence about another film's director does not answer for this one's."""
        return not self.spelled or any(name in folded_sentence for name in self.spelled)

    def asked(self, span: _Span) -> bool:
        """The phrase is (part of) what the question names, not an answer to it."""
        stems = _stems(span.text)
        words = set(stems)
        if not stems or words <= self.words:
            return True
        counted = words - _NUMBER_WORDS
        # "Three Spirits" asked about "the third spirit": a number of what the question names.
        if counted and counted != words and counted <= self.words:
            return True
        # "Ebenezer Scrooge" when Scrooge is asked about: the same person, full name; but
        # "Ghost of Christmas Present" is no part of a question about Christmas dinner.
        return any(
            stems[-len(name) :] == name or (len(name) > 1 and stems[: len(name)] == name) for name in self.names if name
        )

    def anchors(
        self, tokens: list[tuple[str, int, int]], by_focus: bool, alike: frozenset[str] = frozenset()
    ) -> tuple[list[int], bool]:
        """Positions of the question's words in a sentence (or of the ``alike`` words that
        say them otherwise: "assassinated" for "death"): with ``by_focus``, the focus's
        alone when the sentence has it (True), else every question word's (False)."""
        stems = [next(iter(search_terms(token)), "") for token, _, _ in tokens]
        focus = [i for i, stem in enumerate(stems) if _says_focus(stem, self.focus)] if by_focus else []
        if focus:
            return focus, True
        return [i for i, stem in enumerate(stems) if stem in self.terms or stem in alike], False


_VERB_ENDINGS = {"", "e", "s", "es", "d", "ed", "ing", "ten"}


def _says_focus(stem: str, focus: str | None) -> bool:
    """The word is the focus, or the verb of a focus that names a doer: the *director* is
    who "directed", the *composer* who "composed", the *writer* whom it was "written" by."""
    if focus is None:
        return False
    if stem == focus:
        return True
    root = focus[:-2] if len(focus) > 5 and focus.endswith(("er", "or")) else None
    return root is not None and stem.startswith(root) and stem[len(root) :] in _VERB_ENDINGS


def _chained(question: str, kind: str) -> bool:
    """The question asks about someone it describes by their relation to what it names,
    not for that someone: "Where did *the director of film X* die?", "Who is the father of
    the director of film X?", "What nationality is X's husband?" (not "Who is the director
    of film X?"). The answer is a hop past the sentence that names X."""
    if _DESCRIBED.search(question) is None:
        return False
    return kind in (PLACE, TIME, NATIONALITY, NUMBER, CAUSE) or len(_RELATION.findall(question)) >= 2


@lru_cache(maxsize=8)  # the parts of one question, and its options, read the same evidence
def _written_as_names(sentences: tuple[str, ...]) -> frozenset[str]:
    """Words the evidence writes as names: capitalised inside a sentence ("'Home, little
    Fan?'") and never in lower case. A sentence's first word is capitalised whatever it
    is, so "Fan, the sister of Scrooge." names Fan only because another sentence does."""
    inside, lower = set(), set()
    for sentence in sentences:
        tokens = _tokens(sentence)
        for position, (token, start, _) in enumerate(tokens):
            if not token[:1].isalpha():
                continue
            if token[:1].islower():
                lower.add(token.casefold())
            elif position and sentence[tokens[position - 1][2] : start].strip(" ,") == "":
                inside.add(token.casefold())
    return frozenset(inside - lower - {fold(word) for word in FUNCTION_WORDS})


_ENTRY = re.compile(r"^[A-Z][\w.'’-]*(?:\s+(?:[A-Z][\w.'’-]*|of|de|von|van))*(?:\s+\([^()]+\))?,\s")


def _entry(sentence: str) -> bool:
    """The sentence opens with a name and goes on to say what it is, as an entry of a list
    of characters or a glossary does ("Joe, a marine-store dealer ..."): it is about its
    own name, and the entry before it says nothing of that name."""
    return _ENTRY.match(sentence) is not None


def _closeness(span: _Span, anchors: list[int]) -> float:
    """1 beside a question word (or bridge), falling off slowly with the distance in words."""
    if not anchors:
        return 0.5
    distance = min(min(abs(a - span.start), abs(a - (span.end - 1))) for a in anchors)
    return 1 / (1 + max(distance - 1, 0) / 8)


def state_answer(
    question: str,
    candidates: Sequence[tuple[str, str]],
    scorer: RelevanceScorer,
    type_of: Callable[[str], str | None] = lambda name: None,
    known: Callable[[str], bool] = lambda name: False,
    prevalence: Callable[[str], float] = lambda name: 0.0,
    kind: str | None = None,
    headings: Mapping[str, str] | None = None,
    one_hop: bool = False,
    own_passage: bool = False,
    preceding: Callable[[str], tuple[tuple[str, ...], str]] | None = None,
    speakers: Mapping[str, str] | None = None,
) -> Statement | None:
    """The phrase that answers ``question`` among the (sentence, citation) ``candidates``
    (in evidence order), or None when the question asks for no phrase or none fits.
    ``type_of`` gives the index's entity type of a name, ``known`` whether the index holds
    it, ``prevalence`` the share of the collection's text units that mention it; ``kind``
    the kind of phrase asked for, when not the question's form (``expected_kind``);
    ``headings`` the title line of each citation's passage that has one; ``one_hop`` reads
    no bridge (the question names whom it asks about, reached already); ``own_passage``:
    the candidates are the passage about whom the question names, each sentence about them
    ("he was assassinated ... in Delft" says where William died without naming him);
    ``preceding`` gives the sentences of the passage before a citation's, and its citation:
    what a pronoun at a passage's start stands for; ``speakers`` who speaks each sentence of
    speech that its paragraph says ("I'll send it" is Scrooge's deed only if he says it)."""
    kind = kind or expected_kind(question)
    if kind is None or not candidates:
        return None
    reading = _Reading(
        _Question(question, scorer),
        candidates,
        scorer,
        kind,
        type_of,
        known,
        prevalence,
        headings,
        own_passage,
        preceding=preceding,
        speakers=speakers,
    )
    if not reading.ranked:
        return None
    if kind == QUOTE:
        return _state_quotation(reading.asked, candidates, reading.terms, scorer)
    reading.score_one_hop()
    if not one_hop and kind != THING:  # the thing is read beside its verb
        reading.score_two_hops()
    if not reading.scores and kind in (TIME, PLACE):
        reading.score_scenes()
    return reading.best()


class _Reading:
    """One question read against its candidate sentences: how much of the question each
    sentence covers, and per phrase its best score in each sentence it was read from."""

    def __init__(
        self,
        asked,
        candidates,
        scorer,
        kind,
        type_of,
        known,
        prevalence,
        headings=None,
        own_passage=False,
        preceding=None,
        speakers=None,
    ):
        self.asked, self.candidates, self.scorer, self.kind = asked, candidates, scorer, kind
        self.type_of, self.index_knows, self.prevalence = type_of, known, prevalence
        # citation -> the title line of its passage, folded: whom the passage is about.
        self.headings = {citation: heading.casefold() for citation, heading in (headings or {}).items()}
        self.terms = [term_set(sentence) for sentence, _ in candidates]
        self.folded = [sentence.casefold() for sentence, _ in candidates]
        self.kind_terms = frozenset(asked.terms & _KIND_NOUNS.get(kind, set()))
        self.chained = _chained(asked.question, kind)
        # A relation said alike leads to the relative asked for ("When did Lothair II's
        # mother die?"); a question naming the kind of its answer ("What nationality is
        # Lamprocles's father?") is led by that, and the relation said alike would lead
        # back to the first sentence's relatives (his mother).
        self.alike = [
            (group, frozenset(asked.terms & group))
            for group in _SAID_ALIKE
            if asked.terms & group and not self.kind_terms
        ]
        self.parsed: dict[int, tuple] = {}
        # (sentence, phrase) -> the sentence naming what the phrase's pronoun stands for
        self.referents: dict[tuple[int, str], Support] = {}
        # citation -> the sentences of the passage before it, and its citation
        self.preceding = preceding or (lambda citation: ((), ""))
        self.speakers: Mapping[str, str] = speakers or {}
        self.support, self.grounded, self.led_in = [], [], []
        self.read_with: list[frozenset[str]] = []  # the terms the support was read from
        for i, (_, citation) in enumerate(candidates):
            # The kind's words alone cover nothing, but in the passage about whom the question
            # names they say it of them.
            about = own_passage or scorer.coverage_terms(self.terms[i])
            says = self.says(i) if about else self.terms[i]
            own = scorer.coverage_terms(says)
            with_previous = 0.0
            follows = i > 0 and candidates[i - 1][1] == citation
            if follows and not _entry(candidates[i][0]):
                with_previous = PREVIOUS_SENTENCE_SHARE * scorer.coverage_terms(says | self.terms[i - 1])
            # A passage's title says what each of its sentences is about ("Dancing in the
            # Rain (film)" over "Ples v dežju is a 1961 film directed by ...").
            title = self.headings.get(citation, "")
            with_title = PREVIOUS_SENTENCE_SHARE * scorer.coverage_terms(says | term_set(title)) if title else 0.0
            support = max(own, with_previous, with_title)
            self.support.append(support)
            self.led_in.append(support > own)  # what stands before says what the question asks
            if support == own:
                self.read_with.append(says)
            else:
                self.read_with.append(says | (self.terms[i - 1] if support == with_previous else term_set(title)))
            self.grounded.append(
                asked.grounded(self.folded[i])
                or (follows and asked.grounded(self.folded[i - 1]))
                or bool(title and asked.grounded(title))
            )
        covering = (i for i in range(len(candidates)) if self.support[i] > 0)
        self.ranked = sorted(covering, key=lambda i: -self.support[i])[:TOP_SENTENCES]
        self.wants_end = 1 if asked.terms & _ENDS else -1 if asked.terms & _STARTS else 0
        self.events = asked.terms & (_ENDS | _STARTS)
        # The words that say the event asked about ("died", "assassinated" for "death").
        self.event_words = frozenset().union(*(group for group in (_DEATHS, _STARTS) if asked.terms & group))
        self.scores: dict[str, dict[int, tuple[float, Statement]]] = defaultdict(dict)

    def known(self, name: str) -> bool:
        # The evidence is read only for a name the index does not hold.
        return self.index_knows(name) or name.casefold() in _written_as_names(tuple(s for s, _ in self.candidates))

    def fit(self, span: _Span) -> float:
        """How well the phrase fits the kind asked for (its entity type, its use as an
        adjective, the preposition before a place), less the more of the collection it is
        found in (the story's setting or a country named everywhere answers little)."""
        kind = self.kind
        fitting = _TYPE_FIT[kind].get(self.type_of(span.text) or "", _UNTYPED_FIT) if kind in _TYPE_FIT else 1.0
        if kind == NATIONALITY:
            fitting = 1.0 if span.adjective else NOT_ADJECTIVE_SHARE
            fitting *= PERSON_AS_NATIONALITY_SHARE if self.type_of(span.text) == "PERSON" else 1.0
            fitting *= 1.0 if _DEMONYM.search(span.text) else NOT_DEMONYM_SHARE
        elif span.adjective:
            fitting *= ADJECTIVE_SHARE
        if kind == PLACE and span.after not in _PLACE_PREPOSITIONS:
            fitting *= NO_PREPOSITION_SHARE
        if kind in (PERSON, PLACE) and (_stems(span.text) or ("",))[-1] in _TIME_HEAD_STEMS:
            fitting *= DATE_AS_NAME_SHARE  # "Christmas Day" is when, not who or where
        return fitting * span.share * (1 - self.prevalence(span.text))

    def end_fit(self, span: _Span, sentence_terms: frozenset[str]) -> float:
        """Of "1 May 1900 – 2 June 1960", the second date answers when someone died; a date
        in a sentence that says neither "born" nor "died", nor gives a life span, does not
        answer when someone was born (it is more often a film's year)."""
        if span.in_range:
            return 1.0 if not self.wants_end or span.in_range == self.wants_end else WRONG_END_SHARE
        return 1.0 if self.kind != TIME or not self.events or self.events & sentence_terms else NO_EVENT_SHARE

    def parse(self, i: int):
        """The sentence's tokens, its phrases of the kind asked for and its names, less
        those the question itself names."""
        if i not in self.parsed:
            sentence = self.candidates[i][0]
            found, names = _spans(sentence, self.kind, self.known)
            if self.kind == THING:
                found = self._objects(i)
            unasked = [s for s in found if not self.asked.asked(s)], [s for s in names if not self.asked.asked(s)]
            self.parsed[i] = (_tokens(sentence), *unasked)
        return self.parsed[i]

    def record(self, span: _Span, sentence: int, score: float, statement: Statement) -> None:
        # Read with .get: a phrase that never scores leaves no empty entry behind for ``best``.
        if score > self.scores.get(span.key, {}).get(sentence, (0.0,))[0]:
            self.scores[span.key][sentence] = (score, statement)

    def score_one_hop(self) -> None:
        # A person or a name stands beside the noun asked for ("Scrooge's *nephew*"); a place,
        # date or number beside any of the question's words ("born in").
        by_focus = self.kind in (PERSON, NAME)
        for i in self.ranked:
            tokens, found, _ = self.parse(i)
            anchors, beside_focus = self.asked.anchors(tokens, by_focus, self.event_words)
            if self.led_in[i]:
                anchors = [*anchors, -1]  # the words of the sentence before stand just before its first
            placed = 1.0 if beside_focus or not by_focus else OFF_FOCUS_SHARE
            placed *= 1.0 if self.grounded[i] else UNGROUNDED_SHARE
            # The sentence naming what a chained question names says who is described
            # ("directed by Frank Lloyd"), rarely what is asked of them.
            placed *= CHAINED_FIRST_HOP_SHARE if self.chained and self.grounded[i] else 1.0
            entry = _entry(self.candidates[i][0])
            for span in found:
                if span.adjective and self.kind == NAME and self._names_focus(tokens, span):
                    span = replace(span, adjective=False)  # "the Golden Bear *award*": the award asked for
                # An entry's name is what all of its description says: beside every word of it.
                closeness = 1.0 if entry and span.start == 0 else _closeness(span, anchors)
                score = self.support[i] * placed * closeness * self.fit(span)
                score *= self.end_fit(span, self.terms[i])
                bridge = self.referents.get((i, span.key))
                self.record(span, i, score, Statement(span.text, Support(*self.candidates[i]), bridge=bridge))

    def _names_focus(self, tokens: list[tuple[str, int, int]], span: _Span) -> bool:
        """The word after the phrase is the kind the question asks for."""
        following = tokens[span.end][0] if span.end < len(tokens) else ""
        return _says_focus(next(iter(search_terms(following)), ""), self.asked.focus)

    def _objects(self, i: int) -> list[_Span]:
        """What the sentence says the question's verbs are done to; a pronoun read from the
        sentences before it in its passage and the passage before (``verb_objects``)."""
        sentence, citation = self.candidates[i]
        first = i
        while first and self.candidates[first - 1][1] == citation:
            first -= 1
        earlier, earlier_citation = self.preceding(citation)
        before = [*earlier, *(s for s, _ in self.candidates[first:i])]
        starts = [start for _, start, _ in _tokens(sentence)]
        spans = []
        speaker = self.speakers.get(sentence)
        for phrase in object_phrases(sentence, self.asked.verbs, before, self.asked.doers, speaker):
            verb = next((k for k, start in enumerate(starts) if start >= phrase.at), len(starts))
            span = _Span(phrase.text, verb + 1, verb + 1 + len(phrase.text.split()))
            k = phrase.referent
            if k is not None:
                read = (earlier[k], earlier_citation) if k < len(earlier) else self.candidates[first + k - len(earlier)]
                self.referents[(i, span.key)] = Support(*read)
            spans.append(span)
        return spans

    def score_two_hops(self) -> None:
        """A name of a well-covering sentence, followed to the sentences that spell it and
        cover more of the question together with the first."""
        for i in [i for i in self.ranked if self.grounded[i]][:TOP_BRIDGE_SENTENCES]:
            # A capitalised adjective ("a Trinidadian-American rapper") is no hop: it leads to
            # whatever the evidence says of a nationality, not to the one it describes.
            for bridge in (name for name in self.parse(i)[2] if not name.adjective):
                specific = 1 - self.prevalence(bridge.text)  # a name found everywhere links nothing
                for j in self._about(bridge, i):
                    # Two sentences read together, the relation leading from one to the other.
                    together = self.scorer.coverage_terms(self.said_alike(self.read_with[i] | self.says(j)))
                    if together >= self.support[i] + MIN_BRIDGE_GAIN:
                        self._score_bridged(i, j, bridge, BRIDGE_DISCOUNT * specific * together)

    def score_scenes(self) -> None:
        """When and where a narrative's scene happens is said once, not in each of its
        sentences ("... in honour of its being Christmas Eve" pages before the ghost comes):
        with no sentence covering the question holding a time or place, the nearest one in
        the passages of the best covering sentences."""
        for i in [i for i in self.ranked if self.grounded[i]][:TOP_BRIDGE_SENTENCES]:
            citation = self.candidates[i][1]
            for j in range(len(self.candidates)):
                if j == i or self.candidates[j][1] != citation:
                    continue
                near = 1 / (1 + abs(i - j) / SCENE_REACH)
                for span in self.parse(j)[1]:
                    score = self.support[i] * SCENE_SHARE * near * self.fit(span) * self.end_fit(span, self.terms[j])
                    statement = Statement(span.text, Support(*self.candidates[j]), bridge=Support(*self.candidates[i]))
                    self.record(span, j, score, statement)

    def _about(self, bridge: _Span, i: int) -> list[int]:
        """The sentences (but ``i``) that name the bridge: spelled in full, or by the last
        word of a name in a passage that spells it in full ("Born in Saint James, Minaj
        moved ...")."""
        spelled = bridge.text.casefold()
        full = [j for j in range(len(self.candidates)) if spelled in self.folded[j]]
        words = spelled.split()
        # A person's surname names them; "Judge of Arborea" is not "Arborea".
        if len(words) > 1 and len(words[-1]) > 2 and not set(words) & NAME_JOINERS:
            passages = {self.candidates[j][1] for j in full}
            last = re.compile(rf"\b{re.escape(words[-1])}\b")
            full += [
                j
                for j in range(len(self.candidates))
                if self.candidates[j][1] in passages and spelled not in self.folded[j] and last.search(self.folded[j])
            ]
        # A passage titled with the name is about it throughout ("She is the daughter of ...").
        full += [j for j in range(len(self.candidates)) if self._titled(j, spelled) and j not in full]
        return [j for j in full if j != i]

    def _titled(self, j: int, spelled: str) -> bool:
        return self.headings.get(self.candidates[j][1]) == spelled and spelled not in self.folded[j]

    def says(self, j: int) -> frozenset[str]:
        """The question's terms sentence ``j`` says: its own words, the words naming the
        kind asked for when it holds a phrase of that kind ("Socrates was a Greek
        philosopher" says what "nationality" asks, without the word), and the event asked
        about in any of its forms ("died" says what "die" and "death" ask)."""
        said = self.terms[j]
        if self.kind_terms and self._holds_kind(j):
            said = said | self.kind_terms
        for event in (_ENDS, _STARTS):
            if said & event and self.asked.terms & event:
                said = said | (self.asked.terms & event)
        return said

    def said_alike(self, terms: frozenset[str]) -> frozenset[str]:
        """The terms with the question's words they say alike (``_SAID_ALIKE``)."""
        for group, asked in self.alike:
            if terms & group:
                terms = terms | asked
        return terms

    def _holds_kind(self, j: int) -> bool:
        found = self.parse(j)[1]
        if self.kind == NATIONALITY:
            return any(span.adjective for span in found)
        return bool(found) if self.kind == TIME else any(span.after in _PLACE_PREPOSITIONS for span in found)

    def _score_bridged(self, i: int, j: int, bridge: _Span, reach: float) -> None:
        """The phrases of sentence ``j``, reached from sentence ``i`` through ``bridge``."""
        tokens, found, _ = self.parse(j)
        spelled = bridge.text.casefold().split()
        if self._titled(j, bridge.text.casefold()):
            # Not named in the sentence: the answer stands beside the words of the question
            # or of the relation said alike ("the daughter of *Gian-Carlo Coppola*").
            alike = set().union(*(group for group, _ in self.alike))
            stems = [next(iter(search_terms(token)), "") for token, _, _ in tokens]
            anchors = [k for k, stem in enumerate(stems) if stem in self.asked.terms or stem in alike]
        else:
            anchors = [k for k, (token, _, _) in enumerate(tokens) if token.casefold() in spelled]
        for span in found:
            if bridge.key in span.key or span.key in bridge.key:
                continue
            score = reach * _closeness(span, anchors) * self.fit(span) * self.end_fit(span, self.terms[j])
            statement = Statement(span.text, Support(*self.candidates[j]), bridge.text, Support(*self.candidates[i]))
            self.record(span, j, score, statement)

    def best(self) -> Statement | None:
        """The phrase with the best score, counting a little for each further sentence it
        is read from, stated from the sentence where it scored best."""
        if not self.scores:
            return None

        def total(found: dict[int, tuple[float, Statement]]) -> float:
            ordered = sorted((score for score, _ in found.values()), reverse=True)
            return ordered[0] + REPEAT_SHARE * sum(ordered[1 : 1 + REPEATS])

        best = max(self.scores.values(), key=total)
        return _with_alias(max(best.values(), key=lambda found: found[0])[1])


def _spoken_by(sentence: str, speakers: list[str]) -> str | None:
    """The words the sentence quotes one of the speakers saying, without the quotation
    marks and the "said Scrooge" ("'Bah!' said Scrooge." -> "Bah!"), or None; "said
    Scrooge's nephew" is someone else."""
    names = "|".join(re.escape(name) for name in speakers)
    said = re.search(
        rf"(?i),?['’\"”]?\s*\b(?:{SPEECH_VERBS})\s+(?:the\s+)?(?:{names})\b(?!['’]s)(?:\s+\w+ly)?[,.]?\s*",
        sentence,
    ) or re.search(rf"(?i)\b(?:{names})\s+(?:{SPEECH_VERBS})\b[,:]?\s*", sentence)
    if said is None or not re.search(r"['‘\"“]", sentence):
        return None
    words = f"{sentence[: said.start()]} {sentence[said.end() :]}"
    words = re.sub(r"(?:^|(?<=\s))['‘\"“]|['’\"”](?=\s|$)", "", words)
    return re.sub(r"\s+", " ", words).strip() or None


_PROMPTED = {"when", "whenever", "after", "as", "if"}  # "... reply *when* his nephew wishes him ..."


def _state_quotation(
    asked: _Question, candidates: Sequence[tuple[str, str]], terms: list[frozenset[str]], scorer: RelevanceScorer
) -> Statement | None:
    """What the person the question names said: the quotation attributed to them whose
    sentences just before cover the rest of the question (what prompted the reply), or,
    for a question with no "when", that covers it itself; with the quotation that goes on
    in the next sentence."""
    if not asked.spelled:
        return None
    prompted = bool(_PROMPTED & asked.words)
    best = None
    for j, (sentence, citation) in enumerate(candidates):
        words = _spoken_by(sentence, asked.spelled[:1])
        if words is None:
            continue
        before = [i for i in range(max(j - 3, 0), j) if candidates[i][1] == citation]
        prompt = frozenset().union(*(terms[i] for i in before)) if prompted else terms[j]
        score = scorer.coverage_terms(prompt)
        if score > 0 and (best is None or score > best[0]):
            going_on = candidates[j + 1][0] if j + 1 < len(candidates) and candidates[j + 1][1] == citation else ""
            if re.fullmatch(r"['‘\"“][^'‘\"“]+['’\"”]", going_on.strip()):
                words, sentence = f"{words} {going_on.strip()[1:-1]}", f"{sentence} {going_on.strip()}"
            best = (score, Statement(words, Support(sentence, citation)))
    return best[1] if best else None


_BRACKETED = r"\s*\(\s*[\"“']?{}[\"”']?\s*\)"


def _with_alias(statement: Statement) -> Statement:
    """The answer with the other name its sentence gives it in brackets, as in a list of
    characters or a biography's first line: 'Tim Cratchit ("Tiny Tim")'."""
    sentence, answer = statement.support.sentence, re.escape(statement.answer)
    after = re.search(answer + _BRACKETED.format(r"([^()\"”']{2,60})"), sentence)
    if after is not None and after.group(1)[:1].isupper():
        return replace(statement, answer=f"{statement.answer} ({after.group(1).strip()})")
    before = re.search(r"((?:[A-Z][\w.'’-]*\s+){0,3}[A-Z][\w'’-]*)" + _BRACKETED.format(answer), sentence)
    if before is not None:
        return replace(statement, answer=f"{before.group(1)} ({statement.answer})")
    return statement
