"""What someone did something to: the object of the question's verb, read in the evidence.

"What does Scrooge buy and send to the Cratchits?" asks for the thing bought and sent. The
evidence names it after the verb, in any of its forms ("bought *another coal-scuttle*",
"sent *the Cratchits* a turkey", "won *the Nobel Prize*"), when the one who does it is
the one asked about (not "Fred bought a goose"; "I" is whoever says it), and not in a
negation, a passive or a set phrase ("took place", "gave birth", "was found guilty"). In a story it is more often
a pronoun ("Go and buy *it*", "I'll send *it* to Bob Cratchit's"): the reader knows what
"it" is from the sentences before. So is it read here: the thing those sentences speak of
most, counted from where the pronoun's chain begins (each sentence still saying "it"
carries the chain back), a definite "the prize turkey" counting more than an indefinite
"a shot" or a thing after a preposition ("in the window"), people aside ("the boy" is not
what is bought), singular for "it" and plural for "them". Unless one thing clearly leads,
"it" is left unread: no answer rather than a guess.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from graphrag_common.lexical import FUNCTION_WORDS, NAME_JOINERS, fold
from graphrag_common.people import names_people

_ASKS_DOING = re.compile(r"^\s*what\s+(?:do|does|did)\s+(?P<rest>.+?)\W*$", re.IGNORECASE)
# Words joined by a hyphen or an apostrophe are one word ("coal-scuttle", "Cratchit's").
_WORD = re.compile(r"[^\W_]+(?:[-'’][^\W_]+)*")
_POSSESSIVE = re.compile(r"['’]s$")
_CONTRACTION = re.compile(r"['’](?:ll|d|ve|re|m|s)$", re.IGNORECASE)  # "I'll", "he'd"
# "What does X do / mean / become / stand for": no thing done to, asked.
_NO_OBJECT = {"do", "mean", "become", "call", "name", "look", "happen", "seem", "think", "feel", "stand"}
_ADVERB = re.compile(r"^\w{4,}(?<!p)ly$")  # "quickly", not "reply", "apply", "rely"
_SUBJECT_PRONOUNS = {"he", "she", "they", "it", "i", "you", "we"}
_FIRST_PERSON = {"i", "we"}
_DEFINITE = {"the", "this", "that", "these", "those", "his", "her", "their", "its", "my", "your", "our"}
_DETERMINERS = _DEFINITE | {"a", "an", "another", "some", "any", "every", "each"}
_NAME_JOINERS = NAME_JOINERS | {"the"}  # "the Ghost of Christmas Present", "Battle of the Nile"
_INDIRECT = {"him", "her", "them", "me", "us", "you"}  # "send *him* a turkey"
_PARTICLES = {"up", "out", "off", "down", "away", "back"}  # "picked *up* the key" (not "in", "on": places)
_NUMBERS = set("two three four five six seven eight nine ten eleven twelve twenty fifty hundred dozen".split())
_PREPOSITIONS = set(
    """in at on to into onto from with by near under over through like of for upon across behind beside
    beneath between among against along around about toward towards without within""".split()
)
# Before a verb: what makes it no deed of its subject's (a passive, a copula, a negation).
_NOT_DONE = {"was", "were", "is", "are", "be", "been", "being", "got", "get", "gets", "not", "never", "no"}
# Between a subject and its verb: helpers and adverbs of time.
_BETWEEN = {"had", "has", "have", "will", "would", "could", "should", "shall", "may", "might", "must", "can"} | {
    "then",
    "also",
    "soon",
    "later",
    "once",
    "first",
    "just",
    "still",
}
# Words that name no thing: adverbs and particles ("drew near", "gave it away"), pro-forms
# ("bought something"), times ("sold the house last year").
_NOT_THINGS = set(
    """near home back away again together apart quiet still something anything everything nothing one ones
    yesterday today tomorrow tonight last next ago later once time times firm""".split()
)
# Nor, right after the verb with no determiner, the nouns of set phrases: "took place", "gave
# birth", "held office" ("wrote a note" names one).
_SET_PHRASES = set(
    "place part birth care note notice use sense way rise office fit heed leave aim advantage account".split()
)
PRONOUN_OBJECTS = {"it", "them", "this", "that"}
INDEFINITE_WEIGHT = 0.5  # a thing just introduced ("a shot") is less often what "it" goes on to mean
# Nor is a thing named after a preposition: the place or means of what is done ("sold *in
# the window*"), not what the sentences are about.
OBLIQUE_WEIGHT = 0.5
CLEAR_LEAD = 2.0  # how many times the next thing's weight the thing "it" is read as must weigh
CHAIN_GAP = 4  # sentences without the pronoun after which its chain is taken to have begun
MAX_OBJECT_WORDS = 4
# The past forms the regular endings do not reach ("bought" is "buy"): common verbs of deeds.
_IRREGULAR = {
    "buy": "bought",
    "bring": "brought",
    "give": "gave given",
    "send": "sent",
    "take": "took taken",
    "see": "saw seen",
    "find": "found",
    "make": "made",
    "get": "got gotten",
    "leave": "left",
    "tell": "told",
    "sell": "sold",
    "hold": "held",
    "keep": "kept",
    "write": "wrote written",
    "eat": "ate eaten",
    "steal": "stole stolen",
    "throw": "threw thrown",
    "wear": "wore worn",
    "lose": "lost",
    "pay": "paid",
    "build": "built",
    "draw": "drew drawn",
    "hear": "heard",
    "meet": "met",
    "win": "won",
    "break": "broke broken",
    "hide": "hid hidden",
    "choose": "chose chosen",
    "teach": "taught",
    "catch": "caught",
    "seek": "sought",
    "lend": "lent",
    "spend": "spent",
    "sing": "sang sung",
    "drink": "drank drunk",
    "ride": "rode ridden",
    "forget": "forgot forgotten",
    "bear": "bore borne born",
    "shoot": "shot",
    "light": "lit",
    "feed": "fed",
    "lead": "led",
    "read": "read",
    "put": "put",
    "cut": "cut",
    "set": "set",
}


_PAST_FORMS = frozenset(form for forms in _IRREGULAR.values() for form in forms.split())


@lru_cache(maxsize=256)
def verb_forms(base: str) -> frozenset[str]:
    """The written forms of a verb: "buy" -> buy, buys, buying, bought; "study" -> studies,
    studied; "stop" -> stopped; "make" -> making."""
    forms = {base, f"{base}s", f"{base}es", f"{base}ing", f"{base}ed", f"{base}d", *_IRREGULAR.get(base, "").split()}
    if base.endswith("y") and base[-2:-1] not in "aeiou":
        forms |= {f"{base[:-1]}ies", f"{base[:-1]}ied"}
    if base.endswith("e"):
        forms.add(f"{base[:-1]}ing")
    if re.search(r"[^aeiou][aeiou][bdgklmnprt]$", base):
        forms |= {f"{base}{base[-1]}ed", f"{base}{base[-1]}ing"}
    return frozenset(forms)


def _words(text: str) -> list[re.Match]:
    return list(_WORD.finditer(text))


def _words_of(text: str) -> list[str]:
    return [word.group() for word in _WORD.finditer(text)]


def _name_end(words: list[str], position: int) -> int:
    """Past a name of capitalised words, perhaps joined ("Ghost of Christmas Present")."""
    while position < len(words):
        joined = fold(words[position]) in _NAME_JOINERS and words[position + 1 : position + 2] != []
        if words[position][:1].isupper() or (joined and words[position + 1][:1].isupper()):
            position += 1
        else:
            break
    return position


def _after_subject(words: list[str]) -> int | None:
    """Where the verb starts after a question's subject (do-support leaves the verb bare
    right after it): a name ("Scrooge", "the Ghost of Christmas Present"), with the noun a
    possessive names ("Scrooge's nephew"); a pronoun; or a described one ("the old man",
    "the old woman at the door", "the director of film Blue Harbour"). None when it cannot
    be told."""
    if not words:
        return None
    if fold(words[0]) in _SUBJECT_PRONOUNS:
        return 1
    position = 1 if fold(words[0]) in _DETERMINERS else 0
    if position < len(words) and words[position][:1].isupper():
        position = _name_end(words, position)
        if position and _POSSESSIVE.search(words[position - 1]):
            position += 1  # the nephew "Scrooge's" names
        return position
    if position == 0:
        return None
    return _after_description(words, position)


def _after_description(words: list[str], position: int) -> int | None:
    """Where the verb is after a described subject's first word: the last lower-case word
    before a function word or a name ("the old man *give* the boy"), past the subject's
    prepositional phrases ("the old woman at the door *give*"); a single noun before a name
    is the name's kind ("the director of film Blue Harbour *study*")."""
    while position < len(words):
        stop = position
        while stop < len(words) and words[stop][:1].islower() and fold(words[stop]) not in FUNCTION_WORDS:
            stop += 1
        run = stop - position
        if stop < len(words) and fold(words[stop]) in _PREPOSITIONS and run:
            position = stop + 1 + (stop + 1 < len(words) and fold(words[stop + 1]) in _DETERMINERS)
        elif stop < len(words) and words[stop][:1].isupper() and run <= 1:
            return _name_end(words, stop)
        else:
            return stop - 1 if run >= 2 else None
    return None


