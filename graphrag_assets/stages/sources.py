"""The reading stage: the documents of input files, one source partition per file. A file
that cannot be read is recorded (``source_errors``) and its previously indexed rows stay
as they were; the other files are indexed."""

from dataclasses import dataclass
from pathlib import Path

import polars as pl

from graphrag_common.ids import keep_short_ids

from ..core.inputs import InputError, SourceFile, read_source, split_partition_key
from ..settings import IndexSettings
from ..storage.duckdb_store import IndexStore
from ..storage.schema import SOURCE_ERROR_COLUMNS, SOURCE_FOLDER_COLUMNS, TABLES
from .methods import Log
from .records import source_rows, utc_now


def source_file(settings: IndexSettings, key: str) -> SourceFile:
    # Keys also come from the UI: refused unless they name a file inside the input folder.
    corpus, relative_path = split_partition_key(key)
    return SourceFile(corpus, relative_path, settings.source_path(corpus, relative_path), Path(settings.input_dir))


@dataclass
class SourcesRead:
    documents: pl.DataFrame
    errors: list[dict]  # source_errors rows of the files that could not be read


def read_sources(store: IndexStore, settings: IndexSettings, keys: list[str], log: Log) -> SourcesRead:
    """Read the files of these source partitions and write their documents, their sources'
    rows (status ``read``: not indexed until the graph build chunks and extracts them
    again), their folders and their errors, in one transaction."""
    frames, errors, folders = [], [], []
    for key in keys:
        try:
            source = source_file(settings, key)
            folders.append({"corpus": source.corpus, "source_partition": key, "corpus_folder": source.folder})
            frames.append(read_source(source, settings.table_columns()))
        except InputError as error:
            log.error(f"Skipping source {error}; its previously indexed rows are kept.")
            corpus, _, source_path = key.partition("/")
            errors.append(
                {
                    "corpus": corpus,
                    "source_partition": key,
                    "source_path": source_path,
                    "error": str(error),
                    "recorded_at": utc_now(),
                }
            )
    read = pl.concat(frames) if frames else pl.DataFrame(schema=TABLES["documents"].columns)
    readable = [key for key in keys if key not in {e["source_partition"] for e in errors}]
    read = keep_short_ids(read, store.short_ids("documents", read["corpus"].unique().to_list()))
    with store.transaction() as tx:
        tx.replace("documents", read, readable)
        tx.replace("sources", source_rows(read), readable)
        tx.replace("source_errors", pl.DataFrame(errors, schema=SOURCE_ERROR_COLUMNS), keys)
        folder_keys = [row["source_partition"] for row in folders]
        tx.replace("source_folders", pl.DataFrame(folders, schema=SOURCE_FOLDER_COLUMNS), folder_keys)
    return SourcesRead(read, errors)
