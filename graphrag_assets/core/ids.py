"""Stable content-derived identifiers (never uuid4): the same content gets the same id
on every run, which is what lets incremental runs skip unchanged work."""

from __future__ import annotations

import hashlib

import polars as pl


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


def continue_numbers(frame: pl.DataFrame, first_free: dict[str, int]) -> pl.DataFrame:
    """``human_readable_id`` numbered per corpus from the first number no other row of that
    corpus holds, in the frame's order. Sources are indexed in separate runs; numbering
    each batch from 0 would give two text units of a corpus the same short id."""
    offset = pl.col("corpus").replace_strict(first_free, default=0, return_dtype=pl.Int64)
    return frame.with_columns((pl.int_range(pl.len(), dtype=pl.Int64).over("corpus") + offset).alias("human_readable_id"))
