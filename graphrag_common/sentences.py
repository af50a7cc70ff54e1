"""Sentence splitting shared by chunking, offline extraction and the extractive answers."""

from __future__ import annotations

import re

# Sentence ends: Latin punctuation followed by space/newline, CJK full stops, blank lines.
_SENTENCE_END = re.compile(r"(?<=[.!?])[\"'”’)\]]*\s+|(?<=[。！？；])|\n\s*\n")


def split_sentences(text: str) -> list[str]:
    """Sentences with their trailing whitespace, so that ''.join(result) == text."""
    pieces, start = [], 0
    for match in _SENTENCE_END.finditer(text):
        end = match.end()
        if end > start:
            pieces.append(text[start:end])
            start = end
    if start < len(text):
        pieces.append(text[start:])
    return pieces


# A title, an initial or a biography's "b." / "d." / "c." before a full stop ends no
# sentence ("Mrs. Fezziwig", "J. Strauss", "(1913 – d. March 3, 2003)"); a possessive's
# "s" does ("an old sweetheart of Scrooge's.").
_ABBREVIATION_END = re.compile(
    r"(?:\b(?:Mr|Mrs|Ms|Dr|St|Sr|Jr|Prof|Rev|Gen|Col|Capt|Lt|Sgt|ca|vs)|(?<!['’])\b[A-Za-z])\.\s*$"
)
_PARAGRAPH_END = re.compile(r"\n\s*\n\s*$")


def reading_sentences(text: str) -> list[str]:
    """Sentences as a reader takes them: ``split_sentences`` with a piece that goes on in
    lower case joined to the one before ("'Bah!' said Scrooge.": the quotation and who
    said it), and a title or initial kept with the name it begins. Answers quote these;
    chunking and extraction keep ``split_sentences``, whose pieces their stored text
    unit ids and fingerprints rest on."""
    joined: list[str] = []
    for piece in split_sentences(text):
        first = piece.lstrip(" \"'“‘(")[:1]
        ended = not joined or _PARAGRAPH_END.search(joined[-1])
        if not ended and (first.islower() or _ABBREVIATION_END.search(joined[-1])):
            joined[-1] += piece
        else:
            joined.append(piece)
    return joined
