"""Offline answers: the most relevant evidence sentences, quoted with their citations.

Honestly labelled: the answer starts with ``EXTRACTIVE_LABEL`` and says which rows the
sentences come from, so nobody mistakes it for a model's synthesis."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache, lru_cache, partial
from types import MappingProxyType

from graphrag_common.lexical import has_cjk
from graphrag_common.sentences import reading_sentences

from .answer_span import SPEECH_VERBS, state_answers
from .relevance import RelevanceScorer, term_set
from .result import EXTRACTIVE_LABEL, NO_DATA_ANSWER


@dataclass(frozen=True)
class Evidence:
    text: str
    citation: str  # e.g. "Sources (12)" or "Reports (3)"
    # Reads the passage before this one in its document, (human_readable_id, text) or None,
    # only to know what a pronoun at this one's start stands for ("Go and buy *it*": the
    # turkey named a passage earlier); called only when an answer needs it.
    before: Callable[[], tuple[int, str] | None] | None = None


def source_evidence(units, passage_before: Callable[[str], tuple[int, str] | None] | None = None) -> list[Evidence]:
    """Each text unit of a context (a frame with ``text`` and ``human_readable_id``, and
    ``id`` to find the unit before it with ``passage_before``: ``IndexReader.passage_before``)
    as evidence cited by its number."""
    return [
        Evidence(
            unit["text"],
            f"Sources ({unit['human_readable_id']})",
            partial(passage_before, unit["id"]) if passage_before and unit.get("id") else None,
        )
        for unit in units.iter_rows(named=True)
    ]


def _sentences_before(item: Evidence) -> tuple[tuple[str, ...], str]:
    """The quotable sentences of the passage before ``item`` that ``item`` does not repeat
    (text units overlap), and that passage's citation; none when there is no such passage."""
    before = item.before() if item.before else None
    if before is None:
        return (), ""
    text = _clean(item.text)
    return tuple(s for s in _quotable_sentences(before[1]) if s not in text), f"Sources ({before[0]})"


def _clean(sentence: str) -> str:
    sentence = re.sub(r"\s*\[Data:[^\]]*\]", "", sentence)
    return re.sub(r"\s+", " ", sentence).strip()


MIN_SENTENCE_CHARS = 20
# A speaker's name: capitalised words, perhaps after a title ("Mrs. Cratchit"), not a
# possessive ("said Scrooge's nephew" is the nephew).
_NAME = r"(?:(?:Mr|Mrs|Ms|Dr)\.\s+)?[A-Z][\w-]*(?:\s+[A-Z][\w-]*)*(?!['’\w-])"


@lru_cache(maxsize=1024)  # ~5 MB of text units at most
def _quotable_sentences(text: str) -> tuple[str, ...]:
    """The text's sentences that can be quoted, cleaned. Cached: DRIFT's follow-up searches
    and the bridges quote the same text units again and again."""
    quotable: list[str] = []
    paragraph_ended = True
    for piece in reading_sentences(text):
        sentence = _clean(piece)
        if len(sentence) >= MIN_SENTENCE_CHARS and not sentence.startswith("#"):
            quotable.append(sentence)
        elif sentence and quotable and not paragraph_ended:
            # Too short to quote alone ("'Humbug!'"), it goes on with its paragraph's sentence.
            quotable[-1] = f"{quotable[-1]} {sentence}"
        paragraph_ended = re.search(r"\n\s*\n\s*$", piece) is not None
    return tuple(quotable)


def _candidates(evidence: list[Evidence]) -> list[tuple[str, str]]:
    """(sentence, citation) of every quotable sentence of the evidence, in order; less the
    pieces that start in lower case and are part of another sentence: a text unit cut
    mid-sentence begins with the tail of a sentence its neighbour holds whole."""
    found = [(sentence, item.citation) for item in evidence for sentence in _quotable_sentences(item.text)]
    tails = {sentence for sentence, _ in found if sentence[:1].islower()}
    if not tails:
        return found
    whole = [sentence for sentence, _ in found if sentence not in tails]
    cut = {tail for tail in tails if any(tail in sentence for sentence in whole)}
    return [(sentence, citation) for sentence, citation in found if sentence not in cut]


PAIR_SHARE = 0.85  # two sentences read together cover more, and are discounted for it
SPEAKER_SHARE = 0.85  # a sentence of speech read with who speaks it, discounted alike

