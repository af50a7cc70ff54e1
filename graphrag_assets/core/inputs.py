"""Discovering input sources and reading them into documents.

Layout: ``<input dir>/<corpus>/...``. Files directly in the input dir belong to the
corpus ``default`` unless a corpus is forced. One source file is one Dagster partition
(``<corpus>/<path inside the corpus>``); a CSV/JSONL/Parquet file holding many documents
is still one partition, one document per row.
"""

from __future__ import annotations

import codecs
import csv
import errno
import io
import json
import os
import re
import stat
import unicodedata
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from graphrag_common.ids import content_hash, stable_id

from ..configuration import default_of

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

    text_column: str = default_of("GRAPHRAG_TEXT_COLUMN")
    title_column: str | None = default_of("GRAPHRAG_TITLE_COLUMN")
    id_column: str | None = default_of("GRAPHRAG_ID_COLUMN")


@dataclass(frozen=True)
class SourceFile:
    corpus: str
    relative_path: str  # inside the corpus folder, with forward slashes
    path: Path
    root: Path | None = None  # the input folder: when given, the file must resolve inside it

    @property
    def partition_key(self) -> str:
        return source_partition_key(self.corpus, self.relative_path)

    @property
    def folder(self) -> str:
        """The corpus's own folder this file was found in (absolute): the input folder for a
        loose file or a forced corpus, ``<input>/<corpus>`` otherwise. Deletions are judged
        per folder: a file missing from a folder that is not part of an input stays."""
        return os.path.abspath(self.path.parents[len(Path(self.relative_path).parts) - 1])

    def read_hash(self, real_folders: dict[str, Path] | None = None) -> str:
        """The hash of the file's bytes, or of why it cannot be read: such a file is still
        a source to index, whose reading records the reason. ``real_folders``: see
        ``read_file_bytes``."""
        try:
            return content_hash(read_file_bytes(self, real_folders))
        except InputError as error:
            return content_hash(f"unreadable: {error.reason}")


def source_partition_key(corpus: str, relative_path: str) -> str:
    return f"{corpus}/{relative_path}"


def corpus_of_partition(partition_key: str) -> str:
    return partition_key.split("/", 1)[0]


def check_corpus_name(name: str, setting: str) -> str:
    """``name`` if it is a valid corpus name, else a ValueError naming ``setting`` and the
    value. A corpus name is one path segment: it starts every source partition key and
    the reader joins the rest of the key onto the input folder."""
    control = next((c for c in name if unicodedata.category(c) == "Cc"), None)
    if not name:
        problem = "it is empty"
    elif name in (".", ".."):
        problem = "'.' and '..' are not names"
    elif "/" in name or "\\" in name:
        problem = "it contains a path separator"
    elif control:
        problem = f"it contains the control character U+{ord(control):04X}"
    else:
        return name
    raise ValueError(
        f"{setting} {name!r} is not a valid corpus name: {problem} "
        "(a corpus name is one folder name: not empty, not '.' or '..', no '/' or '\\', no control characters)"
    )


def split_partition_key(key: str) -> tuple[str, str]:
    """(corpus, path inside the corpus) of a source partition key. Keys also come from the
    UI and the sensor: one that discover_sources could not have made is refused
    (InputError naming the key), as it could name a file outside the input folder."""
    corpus, _, relative_path = key.partition("/")
    try:
        check_corpus_name(corpus, "corpus")
    except ValueError as error:
        raise InputError(key, f"not a source partition key: {error}") from None
    if any(part in ("", ".", "..") for part in relative_path.split("/")) or "\x00" in relative_path:
        reason = f"the path inside the corpus, {relative_path!r}, must be relative, without empty, '.' or '..' parts"
        raise InputError(key, f"not a source partition key: {reason}")
    return corpus, relative_path


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
    """All files with a supported suffix under ``input_dir``, sorted by partition key.

    With ``corpus`` given, every file under the folder belongs to that corpus; otherwise
    each top-level folder is a corpus and loose top-level files belong to ``default``.
    Hidden files and folders are ignored. Whatever is not a regular file (a FIFO, a
    dangling symlink, a symlink loop) is still a source, whose reading says what it is;
    so is a symlink to a folder, which is not followed (it may loop or lead outside), and
    a folder that cannot be listed (its path is too long, it is not readable), whose files
    would otherwise be left out without a word. A name that is not valid UTF-8 is kept
    with its undecodable bytes written ``\\xNN``: partition keys and rows are text.
    """
    input_dir = Path(input_dir)
    if not input_dir.is_dir():
        raise InputError(str(input_dir), "input folder does not exist or is not a folder")
    if corpus is not None:
        try:
            check_corpus_name(corpus, "GRAPHRAG_CORPUS (--corpus)")
        except ValueError as error:
            raise InputError(str(input_dir), str(error)) from None
    paths: list[Path] = []

    def unlisted(error: OSError) -> None:
        if Path(error.filename) != input_dir:
            paths.append(Path(error.filename))

    # os.walk lists a symlink to a folder among the folders and does not enter it.
    for folder, folders, files in os.walk(input_dir, onerror=unlisted):
        folders[:] = [name for name in folders if not name.startswith(".")]
        names = [name for name in files if not name.startswith(".") and Path(name).suffix.lower() in SUPPORTED_SUFFIXES]
        names += [name for name in folders if os.path.islink(os.path.join(folder, name))]
        paths += [Path(folder, name) for name in names]
    found: list[SourceFile] = []
    for path in paths:
        relative = Path(printable_name(str(path.relative_to(input_dir))))
        if corpus is not None:
            found.append(SourceFile(corpus, relative.as_posix(), path, input_dir))
        elif len(relative.parts) == 1:
            found.append(SourceFile(DEFAULT_CORPUS, relative.as_posix(), path, input_dir))
        else:
            try:
                check_corpus_name(relative.parts[0], "folder name")
            except ValueError as error:
                raise InputError(
                    str(input_dir / relative.parts[0]),
                    f"{error}; rename the folder, or index the input folder as one corpus with --corpus",
                ) from None
            found.append(SourceFile(relative.parts[0], Path(*relative.parts[1:]).as_posix(), path, input_dir))
    return sorted(found, key=lambda source: source.partition_key)


