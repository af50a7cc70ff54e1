"""Offline extraction: per-text-unit entity mentions and same-sentence relationship
evidence, as the records that the graph merge consumes.

Co-occurrence edges over whole text units are built later, in ``core.graph``, among the
entities that survive frequency pruning: storing every pair per unit here would be
quadratic in the noise that pruning removes anyway.

A document with a given title (a title column of a table source, not a file name) makes
that title an entity of each of its text units, even one that never names it again: an
encyclopaedia article rarely repeats its title, yet every sentence is about it, and the
title is what a multi-hop question asks about. The chunker starts such units with the
title line, which is the title's mention and is not read again as text.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter, defaultdict
from collections.abc import Mapping
from dataclasses import dataclass
from itertools import combinations

import polars as pl

from graphrag_common.sentences import split_sentences

from ...configuration import check, default_of
from ..content import GRAPH_LIMIT, WRAPPING_COLUMNS
from .chinese import chinese_mentions, has_chinese
from .english import (
    LONG_DOCUMENT_WORDS,
    Mention,
    capitalised_vocabulary,
    coordinated_common_nouns,
    english_mentions,
    interjections,
    lowercase_vocabulary,
    name_type,
    shared_descriptions,
    written_names,
)
from .names import name_key
from .records import EXTRACTED_ENTITY_COLUMNS, EXTRACTED_RELATIONSHIP_COLUMNS, UNTYPED, majority_type
from .typing_rules import lead_definition_type, qualifier_type, style_suffix_type

MAX_SENTENCE_CHARS = 400
SENTENCES_PER_RECORD = 2
# Text without sentence ends (a "line" of megabytes) would be one sentence per text unit,
# and the pairs of names in a sentence are quadratic in its length: a "sentence" longer
# than any real one (about 900 characters at most in the test corpora) is cut at spaces
# into pieces of a description's length.
LONG_SENTENCE_CHARS = 1000
_PIECE = re.compile(rf"\S.{{0,{MAX_SENTENCE_CHARS - 1}}}(?=\s|$)|\S{{1,{MAX_SENTENCE_CHARS}}}", re.S)
# A full stop after an initial, a title or "c." (circa) does not end a sentence: "directed
# by P. Padmarajan", "Dr. Renn", "Ælfwine (c. 661–679)".
_ABBREVIATION_END = re.compile(
    r"(?:^|[\s(.])(?:[A-Z]|Dr|Mr|Mrs|Ms|St|Mt|Jr|Sr|Prof|Gen|Col|Capt|Lt|Sgt|Rev|Hon|No|Vol|Bros|vs|c|ca|b|d|fl|r)\.[\"'”’)\]]*\s*$"
)
# "Theodred II (Bishop of Elmham)": the name, and a qualifier that says what it is.
_QUALIFIED = re.compile(r"^(?P<name>.+?)\s*\((?P<qualifier>[^()]*)\)\s*$")
_TITLE_PARTS = re.compile(r"[,:]\s")
_COLUMNS = re.compile(r"\S {3,}\S")
_SPACES = re.compile(r"\s+")


def _tidy(sentence: str) -> str:
    sentence = _SPACES.sub(" ", sentence).strip()
    return sentence if len(sentence) <= MAX_SENTENCE_CHARS else sentence[: MAX_SENTENCE_CHARS - 1] + "…"


def _sentences(text: str) -> list[str]:
    # Chinese sentences also split on the full-width comma-free stops handled by
    # split_sentences; newlines inside a paragraph are not sentence ends for prose, but
    # each row of a table of contents or other columns is one.
    sentences: list[str] = []
    last = 0
    for piece in split_sentences(text):
        # A match starts at most 5 characters (an abbreviation and the one before it) before
        # the last piece: searching the whole sentence is quadratic in "Dr. Dr. Dr. ...".
        if sentences and _ABBREVIATION_END.search(sentences[-1], max(len(sentences[-1]) - last - 5, 0)):
            sentences[-1] += piece
        else:
            sentences.append(piece)
        last = len(piece)
    return [piece for sentence in sentences for row in _rows(sentence) for piece in _cut(row) if piece.strip()]


def _cut(row: str) -> list[str]:
    """A row longer than any real sentence in pieces (see ``LONG_SENTENCE_CHARS``)."""
    return _PIECE.findall(row) if len(row) > LONG_SENTENCE_CHARS else [row]


def _rows(sentence: str) -> list[str]:
    """A sentence cut after each line laid out in columns ("STAVE ONE    3")."""
    if "   " not in sentence:
        return [sentence]
    rows, row = [], ""
    for line in sentence.splitlines(keepends=True):
        row += line
        if line.endswith("\n") and _COLUMNS.search(line):
            rows.append(row)
            row = ""
    return [*rows, row]


def mentions_of(
    text: str,
    known_lowercase: set[str] | None = None,
    known_names: tuple[str, ...] = (),
    known_capitalised: set[str] | None = None,
    known_descriptions: set[str] = frozenset(),
) -> tuple[list[str], list[Mention]]:
    sentences = _sentences(text)
    mentions = english_mentions(sentences, known_lowercase, known_names, known_capitalised, known_descriptions)
    if has_chinese(text):
        mentions += chinese_mentions(sentences)
    return sentences, mentions


def split_title(title: str) -> tuple[str, str]:
    """(name, qualifier) of a document title: "Theodred II (Bishop of Elmham)" is the
    name "Theodred II", qualified as a bishop; a title without a parenthesis is all name."""
    match = _QUALIFIED.match(title.strip())
    return (match["name"], match["qualifier"]) if match else (title.strip(), "")


def title_type(title: str, lead: str | None, found: list[str]) -> str:
    """A title's type: its qualifier or style ("(2013 film)", ", Margrave of Tuscany"),
    what the first sentence of its article says (``lead``, None after the first chunk),
    its mentions in the text, the words of its first part ("St Mary's School" of "St
    Mary's School, Shaftesbury"; "Council Minutes" of "Council Minutes, May 2019: ...")."""
    name, qualifier = split_title(title)
    typed = Counter(t for t in found if t not in UNTYPED)
    return (
        qualifier_type(qualifier)
        or style_suffix_type(name)
        or (lead_definition_type(lead) if lead else None)
        or (majority_type(typed) if typed else None)
        or name_type(_TITLE_PARTS.split(name)[0])
        or "OTHER"
    )


def _body(text: str, title: str | None) -> str:
    """The unit's text without the chunker's title line."""
    if title and text.startswith(title) and text[len(title) : len(title) + 1] in ("\n", ""):
        return text[len(title) :].lstrip("\n")
    return text


@dataclass(frozen=True)
class ExtractionSettings:
    # Co-occurrence pairs the text units of one document may add to the graph (``document_pairs``).
    max_document_pairs: int = default_of("GRAPHRAG_MAX_DOCUMENT_PAIRS")

    def __post_init__(self):
        check("GRAPHRAG_MAX_DOCUMENT_PAIRS", self.max_document_pairs)


@dataclass
class OfflineRecords:
    """What offline extraction found in some text units: the entity and relationship
    records, and the documents cut at the limit of what one document may add to the graph
    (``CUT_COLUMNS``: the units it kept and the first it left out)."""

    entities: pl.DataFrame
    relationships: pl.DataFrame
    cut: pl.DataFrame


CUT_COLUMNS = {
    "document_id": pl.String,
    "units_in_graph": pl.Int64,
    "units": pl.Int64,
    "pairs_in_graph": pl.Int64,
    "first_unit_left_out": pl.String,
}


def extract_offline(
    text_units: pl.DataFrame,
    titles: Mapping[str, str] | None = None,
    settings: ExtractionSettings = ExtractionSettings(),
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(extracted entities, extracted relationships) records for the given text units;
    ``titles`` maps a document id to its given title (see the module docstring)."""
    records = offline_records(text_units, titles, settings)
    return records.entities, records.relationships


def offline_records(
    text_units: pl.DataFrame,
    titles: Mapping[str, str] | None = None,
    settings: ExtractionSettings = ExtractionSettings(),
) -> OfflineRecords:
    """The records of the given text units, each document's units read in order until the
    co-occurrence pairs of their names would pass ``settings.max_document_pairs`` (see
    ``document_pairs``): the rest of that document adds nothing to the graph."""
    titles = {
        document: unicodedata.normalize("NFC", title)
        for document, title in (titles or {}).items()
        if title and title.strip()
    }
    vocabularies = _vocabularies(text_units)
    # Without chunk numbers every unit may open its document (its first sentence defines the title).
    has_order = "chunk_index" in text_units.columns
    columns = ["id", "document_id", "corpus", "source_partition", "text", *(["chunk_index"] if has_order else [])]
    units = text_units.select(columns).with_row_index("position")
    # A document's units in reading order, so that what is cut is its end; the records
    # keep the order of the units given.
    in_order = units.sort("document_id", "chunk_index", maintain_order=True) if has_order else units
    found: dict[int, tuple[list[dict], list[dict]]] = {}  # by the unit's position as given
    pairs: Counter[str] = Counter()  # per document, of the units kept
    kept: Counter[str] = Counter()
    cut: dict[str, dict] = {}
    for unit in in_order.iter_rows(named=True):
        document = unit["document_id"]
        if document not in cut:
            records = _unit_records(unit, titles.get(document), vocabularies[document], has_order)
            added = document_pairs(len(records[0]))
            if pairs[document] + added <= settings.max_document_pairs:
                pairs[document] += added
                kept[document] += 1
                found[unit["position"]] = records
                continue
            cut[document] = {"document_id": document, "units": kept[document], "first_unit_left_out": unit["id"]}
        cut[document]["units"] += 1
    cuts = [row | {"units_in_graph": kept[d], "pairs_in_graph": pairs[d]} for d, row in cut.items()]
    in_given_order = [found[position] for position in sorted(found)]
    return OfflineRecords(
        pl.DataFrame([row for entities, _ in in_given_order for row in entities], schema=EXTRACTED_ENTITY_COLUMNS),
        pl.DataFrame(
            [row for _, relationships in in_given_order for row in relationships], schema=EXTRACTED_RELATIONSHIP_COLUMNS
        ),
        pl.DataFrame(cuts, schema=CUT_COLUMNS),
    )


def document_pairs(names: int) -> int:
    """What a text unit naming ``names`` entities may add to the graph: the graph relates
    the names of a text unit pairwise (co-occurrence), and Leiden's work grows with those
    relationships, so a document's bound counts its units' pairs."""
    return names * (names - 1) // 2


Vocabulary = tuple[set[str], set[str] | None, set[str]]


def _vocabularies(text_units: pl.DataFrame) -> dict[str, Vocabulary]:
    """document id -> (its lower-case words, the words it capitalises inside a sentence,
    the capitalised phrases that are no names). A capitalised word is a name only if its
    document never uses it in lower case and, in a long document, capitalises it inside a
    sentence somewhere, and is no description several of its names share, no interjection
    ("God bless us!") and no word listed beside a common noun ("the Past, the Present")."""
    ordered = text_units.sort("chunk_index") if "chunk_index" in text_units.columns else text_units
    return {
        row["document_id"]: _vocabulary(text)
        for row in ordered.group_by("document_id", maintain_order=True).agg("text").iter_rows(named=True)
        if (text := document_text(row["text"]))
    }


OVERLAP_PROBE = 16  # characters of a text unit's start looked for in the end of the one before


def document_text(units: list[str]) -> str:
    """A document's text from its text units in order, each unit's overlap with the one
    before left out: the document-wide counts of the vocabularies (how often a word is
    capitalised, how often a phrase opens an exclamation) count each passage once, not
    twice where chunks overlap."""
    text = ""
    for unit in units:
        text = _joined(text, unit) if text else unit
    return text


def _joined(text: str, unit: str) -> str:
    """The text with the unit after it, less the longest end of the text the unit starts with."""
    probe = unit[:OVERLAP_PROBE]
    start = text.find(probe, max(len(text) - len(unit), 0))
    while start >= 0:
        if unit.startswith(text[start:]):
            return text + unit[len(text) - start :]
        start = text.find(probe, start + 1)
    return f"{text} {unit}"


def _vocabulary(text: str) -> Vocabulary:
    lowercase = lowercase_vocabulary(text)
    if len(text.split()) < LONG_DOCUMENT_WORDS:
        return lowercase, None, set()  # a shorter document's absences are no evidence
    # A line break is a line break however the file ends its lines (Project Gutenberg's
    # end theirs in "\r\n"): the patterns that read words inside a sentence read "\n".
    text = text.replace("\r\n", "\n")
    names = written_names(text)
    capitalised = capitalised_vocabulary(text, names)
    not_names = (
        shared_descriptions(text, capitalised, names)
        | interjections(text, capitalised, lowercase)
        | coordinated_common_nouns(text, capitalised, lowercase)
    )
    return lowercase, capitalised, not_names


def _unit_records(
    unit: dict, given: str | None, vocabulary: Vocabulary, has_order: bool
) -> tuple[list[dict], list[dict]]:
    """The entity records (one per name) and relationship records of one text unit;
    ``given``: its document's given title."""
    name = split_title(given)[0] if given else None
    text = _body(unicodedata.normalize("NFC", unit["text"]), given)
    lowercase, capitalised, descriptions = vocabulary
    sentences, mentions = mentions_of(text, lowercase, (name,) if name else (), capitalised, descriptions)
    tidy = [_tidy(s) for s in sentences]
    by_key: dict[str, list[Mention]] = defaultdict(list)
    for mention in mentions:
        key = name_key(mention.title)
        if key:
            by_key[key].append(mention)
    base = {"text_unit_id": unit["id"], "corpus": unit["corpus"], "source_partition": unit["source_partition"]}
    entity_rows: list[dict] = []
    keys_by_sentence: dict[int, set[str]] = defaultdict(set)
    title_key = name_key(name) if name else ""
    if title_key:
        found = by_key.pop(title_key, [])
        # The article's opening defines its subject ("... is a song"); its first
        # sentence may be just the quoted title.
        lead = " ".join(sentences[:2]) if sentences and (not has_order or unit["chunk_index"] == 0) else None
        entity_rows.append(
            base
            | {
                "name_key": title_key,
                "title": name,
                "type": title_type(given, lead, [m.type for m in found]),
                "description": " ".join(tidy[:SENTENCES_PER_RECORD]),
                "mentions": 1 + len(found),
                "document_title": True,
            }
        )
        # Every sentence of the article is about its title: they all relate it.
        for i in range(len(sentences)):
            keys_by_sentence[i].add(title_key)
    for key, found in by_key.items():
        evidence = list(dict.fromkeys(m.sentence_index for m in found))
        entity_rows.append(base | _name_record(key, found, evidence, tidy))
        for i in evidence:
            keys_by_sentence[i].add(key)
    return entity_rows, [base | row for row in _sentence_pairs(keys_by_sentence, tidy)]


def _name_record(key: str, found: list[Mention], evidence: list[int], tidy: list[str]) -> dict:
    """The record of a name of a text unit from its mentions there and the sentences
    they are in (``evidence``, in order)."""
    surface = Counter(m.title for m in found)
    title = sorted(surface.items(), key=lambda item: (-item[1], item[0]))[0][0]
    return {
        "name_key": key,
        "title": title,
        "type": majority_type(Counter(m.type for m in found)),
        "description": " ".join(tidy[i] for i in evidence[:SENTENCES_PER_RECORD]),
        "mentions": len(found),
        "document_title": False,
    }


def _sentence_pairs(keys_by_sentence: dict[int, set[str]], tidy: list[str]) -> list[dict]:
    """A relationship record per pair of names sharing a sentence of the unit."""
    pair_sentences: dict[tuple[str, str], list[int]] = defaultdict(list)
    for index, keys in keys_by_sentence.items():
        for pair in combinations(sorted(keys), 2):
            pair_sentences[pair].append(index)
    return [
        {
            "source_key": source,
            "target_key": target,
            "description": " ".join(tidy[i] for i in sorted(indexes)[:SENTENCES_PER_RECORD]),
            "weight": float(len(indexes)),  # same-sentence co-occurrences
        }
        for (source, target), indexes in pair_sentences.items()
    ]


def graph_limit_rows(cut: pl.DataFrame, documents: pl.DataFrame, text_units: pl.DataFrame) -> pl.DataFrame:
    """One ``document_wrapping`` row (kind ``graph_limit``) per document of ``cut``
    (``offline_records``): its text from the first text unit left out of the graph to its
    end, which stays chunked and searchable."""
    if cut.is_empty():
        return pl.DataFrame(schema=WRAPPING_COLUMNS)
    first_left_out = dict(zip(text_units["id"], text_units["text"]))
    rows = []
    for row in cut.join(documents, left_on="document_id", right_on="id").iter_rows(named=True):
        unit_text = first_left_out[row["first_unit_left_out"]]
        # A unit is the document's text as chunked (without what is not content, or with a
        # title line): found by its opening, else the cut is said to start at the beginning.
        start = max(row["text"].find(unit_text.strip()[:60]), 0)
        rows.append(
            {
                "corpus": row["corpus"],
                "source_partition": row["source_partition"],
                "document_id": row["document_id"],
                "kind": GRAPH_LIMIT,
                "start": start,
                "end": len(row["text"]),
                "characters": len(row["text"]) - start,
                "excerpt": " ".join(unit_text.split())[:120],
            }
        )
    return pl.DataFrame(rows, schema=WRAPPING_COLUMNS)
