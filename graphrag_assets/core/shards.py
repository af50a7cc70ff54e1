"""Splitting the sources a build chunks and extracts into shards of similar size.

Chunking and extraction depend on one source at a time, so any split is correct; what
matters is that the shards finish together (the build waits for the last one) and that
small work is not split at all (each shard costs a process start).
"""

from __future__ import annotations

import heapq

import polars as pl

# Sizes are estimated from characters, as the documents are stored, without tokenizing them.
CHARACTERS_PER_TOKEN = 4


def shard_count(pending_characters: int, shards: int, min_shard_characters: int) -> int:
    """How many shards to split ``pending_characters`` of text into: at most ``shards``, each
    of at least ``min_shard_characters`` (below that, a process of its own costs more than
    the parallel work saves)."""
    return max(1, min(shards, pending_characters // max(min_shard_characters, 1)))


def balanced_shards(sizes: pl.DataFrame, count: int) -> list[list[str]]:
    """``sizes`` (source_partition, characters) split into ``count`` shards of similar total
    size: the largest source first, each to the lightest shard so far (ties by shard
    number, so the split is the same for the same sizes). Each shard's sources are in
    partition order; no shard is empty."""
    ordered = sizes.sort(["characters", "source_partition"], descending=[True, False])
    count = max(1, min(count, ordered.height))
    lightest = [(0, shard) for shard in range(count)]
    members: list[list[str]] = [[] for _ in range(count)]
    for source, characters in ordered.select("source_partition", "characters").iter_rows():
        total, shard = heapq.heappop(lightest)
        members[shard].append(source)
        heapq.heappush(lightest, (total + int(characters or 0), shard))
    return [sorted(shard) for shard in members if shard]
