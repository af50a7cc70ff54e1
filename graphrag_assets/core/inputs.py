"""Discovering input sources and reading them into documents.

Layout: ``<input dir>/<corpus>/...``. Files directly in the input dir belong to the
corpus ``default`` unless a corpus is forced. One source file is one Dagster partition
(``<corpus>/<path inside the corpus>``); a CSV/JSONL/Parquet file holding many documents
is still one partition, one document per row.
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from .ids import content_hash, stable_id

TEXT_SUFFIXES = {".txt", ".md"}
TABLE_SUFFIXES = {".csv", ".jsonl", ".parquet"}
SUPPORTED_SUFFIXES = TEXT_SUFFIXES | TABLE_SUFFIXES
DEFAULT_CORPUS = "default"

DOCUMENT_COLUMNS = {
    "id": pl.String,
    "human_readable_id": pl.Int64,
    "title": pl.String,
    "text": pl.String,
    "corpus": pl.String,
    "source_partition": pl.String,
    "source_path": pl.String,
    "source_hash": pl.String,
    "content_hash": pl.String,
}


class InputError(ValueError):
    """A source file that cannot be indexed; the message names the file and the reason."""

    def __init__(self, source_path: str, reason: str):
        self.source_path = source_path
        self.reason = reason
        super().__init__(f"{source_path}: {reason}")


@dataclass(frozen=True)
class TableColumns:
    """Which columns of a CSV/JSONL/Parquet source hold the text, title and id."""

    text: str = "text"
    title: str | None = "title"
    id: str | None = "id"


@dataclass(frozen=True)
class SourceFile:
    corpus: str
    relative_path: str  # inside the corpus folder, with forward slashes
    path: Path

    @property
    def partition_key(self) -> str:
        return source_partition_key(self.corpus, self.relative_path)

    def read_hash(self) -> str:
        return content_hash(self.path.read_bytes())


def source_partition_key(corpus: str, relative_path: str) -> str:
    return f"{corpus}/{relative_path}"


def corpus_of_partition(partition_key: str) -> str:
    return partition_key.split("/", 1)[0]


def given_title(title: str | None, source_path: str | None) -> str | None:
    """The document's title when it was given (a title column of a table row), None when
    it is only a name made up for the document: the file name of a text file, or the
    ``<file>#<key>`` fallback of a row without a title."""
    if not title or not title.strip():
        return None
    file_name = Path(source_path).name if source_path else None
    if file_name and (title == file_name or title.startswith(f"{file_name}#")):
        return None
    return title.strip()


def discover_sources(input_dir: Path, corpus: str | None = None) -> list[SourceFile]:
    """All supported files under ``input_dir``, sorted by partition key.

    With ``corpus`` given, every file under the folder belongs to that corpus; otherwise
    each top-level folder is a corpus and loose top-level files belong to ``default``.
    Hidden files and folders are ignored.
    """
    input_dir = Path(input_dir)
    if not input_dir.is_dir():
        raise InputError(str(input_dir), "input folder does not exist or is not a folder")
    found: list[SourceFile] = []
    for path in input_dir.rglob("*"):
        relative = path.relative_to(input_dir)
        if any(part.startswith(".") for part in relative.parts):
            continue
        if not path.is_file() or path.suffix.lower() not in SUPPORTED_SUFFIXES:
            continue
        if corpus is not None:
            found.append(SourceFile(corpus, relative.as_posix(), path))
        elif len(relative.parts) == 1:
            found.append(SourceFile(DEFAULT_CORPUS, relative.as_posix(), path))
        else:
            inner = Path(*relative.parts[1:]).as_posix()
            found.append(SourceFile(relative.parts[0], inner, path))
    return sorted(found, key=lambda source: source.partition_key)