def _asked_words(question: str) -> list[str]:
    """The words of "What does/did ...?" after its auxiliary; empty for any other question."""
    match = _ASKS_DOING.match(question)
    return _words_of(match["rest"]) if match else []


def asked_verbs(question: str) -> frozenset[str]:
    """The verbs (folded, bare) whose object "What does/did <subject> <verb> ...?" asks for
    ("What does Scrooge buy and send to the Cratchits?" -> buy, send); empty when the
    question asks something else ("What does Scrooge do?", "What does NASA stand for?":
    a question ending on a preposition asks for its object, not the verb's)."""
    words = _asked_words(question)
    position = _after_subject(words)
    if position is None or fold(words[-1]) in _PREPOSITIONS | _PARTICLES:
        return frozenset()
    verbs = set()
    for word in words[position:]:
        folded = fold(word)
        if folded in {"and", "or"}:
            continue
        if folded in FUNCTION_WORDS or word[:1].isupper():
            break
        if not _ADVERB.search(folded):  # "quickly buy"
            verbs.add(folded)
    return frozenset() if verbs & _NO_OBJECT else frozenset(verbs)


def asked_doers(question: str) -> frozenset[str]:
    """The folded words of the name the question asks the deed of ("What did *Bob Cratchit*
    buy?" -> bob, cratchit); empty when it describes the doer ("the old man", "Scrooge's
    nephew") or names none."""
    words = _asked_words(question)
    position = _after_subject(words)
    subject = words[:position] if position else []
    if fold(subject[0] if subject else "") == "the":
        subject = subject[1:]
    named = subject and all(word[:1].isupper() or fold(word) in _NAME_JOINERS for word in subject)
    return frozenset(fold(word) for word in subject if word[:1].isupper()) if named else frozenset()


