"""Normalising entity names so that surface variants merge into one entity."""

from __future__ import annotations

import re
import unicodedata

_PUNCTUATION = re.compile(r"[\s\.\,\;\:\!\?\"'“”‘’`\(\)\[\]\{\}\-_/\\·•、，。：；！？（）《》「」]+")


def name_key(title: str) -> str:
    """Case-, width-, punctuation- and whitespace-insensitive key of a name.

    "Bob  Cratchit", "BOB CRATCHIT" and "Ｂｏｂ Cratchit" share one key; a trailing
    English possessive is dropped ("Scrooge's" -> "scrooge")."""
    text = unicodedata.normalize("NFKC", title).casefold().strip()
    text = re.sub(r"['’]s$", "", text)
    return _PUNCTUATION.sub(" ", text).strip()
