"""What an indexing pass has to do: compare the files on disk with the sources the
index already holds (content hashes, not modification times), and decide which missing
files are deletions: only those of a corpus folder the input holds."""

from __future__ import annotations

from dataclasses import dataclass, field

import polars as pl

from .inputs import SourceFile, corpus_of_partition

# A pass that would delete more documents than this, or more than this share of a
# corpus's documents (two or more), asks first (``needs_confirmation``).
CONFIRM_ABOVE_DOCUMENTS = 5
CONFIRM_ABOVE_SHARE = 0.5


@dataclass
class SourcePlan:
    added: list[SourceFile] = field(default_factory=list)
    changed: list[SourceFile] = field(default_factory=list)
    unchanged: list[SourceFile] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)  # partition keys with no file any more
    # Partition keys with no file in this input that were read from a folder it does not
    # hold (another input folder, a vanished corpus folder): left alone.
    kept: list[str] = field(default_factory=list)

    @property
    def pending(self) -> list[SourceFile]:
        return sorted(self.added + self.changed, key=lambda s: s.partition_key)


def plan_sources(
    on_disk: list[SourceFile],
    file_hashes: dict[str, str],
    indexed: pl.DataFrame,
    settings_hash: str,
    read_again: bool = False,
    folders: dict[str, set[str]] | None = None,
) -> SourcePlan:
    """``indexed`` holds the ``sources`` table rows (source_partition, source_hash,
    settings_hash, and optionally corpus_folder). A source is changed when its bytes or its
    reading fingerprint differ, or when every file is to be ``read_again`` (a forced rebuild).

    A known source with no file is deleted when ``folders`` (corpus -> folders of this
    input, ``inputs.corpus_folders``) holds its corpus and the folder it was read from
    (unknown: any folder of its corpus); otherwise it is kept. Without ``folders`` every
    known source with no file is deleted (``--prune``)."""
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
    for key in sorted(key for key in known if key not in present):
        (plan.deleted if _in_this_input(known[key], folders) else plan.kept).append(key)
    return plan


def _in_this_input(row: dict, folders: dict[str, set[str]] | None) -> bool:
    if folders is None:
        return True
    corpus_folders = folders.get(corpus_of_partition(row["source_partition"]))
    if corpus_folders is None:
        return False
    folder = row.get("corpus_folder")
    return folder is None or folder in corpus_folders


def needs_confirmation(deleted_documents: dict[str, int], corpus_documents: dict[str, int]) -> bool:
    """Whether deleting these documents (corpus -> count) asks first: more than a few in
    all, or most of a corpus."""
    if sum(deleted_documents.values()) > CONFIRM_ABOVE_DOCUMENTS:
        return True
    return any(
        n >= 2 and n > CONFIRM_ABOVE_SHARE * corpus_documents.get(corpus, n) for corpus, n in deleted_documents.items()
    )