@dataclass(frozen=True)
class ObjectPhrase:
    text: str  # the thing, without its determiner ("prize turkey")
    at: int  # where the verb starts in the sentence
    referent: int | None = None  # the sentence (of those given) that names what a pronoun stands for


def _plural(word: str) -> bool:
    return word.endswith("s") and not word.endswith(("ss", "us", "is"))


def _thing_words(sentence: str, words: list[re.Match], k: int, after_verb: bool = False) -> list[re.Match]:
    """The words of the thing named from word ``k`` on, adjacent and up to its noun: a name
    ("the Nobel Prize in Physics" -> Nobel Prize), a number and what it counts ("200
    acres"), or lower-case words up to a function word, an adverb, a time word or a verb
    form ("the house last year" -> house, "fire burned low" -> fire). A verb's object
    (``after_verb``) cut by a verb form before its noun is none: "see his poor *forgotten*
    self" is no "poor"."""
    if k >= len(words):
        return []
    first = words[k].group()
    if first[:1].isupper():
        names = [word.group() for word in words[k : k + MAX_OBJECT_WORDS + 2]]
        end = k + _name_end(names, 0)
        while end > k and not words[end - 1].group()[:1].isupper():
            end -= 1  # a name ends on a capitalised word: "Ghost of", no
        phrase = words[k:end]
    else:
        phrase = []
        for position in range(k, min(k + MAX_OBJECT_WORDS, len(words))):
            text = fold(words[position].group())
            if phrase and sentence[phrase[-1].end() : words[position].start()].strip():
                break  # a mark ends it: "several novels, including"
            counted = text[:1].isdigit() or text in _NUMBERS
            if phrase and (counted or words[position].group()[:1].isupper()):
                break
            if text in FUNCTION_WORDS or text in _NOT_THINGS or _ADVERB.search(text):
                break
            if phrase and (text.endswith(("ed", "ing")) or text in _PAST_FORMS):
                if after_verb and _modifies_next(sentence, words, position):
                    return []
                break  # a verb form: "the fire *burned* low", "a long chain *clasped* about"
            if not phrase and text.endswith("ed"):
                break  # "got *married*": no thing
            phrase.append(words[position])
    # Adjacent: nothing but spaces between the words.
    for end in range(1, len(phrase)):
        if sentence[phrase[end - 1].end() : phrase[end].start()].strip():
            return phrase[:end]
    return phrase


