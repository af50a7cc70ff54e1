import os
import re
import subprocess
import sys

import duckdb
import polars as pl

from graphrag_assets.core.extraction.chinese import chinese_mentions
from graphrag_assets.core.extraction.english import LONG_DOCUMENT_WORDS, english_mentions
from graphrag_assets.core.extraction.names import name_key
from graphrag_assets.core.extraction.offline import (
    MAX_SENTENCE_CHARS,
    SENTENCES_PER_RECORD,
    document_text,
    extract_offline,
    split_title,
)
from graphrag_assets.core.graph import GraphSettings, build_graph

from .conftest import REPO, SAMPLE_CORPUS

ENGLISH_FILES = ["calder_shipping.txt", "harbor_institute.md", "river_cleanup.txt"]


def _one_line(size: int) -> str:
    """``size`` characters of the sample corpus's English prose without a sentence end or a line break."""
    prose = " ".join((SAMPLE_CORPUS / "default" / name).read_text(encoding="utf-8") for name in ENGLISH_FILES)
    line = re.sub(r"[.!?;:\s]+", " ", prose)
    return (line * (size // len(line) + 1))[:size]


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
    # ... unless without it the name is a function word: "Dr. Who" is no "Who".
    assert {"Dr. Who", "Peter Cushing"} <= _titles(english_mentions(["It stars Peter Cushing as Dr. Who."]))
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


def _units(texts: list[str], documents: list[str] | None = None, chunks: list[int] | None = None) -> pl.DataFrame:
    return pl.DataFrame(
        {
            "id": [f"u{i}" for i in range(len(texts))],
            "document_id": documents or [f"d{i}" for i in range(len(texts))],
            "chunk_index": chunks or [0] * len(texts),
            "corpus": "c",
            "source_partition": "c/wiki.jsonl",
            "text": texts,
        }
    )


def test_names_in_any_alphabet_are_whole():
    mentions = english_mentions(
        [
            (
                "Beyoncé Knowles met Zoë Saldaña in Łódź, then flew to São Paulo to see Ángel Di María and François "
                "Truffaut."
            ),
            "ÉMILE ZOLA wrote about Île-de-France and Hedwig of Mecklenburg- Güstrow.",
            "Beyoncé在北京演出。",
        ]
    )
    titles = _titles(mentions)
    expected = {
        "Beyoncé Knowles",
        "Zoë Saldaña",
        "Łódź",
        "São Paulo",
        "Ángel Di María",
        "François Truffaut",
        "Émile Zola",
        "Île-de-France",
    }
    assert expected <= titles
    # A hyphen the source spaced out still joins the name, as it is keyed.
    assert "Hedwig of Mecklenburg-Güstrow" in titles
    # No ASCII fragment of a name is left over ("Beyonc", "Zo", "Fran", "Mar").
    fragments = {t for t in titles if any(t != name and t in name for name in expected)}
    assert not fragments - {"Beyoncé"}
    # English words stop at Chinese characters, which stay jieba's.
    assert "Beyoncé" in titles and not any("北京" in t for t in titles)
    assert "北京" in _titles(chinese_mentions(["Beyoncé在北京演出。"]), "GEO")


def test_numbers_and_regnal_numerals_end_names_but_years_and_counts_do_not():
    mentions = english_mentions(
        [
            "The Heinkel HD 38 flew before Apollo 11 landed, and Louis XIV admired a Boeing 747 running Windows 95.",
            "Frederick I, the Hunsrücker, met Lothair II; his son fought in World War I.",
            "In 1990 Paris hosted the talks, and on May 3 Season 2 began.",
            "Kevin I think was right.",
        ]
    )
    titles = _titles(mentions)
    assert {
        "Heinkel HD 38",
        "Apollo 11",
        "Louis XIV",
        "Boeing 747",
        "Windows 95",
        "Frederick I",
        "Lothair II",
        "World War I",
    } <= titles
    assert {"Louis XIV", "Frederick I", "Lothair II"} <= _titles(mentions, "PERSON")  # a regnal number
    # A year is not part of the name before it, nor is a day or a count.
    assert "Paris" in titles and not {t for t in titles if t.startswith(("Paris ", "May", "Season 2", "In "))}
    assert "Kevin" in titles and "Kevin I" not in titles  # "I" before a verb is the pronoun
    # A page number across a table of contents is not a model number.
    assert _titles(english_mentions(["MARLEY'S GHOST                                   3"])) == {"Marley's Ghost"}
    # A year before an event is its edition.
    assert "1972 Summer Olympics" in _titles(english_mentions(["She competed at the 1972 Summer Olympics."]), "EVENT")


def test_full_names_said_once_survive_pruning_but_single_words_need_two_mentions():
    units = _units(
        [
            "Anna Lee met Ben Moss at the Heinkel HD 38 hangar. Xiamen was far away.",
            "Anna Lee met Ben Moss again, and Nicki Minaj sang.",
            "Anna Lee and Ben Moss left. Ada Lovelace met Alan Turing. Greta Garbo smiled.",
        ],
        documents=["d"] * 3,
        chunks=[0, 1, 2],
    )
    entities, relationships = build_graph(*extract_offline(units), units, "c", GraphSettings(min_edge_weight_pct=0))
    titles = set(entities["title"])
    assert {"Nicki Minaj", "Heinkel HD 38", "Anna Lee", "Ben Moss", "Greta Garbo"} <= titles
    assert "Xiamen" not in titles  # one word, said once: still pruned as rare
    # A name said once relates to the names of its sentence, not to all of its unit's.
    edges = {frozenset(pair) for pair in zip(relationships["source"], relationships["target"])}
    assert {frozenset({"Ada Lovelace", "Alan Turing"}), frozenset({"Anna Lee", "Nicki Minaj"})} <= edges
    assert not {e for e in edges if "Greta Garbo" in e or e == frozenset({"Ada Lovelace", "Anna Lee"})}


def test_titles_and_full_names_stay_without_edges():
    # Marufabad's article names nothing else, and Nicki Minaj shares her unit with no one:
    # neither has an edge, both stay (in no community).
    units = _units(
        [
            "Marufabad\n\nMarufabad is a village in Iran.",
            "Anna Lee met Ben Moss.",
            "Anna Lee met Ben Moss again.",
            "Nicki Minaj.",
        ]
    )
    records, relationships = extract_offline(units, {"d0": "Marufabad"})
    entities, relationships = build_graph(records, relationships, units, "c", GraphSettings(min_edge_weight_pct=60))
    rows = {r["title"]: r for r in entities.iter_rows(named=True)}
    assert rows["Nicki Minaj"]["degree"] == 0
    assert rows["Marufabad"]["type"] == "GEO" and rows["Marufabad"]["frequency"] == 1
    assert {"Anna Lee", "Ben Moss"} <= set(rows)
    edges = set(zip(relationships["source"], relationships["target"]))
    assert all(r["degree"] == sum(r["title"] in pair for pair in edges) for r in rows.values())


def test_a_given_title_is_an_entity_of_every_unit_of_its_document():
    theodred, song = "Theodred II (Bishop of Elmham)", "Changed It"
    units = _units(
        [
            (
                f"{theodred}\n\nTheodred II was a medieval Bishop of Elmham. The date of Theodred's consecration is "
                f"unknown."
            ),
            f"{theodred}\n\nHe died between 995 and 997, and was followed by Æthelstan of Elmham.",
            f'{song}\n\n"Changed It" is a song by Nicki Minaj and Lil Wayne. It was released in 2017.',
            "Lil Wayne sang it again.",  # a file's text: no given title
        ],
        documents=["d1", "d1", "d2", "d3"],
        chunks=[0, 1, 0, 0],
    )
    entities, relationships = extract_offline(units, {"d1": theodred, "d2": song})
    titled = entities.filter(pl.col("document_title"))
    # The name is the title before its qualifier, which types it (a bishop is a person).
    theodred_rows = titled.filter(pl.col("name_key") == "theodred ii").sort("text_unit_id")
    assert theodred_rows["text_unit_id"].to_list() == ["u0", "u1"]  # also where the unit never names him
    assert set(theodred_rows["title"]) == {"Theodred II"} and set(theodred_rows["type"]) == {"PERSON"}
    assert theodred_rows["mentions"].to_list() == [2, 1]  # the title line, and "Theodred II was ..."
    # Its description is the unit's text after the title line.
    assert theodred_rows["description"].to_list() == [
        "Theodred II was a medieval Bishop of Elmham. The date of Theodred's consecration is unknown.",
        "He died between 995 and 997, and was followed by Æthelstan of Elmham.",
    ]
    # The title line is not read again as text: no "Bishop of Elmham" from it, no "Changed".
    keys = set(entities["name_key"])
    assert not keys & {"theodred ii bishop of elmham", "changed", "bishop of elmham"}
    song_row = titled.filter(pl.col("name_key") == "changed it").row(0, named=True)
    assert song_row["type"] == "WORK" and song_row["mentions"] == 2
    # The article is about its title: the title relates to the names of every sentence.
    pairs = set(zip(relationships["source_key"], relationships["target_key"]))
    assert {("changed it", "nicki minaj"), ("changed it", "lil wayne"), ("theodred ii", "æthelstan of elmham")} <= pairs
    # A document without a given title keeps the old behaviour.
    untitled = entities.filter(pl.col("text_unit_id") == "u3")
    assert untitled["name_key"].to_list() == ["lil wayne"] and not untitled["document_title"].any()


def test_a_title_is_found_without_its_header_line_and_function_word_titles_claim_no_text():
    units = _units(
        ["Her father was a painter in Rome.", "Her\n\nHer is a 2013 film by Spike Jonze."], documents=["d1", "d2"]
    )
    entities, _ = extract_offline(units, {"d1": "Aas Ka Panchhi", "d2": "Her"})
    titled = {r["text_unit_id"]: r for r in entities.filter(pl.col("document_title")).iter_rows(named=True)}
    # The chunker's header may be missing: the title is still the unit's entity.
    assert titled["u0"]["title"] == "Aas Ka Panchhi" and titled["u0"]["mentions"] == 1
    # "Her" is matched in no sentence (every "Her" would be the film), yet is typed by its article.
    assert titled["u1"]["title"] == "Her" and titled["u1"]["mentions"] == 1 and titled["u1"]["type"] == "WORK"
    assert split_title("Aleksander Koniecpolski (1620–1659)") == ("Aleksander Koniecpolski", "1620–1659")


def test_the_index_makes_each_given_title_an_entity_and_no_file_name(sample_index):
    import duckdb

    with duckdb.connect(sample_index.db, read_only=True) as connection:
        titled = set(
            connection.execute("SELECT DISTINCT title FROM extracted_entities WHERE document_title").pl()["title"]
        )
        documents = connection.execute("SELECT title, source_path FROM documents").pl()
        entities = set(connection.execute("SELECT title FROM entities").pl()["title"])
    # JSONL and CSV rows have given titles; text and markdown files only their file names.
    given = set(documents.filter(pl.col("source_path").str.contains(r"\.(?:jsonl|csv)$"))["title"])
    assert "Origins of the Tide Lantern Festival" in given and titled == given
    assert titled <= entities


def test_a_unit_without_sentence_ends_relates_only_nearby_names():
    """Same-sentence pairs are quadratic in a sentence's names: a text unit that is one
    "sentence" is cut into pieces, so its records grow with its length, not its square."""
    line = _one_line(16_000)
    short, long = (extract_offline(_units([line[:n]]))[1] for n in (4_000, 16_000))
    assert 0 < short.height and long.height < 4.5 * short.height  # one sentence per unit: more than 6x
    assert long["description"].str.len_chars().max() <= SENTENCES_PER_RECORD * (MAX_SENTENCE_CHARS + 1)


def test_a_file_of_megabytes_on_one_line_is_indexed(tmp_path, dagster_home):
    """A one-line file without a sentence end, indexed offline by graphrag-index: it
    finishes. The timeout is only a safety net; such a file used to run out of memory."""
    folder = tmp_path / "in" / "big"
    folder.mkdir(parents=True)
    (folder / "line.txt").write_text(_one_line(2_000_000), encoding="utf-8")
    database = tmp_path / "out" / "index.duckdb"
    environment = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "DAGSTER_HOME": str(dagster_home)}
    command = [sys.executable, "-c", "import sys; from graphrag_evaluation.cli import main; sys.exit(main())"]
    command += ["--input", str(tmp_path / "in"), "--db", str(database), "--vectors", str(tmp_path / "out" / "lancedb")]
    result = subprocess.run(command, cwd=REPO, env=environment, capture_output=True, text=True, timeout=1200)
    assert result.returncode == 0, result.stderr[-3000:]
    with duckdb.connect(str(database), read_only=True) as connection:
        units, largest = connection.execute(
            "SELECT count(*), max(n_tokens) FROM text_units WHERE corpus = 'big'"
        ).fetchone()
        entities, relationships = connection.execute(
            "SELECT (SELECT count(*) FROM entities), (SELECT count(*) FROM relationships)"
        ).fetchone()
    assert units > 300 and largest <= 1200 + 2
    assert entities > 0 and relationships > 0


def _story(paragraph: str) -> str:
    """A novel-length document: the paragraph as many times as a long document needs."""
    words = len(paragraph.split())
    return "\n\n".join([paragraph] * (LONG_DOCUMENT_WORDS // words + 1))


def _story_titles(paragraph: str) -> set[str]:
    """The names found in the first text unit of a novel-length story of the paragraph."""
    records, _ = extract_offline(_units([_story(paragraph)], chunks=[0]))
    return set(records["title"])


def _short_document_titles(text: str) -> set[str]:
    """The names found in a short document."""
    records, _ = extract_offline(_units([text]))
    return set(records["title"])


def test_a_long_document_does_not_make_names_of_exclamations_adjectives_or_emphasis():
    paragraph = (
        "'Hallo!' cried Bob Cratchit, and poor Bob ran home to Camden Town with Tiny Tim. Poor Bob was tired, "
        "and old Fezziwig spoke of death and of a death, the cold night, the roast goose and the roast beef. "
        "'Introduce him to me,' said Fezziwig. Old Fezziwig danced. There was a great piece of Cold Roast on "
        "the table. It was cold, rigid, dreadful Death."
    )
    titles = _story_titles(paragraph)
    assert {"Bob Cratchit", "Bob", "Tiny Tim", "Camden Town", "Fezziwig"} <= titles
    # Clause starts ("Hallo!", "Introduce him"), the adjective before a name ("Poor Bob",
    # "Old Fezziwig"), ordinary words capitalised for emphasis ("Cold Roast") and a word
    # the story mostly writes in lower case ("Death") are no names.
    assert not titles & {"Hallo", "Introduce", "Poor Bob", "Old Fezziwig", "Cold Roast", "Roast", "Death"}
    # A short document is no evidence either way: its clause starts may be names.
    assert "Poor Bob" in _short_document_titles("Poor Bob ran home. Bob Cratchit was tired.")


def test_a_long_document_counts_each_capital_inside_a_sentence_whatever_its_line_ends():
    # "to Tessa" follows another word counted, and "knew\r\nTessa" a Windows line end:
    # both are a capital inside a sentence, so the story spells "Tessa" as a name.
    paragraph = "Tessa Lund kept the old lighthouse, and the keeper sent word to Tessa; the bay knew\r\nTessa well."
    story = _story(paragraph) + "\r\n\r\nBefore a man could say Jack Robinson, the lamp was lit."
    titles = _story_titles(story)
    assert {"Tessa Lund", "Tessa"} <= titles
    # Capitalised inside a sentence once in a long story, an idiom is no name.
    assert "Jack Robinson" not in titles


def test_a_long_document_makes_no_name_of_one_word_of_what_it_does_not_spell_as_a_name():
    paragraph = (
        "Mrs. Cratchit called him the Founder of the Feast, as if the Genius of the Weather sat above the feast, "
        "a great feast in cold weather, in wet weather. The Ghost of Christmas Past took him, past Jacob Marley, "
        "to the City of London. He then sailed to the Isle of Man, where a man and his men waited, an old man, "
        "for the Ghost of Jacob Marley."
    )
    titles = _story_titles(paragraph)
    # "Feast" and "Weather" are lower-case words of the story: what is of them is described.
    assert not titles & {"Founder of the Feast", "Genius of the Weather", "Founder", "Genius"}
    # Of a name, or a name its own words type, stays a name.
    assert {"Ghost of Christmas Past", "City of London", "Ghost of Jacob Marley", "Isle of Man"} <= titles
    # A short document is no evidence either way.
    assert "Founder of the Feast" in _short_document_titles("Mrs. Cratchit called him the Founder of the Feast.")


def test_a_long_document_makes_no_name_of_a_description_several_names_share():
    paragraph = (
        "Scrooge saw the Ghost of Christmas Past, and later the Ghost of Jacob Marley, a ghost in chains. "
        "Then the Ghost spoke to him. The Phantom, a silent phantom, stood by the door."
    )
    titles = _story_titles(paragraph)
    # "the Ghost" is whichever ghost is there: a common noun that heads several names.
    assert "Ghost" not in titles
    assert {"Ghost of Christmas Past", "Ghost of Jacob Marley"} <= titles
    # "the Phantom" is no word of another name: it names the one phantom of the story.
    assert "Phantom" in titles
    # A short document is no evidence either way.
    assert "Ghost" in _short_document_titles("Then the Ghost spoke to the Ghost of Christmas Past.")


def test_a_long_document_reads_a_shared_description_as_what_it_describes():
    paragraph = (
        "Scrooge saw the Ghost of Christmas Past, and later the Ghost of Jacob Marley, a ghost in chains, "
        "and he spoke of Jacob Marley. Then the Ghost spoke to him of the Evil Spirit, an evil thing. "
        "'Spirit of Tiny Tim, thy essence was kind!' said Scrooge, Tiny Tim smiled, and the Spirit, a kind "
        "spirit, smiled too."
    )
    titles = _story_titles(paragraph)
    # "the Ghost" heads several names: "the Ghost of Jacob Marley" is Jacob Marley, as
    # "the King of Spain" is Spain, and an evil spirit is no one's name.
    assert not titles & {"Ghost of Jacob Marley", "Spirit of Tiny Tim", "Evil Spirit"}
    assert {"Jacob Marley", "Tiny Tim", "Ghost of Christmas Past"} <= titles
    # A short document is no evidence either way.
    short = _short_document_titles("Then the Ghost of Jacob Marley spoke of the Evil Spirit.")
    assert {"Ghost of Jacob Marley", "Evil Spirit"} <= short


def test_a_shared_description_of_a_place_or_a_name_its_words_type_stays_whole():
    paragraph = (
        "Scrooge saw the Ghost of Christmas Past, and later the Ghost of Jacob Marley, a ghost; he spoke "
        "of Jacob Marley, of Oxford, of Wight. The Ghost left for the University of Oxford, a university, "
        "and the University of Leiden, then the Isle of Wight, an isle, and the Isle of Man. Once he flew "
        "to New York."
    )
    titles = _story_titles(paragraph)
    assert "Ghost of Jacob Marley" not in titles and "Jacob Marley" in titles
    # "the University" heads several names, but "University of Oxford" is no Oxford.
    assert {"University of Oxford", "Isle of Wight", "New York"} <= titles


def test_a_long_document_makes_no_name_of_what_it_lists_beside_a_common_noun():
    paragraph = (
        "'I will live in the Past, the Present, and the Future!' said Scrooge. The past was past, and at "
        "present the future was dark; the Future frightened him, and so did the Ghost of the Future. He "
        "sailed on the Thames, the Severn and the Tyne with Bob, Severn boats, Thames barges."
    )
    titles = _story_titles(paragraph)
    # "Past" is mostly written in lower case: what is listed with it is capitalised as it is.
    assert not titles & {"Past", "Present", "Future"}
    # A longer name keeps the word, and a list of names stays names.
    assert {"Ghost of the Future", "Thames", "Severn", "Tyne", "Scrooge"} <= titles


def test_a_long_document_makes_no_name_of_an_oath_or_a_greeting():
    paragraph = (
        "'God bless us!' cried Tiny Tim at the table on Christmas Day. 'Merry Christmas!' said Bob to Scrooge, "
        "and Scrooge wished him a merry Christmas in return. 'Good Heaven!' said Fezziwig. 'Scrooge!' cried "
        "Bob. Scrooge went home from a good Christmas dinner, and Scrooge slept."
    )
    titles = _story_titles(paragraph)
    # Phrases used mostly to open an exclamation are oaths and greetings.
    assert not titles & {"God", "Heaven", "Merry Christmas"}
    # A name called out now and then ("Scrooge!") is named more often otherwise.
    assert {"Tiny Tim", "Bob", "Scrooge", "Fezziwig", "Christmas", "Christmas Day"} <= titles
    # A short document is no evidence either way.
    assert "God" in _short_document_titles("'God bless us!' cried Tiny Tim to God.")


def test_a_document_is_read_once_where_its_text_units_overlap():
    units = ["Marley was dead: to begin with. There is no doubt", "There is no doubt whatever about that."]
    assert document_text(units) == "Marley was dead: to begin with. There is no doubt whatever about that."
    assert document_text(["First part.", "Second part."]) == "First part. Second part."


def test_a_name_of_a_name_is_split_into_two_related_names():
    records, relationships = extract_offline(
        _units(
            ["Trent Reznor of Nine Inch Nails produced the album with the Hershey Bears of the American Hockey League."]
        )
    )
    titles = set(records["title"])
    assert {"Trent Reznor", "Nine Inch Nails", "Hershey Bears", "American Hockey League"} <= titles
    assert "Trent Reznor of Nine Inch Nails" not in titles
    pairs = set(zip(relationships["source_key"], relationships["target_key"]))
    assert ("nine inch nails", "trent reznor") in pairs
    # An institution, a place, a regnal name, a ghost and a style stay whole.
    whole = _titles(
        english_mentions(
            [
                "She taught at the University of Leiden and met Louis I of Hesse.",
                "Jimeno Garcés of Pamplona saw the Ghost of Christmas Past.",
            ]
        )
    )
    assert {"University of Leiden", "Louis I of Hesse", "Jimeno Garcés of Pamplona", "Ghost of Christmas Past"} <= whole


def test_an_office_without_its_holder_is_no_entity_but_what_it_is_of_is():
    found = english_mentions(
        [
            "He was State Senator (1794) and Comptroller (1800), then Chief Editor of the Royal Commission.",
            "Both brothers were future Kings of the United Kingdom.",
            "The film was praised by Homer Cummings (Franklin D. Roosevelt's Attorney General).",
        ]
    )
    titles = _titles(found)
    offices = {"State Senator", "Comptroller", "Kings of the United Kingdom", "Chief Editor of the Royal Commission"}
    assert not titles & offices
    assert {"Royal Commission", "United Kingdom", "Homer Cummings", "Franklin D. Roosevelt"} <= titles
    assert not any("Attorney General" in title for title in titles)
    # The office of someone in the story, the holder's name with an office, and names that
    # end in an office word stay.
    kept = _titles(
        english_mentions(
            [
                "The Lord Mayor gave orders to his fifty cooks.",
                "Mayor Helen Strand met Stephen King at Burger King with the Los Angeles Kings.",
            ]
        )
    )
    assert {"Lord Mayor", "Helen Strand", "Stephen King", "Burger King", "Los Angeles Kings"} <= kept


def test_a_noun_phrase_repeated_by_one_document_only_is_pruned():
    plump = [
        "The plump sister laughed at Topper.",
        "The plump sister blushed near Topper.",
        "Topper saw the plump sister.",
    ]
    steam = ["The steam engine reached Leeds.", "A steam engine left Leeds.", "Leeds built the steam engine."]
    units = _units(plump + steam, documents=["book"] * 3 + ["a", "b", "c"], chunks=[0, 1, 2, 0, 0, 0])
    entities, _ = build_graph(*extract_offline(units), units, "c", GraphSettings(min_edge_weight_pct=0))
    concepts = set(entities.filter(pl.col("type") == "CONCEPT")["title"])
    assert "steam engine" in concepts and "plump sister" not in concepts
