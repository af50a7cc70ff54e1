"""Normalising entity names so that surface variants merge into one entity."""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

_POSSESSIVE = re.compile(r"['’]s$")
_PUNCTUATION = re.compile(r"[\s\.\,\;\:\!\?\"'“”‘’`\(\)\[\]\{\}\-_/\\·•、，。：；！？（）《》「」]+")


@lru_cache(maxsize=65536)  # extraction keys every mention, and names repeat
def name_key(title: str) -> str:
    """Case-, width-, punctuation- and whitespace-insensitive key of a name.

    "Bob  Cratchit", "BOB CRATCHIT" and "Ｂｏｂ Cratchit" share one key; a trailing
    English possessive is dropped ("Scrooge's" -> "scrooge")."""
    text = unicodedata.normalize("NFKC", title).casefold().strip()
    text = _POSSESSIVE.sub("", text)
    return _PUNCTUATION.sub(" ", text).strip()
