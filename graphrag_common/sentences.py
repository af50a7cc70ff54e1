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
