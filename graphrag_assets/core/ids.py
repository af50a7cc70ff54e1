"""Stable content-derived identifiers (never uuid4): the same content gets the same id
on every run, which is what lets incremental runs skip unchanged work."""

from __future__ import annotations

import hashlib


def stable_id(*parts: object) -> str:
    """A 32-hex-digit id from the parts, separated so ("ab", "c") != ("a", "bc")."""
    digest = hashlib.sha256()
    for part in parts:
        encoded = str(part).encode("utf-8")
        digest.update(len(encoded).to_bytes(8, "little"))
        digest.update(encoded)
    return digest.hexdigest()[:32]


def content_hash(data: bytes | str) -> str:
    if isinstance(data, str):
        data = data.encode("utf-8")
    return hashlib.sha256(data).hexdigest()
