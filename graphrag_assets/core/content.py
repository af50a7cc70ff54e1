"""Content, not wrapping: the parts of a document's text that are about the document, not
its content, found so that extraction, reports and retrieval never see them.

A file as published often carries text around and between its content: an e-book's
distributor header and licence, the volunteers who produced it, a table of contents or
list of illustrations (whose entries are fragments of captions: "restless haste", "plump
sister"), illustration markers, an end mark, page numbers and running heads. Read as
prose, each becomes entities, relationships and context that crowd out the story.

``wrapping_spans`` finds them by their form, never by the words of one book: distributor
markers, lines ending in page references, bracketed illustration markers, a transcriber's
note, a closing "THE END", and short lines repeated on their own as page furniture.
``content_text`` is the text with those spans cut out (each cut leaves a paragraph break,
so no sentence runs into another). ``documents`` keeps the file as read; the spans are
recorded per document (table ``document_wrapping``) so a user sees what was left out,
and ``GRAPHRAG_KEEP_WRAPPING`` keeps everything.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

import polars as pl

WRAPPING_COLUMNS = {
    "corpus": pl.String,
    "source_partition": pl.String,
    "document_id": pl.String,
    "kind": pl.String,
    "start": pl.Int64,
    "end": pl.Int64,
    "characters": pl.Int64,
    "excerpt": pl.String,
}
# The kind of the rows offline extraction adds: a document's text past the limit of what one
# document may add to the graph (GRAPHRAG_MAX_DOCUMENT_PAIRS), chunked and searchable still.
GRAPH_LIMIT = "graph_limit"

# Project Gutenberg's standard markers (``*** START OF THE PROJECT GUTENBERG EBOOK X ***``,
# with THIS and older spellings); what precedes the start is the header, what follows the
# end is the licence.
_DISTRIBUTOR_START = re.compile(r"^\*{3}\s*START OF (?:THE|THIS) PROJECT GUTENBERG E-?BOOK.*$", re.I | re.M)
_DISTRIBUTOR_END = re.compile(r"^\*{3}\s*END OF (?:THE|THIS) PROJECT GUTENBERG E-?BOOK.*$", re.I | re.M)
# The producers' credit that follows the start marker: "Produced by ...", "Transcribed by ...".
_CREDIT = re.compile(r"\A\s*(?:(?:E-?text )?(?:produced|prepared|transcribed|digiti[sz]ed) by\b)", re.I)
# A bracketed illustration marker, with or without a caption (which may span lines).
_ILLUSTRATION = re.compile(r"\[(?:Illustration|Picture|Image|Figure)\b[^\]]*\]", re.I)
# A transcriber's note: a boxed one (+---+ lines around it) or a paragraph.
_TRANSCRIBER_BOX = re.compile(r"^\+-{3,}\+\n(?:\|.*\|\n)+\+-{3,}\+$", re.M)
_TRANSCRIBER_NOTE = re.compile(r"^\s*\[?Transcriber'?s? [Nn]otes?:?.*?(?:\n\s*\n|\Z)", re.S | re.M)
# A line ending in a page reference, as in a table of contents or list of illustrations:
# two spaces or more, then a page number, a range, a roman numeral or "Frontispiece".
_PAGE_REFERENCE = re.compile(r"\s*\S.*?\s{2,}(?:\d{1,4}(?:-\d{1,4})?|[ivxlc]{1,7}|_?frontispiece_?)\s*$", re.I)
_LIST_HEADING = re.compile(
    r"^\s*(?:table of )?(?:contents|list of (?:\w+ )?(?:illustrations|plates|figures|maps)|illustrations)\.?\s*$", re.I
)
# A publisher's imprint in the front matter: printing history, ISBN, rights.
_IMPRINT = re.compile(
    r"\bISBN\b|\b(?:first )?published (?:in |by )?\d{4}\b|\bprinted in\b|\breprinted\b|\ball rights reserved\b|"
    r"\bcopyright\b|©",
    re.I,
)
_RIGHTS = re.compile(r"\bISBN\b|\ball rights reserved\b|©", re.I)
FRONT_MATTER_SHARE = 0.1  # the imprint is looked for in this first share of the content
BOOK_CHARACTERS = 20_000
_PAGE_NUMBER = re.compile(r"\[?(?:page )?\d{1,4}\]?|-\s*\d{1,4}\s*-", re.I)
_END_MARK = re.compile(r"^\s*(?:the end|end|finis)\.?\s*$", re.I)
PAGE_LIST_MIN_ENTRIES = 3
PAGE_LIST_MAX_GAP_LINES = 15  # an entry's caption may run over several lines without a number
FURNITURE_MIN_REPEATS = 5
FURNITURE_MAX_CHARACTERS = 60


@dataclass(frozen=True)
class Wrapping:
    kind: str  # distributor_header, distributor_licence, credits, contents, illustration, ...
    start: int  # character offsets in the document's text
    end: int


def wrapping_spans(text: str) -> list[Wrapping]:
    """The spans of ``text`` that are not its content, sorted and not overlapping."""
    spans: list[Wrapping] = []
    start = _DISTRIBUTOR_START.search(text)
    end = _DISTRIBUTOR_END.search(text, start.end() if start else 0)
    body_start, body_end = 0, len(text)
    if start:
        spans.append(Wrapping("distributor_header", 0, start.end()))
        body_start = start.end()
        credit = _first_paragraph(text, body_start)
        if credit and _CREDIT.match(text[credit[0] : credit[1]]):
            spans.append(Wrapping("credits", credit[0], credit[1]))
    if end:
        spans.append(Wrapping("distributor_licence", end.start(), len(text)))
        body_end = end.start()
    body = text[:body_end]
    spans += [Wrapping("illustration", m.start(), m.end()) for m in _ILLUSTRATION.finditer(body, body_start)]
    spans += [Wrapping("transcriber_note", m.start(), m.end()) for m in _TRANSCRIBER_BOX.finditer(body, body_start)]
    spans += [Wrapping("transcriber_note", m.start(), m.end()) for m in _TRANSCRIBER_NOTE.finditer(body, body_start)]
    spans += _imprint(body, body_start)
    lines = _lines(body, body_start)
    book = len(body) - body_start >= BOOK_CHARACTERS
    front_end = body_start + int((len(body) - body_start) * FRONT_MATTER_SHARE) if book else body_start
    spans += _page_lists(lines, front_end)
    spans += _end_mark(lines)
    if book:  # in a short text, a number or a repeated line on its own is content
        spans += _page_furniture(lines)
    return _merged(spans)


def content_text(text: str, spans: list[Wrapping]) -> str:
    """``text`` without ``spans``; each cut leaves a paragraph break."""
    if not spans:
        return text
    pieces, at = [], 0
    for span in spans:
        pieces.append(text[at : span.start])
        at = span.end
    pieces.append(text[at:])
    return "\n\n".join(piece for piece in pieces if piece.strip())


def wrapping_by_document(documents: pl.DataFrame) -> dict[str, list[Wrapping]]:
    """document id -> the spans of its text that are not content."""
    return {document["id"]: wrapping_spans(document["text"]) for document in documents.iter_rows(named=True)}


def wrapping_rows(documents: pl.DataFrame, wrapping: dict[str, list[Wrapping]]) -> pl.DataFrame:
    """One ``document_wrapping`` row per span left out of each document (``wrapping``:
    ``wrapping_by_document`` of them)."""
    rows = [
        {
            "corpus": document["corpus"],
            "source_partition": document["source_partition"],
            "document_id": document["id"],
            "kind": span.kind,
            "start": span.start,
            "end": span.end,
            "characters": span.end - span.start,
            "excerpt": " ".join(document["text"][span.start : span.end].split())[:120],
        }
        for document in documents.iter_rows(named=True)
        for span in wrapping[document["id"]]
    ]
    return pl.DataFrame(rows, schema=WRAPPING_COLUMNS)


def _first_paragraph(text: str, at: int) -> tuple[int, int] | None:
    match = re.compile(r"\s*(\S.*?)(?:\n\s*\n|\Z)", re.S).match(text, at)
    return (match.start(1), match.end(1)) if match else None


def _lines(text: str, start: int) -> list[tuple[int, int, str]]:
    """(start, end, line) of every line of ``text`` from ``start``."""
    lines, at = [], start
    for line in text[start:].split("\n"):
        lines.append((at, at + len(line), line))
        at += len(line) + 1
    return lines


def _page_lists(lines: list[tuple[int, int, str]], front_end: int) -> list[Wrapping]:
    """Tables of contents and lists of illustrations: runs of lines ending in page
    references, no more than a few lines apart, under a heading (CONTENTS, LIST OF
    ILLUSTRATIONS) or in a book's front matter (before ``front_end``); a table of figures
    elsewhere is content."""
    spans, run = [], []
    for index, (_, _, line) in enumerate(lines):
        if _PAGE_REFERENCE.match(line):
            if run and index - run[-1] > PAGE_LIST_MAX_GAP_LINES:
                spans += _page_list(lines, run, front_end)
                run = []
            run.append(index)
    spans += _page_list(lines, run, front_end)
    return spans


def _page_list(lines: list[tuple[int, int, str]], run: list[int], front_end: int) -> list[Wrapping]:
    if len(run) < PAGE_LIST_MIN_ENTRIES:
        return []
    # The list's heading, within a few lines above its first entry.
    heading = next((i for i in range(max(0, run[0] - 4), run[0]) if _LIST_HEADING.match(lines[i][2])), None)
    if heading is None and lines[run[0]][0] >= front_end:
        return []
    first = run[0] if heading is None else heading
    return [Wrapping("contents", lines[first][0], lines[run[-1]][1])]


def _imprint(body: str, start: int) -> list[Wrapping]:
    """Paragraphs of a book's front matter that are its publisher's imprint: in capitals
    (FIRST PUBLISHED 1915), or naming an ISBN or rights. Only in a long text: in an article,
    "first published in 1843" is content."""
    if len(body) - start < BOOK_CHARACTERS:
        return []
    front = body[: start + int((len(body) - start) * FRONT_MATTER_SHARE)]
    spans = []
    for match in re.finditer(r"\S[^\n]*(?:\n[ \t]*\S[^\n]*)*", front):
        paragraph = match.group(0)
        if match.start() < start or match.end() == len(front) or len(paragraph) > 400:
            continue
        if _IMPRINT.search(paragraph) and (paragraph.upper() == paragraph or _RIGHTS.search(paragraph)):
            spans.append(Wrapping("imprint", match.start(), match.end()))
    return spans


def _end_mark(lines: list[tuple[int, int, str]]) -> list[Wrapping]:
    """A closing "THE END" (or "FINIS") with nothing but blank lines after it."""
    for start, end, line in reversed(lines):
        if not line.strip():
            continue
        return [Wrapping("end_mark", start, end)] if _END_MARK.match(line) else []
    return []


def _page_furniture(lines: list[tuple[int, int, str]]) -> list[Wrapping]:
    """Lines standing alone between blank lines that are page numbers, or short lines
    repeated many times (running heads)."""
    alone = [
        (start, end, line.strip())
        for i, (start, end, line) in enumerate(lines)
        if line.strip()
        and (i == 0 or not lines[i - 1][2].strip())
        and (i == len(lines) - 1 or not lines[i + 1][2].strip())
    ]
    alone = [(start, end, line) for start, end, line in alone if not _ILLUSTRATION.fullmatch(line)]
    repeats = Counter(line for _, _, line in alone if len(line) <= FURNITURE_MAX_CHARACTERS)
    return [
        Wrapping("page_furniture", start, end)
        for start, end, line in alone
        if _PAGE_NUMBER.fullmatch(line) or repeats[line] >= FURNITURE_MIN_REPEATS
    ]


def _merged(spans: list[Wrapping]) -> list[Wrapping]:
    """Sorted, with overlapping spans joined (the first kind named)."""
    merged: list[Wrapping] = []
    for span in sorted(spans, key=lambda s: (s.start, -s.end)):
        if merged and span.start <= merged[-1].end:
            last = merged[-1]
            merged[-1] = Wrapping(last.kind, last.start, max(last.end, span.end))
        else:
            merged.append(span)
    return merged
