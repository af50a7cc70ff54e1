import json

import numpy as np
import polars as pl

from graphrag_assets.core.chunking import chunk_documents
from graphrag_assets.core.communities import detect_communities
from graphrag_assets.core.embedding import EMBEDDING_COLUMNS, HashedNgramEmbedder, embed_missing, embedding_inputs
from graphrag_assets.core.extraction.offline import extract_offline
from graphrag_assets.core.graph import build_graph
from graphrag_assets.core.reports import EXTRACTIVE, extractive_reports

from .conftest import SAMPLE_CORPUS


def _sample_graph():
    texts = [p.read_text(encoding="utf-8") for p in sorted((SAMPLE_CORPUS / "default").glob("*.[tm][xd]*"))]
    documents = pl.DataFrame(
        {"id": [f"d{i}" for i in range(len(texts))], "text": texts, "corpus": "c", "source_partition": "c/x"}
    )
    units = chunk_documents(documents)
    entities, relationships = build_graph(*extract_offline(units), units, "c")
    communities = detect_communities(relationships, "c")
    return units, entities, relationships, communities


def test_extractive_reports_one_per_community_with_cited_findings():
    units, entities, relationships, communities = _sample_graph()
    reports = extractive_reports(communities, entities, relationships, "c")
    assert reports["community"].to_list() == communities["community"].to_list()
    assert set(reports["generated_by"]) == {EXTRACTIVE}
    entity_titles = dict(zip(entities["id"], entities["title"]))
    for report, community in zip(reports.iter_rows(named=True), communities.iter_rows(named=True)):
        findings = report["findings"]
        evidence = set(relationships.filter(pl.col("id").is_in(community["relationship_ids"]))["description"])
        evidence |= set(entities.filter(pl.col("id").is_in(community["entity_ids"]))["description"])
        # 5-10 findings, fewer only when the community has fewer distinct pieces of evidence.
        assert min(5, len(evidence)) <= len(findings) <= 10
        for finding in findings:
            assert "[Data: " in finding["explanation"]
        # The title names the community's own entities.
        members = {entity_titles[e] for e in community["entity_ids"]}
        assert any(name in report["title"] for name in members)
        parsed = json.loads(report["full_content_json"])
        assert parsed["title"] == report["title"] and len(parsed["findings"]) == len(findings)
        assert report["full_content"].startswith(f"# {report['title']}")
        assert 0 <= report["rank"] <= 10


def test_hashed_embedder_is_normalised_and_lexically_meaningful():
    embedder = HashedNgramEmbedder(256)
    vectors = embedder.embed(
        ["Harbor Institute research on Calder Bay", "research at the Harbor Institute", "王海燕在厦门大学工作", ""]
    )
    assert vectors.shape == (4, 256)
    assert np.allclose(np.linalg.norm(vectors[:3], axis=1), 1.0, atol=1e-5)
    assert vectors[0] @ vectors[1] > vectors[0] @ vectors[2]
    assert np.allclose(embedder.embed(["research at the Harbor Institute"])[0], vectors[1])


def test_embeddings_are_reused_for_unchanged_text_only():
    units, entities, relationships, communities = _sample_graph()
    reports = extractive_reports(communities, entities, relationships, "c")
    wanted = embedding_inputs(units, entities, reports)
    assert set(wanted["kind"]) == {"text_unit_text", "entity_description", "community_full_content"}
    embedder = HashedNgramEmbedder(64)
    first, embedded = embed_missing(wanted, pl.DataFrame(schema=EMBEDDING_COLUMNS), embedder, "c")
    assert embedded == wanted.height == first.height
    changed = wanted.with_columns(
        pl.when(pl.int_range(pl.len()) == 0).then(pl.lit("edited text")).otherwise(pl.col("text")).alias("text"),
        pl.when(pl.int_range(pl.len()) == 0)
        .then(pl.lit("new-hash"))
        .otherwise(pl.col("content_hash"))
        .alias("content_hash"),
    )
    second, embedded_again = embed_missing(changed, first, embedder, "c")
    assert embedded_again == 1
    assert second.height == first.height