def _modifies_next(sentence: str, words: list[re.Match], k: int) -> bool:
    """Word ``k`` stands before a lower-case content word, as an adjective before its noun
    ("his poor *forgotten* self")."""
    following = words[k + 1] if k + 1 < len(words) else None
    if following is None or sentence[words[k].end() : following.start()].strip():
        return False
    return following.group()[:1].islower() and fold(following.group()) not in FUNCTION_WORDS


def _mentions(sentence: str) -> list[tuple[str, str, float]]:
    """(head noun, phrase, weight) of each thing the sentence names in lower case after a
    determiner ("the prize turkey that" -> "prize turkey"), weighing less when indefinite
    or after a preposition; people and the pro-form "one" ("the big one") aside."""
    found = []
    words = _words(sentence)
    for k, word in enumerate(words):
        determiner = fold(word.group())
        if determiner not in _DETERMINERS or k + 1 >= len(words) or not words[k + 1].group()[:1].islower():
            continue
        if sentence[word.end() : words[k + 1].start()].strip():
            continue
        phrase = _thing_words(sentence, words, k + 1)
        if not phrase:
            continue
        head = fold(_POSSESSIVE.sub("", phrase[-1].group()))
        if head in _NOT_THINGS or names_people(head):
            continue
        weight = 1.0 if determiner in _DEFINITE else INDEFINITE_WEIGHT
        weight *= OBLIQUE_WEIGHT if k and fold(words[k - 1].group()) in _PREPOSITIONS else 1.0
        found.append((head, sentence[phrase[0].start() : phrase[-1].end()], weight))
    return found


def referent(pronoun: str, before: Sequence[str], prefix: str) -> tuple[str, int] | None:
    """What ``pronoun`` stands for: (phrase, index in ``before`` of the sentence naming it)
    or None; ``before`` are the sentences before the pronoun's, in order, ``prefix`` its own
    sentence up to it (index ``len(before)``). The chain of sentences still saying the
    pronoun is followed back, then the thing they name most (by head noun, definite
    mentions weighing more; plural for "them", singular else) is read, named as it was
    first introduced, when it weighs ``CLEAR_LEAD`` times the next."""
    said = re.compile(rf"\b{re.escape(pronoun)}\b", re.IGNORECASE)
    start, gap = len(before), 0
    for k in range(len(before) - 1, -1, -1):
        gap = 0 if said.search(before[k]) else gap + 1
        if gap > CHAIN_GAP:
            break
        start = k
    weights: dict[str, float] = {}
    first: dict[str, tuple[str, int]] = {}
    for offset, sentence in enumerate([*before[start:], prefix]):
        for head, text, weight in _mentions(sentence):
            if _plural(head) != (pronoun == "them"):
                continue
            weights[head] = weights.get(head, 0.0) + weight
            first.setdefault(head, (text, start + offset))
    ranked = sorted(weights.values(), reverse=True)
    if not ranked or (len(ranked) > 1 and ranked[0] < CLEAR_LEAD * ranked[1]):
        return None  # no thing stands out: "it" is left unread rather than guessed
    return first[max(weights, key=weights.get)]


def _done_by(words: list[re.Match], position: int, doers: frozenset[str], speaker: str | None = None) -> bool:
    """The verb at ``position`` is a deed, of one of the ``doers`` (folded words of the names
    asked about; any doer when empty) or of an unnamed one ("He bought", "Go and buy"): not
    after a negation, a passive's or copula's verb, a determiner (then it is a noun: "her
    *record* label"), nor after another name ("Fred bought a goose"), nor said in the first
    person by a ``speaker`` who is not one of them, or by no one the text names ("'I'd give
    him a piece of my mind,' said the niece")."""
    k = position - 1
    while k >= 0 and (fold(words[k].group()) in _BETWEEN or _ADVERB.search(fold(words[k].group()))):
        k -= 1
    if k < 0:
        return True
    before = fold(words[k].group())
    if before in _NOT_DONE or before.endswith(("n't", "n’t")) or before in _DETERMINERS:
        return False
    word = _CONTRACTION.sub("", words[k].group())
    if doers and fold(word) in _FIRST_PERSON:  # whoever says it, when it is said who
        return speaker is not None and bool(doers & {fold(part) for part in _words_of(speaker)})
    if not doers or not word[:1].isupper() or fold(word) in _SUBJECT_PRONOUNS:
        return True
    return fold(_POSSESSIVE.sub("", word)) in doers


