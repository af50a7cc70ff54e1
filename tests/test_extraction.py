import polars as pl

from graphrag_assets.core.extraction.chinese import chinese_mentions
from graphrag_assets.core.extraction.english import english_mentions
from graphrag_assets.core.extraction.names import name_key
from graphrag_assets.core.extraction.offline import extract_offline


def _titles(mentions, entity_type=None):
    return {m.title for m in mentions if entity_type is None or m.type == entity_type}


def test_english_proper_nouns_with_types_and_connectors():
    sentences = [
        "Mara Ellison joined the Harbor Institute in Port Calder.",
        "Later, Dr. Tobias Renn met the Ghost of Christmas Past near the Verrin River.",
        '"Look at the tide," said Clara.',
    ]
    mentions = english_mentions(sentences)
    titles = _titles(mentions)
    assert {"Mara Ellison", "Harbor Institute", "Port Calder", "Ghost of Christmas Past", "Verrin River"} <= titles
    assert "Tobias Renn" in titles  # the honorific marks a person and is not part of the name
    assert _titles(mentions, "ORGANIZATION") >= {"Harbor Institute"}
    assert _titles(mentions, "GEO") >= {"Port Calder", "Verrin River"}
    assert _titles(mentions, "PERSON") >= {"Tobias Renn", "Clara"}
    # Sentence-initial ordinary words and quoted verbs are not names.
    assert not titles & {"Later", "Look", "The"}


def test_all_caps_speaker_labels_become_names_and_acronyms_stay():
    mentions = english_mentions(["KEVIN SCOTT: We talked about AI at MIT with JACOB COLLIER."])
    titles = _titles(mentions)
    assert {"Kevin Scott", "Jacob Collier", "AI", "MIT"} <= titles


def test_noun_phrases_are_concepts():
    mentions = english_mentions(["Open source software changed how machine learning research works."])
    concepts = _titles(mentions, "CONCEPT")
    assert "machine learning research" in concepts or "machine learning" in concepts
    assert "source software" in concepts or "open source software" in concepts


def test_chinese_people_places_and_organisations():
    mentions = chinese_mentions(["王海燕在厦门大学工作，她常去福建泉州。", "陈志远代表厦门市人民政府访问。"])
    assert "王海燕" in _titles(mentions, "PERSON")
    assert {"福建", "泉州"} & _titles(mentions, "GEO")
    assert "厦门大学" in _titles(mentions, "ORGANIZATION")


def test_name_keys_merge_surface_variants():
    assert name_key("Bob  Cratchit") == name_key("BOB CRATCHIT") == name_key("Ｂｏｂ Cratchit")
    assert name_key("Scrooge's") == name_key("Scrooge")


def test_extraction_records_entities_and_same_sentence_evidence():
    units = pl.DataFrame(
        {
            "id": ["u1"],
            "document_id": ["d1"],
            "corpus": ["c"],
            "source_partition": ["c/a.txt"],
            "text": ["Mara Ellison met Victor Ashdown at Gullwing Pier. Mara Ellison later wrote to Port Calder."],
        }
    )
    entities, relationships = extract_offline(units)
    mara = entities.filter(pl.col("name_key") == "mara ellison").row(0, named=True)
    assert mara["mentions"] == 2 and "Gullwing Pier" in mara["description"]
    pairs = set(zip(relationships["source_key"], relationships["target_key"]))
    assert ("mara ellison", "victor ashdown") in pairs
    assert ("port calder", "victor ashdown") not in pairs  # never in one sentence
