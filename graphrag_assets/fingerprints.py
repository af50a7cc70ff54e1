"""Which settings each stage depends on, as one hash per stage. A source is re-indexed
when its bytes or its stage hash change; a corpus graph is rebuilt when its sources or its
stage hash change. So switching on an LLM re-extracts, while a new report model only
rewrites reports."""

from __future__ import annotations

from .core.ids import content_hash
from .llm.resources import EmbeddingResource, LLMResource
from .settings import IndexSettings


def source_settings_hash(settings: IndexSettings, llm: LLMResource) -> str:
    return content_hash(f"{settings.source_fingerprint()}|{llm.source_fingerprint()}")[:16]


def graph_settings_hash(settings: IndexSettings, llm: LLMResource, embedding: EmbeddingResource) -> str:
    return content_hash(f"{settings.graph_fingerprint()}|{llm.graph_fingerprint()}|{embedding.fingerprint()}")[:16]
