"""What someone did something to: the object of the question's verb, read in the evidence.

"What does Scrooge buy and send to the Cratchits?" asks for the thing bought and sent. The
evidence names it after the verb ("buy *another coal-scuttle*"), or, in a story, more often
by a pronoun ("Go and buy *it*", "I'll send *it* to Bob Cratchit's"): the reader knows
what "it" is from the sentences before. So is it read here: the thing those sentences
speak of most, counted from where the pronoun's chain begins (each sentence still saying
"it" carries the chain back), a definite "the prize turkey" counting more than an
indefinite "a shot" or a thing after a preposition ("in the window"), and people aside
("the boy" is not what is bought). When two things weigh alike, "it" is left unread.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from graphrag_common.lexical import FUNCTION_WORDS, fold, search_terms
from graphrag_common.people import names_people

_ASKS_DOING = re.compile(r"^\s*what\s+(?:do|does|did)\s+(?P<rest>.+?)\W*$", re.IGNORECASE)
# Words joined by a hyphen or an apostrophe are one word ("coal-scuttle", "Cratchit's").
_WORD = re.compile(r"[^\W_]+(?:[-'’][^\W_]+)*")
_POSSESSIVE = re.compile(r"['’]s$")
# "What does X do / mean / become": no thing done to, asked.
_NO_OBJECT = {"do", "mean", "become", "call", "look", "happen", "seem", "think", "feel"}
_ADVERB = re.compile(r"^\w{4,}(?<!p)ly$")  # "quickly", not "reply", "apply", "rely"
_SUBJECT_PRONOUNS = {"he", "she", "they", "it", "i", "you", "we"}
_DEFINITE = {"the", "this", "that", "these", "those", "his", "her", "their", "its", "my", "your", "our"}
_DETERMINERS = _DEFINITE | {"a", "an", "another", "some", "any", "every", "each"}
_NAME_JOINERS = {"of", "the"}  # "the Ghost of Christmas Present"
_INDIRECT = {"him", "her", "them", "me", "us", "you"}  # "send *him* a turkey"
PRONOUN_OBJECTS = {"it", "them", "this", "that"}
INDEFINITE_WEIGHT = 0.5  # a thing just introduced ("a shot") is less often what "it" goes on to mean
# Nor is a thing named after a preposition: the place or means of what is done ("sold *in
# the window*"), not what the sentences are about.
OBLIQUE_WEIGHT = 0.5
_PREPOSITIONS = set(
    """in at on to into onto from with by near under over through like of for upon across behind beside
    beneath between among against along around about toward towards without within""".split()
)
CHAIN_GAP = 4  # sentences without the pronoun after which its chain is taken to have begun
MAX_OBJECT_WORDS = 4
# The past forms a stem does not reach ("bought" is "buy"): common verbs of things done.
_IRREGULAR = {
    past: base
    for base, forms in {
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
        "carry": "carried",
        "show": "shown",
    }.items()
    for past in forms.split()
}


def _stem(word: str) -> str:
    word = fold(_POSSESSIVE.sub("", word))
    return next(iter(search_terms(_IRREGULAR.get(word, word))), word)


def _words(text: str) -> list[re.Match]:
    return list(_WORD.finditer(text))


def _name_end(words: list[str], position: int) -> int:
    """Past a name of capitalised words, perhaps joined ("Ghost of Christmas Present")."""
    while position < len(words):
        joined = fold(words[position]) in _NAME_JOINERS and words[position + 1 : position + 2][:1] != []
        if words[position][:1].isupper() or (joined and words[position + 1][:1].isupper()):
            position += 1
        else:
            break
    return position


def asked_verbs(question: str) -> frozenset[str]:
    """The stems of the verbs whose object "What does/did <subject> <verb> ...?" asks for
    ("What does Scrooge buy and send to ..." -> buy, send); empty when the question asks
    something else ("What does Scrooge do ...", "Who ...")."""
    match = _ASKS_DOING.match(question)
    if match is None:
        return frozenset()
    words = [word.group() for word in _words(match["rest"])]
    position = 1 if words and fold(words[0]) in _DETERMINERS else 0
    if position < len(words) and words[position][:1].isupper():
        position = _name_end(words, position)
    elif position == 1:
        # "the old man give the boy": the verb is the word before the next function word or name.
        end = next(
            (k for k in range(2, len(words)) if fold(words[k]) in FUNCTION_WORDS or words[k][:1].isupper()),
            len(words),
        )
        return frozenset({_stem(words[end - 1])} - _NO_OBJECT) if end > 2 else frozenset()
    elif words and fold(words[0]) in _SUBJECT_PRONOUNS:
        position = 1
    else:
        return frozenset()
    verbs = set()
    for word in words[position:]:
        folded = fold(word)
        if folded in {"and", "or"}:
            continue
        if folded in FUNCTION_WORDS or word[:1].isupper():
            break
        if not _ADVERB.search(folded):  # "quickly buy"
            verbs.add(_stem(word))
    if verbs & _NO_OBJECT:
        return frozenset()
    return frozenset(verbs)


@dataclass(frozen=True)
class ObjectPhrase:
    text: str  # the thing, without its determiner ("prize turkey")
    at: int  # where the verb starts in the sentence
    referent: int | None = None  # the sentence (of those given) that names what a pronoun stands for


def _phrase_after(sentence: str, words: list[re.Match], k: int) -> list[re.Match]:
    """The lower-case words right after word ``k``, up to a function word or a mark
    ("the prize turkey that was" -> prize, turkey)."""
    phrase: list[re.Match] = []
    for following in words[k + 1 : k + 1 + MAX_OBJECT_WORDS]:
        text = following.group()
        gap = sentence[(phrase[-1] if phrase else words[k]).end() : following.start()]
        if gap.strip() or not text[:1].islower() or fold(text) in FUNCTION_WORDS:
            break
        phrase.append(following)
    return phrase


def _mentions(sentence: str) -> list[tuple[str, str, float]]:
    """(head noun, phrase, weight) of each thing the sentence names with a determiner:
    lower-case words after it up to a function word ("the prize turkey that" -> "prize
    turkey"), weighing less when indefinite or after a preposition; people and the
    pro-form "one" ("the big one") aside."""
    found = []
    words = _words(sentence)
    for k, word in enumerate(words):
        determiner = fold(word.group())
        if determiner not in _DETERMINERS:
            continue
        phrase = _phrase_after(sentence, words, k)
        if not phrase:
            continue
        head = fold(_POSSESSIVE.sub("", phrase[-1].group()))
        if head in {"one", "ones"} or names_people(head):
            continue
        text = sentence[phrase[0].start() : phrase[-1].end()]
        weight = 1.0 if determiner in _DEFINITE else INDEFINITE_WEIGHT
        weight *= OBLIQUE_WEIGHT if k and fold(words[k - 1].group()) in _PREPOSITIONS else 1.0
        found.append((head, text, weight))
    return found


def referent(pronoun: str, before: Sequence[str], prefix: str) -> tuple[str, int] | None:
    """What ``pronoun`` stands for: (phrase, index in ``before`` of the sentence naming it)
    or None; ``before`` are the sentences before the pronoun's, in order, ``prefix`` its own
    sentence up to it (index ``len(before)``). The chain of sentences still saying the pronoun is followed back,
    then the thing they name most (by head noun, definite mentions weighing more) wins,
    named as it was first introduced; None when two things weigh alike."""
    said = re.compile(rf"\b{re.escape(pronoun)}\b", re.IGNORECASE)
    start, gap = len(before), 0
    for k in range(len(before) - 1, -1, -1):
        gap = 0 if said.search(before[k]) else gap + 1
        if gap > CHAIN_GAP:
            break
        start = k
    weights: dict[str, float] = {}
    first: dict[str, tuple[str, int]] = {}
    window = [*before[start:], prefix]
    for offset, sentence in enumerate(window):
        for head, text, weight in _mentions(sentence):
            weights[head] = weights.get(head, 0.0) + weight
            first.setdefault(head, (text, start + offset))
    ranked = sorted(weights.values(), reverse=True)
    if not ranked or (len(ranked) > 1 and ranked[0] == ranked[1]):
        return None  # no thing stands out: "it" is left unread rather than guessed
    return first[max(weights, key=weights.get)]


def object_phrases(sentence: str, verbs: frozenset[str], before: Sequence[str]) -> list[ObjectPhrase]:
    """The things the sentence says the ``verbs`` are done to: the words after the verb
    ("buy another coal-scuttle" -> "coal-scuttle"), past an indirect object ("send him a
    turkey"); a pronoun ("buy it") read as what it stands for in the ``before`` sentences
    (``referent``), whose index is kept; a pronoun nothing before explains is left out."""
    words = _words(sentence)
    found = []
    for position, word in enumerate(words):
        if _stem(word.group()) not in verbs:
            continue
        after = position + 1
        if after + 1 < len(words) and fold(words[after].group()) in _INDIRECT:
            after += fold(words[after + 1].group()) in _DETERMINERS
        if after >= len(words) or sentence[words[after - 1].end() : words[after].start()].strip():
            continue
        first = fold(words[after].group())
        if first in PRONOUN_OBJECTS:
            resolved = referent(first, before, sentence[: word.start()])
            if resolved is not None:
                text, where = resolved
                found.append(ObjectPhrase(text, word.start(), where if where < len(before) else None))
            continue
        # "buy *another* coal-scuttle", "buy bread"
        phrase = _phrase_after(sentence, words, after if first in _DETERMINERS else after - 1)
        if phrase and not names_people(phrase[-1].group()):
            found.append(ObjectPhrase(sentence[phrase[0].start() : phrase[-1].end()], word.start()))
    return found
