"""The retrieval layer's pure parts: terms, BM25, exact vector search, whole-word name
matching and the walk from a question's names to the second hop, and titled text units."""

import numpy as np
import polars as pl

from graphrag_assets.core.chunking import chunk_documents
from graphrag_common.lexical import Bm25, reciprocal_rank_fusion, search_terms
from graphrag_query.extractive import Evidence, compose
from graphrag_query.ranking import MentionGraph
from graphrag_query.result import EXTRACTIVE_LABEL
from graphrag_query.search import LexicalIndex, VectorIndex


def test_terms_fold_case_and_accents_keep_numbers_and_split_chinese_into_bigrams():
    assert search_terms("Beyoncé's films") == ["beyonce", "film"]
    assert search_terms("Louis XIV and Apollo 11") == ["louis", "xiv", "apollo", "11"]
    assert search_terms("王海燕在厦门大学") == ["王海", "海燕", "燕在", "在厦", "厦门", "门大", "大学"]
    # Function words go, content words that look common stay: questions are made of them.
    assert search_terms("Where was the director of the film born?") == ["director", "film", "born"]


def test_bm25_prefers_rare_terms_and_ignores_texts_sharing_nothing():
    texts = [
        "The film was released in 1990 and the film was a success.",
        "Heinkel HD 38 was a German fighter aircraft.",
        "The film director Lucia Ferro was born in Turin.",
        "A quiet village by the sea.",
    ]
    index = LexicalIndex.from_texts(["a", "b", "c", "d"], texts)
    hits = index.top("Where was the director of the film born?", 10)
    assert hits["id"].to_list()[0] == "c"
    assert "d" not in hits["id"].to_list() and "b" not in hits["id"].to_list()
    assert index.top("Heinkel HD 38", 1)["id"].to_list() == ["b"]
    # A term asked twice counts twice; scores are positive and sorted.
    scores = Bm25.from_texts(texts).scores("film film")
    assert scores[0] > scores[2] > 0 and scores[3] == 0


def test_rank_fusion_rewards_agreement_between_rankings():
    fused = reciprocal_rank_fusion([["a", "b", "c"], ["b", "d", "a"]])
    assert max(fused, key=fused.get) == "b"  # second and first beats first and third
    assert fused["d"] < fused["a"] and "c" in fused


def test_vector_search_is_exact_and_honours_exclusions():
    rng = np.random.default_rng(7)
    matrix = rng.normal(size=(50, 16)).astype(np.float32)
    rows = pl.DataFrame(
        {"id": [f"v{i}" for i in range(50)], "vector": matrix.tolist()},
        schema={"id": pl.String, "vector": pl.List(pl.Float32)},
    )
    index = VectorIndex.from_rows(rows)
    hits = index.nearest(matrix[12], 3)
    assert hits["id"][0] == "v12" and abs(hits["similarity"][0] - 1.0) < 1e-5
    normalised = matrix / np.linalg.norm(matrix, axis=1, keepdims=True)
    expected = np.argsort(-(normalised @ normalised[12]))[:3]
    assert hits["id"].to_list() == [f"v{i}" for i in expected]
    assert "v12" not in index.nearest(matrix[12], 3, exclude=["v12"])["id"].to_list()
    assert VectorIndex.from_rows(rows.clear()).nearest(matrix[0], 3).is_empty()


def _graph(mentions: dict[str, list[str]], titles: dict[str, str] | None = None) -> MentionGraph:
    """A mention graph from {text unit id: [name keys]}, each name extracted as written in
    ``titles`` (else as its key)."""
    titles = titles or {}
    units = pl.DataFrame({"id": list(mentions)})
    records = pl.DataFrame(
        [(unit, name, "OTHER", titles.get(name, name)) for unit, names in mentions.items() for name in names],
        schema={"text_unit_id": pl.String, "name_key": pl.String, "type": pl.String, "title": pl.String},
        orient="row",
    )
    entities = pl.DataFrame(
        schema={"text_unit_ids": pl.List(pl.String), "name_key": pl.String, "type": pl.String, "title": pl.String}
    )
    return MentionGraph.build(units, entities, records)


