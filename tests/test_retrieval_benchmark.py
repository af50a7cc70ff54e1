"""Retrieval quality on a slice of 2Wiki-101 (``bench/retrieval.py``), as a regression test.

The first 20 questions of ``../shared/corpus/2wiki-101``, over a smaller corpus: their gold
passages plus every 4th other passage (about 1,550 passages), indexed offline by the real
asset graph. Floors, against BM25 (``bm25s``) on the same slice: basic search ranks gold
passages about as well as BM25, and local search's context at 4k tokens holds the gold
passages. Quality, not timing; the figures are in the assertion messages.
"""

from __future__ import annotations

import importlib.util
import json
import os

import pytest

from .conftest import REPO, SHARED

DATA = SHARED / "corpus" / "2wiki-101"
QUESTIONS = 20
EVERY = 4  # every 4th passage that is not gold joins the slice


def _bench(monkeypatch):
    """bench/retrieval.py, so the test measures exactly what the benchmark measures (with
    bench/ on the path, as when the script runs)."""
    monkeypatch.syspath_prepend(str(REPO / "bench"))
    spec = importlib.util.spec_from_file_location("bench_retrieval", REPO / "bench" / "retrieval.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.skipif(
    not DATA.is_dir(), reason=f"{DATA} is absent: the 2Wiki-101 set lives in ../shared beside the checkout"
)
def test_retrieval_on_a_2wiki_slice_meets_its_floors(index, tmp_path, monkeypatch):
    bench = _bench(monkeypatch)
    for key in [k for k in os.environ if k.startswith("GRAPHRAG_")]:
        monkeypatch.delenv(key)  # offline, default settings
    questions = bench.load_jsonl(DATA / "questions.jsonl")[:QUESTIONS]
    passages = bench.load_jsonl(DATA / "passages.jsonl")
    gold = {title for q in questions for title in q["gold_titles"]}
    others = [p for p in passages if p["title"] not in gold]
    chosen = {p["title"] for p in others[::EVERY]} | gold
    corpus = [p for p in passages if p["title"] in chosen]  # the file's order
    assert gold <= {p["title"] for p in corpus}
    input_dir = tmp_path / "input"
    input_dir.mkdir()
    with open(input_dir / "passages.jsonl", "w", encoding="utf-8") as handle:
        handle.writelines(json.dumps(p, ensure_ascii=False) + "\n" for p in corpus)

    settings, report = index(input_dir, corpus=bench.CORPUS)
    assert not report.failed_runs and not report.source_errors
    assert report.rows[bench.CORPUS]["documents"] == len(corpus)

    from graphrag_query import IndexReader

    reader = IndexReader(database=settings.db, corpus=bench.CORPUS).load()
    golds = [q["gold_titles"] for q in questions]

    bm25 = bench.run_bm25(corpus, questions, budgets=(4000,))
    measured = bench.run_modes(reader, questions, budgets=(4000,), modes=("basic", "local"), progress=None)
    basic, local = measured["figures"]["basic"], measured["figures"]["local"]["budgets"]["4000"]
    assert len(golds) == QUESTIONS

    figures = (
        f"{len(corpus)} passages, {QUESTIONS} questions, {sum(map(len, golds))} gold passages; "
        f"recall@5 (per question) basic {basic['recall']['5']:.3f} vs BM25 {bm25['recall']['5']:.3f}; "
        f"recall@2/5/8 basic {basic['recall']['2']:.3f}/{basic['recall']['5']:.3f}/{basic['recall']['8']:.3f}, "
        f"BM25 {bm25['recall']['2']:.3f}/{bm25['recall']['5']:.3f}/{bm25['recall']['8']:.3f}; "
        f"gold present @4k: local {local['gold_present']:.3f}, basic {basic['budgets']['4000']['gold_present']:.3f}, "
        f"BM25 {bm25['budgets']['4000']['gold_present']:.3f}; "
        f"all gold @4k: local {local['all_gold_present']:.3f}, basic "
        f"{basic['budgets']['4000']['all_gold_present']:.3f}, "
        f"BM25 {bm25['budgets']['4000']['all_gold_present']:.3f}"
    )
    print(figures)
    assert basic["recall"]["5"] >= bm25["recall"]["5"] - 0.02, f"basic recall@5 below BM25's: {figures}"
    assert local["gold_present"] >= 0.80, f"local search misses gold passages at 4k: {figures}"
    assert local["all_gold_present"] >= 0.5, f"local search rarely holds all the evidence at 4k: {figures}"