_SPEAKER = re.compile(rf"\b(?:{SPEECH_VERBS})\s+(?:the\s+)?({_NAME})|(?<=[,'’\"”]\s)({_NAME})\s+(?:{SPEECH_VERBS})\b")


@lru_cache(maxsize=1024)
def _speakers(text: str) -> dict[str, str]:
    """Sentence -> who speaks it, for the sentences of a paragraph of speech with one named
    speaker, including those that do not name them: "'A merrier Christmas, Bob! I'll raise
    your salary ...'" is Scrooge's when its paragraph says "said Scrooge"."""
    spoken: dict[str, str] = {}
    for paragraph in re.split(r"\n\s*\n", text):
        if not re.search(r"['‘\"“]", paragraph):
            continue
        names = {next(name for name in match.groups() if name) for match in _SPEAKER.finditer(paragraph)}
        if len(names) == 1:
            (name,) = names
            spoken.update((s, name) for s in _quotable_sentences(paragraph))
    return spoken


def best_sentences(
    candidates: list[tuple[str, str]],
    scorer: RelevanceScorer,
    limit: int = 6,
    speakers: Mapping[str, str] = MappingProxyType({}),
) -> list[tuple[str, str, int]]:
    """(sentence, citation, score) of the most relevant distinct sentences, best first. A
    sentence and the next of its passage are quoted together when together they cover the
    question better ("... this domestic ball broke up. Mr. and Mrs. Fezziwig took their
    stations ..."): a scene often says who in one sentence and what in the next. A sentence
    of speech is read with who speaks it (``speakers``, see ``_speakers``)."""
    scored, seen = [], set()

    def read(sentence: str) -> frozenset[str]:
        return term_set(sentence) | term_set(speakers[sentence]) if sentence in speakers else term_set(sentence)

    for order, (sentence, citation) in enumerate(candidates):
        if sentence in seen:
            continue
        seen.add(sentence)
        own = scorer.score(sentence)
        if sentence in speakers:
            own = max(own, round(SPEAKER_SHARE * scorer.score_terms(read(sentence))))
        following = candidates[order + 1] if order + 1 < len(candidates) else None
        if following is not None and following[1] == citation:
            together = round(PAIR_SHARE * scorer.score_terms(read(sentence) | read(following[0])))
            if together > max(own, scorer.score(following[0])):
                scored.append((together, -order, (sentence, following[0]), citation))
                continue
        scored.append((own, -order, (sentence,), citation))
    scored.sort(reverse=True)
    picked, quoted = [], set()
    for score, _, parts, citation in scored:
        if score <= 0 or len(picked) == limit:
            break
        if not quoted.intersection(parts):
            quoted.update(parts)
            picked.append((" ".join(parts), citation, score))
    return picked


MAX_BRIDGES = 3


def follow_bridges(
    question: str, evidence: list[Evidence], picked: list[tuple[str, str, int]], graph, name_scores=None
) -> list[tuple[str, str, str]]:
    """(bridge name, sentence, citation): the second hop of a multi-hop question. The best
    sentences name things the question does not ("Blue Harbour is a film directed by Lucia
    Ferro"); for each such name, the sentence about it that best covers the rest of the
    question ("Lucia Ferro was born in Turin"), which on its own shares too little with the
    question to be picked. ``graph`` is the index's ``MentionGraph``: names are matched as
    whole words, as for local search; ``name_scores`` (the walk's score of each name, when
    there was one) orders the candidate names, else the most specific come first."""
    asked = set(graph.mentions_in(question))
    bridges: dict[int, str] = {}
    for sentence, _, _ in picked[: MAX_BRIDGES + 1]:
        for position, surface in graph.mentions_in(sentence).items():
            # Proper names only (lower-case noun phrases are topics, not hops).
            if position not in asked and (surface[:1].isupper() or has_cjk(surface[:1])):
                bridges.setdefault(position, surface)
    # The names the walk from the question reached most for their number of text units (a
    # name in few text units is a hop, one in many, such as a nationality, a topic);
    # without a walk, the most specific.
    specificity = graph.units_per_name
    order = (lambda p: -name_scores[p] / specificity[p]) if name_scores is not None else (lambda p: specificity[p])
    bridges = dict(sorted(bridges.items(), key=lambda item: order(item[0]))[:MAX_BRIDGES])
    if not bridges:
        return []
    quoted = [sentence for sentence, _, _ in picked]  # a quote may be two sentences
    used = {s for s, _ in _candidates(evidence) if any(s in quote for quote in quoted)}
    candidates = [(s, c) for s, c in dict.fromkeys(_candidates(evidence)) if s not in used]
    # Only sentences that spell a bridge's name can mention it: a cheap test first.
    spelled = [(s, c) for s, c in candidates if any(surface.casefold() in s.casefold() for surface in bridges.values())]
    mentions = [set(graph.mentions_in(s)) for s, _ in spelled]
    scorer = RelevanceScorer(question, [s for s, _ in candidates] or [question])
    followed = []
    for position, surface in bridges.items():
        # Coverage may be 0 ("born" asked as "birth"): the first sentence about the name,
        # in ranking order, then says what it is.
        about = [
            (scorer.coverage(s), -order, s, c)
            for order, ((s, c), named) in enumerate(zip(spelled, mentions))
            if position in named and s not in used
        ]
        best = max(about, default=None)
        if best is not None:
            used.add(best[2])
            followed.append((surface, best[2], best[3]))
    return followed


