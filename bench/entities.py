"""Precision and recall of offline entity extraction on labelled samples.

Builds the offline entity graph of each corpus the way the indexer does with default
settings (read, content without wrapping, chunking, rule-based extraction, resolution,
graph pruning), calling the same core functions directly, then scores it against labels
written by reading the text:

- precision: a sample of the graph's entities, drawn by the hash of each name with a fixed
  seed (the names whose seeded hash is lowest). The draw is consistent across changes: an
  entity kept by a change stays in the sample, one removed leaves it, and only a new name
  with a low hash enters it, so a change is judged on mostly the same names. An entity is
  correct when a reader would call it one (a person, place, organisation, work, event,
  thing of the story); its canonical name is labelled too, and "name correct" is the share
  of correct entities the graph titles with it (or an accepted alias).
- recall: the true entities of a fixed set of passages (text units drawn with the seed),
  each with its aliases; one is found when an entity linked to that text unit has the
  name key of its canonical name or of an alias.

Labels live in ``bench/data/entity_labels/<corpus>.jsonl`` (entities: ``{"name",
"entity", "canonical", "aliases"}``) and ``<corpus>_passages.jsonl`` (``{"document",
"chunk_index", "text", "entities": [{"name", "aliases"}]}``). Sampled names without a
label are listed (``--unlabelled``) and left out of precision, with their count reported.

    .venv/bin/python bench/entities.py                        # writes results/entities.json
    .venv/bin/python bench/entities.py --label before --out bench/results/entities_before.json
    .venv/bin/python bench/entities.py --unlabelled /tmp/to_label   # names still to label
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from pathlib import Path

import polars as pl

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.common import git, machine, write_json  # noqa: E402
from graphrag_assets.core.chunking import chunk_documents  # noqa: E402
from graphrag_assets.core.content import wrapping_by_document  # noqa: E402
from graphrag_assets.core.extraction.names import name_key  # noqa: E402
from graphrag_assets.core.extraction.offline import extract_offline  # noqa: E402
from graphrag_assets.core.graph import build_graph  # noqa: E402
from graphrag_assets.core.inputs import SourceFile, discover_sources, given_title, read_source  # noqa: E402
from graphrag_assets.core.resolution import apply_resolution, candidate_pairs, resolve, rule_decisions  # noqa: E402
from graphrag_assets.settings import IndexSettings  # noqa: E402

SHARED = REPO.parent / "shared" / "corpus"
CORPORA = {"christmas_carol": SHARED / "christmas_carol", "2wiki": SHARED / "2wiki-101" / "passages.jsonl"}
LABELS = REPO / "bench" / "data" / "entity_labels"
SEED = "entities-2026"
SAMPLE_SIZE = 150
PASSAGES = 15


def seeded_rank(text: str) -> str:
    return hashlib.sha256(f"{SEED}:{text}".encode()).hexdigest()


def offline_graph(path: Path, corpus: str) -> tuple[pl.DataFrame, pl.DataFrame, dict]:
    """(graph entities, text units, timings) of a corpus indexed offline with default settings."""
    settings = IndexSettings()
    started = time.perf_counter()
    sources = [SourceFile(corpus, path.name, path)] if path.is_file() else discover_sources(path, corpus)
    documents = pl.concat([read_source(source) for source in sources])
    units = chunk_documents(documents, settings.chunking(), wrapping_by_document(documents))
    chunked = time.perf_counter()
    titles = {
        row["id"]: title
        for row in documents.select("id", "title", "source_path").iter_rows(named=True)
        if (title := given_title(row["title"], row["source_path"]))
    }
    records, relationships = extract_offline(units, titles)
    extracted = time.perf_counter()
    pairs = candidate_pairs(records, settings.resolution())
    mapping, _ = resolve(records, corpus, decisions=rule_decisions(pairs))
    records, relationships = apply_resolution(records, relationships, mapping)
    entities, _ = build_graph(records, relationships, units, corpus, settings.graph())
    done = time.perf_counter()
    timings = {
        "read_and_chunk_s": round(chunked - started, 1),
        "extraction_s": round(extracted - chunked, 1),
        "resolution_and_graph_s": round(done - extracted, 1),
        "merged_names": len(mapping),
    }
    return entities, units, timings


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()] if path.exists() else []


def precision(entities: pl.DataFrame, labels: list[dict]) -> dict:
    by_key = {name_key(label["name"]): label for label in labels}
    sample = sorted(entities.select("title", "type").iter_rows(), key=lambda row: seeded_rank(name_key(row[0])))
    sample = sample[:SAMPLE_SIZE]
    judged = [(title, kind, by_key.get(name_key(title))) for title, kind in sample]
    labelled = [(title, kind, label) for title, kind, label in judged if label is not None]
    correct = [(title, label) for title, _, label in labelled if label["entity"]]

    def named(title: str, label: dict) -> bool:
        return name_key(title) in {name_key(n) for n in [label["canonical"], *label.get("aliases", [])]}

    wrong = sorted(title for title, _, label in labelled if not label["entity"])
    return {
        "sampled": len(sample),
        "labelled": len(labelled),
        "precision": round(100 * len(correct) / max(len(labelled), 1), 1),
        "name_correct": round(100 * sum(named(t, label) for t, label in correct) / max(len(correct), 1), 1),
        "not_entities": wrong,
        "unlabelled": [title for title, _, label in judged if label is None],
        "types": dict(sample),
    }


def recall(entities: pl.DataFrame, units: pl.DataFrame, passages: list[dict]) -> dict:
    keys_by_unit: dict[str, set[str]] = {}
    for key, unit_ids in entities.select("name_key", "text_unit_ids").iter_rows():
        for unit in unit_ids:
            keys_by_unit.setdefault(unit, set()).add(key)
    unit_of = {(row["text"]): row["id"] for row in units.select("id", "text").iter_rows(named=True)}
    found, total, missed, stale = 0, 0, [], 0
    for passage in passages:
        unit = unit_of.get(passage["text"])
        if unit is None:
            stale += 1  # the chunking changed: this passage's labels no longer apply
            continue
        keys = keys_by_unit.get(unit, set())
        for entity in passage["entities"]:
            total += 1
            if {name_key(n) for n in [entity["name"], *entity.get("aliases", [])]} & keys:
                found += 1
            else:
                missed.append(entity["name"])
    return {
        "passages": len(passages) - stale,
        "stale_passages": stale,
        "entities": total,
        "recall": round(100 * found / max(total, 1), 1),
        "missed": missed,
    }


def passage_draw(units: pl.DataFrame) -> list[dict]:
    """The passages to label for recall: text units drawn by seeded hash of their text."""
    rows = sorted(units.select("text", "chunk_index").iter_rows(named=True), key=lambda r: seeded_rank(r["text"]))
    return [{"chunk_index": row["chunk_index"], "text": row["text"], "entities": []} for row in rows[:PASSAGES]]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=str(REPO / "bench" / "results" / "entities.json"))
    parser.add_argument("--label", default="after")
    parser.add_argument("--corpus", choices=sorted(CORPORA), action="append")
    parser.add_argument("--unlabelled", help="folder to write the sampled names (and passages) still to label")
    args = parser.parse_args()
    results: dict = {"label": args.label, "commit": git("rev-parse", "--short", "HEAD"), "machine": machine()}
    for corpus in args.corpus or sorted(CORPORA):
        started = time.perf_counter()
        entities, units, timings = offline_graph(CORPORA[corpus], corpus)
        scored = precision(entities, read_jsonl(LABELS / f"{corpus}.jsonl"))
        passages = read_jsonl(LABELS / f"{corpus}_passages.jsonl")
        results[corpus] = {
            "entities": entities.height,
            "text_units": units.height,
            "seconds": round(time.perf_counter() - started, 1),
            **timings,
            "precision": {k: v for k, v in scored.items() if k != "types"},
            "recall": recall(entities, units, passages),
        }
        if args.unlabelled:
            folder = Path(args.unlabelled)
            folder.mkdir(parents=True, exist_ok=True)
            with open(folder / f"{corpus}.jsonl", "w") as out:
                for title in scored["unlabelled"]:
                    out.write(json.dumps({"name": title, "type": scored["types"][title]}) + "\n")
            if not passages:
                with open(folder / f"{corpus}_passages.jsonl", "w") as out:
                    for passage in passage_draw(units):
                        out.write(json.dumps(passage, ensure_ascii=False) + "\n")
        summary = results[corpus]
        print(
            f"{corpus}: {summary['entities']} entities; precision {summary['precision']['precision']} % "
            f"({summary['precision']['labelled']} labelled of {summary['precision']['sampled']}), "
            f"recall {summary['recall']['recall']} % of {summary['recall']['entities']}; {summary['seconds']} s"
        )
    write_json(args.out, results)


if __name__ == "__main__":
    main()
