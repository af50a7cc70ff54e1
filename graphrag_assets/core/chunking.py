"""Splitting documents into text units.

A document with a given title (a title column of a table row, ``inputs.given_title``)
has the title as a header line of each of its text units, ``"<title>\n\n<chunk>"``:
passages such as encyclopedia entries often never repeat their own subject, and without
the header neither the lexical index, the embedder nor the extractor would know what the
unit is about. The blank line makes the header a sentence of its own.

Two modes: ``tokens`` (fixed token windows with overlap, graphrag's default) and
``sentences`` (whole sentences packed up to the token size, overlapping by whole
sentences). Chunks (after the header) are exact substrings of the document's content
(``content.content_text``: the text without its wrapping, such as an e-book's licence):
windows are cut at character offsets so a multi-byte character (Chinese) is never split
between two chunks.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import polars as pl

from graphrag_common.ids import content_hash, stable_id
from graphrag_common.sentences import split_sentences
from graphrag_common.tokens import DEFAULT_ENCODING, get_encoding

from ..configuration import check, default_of
from .content import Wrapping, content_text, wrapping_spans
from .inputs import given_title

TEXT_UNIT_COLUMNS = {
    "id": pl.String,
    "human_readable_id": pl.Int64,
    "text": pl.String,
    "n_tokens": pl.Int64,
    "document_id": pl.String,
    "chunk_index": pl.Int64,
    "corpus": pl.String,
    "source_partition": pl.String,
    "content_hash": pl.String,
}


@dataclass(frozen=True)
class ChunkingSettings:
    chunk_size: int = default_of("GRAPHRAG_CHUNK_SIZE")
    chunk_overlap: int = default_of("GRAPHRAG_CHUNK_OVERLAP")
    chunking_mode: str = default_of("GRAPHRAG_CHUNKING_MODE")  # its choices are declared there
    encoding: str = DEFAULT_ENCODING
    # Chunk the whole text, not only its content (core/content.py).
    keep_wrapping: bool = default_of("GRAPHRAG_KEEP_WRAPPING")

    def __post_init__(self):
        check("GRAPHRAG_CHUNK_SIZE", self.chunk_size)
        check("GRAPHRAG_CHUNKING_MODE", self.chunking_mode)
        if not 0 <= self.chunk_overlap < self.chunk_size:
            raise ValueError(
                f"chunk overlap must be >= 0 and < chunk size {self.chunk_size} (GRAPHRAG_CHUNK_OVERLAP), got "
                f"{self.chunk_overlap}"
            )


def _token_windows(text: str, settings: ChunkingSettings) -> list[str]:
    encoding = get_encoding(settings.encoding)
    tokens = encoding.encode(text, disallowed_special=())
    if not tokens:
        return []
    _, offsets = encoding.decode_with_offsets(tokens)
    bounds = offsets + [len(text)]
    step = settings.chunk_size - settings.chunk_overlap
    chunks = []
    for start in range(0, len(tokens), step):
        end = min(start + settings.chunk_size, len(tokens))
        chunks.append(text[bounds[start] : bounds[end]])
        if end == len(tokens):
            break
    return chunks


def _sentence_windows(text: str, settings: ChunkingSettings) -> list[str]:
    encoding = get_encoding(settings.encoding)
    sentences = []
    for sentence in split_sentences(text):
        n = len(encoding.encode(sentence, disallowed_special=()))
        if n > settings.chunk_size:  # one over-long sentence is cut by tokens
            sentences.extend(
                (piece, len(encoding.encode(piece, disallowed_special=())))
                for piece in _token_windows(
                    sentence,
                    ChunkingSettings(chunk_size=settings.chunk_size, chunk_overlap=0, encoding=settings.encoding),
                )
            )
        else:
            sentences.append((sentence, n))
    chunks: list[str] = []
    current: list[tuple[str, int]] = []
    current_tokens = 0
    for sentence, n in sentences:
        if current and current_tokens + n > settings.chunk_size:
            chunks.append("".join(s for s, _ in current))
            # Carry whole trailing sentences up to the overlap budget into the next chunk.
            carried, carried_tokens = [], 0
            for s, k in reversed(current):
                if carried_tokens + k > settings.chunk_overlap:
                    break
                carried.insert(0, (s, k))
                carried_tokens += k
            current, current_tokens = carried, carried_tokens
        current.append((sentence, n))
        current_tokens += n
    if current:
        chunks.append("".join(s for s, _ in current))
    return chunks


def chunk_text(text: str, settings: ChunkingSettings = ChunkingSettings()) -> list[str]:
    chunks = _token_windows(text, settings) if settings.chunking_mode == "tokens" else _sentence_windows(text, settings)
    return [chunk for chunk in chunks if chunk.strip()]


def chunk_documents(
    documents: pl.DataFrame,
    settings: ChunkingSettings = ChunkingSettings(),
    wrapping: dict[str, list[Wrapping]] | None = None,
) -> pl.DataFrame:
    """Text units of the documents. A unit's id hashes its document id, its text and the
    occurrence number of that text in the document: stable for unchanged content, and
    identical chunks in different documents (or twice in one) never collide. ``wrapping``:
    the documents' spans that are not content (``content.wrapping_by_document``), when the
    caller found them already."""
    encoding = get_encoding(settings.encoding)
    rows = []
    for document in documents.iter_rows(named=True):
        seen: Counter[str] = Counter()
        title = given_title(document.get("title"), document.get("source_path"))
        header = f"{title}\n\n" if title else ""
        text = document["text"]
        if not settings.keep_wrapping:
            spans = wrapping[document["id"]] if wrapping is not None else wrapping_spans(text)
            text = content_text(text, spans)
        for index, window in enumerate(chunk_text(text, settings)):
            chunk = header + window
            occurrence = seen[chunk]
            seen[chunk] += 1
            rows.append(
                {
                    "id": stable_id(document["id"], chunk, occurrence),
                    "text": chunk,
                    "n_tokens": len(encoding.encode(chunk, disallowed_special=())),
                    "document_id": document["id"],
                    "chunk_index": index,
                    "corpus": document["corpus"],
                    "source_partition": document["source_partition"],
                    "content_hash": content_hash(chunk),
                }
            )
    frame = pl.DataFrame(rows, schema={k: v for k, v in TEXT_UNIT_COLUMNS.items() if k != "human_readable_id"})
    return (
        frame.with_row_index("human_readable_id")
        .with_columns(pl.col("human_readable_id").cast(pl.Int64))
        .select(list(TEXT_UNIT_COLUMNS))
    )