def corpus_folders(input_dir: Path, corpus: str | None = None) -> dict[str, set[str]]:
    """corpus -> the folders (absolute) an input folder holds for it, files or not: with a
    forced corpus the input folder itself; otherwise ``default`` always has the input
    folder (its loose files), and every top-level folder is its corpus's folder. A corpus
    whose folder was emptied is here (its files are gone); one whose folder vanished is not."""
    root = os.path.abspath(input_dir)
    if corpus is not None:
        return {corpus: {root}}
    folders: dict[str, set[str]] = {DEFAULT_CORPUS: {root}}
    for entry in os.scandir(root):
        if entry.is_dir(follow_symlinks=False) and not entry.name.startswith("."):
            folders.setdefault(entry.name, set()).add(os.path.join(root, entry.name))
    return folders


_NOT_REGULAR = [
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
]


def _not_regular(path: Path, mode: int) -> str:
    what = next((name for is_kind, name in _NOT_REGULAR if is_kind(mode)), "a special file")
    if path.is_symlink():
        what = f"symlink to {what}" + (
            " (not followed: it may loop or lead out of the input folder)" if stat.S_ISDIR(mode) else ""
        )
    return f"{what}, not a regular file; not read"


def _unreachable(path: Path, error: OSError) -> str:
    if error.errno == errno.ELOOP:
        return "symlink loop (too many levels of symbolic links); not read"
    if error.errno == errno.ENOENT and path.is_symlink():
        return f"dangling symlink (its target {os.readlink(path)} does not exist); not read"
    if error.errno == errno.ENAMETOOLONG:
        return (
            f"path too long for the system ({len(os.fsencode(path))} bytes, {len(path.parts)} levels deep; "
            f"PATH_MAX is {os.pathconf('/', 'PC_PATH_MAX')}); move it higher up in the input folder; not read"
        )
    return f"cannot read file {path} ({error.strerror or error})"


def printable_name(name: str) -> str:
    """``name`` with the bytes that are not UTF-8 (Python's surrogate escapes) written ``\\xNN``."""
    return name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def _name_on_disk(path: Path) -> str:
    """The file ``printable_name`` made ``path`` from, its ``\\xNN`` turned back into bytes."""
    return re.sub(r"\\x([89a-f][0-9a-f])", lambda match: chr(0xDC00 + int(match[1], 16)), str(path))


def _not_utf8_name(path: Path) -> bool:
    on_disk = _name_on_disk(path)
    return printable_name(str(path)) != str(path) or (on_disk != str(path) and os.path.lexists(on_disk))


def real_path(path: Path, real_folders: dict[str, Path] | None = None) -> Path:
    """Where ``path`` leads, symlinks resolved. ``real_folders`` remembers the folders
    resolved so far (the files of a folder share it): for one pass over many files, where
    resolving each file's whole path again would cost more than reading it."""
    if real_folders is None or os.path.islink(path):
        return Path(os.path.realpath(path))
    folder = str(path.parent)
    if folder not in real_folders:
        real_folders[folder] = Path(os.path.realpath(folder))
    return real_folders[folder] / path.name