def test_question_names_match_whole_words_longest_first_and_capitalised_when_one_word():
    graph = _graph({"u1": ["rome", "louis", "louis xiv", "state"], "u2": ["王海燕"], "u3": ["beyonce"]})
    found = lambda question: {graph.name_keys[n] for n in graph.names_in(question)}  # noqa: E731
    assert found("Who was Romeo's father?") == set()  # not inside another word
    assert found("When did Louis XIV die?") == {"louis xiv"}  # the longer name wins
    assert found("Which state borders it?") == set()  # a lower-case common word is no name
    assert found("Which State borders Rome?") == {"state", "rome"}
    assert found("王海燕在哪里工作？") == {"王海燕"}
    assert found("Where was Beyoncé born?") == {"beyonce"}


def test_a_capitalised_name_is_not_matched_by_the_same_words_in_lower_case():
    graph = _graph(
        {"u1": ["the state", "new york", "climate change", "unesco"]},
        {"the state": "The State", "new york": "New York", "unesco": "UNESCO"},
    )
    found = lambda question: {graph.name_keys[n] for n in graph.names_in(question)}  # noqa: E731
    assert found("Which film was shot in the state where the director was born?") == set()
    assert found("Who founded The State?") == {"the state"}
    assert found("Who painted the new york skyline?") == set()
    assert found("How does climate change affect it?") == {"climate change"}  # a topic, written in lower case
    assert found("When did Unesco list it?") == {"unesco"}  # a title in capitals says nothing of case


def test_a_name_titled_otherwise_than_its_key_is_read_by_its_keys_words_even_at_a_texts_end():
    # Resolution may title a name with more words than its key ("Lord Bernard Stewart" for
    # "bernard stewart") or split otherwise ("A-Side" for "aside"): the capitals asked of a
    # mention are those of the key's own words, and a mention ending the text is read too.
    graph = _graph({"u1": ["bernard stewart", "aside"]}, {"bernard stewart": "Lord Bernard Stewart", "aside": "A-Side"})
    found = lambda question: {graph.name_keys[n] for n in graph.names_in(question)}  # noqa: E731
    assert found("Who served under Bernard Stewart") == {"bernard stewart"}
    assert found("Who served under bernard stewart") == set()
    assert found("What is on the Aside") == {"aside"}


def test_a_question_word_opening_the_question_is_no_name():
    # An index may hold a name made of function words ("Who", from a film's "Dr. Who"):
    # the capital of a question's first word says nothing, so "Who is ..." does not name it.
    graph = _graph({"u1": ["who", "rome"]}, {"who": "Who", "rome": "Rome"})
    found = lambda question: {graph.name_keys[n] for n in graph.names_in(question)}  # noqa: E731
    assert found("Who is the mayor of Rome?") == {"rome"}
    assert found("Which doctor did Peter Cushing play, Who or House?") == {"who"}


def test_the_walk_reaches_the_second_hop_through_the_name_the_first_hop_mentions():
    # "Where was the director of Blue Harbour born?": the film's passage names its director,
    # the director's own passage says where she was born; a passage sharing only common
    # words with the question must rank below both.
    graph = _graph(
        {
            "film": ["blue harbour", "lucia ferro"],
            "director": ["lucia ferro", "turin"],
            "other": ["marco vela", "genoa"],
            "busy": ["turin", "milan", "rome", "blue"],
        }
    )
    seeds = graph.names_in("Where was the director of Blue Harbour born?")
    units, _ = graph.personalized_pagerank({}, seeds, damping=0.7)
    ranked = [graph.unit_ids[i] for i in np.argsort(-units)]
    assert ranked[:2] == ["film", "director"]
    assert units[graph.unit_ids.index("other")] == 0  # not connected to the question at all


def test_a_given_title_heads_every_text_unit_of_its_document_file_names_do_not():
    documents = pl.DataFrame(
        {
            "id": ["row", "file"],
            "title": ["Heinkel HD 38", "notes.txt"],
            "text": ["It was a German fighter. " * 200, "Plain notes. " * 10],
            "corpus": "c",
            "source_partition": ["c/planes.jsonl", "c/notes.txt"],
            "source_path": ["planes.jsonl", "notes.txt"],
        }
    )
    units = chunk_documents(documents)
    titled = units.filter(pl.col("document_id") == "row")["text"].to_list()
    assert len(titled) > 1 and all(text.startswith("Heinkel HD 38\n\n") for text in titled)
    assert titled[0].startswith("Heinkel HD 38\n\nIt was")
    assert units.filter(pl.col("document_id") == "file")["text"][0].startswith("Plain notes.")