def _decode(raw: bytes, source_path: str) -> str:
    if not raw.strip():
        raise InputError(source_path, "file is empty")
    if b"\x00" in raw[:8192]:
        raise InputError(source_path, "file looks binary (contains NUL bytes); expected UTF-8 text")
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise InputError(
            source_path,
            f"not valid UTF-8 (byte 0x{raw[error.start]:02x} at offset {error.start}); "
            "re-save the file as UTF-8",
        ) from None


def _rows_from_table(raw: bytes, suffix: str, source_path: str) -> list[dict]:
    if suffix == ".parquet":
        try:
            return pl.read_parquet(io.BytesIO(raw)).to_dicts()
        except Exception as error:  # polars raises several exception types for bad files
            raise InputError(source_path, f"unreadable Parquet file ({error})") from None
    text = _decode(raw, source_path)
    if suffix == ".jsonl":
        rows = []
        for line_number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as error:
                raise InputError(source_path, f"line {line_number} is not valid JSON ({error.msg})") from None
            if not isinstance(row, dict):
                raise InputError(source_path, f"line {line_number} is not a JSON object")
            rows.append(row)
        return rows
    try:
        reader = csv.DictReader(io.StringIO(text, newline=""), strict=True)
        rows = list(reader)
    except csv.Error as error:
        raise InputError(source_path, f"unreadable CSV ({error})") from None
    if reader.fieldnames is None:
        raise InputError(source_path, "CSV has no header row")
    if any(None in row for row in rows):
        bad = next(i for i, row in enumerate(rows, start=2) if None in row)
        raise InputError(source_path, f"unreadable CSV: line {bad} has more fields than the header")
    return rows


def read_source(
    source: SourceFile, columns: TableColumns = TableColumns(), raw: bytes | None = None
) -> pl.DataFrame:
    """Documents of one source file (one row per document). Raises InputError."""
    raw = source.path.read_bytes() if raw is None else raw
    source_path = f"{source.corpus}/{source.relative_path}"
    suffix = source.path.suffix.lower()
    file_hash = content_hash(raw)
    if suffix in TEXT_SUFFIXES:
        text = _decode(raw, source_path)
        records = [{"key": "", "title": source.path.name, "text": text}]
    else:
        rows = _rows_from_table(raw, suffix, source_path)
        if not rows:
            raise InputError(source_path, "table has no rows")
        available = list(rows[0].keys())
        if columns.text not in available:
            raise InputError(
                source_path,
                f"text column '{columns.text}' not found (columns: {', '.join(map(str, available))}); "
                "set GRAPHRAG_TEXT_COLUMN",
            )
        records = []
        for index, row in enumerate(rows):
            text = row.get(columns.text)
            if text is None or not str(text).strip():
                continue  # an empty cell is not a document
            key = row.get(columns.id) if columns.id else None
            key = str(key) if key not in (None, "") else f"row-{index}"
            title = row.get(columns.title) if columns.title else None
            title = str(title) if title not in (None, "") else f"{source.path.name}#{key}"
            records.append({"key": key, "title": title, "text": str(text)})
        if not records:
            raise InputError(source_path, f"every value of text column '{columns.text}' is empty")
    frame = pl.DataFrame(
        {
            # Identity comes from where the document lives, not from its text: an edited
            # document keeps its id, so an edit is an edit rather than a delete plus an add.
            "id": [stable_id(source.corpus, source.relative_path, r["key"]) for r in records],
            "human_readable_id": list(range(len(records))),
            "title": [r["title"] for r in records],
            "text": [r["text"] for r in records],
            "corpus": source.corpus,
            "source_partition": source.partition_key,
            "source_path": source.relative_path,
            "source_hash": file_hash,
            "content_hash": [content_hash(r["text"]) for r in records],
        },
        schema=DOCUMENT_COLUMNS,
    )
    duplicated = frame.filter(pl.col("id").is_duplicated())["title"].unique().to_list()
    if duplicated:
        raise InputError(source_path, f"duplicate document ids in id column: {duplicated[:5]}")
    return frame