def read_file_bytes(source: SourceFile, real_folders: dict[str, Path] | None = None) -> bytes:
    """The bytes of a regular file inside the input folder. Anything else is refused with
    what it is, and never opened for reading: opening a FIFO blocks until a writer comes."""
    path = source.path
    if _not_utf8_name(path):
        raise InputError(
            source.partition_key, "file name is not valid UTF-8 (bytes shown as \\xNN); rename the file; not read"
        )
    try:
        mode = os.stat(path).st_mode
    except OSError as error:
        raise InputError(source.partition_key, _unreachable(path, error)) from None
    if source.root is not None:
        real, root = real_path(path, real_folders), real_path(source.root, real_folders)
        if not real.is_relative_to(root):
            raise InputError(source.partition_key, f"resolves to {real}, outside the input folder {root}; not read")
    if not stat.S_ISREG(mode):
        raise InputError(source.partition_key, _not_regular(path, mode))
    try:
        # Non-blocking, and checked again once open: the path may have changed since the stat.
        with open(os.open(path, os.O_RDONLY | os.O_NONBLOCK), "rb") as file:
            mode = os.fstat(file.fileno()).st_mode
            if not stat.S_ISREG(mode):
                raise InputError(source.partition_key, _not_regular(path, mode))
            return file.read()
    except OSError as error:
        raise InputError(source.partition_key, f"cannot read file {path} ({error.strerror or error})") from None


# UTF-32's marks before UTF-16's: FF FE starts both little-endian ones.
_WIDE_BOMS = [
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
]


def _decode(raw: bytes, source_path: str) -> str:
    """UTF-8 (with or without a byte order mark), or UTF-16/UTF-32 with one."""
    wide = next((encoding for bom, encoding in _WIDE_BOMS if raw.startswith(bom)), None)
    if wide:
        try:
            text = raw.decode(wide)
        except UnicodeDecodeError:
            text = None  # a byte order mark by chance: judged as bytes below
        if text is not None and "\x00" not in text[:8192]:
            if not text.strip():
                raise InputError(source_path, "file is empty")
            return text
    if not raw.strip():
        raise InputError(source_path, "file is empty")
    if b"\x00" in raw[:8192]:
        raise InputError(
            source_path,
            "file looks binary (contains NUL bytes); expected UTF-8 text, or UTF-16/UTF-32 with a byte order mark",
        )
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise InputError(
            source_path,
            f"not valid UTF-8 (byte 0x{raw[error.start]:02x} at offset {error.start}); re-save the file as UTF-8",
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
    # The csv module refuses a cell over 128 KB by default. The whole file is in memory
    # already, so no cell can cost more than the file: its length is the limit.
    csv.field_size_limit(max(csv.field_size_limit(), len(text)))
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


def read_source(source: SourceFile, columns: TableColumns = TableColumns(), raw: bytes | None = None) -> pl.DataFrame:
    """Documents of one source file (one row per document). Raises InputError."""
    raw = read_file_bytes(source) if raw is None else raw
    source_path = source.partition_key
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
        if columns.text_column not in available:
            raise InputError(
                source_path,
                f"text column '{columns.text_column}' not found (columns: {', '.join(map(str, available))}); "
                "set GRAPHRAG_TEXT_COLUMN",
            )
        records = []
        for index, row in enumerate(rows):
            text = row.get(columns.text_column)
            if text is not None and not isinstance(text, str):
                # A number or a list written out would be indexed as if it were prose.
                raise InputError(
                    source_path,
                    f"text column '{columns.text_column}' holds {type(text).__name__} values, not strings "
                    f"(record {index + 1}: {text!r:.60}); set GRAPHRAG_TEXT_COLUMN to a column of text",
                )
            if text is None or not text.strip():
                continue  # an empty cell is not a document
            key = row.get(columns.id_column) if columns.id_column else None
            key = str(key) if key not in (None, "") else f"row-{index}"
            title = row.get(columns.title_column) if columns.title_column else None
            title = str(title) if title not in (None, "") else f"{source.path.name}#{key}"
            records.append({"key": key, "title": title, "text": text})
        if not records:
            raise InputError(source_path, f"every value of text column '{columns.text_column}' is empty")
        duplicated = [key for key, n in Counter(r["key"] for r in records).items() if n > 1]
        if duplicated:
            more = f" and {len(duplicated) - 5} more" if len(duplicated) > 5 else ""
            raise InputError(
                source_path,
                f"duplicate document ids in id column '{columns.id_column}': "
                f"{', '.join(map(repr, duplicated[:5]))}{more}",
            )
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
    return frame