def test_the_offline_answer_follows_the_bridge_name_to_the_second_hop():
    graph = _graph(
        {"u1": ["blue harbour", "lucia ferro"], "u2": ["lucia ferro", "turin"], "u3": ["marco vela", "genoa"]}
    )
    evidence = [
        Evidence("Blue Harbour is a 1990 drama film directed by Lucia Ferro.", "Sources (1)"),
        Evidence("Marco Vela was born in Genoa and never directed a film.", "Sources (3)"),
        Evidence("Lucia Ferro was born in Turin in 1950.", "Sources (2)"),
    ]
    answer = compose("Where was the director of Blue Harbour born?", evidence, graph=graph)
    assert answer.startswith(EXTRACTIVE_LABEL)
    assert "- Blue Harbour is a 1990 drama film directed by Lucia Ferro. [Data: Sources (1)]" in answer
    assert "- Following Lucia Ferro: Lucia Ferro was born in Turin in 1950. [Data: Sources (2)]" in answer
    assert "Following Marco Vela" not in answer


def test_a_sentence_of_speech_is_read_with_who_speaks_it():
    # The raise is promised in a sentence that names neither Wendle nor the day: its
    # paragraph's "said Wendle" says who promises it. Sentences naming Halloran and the
    # feast, but not Wendle, would otherwise come first.
    scene = (
        "Halloran came in late, and hung up his hat.\n\n"
        "'A merry Midwinter, Halloran!' said Wendle, clapping him on the back. 'I have been a "
        "hard master these ten years. I'll double your wages from this very day, my good fellow!'\n\n"
        "Halloran could not believe his ears."
    )
    evidence = [
        Evidence(scene, "Sources (1)"),
        *[
            Evidence(f"Halloran spent Midwinter day number {n} at home with his children.", f"Sources ({n + 2})")
            for n in range(6)
        ],
    ]
    answer = compose("What does Wendle do for Halloran on Midwinter day?", evidence, limit=3)
    assert "I'll double your wages from this very day, my good fellow!" in answer
    # Without a speaker named in its paragraph, a sentence is read alone.
    unattributed = evidence[1:] + [Evidence(scene.replace("said Wendle", "came the reply"), "Sources (1)")]
    answer = compose("What does Wendle do for Halloran on Midwinter day?", unattributed, limit=3)
    assert "double your wages" not in answer


def test_relevance_ignores_framing_words_and_accepts_several_question_terms_at_lower_coverage():
    from graphrag_query.relevance import RelevanceScorer

    collection = (
        [
            "Privacy laws slow down technology development, the guest said.",
            "New privacy rules were debated in parliament last year.",
            "The weather was fine and the guest arrived early.",
            "Technology development in batteries was fast.",
            "Laws of physics apply everywhere.",
        ]
        + [f"Technology and its development, story {n}." for n in range(6)]
        + [f"An unrelated sentence about gardening number {n}." for n in range(20)]
    )
    scorer = RelevanceScorer(
        "How do guests typically perceive the impact of privacy laws on technology development?", collection
    )
    # Words that frame the question are not its subject: rare as they are, they weigh nothing.
    assert not {"typically", "perceive"} & set(scorer.question_terms)
    assert {"privacy", "law", "technology", "development"} <= set(scorer.question_terms)
    assert scorer.score(collection[0]) > scorer.score(collection[3]) > 0
    # Two of the question's terms count although they cover under 30 % of its weight ...
    assert 0 < scorer.coverage(collection[3]) < 0.3 and scorer.score(collection[3]) > 0
    # ... one stray common word does not.
    assert scorer.score(collection[2]) == 0
    assert scorer.score("An unrelated sentence about gardening number 3.") == 0
    # A question made only of framing and corpus-wide words is about everything.
    assert RelevanceScorer("What topics do guests typically mention?", collection).generic is False
    assert RelevanceScorer("What are the main themes typically mentioned?", collection).generic
