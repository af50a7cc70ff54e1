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


def keep_short_ids(frame: pl.DataFrame, previous: pl.DataFrame) -> pl.DataFrame:
    """``human_readable_id`` for ``frame``: rows already indexed (same ``id`` in
    ``previous``, the id and number of every row of their corpora) keep their number; new
    rows are numbered after the highest one in use, in ``frame``'s order (its rank).

    Reports cite entities, relationships and claims by these short numbers ("[Data:
    Entities (12)]"); a report kept across an update must still point at the same rows, so
    a number never moves to another row while its row exists. Sources are indexed in
    separate runs, so numbering each batch from 0 would also give two rows of a corpus the
    same number. Stable ``id``s equal a full rebuild's; short numbers may differ from one,
    like community numbers."""
    old = previous.select("id", pl.col("human_readable_id").cast(pl.Int64).alias("old_number"))
    start = int(previous["human_readable_id"].max()) + 1 if previous.height else 0
    fresh = pl.col("old_number").is_null()
    return (
        frame.drop("human_readable_id")
        .join(old, on="id", how="left", maintain_order="left")
        .with_columns(
            pl.when(fresh)
            .then(start - 1 + fresh.cum_sum())
            .otherwise(pl.col("old_number"))
            .cast(pl.Int64)
            .alias("human_readable_id")
        )
        .drop("old_number")
        .select(frame.columns)
    )