def compose(
    question: str,
    evidence: list[Evidence],
    limit: int = 6,
    lead: str = "",
    graph=None,
    name_scores=None,
    overview: list[Evidence] = (),
) -> str:
    """The extractive answer: the phrase that answers, when the question asks for one, then
    the best sentences and (with the index's mention graph) the sentences that follow the
    names they mention to the second hop. A question about the whole ("What are the top
    themes?") that no sentence covers is answered by the first sentence of each
    ``overview`` item (the reports in the context), or without reports of each evidence
    item, not refused: the evidence was retrieved for it, so it is what the index has."""
    candidates = _candidates(evidence)
    scorer = RelevanceScorer(question, [sentence for sentence, _ in candidates] or [question])
    speakers = {sentence: name for item in evidence for sentence, name in _speakers(item.text).items()}
    picked = best_sentences(candidates, scorer, limit, speakers)
    if not picked:
        if not scorer.generic:
            return NO_DATA_ANSWER
        told = (
            "the reports of the communities most related to it say" if overview else "the passages found for it begin"
        )
        return _overview(overview or evidence, limit, lead, told)
    lines = [EXTRACTIVE_LABEL]
    names = {"type_of": graph.type_of, "known": graph.knows, "prevalence": graph.prevalence} if graph else {}
    names["headings"] = _headings(evidence)
    by_citation = {item.citation: item for item in evidence}
    names["preceding"] = cache(lambda citation: _sentences_before(by_citation[citation]))
    names["speakers"] = speakers
    lines += [statement.line() for statement in state_answers(question, candidates, scorer, **names)]
    if lead:
        lines.append(lead)
    lines += [f"- {sentence} [Data: {citation}]" for sentence, citation, _ in picked]
    if graph is not None:
        lines += [
            f"- Following {name}: {sentence} [Data: {citation}]"
            for name, sentence, citation in follow_bridges(question, evidence, picked, graph, name_scores)
        ]
    return "\n".join(lines)


_HEADING = re.compile(r"^\s*([^\n.!?]{2,80}?)\s*\n\s*\n")


def _headings(evidence: list[Evidence]) -> dict[str, str]:
    """The title line of each passage that opens with one (an article's title): too short
    to be quoted, it still says whom the passage is about."""
    return {item.citation: match.group(1) for item in evidence if (match := _HEADING.match(item.text))}


def _overview(items: list[Evidence], limit: int, lead: str, told: str) -> str:
    # A passage cut mid-sentence opens with the tail of one ("teach me, let me profit by
    # it."): its first sentence that starts as a sentence does.
    firsts = [(next((s for s in _quotable_sentences(item.text) if not s[:1].islower()), None), item) for item in items]
    opening = [(sentence, item.citation) for sentence, item in firsts if sentence]
    if not opening:
        return NO_DATA_ANSWER
    lines = [
        EXTRACTIVE_LABEL,
        *([lead] if lead else []),
        f"No sentence of the sources covers the question; {told}:",
    ]
    return "\n".join(lines + [f"- {sentence} [Data: {citation}]" for sentence, citation in opening[:limit]])