def object_phrases(
    sentence: str,
    verbs: frozenset[str],
    before: Sequence[str],
    doers: frozenset[str] = frozenset(),
    speaker: str | None = None,
) -> list[ObjectPhrase]:
    """The things the sentence says the ``verbs`` are done to (``verb_forms``) by the
    ``doers`` (``_done_by``; ``speaker``: who says the sentence, if speech): the words
    after the verb ("buy another coal-scuttle" -> "coal-scuttle"), past an indirect
    object ("send him a turkey", "gave Bob a raise") or a particle ("picked up the key");
    a pronoun ("buy it") read as what it stands for in the ``before`` sentences
    (``referent``), whose index is kept; a pronoun nothing before explains, or one that
    stands for nothing ("found it hard to believe", "saw that the ..."), is left out."""
    forms = {form: verb for verb in verbs for form in verb_forms(verb)}
    words = _words(sentence)
    found = []
    for position, word in enumerate(words):
        if fold(word.group()) not in forms or not _done_by(words, position, doers, speaker):
            continue
        after = position + 1
        if after < len(words) and fold(words[after].group()) in _PARTICLES:
            after += 1
        after = _past_indirect_object(words, after)
        if after >= len(words) or not _adjacent(sentence, words, after - 1, after):
            continue
        first = fold(words[after].group())
        if first in PRONOUN_OBJECTS:
            if _stands_for_something(sentence, words, after):
                resolved = referent(first, before, sentence[: word.start()])
                if resolved is not None:
                    text, where = resolved
                    found.append(ObjectPhrase(text, word.start(), where if where < len(before) else None))
            continue
        if first in _DETERMINERS:
            if not _adjacent(sentence, words, after, after + 1):
                continue
            after += 1
        elif first in _SET_PHRASES:
            continue
        phrase = _thing_words(sentence, words, after, after_verb=True)
        counted_only = len(phrase) == 1 and (fold(phrase[0].group()) in _NUMBERS or phrase[0].group().isdigit())
        if phrase and not counted_only and not names_people(phrase[-1].group()):
            found.append(ObjectPhrase(sentence[phrase[0].start() : phrase[-1].end()], word.start()))
    return found


def _adjacent(sentence: str, words: list[re.Match], k: int, following: int) -> bool:
    """Nothing but spaces between word ``k`` and word ``following`` (which exists)."""
    return following < len(words) and not sentence[words[k].end() : words[following].start()].strip()


def _past_indirect_object(words: list[re.Match], k: int) -> int:
    """Past an indirect object followed by the thing: "gave *him* a shilling", "gave *Bob*
    a raise", "sent *the Cratchits* a turkey"; ``k`` when there is none."""
    if k >= len(words):
        return k
    word = fold(words[k].group())
    if word in _INDIRECT:
        skipped = k + 1
    elif words[k].group()[:1].isupper() or (
        word == "the" and words[k + 1 : k + 2][:1] and words[k + 1].group()[:1].isupper()
    ):
        skipped = k + (word == "the")
        while skipped < len(words) and words[skipped].group()[:1].isupper():
            skipped += 1
    else:
        return k
    followed = skipped < len(words) and fold(words[skipped].group()) in _DETERMINERS | _NUMBERS
    return skipped if followed else k


def _stands_for_something(sentence: str, words: list[re.Match], k: int) -> bool:
    """The pronoun at ``k`` is an object standing for a thing: followed by a mark, the end
    or a function word ("buy it, and", "bring it here"); not "found it hard to", "made it
    home"; "that" and "this" only before a mark ("saw that the door" opens a clause)."""
    if k + 1 >= len(words) or sentence[words[k].end() : words[k + 1].start()].strip():
        return True
    if fold(words[k].group()) in {"that", "this"}:
        return False
    return fold(words[k + 1].group()) in FUNCTION_WORDS
