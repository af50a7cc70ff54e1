"""What an indexing pass has to do: compare the files on disk with the sources the
index already holds (content hashes, not modification times)."""

from __future__ import annotations

from dataclasses import dataclass, field

import polars as pl

from .inputs import SourceFile


@dataclass
class SourcePlan:
    added: list[SourceFile] = field(default_factory=list)
    changed: list[SourceFile] = field(default_factory=list)
    unchanged: list[SourceFile] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)  # partition keys with no file any more

    @property
    def pending(self) -> list[SourceFile]:
        return sorted(self.added + self.changed, key=lambda s: s.partition_key)


def plan_sources(
    on_disk: list[SourceFile],
    file_hashes: dict[str, str],
    indexed: pl.DataFrame,
    settings_hash: str,
    read_again: bool = False,
) -> SourcePlan:
    """``indexed`` holds the ``sources`` table rows (source_partition, source_hash,
    settings_hash). A source is changed when its bytes or its reading fingerprint differ,
    or when every file is to be ``read_again`` (a forced rebuild)."""
    known = {row["source_partition"]: row for row in indexed.iter_rows(named=True)}
    plan = SourcePlan()
    for source in on_disk:
        row = known.get(source.partition_key)
        if row is None:
            plan.added.append(source)
        elif (
            read_again
            or row["source_hash"] != file_hashes[source.partition_key]
            or row["settings_hash"] != settings_hash
        ):
            plan.changed.append(source)
        else:
            plan.unchanged.append(source)
    present = {source.partition_key for source in on_disk}
    plan.deleted = sorted(key for key in known if key not in present)
    return plan
