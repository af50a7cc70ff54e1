"""Questions about someone's relative, read one relation at a time: plain functions over
evidence sentences (fictional people throughout)."""

import pytest

from graphrag_query.answer_span import state_answers
from graphrag_query.kinship import kinship_chain, relatives
from graphrag_query.relevance import RelevanceScorer


@pytest.mark.parametrize(
    ("question", "named", "relations", "then"),
    [
        ("Who is Oskar Brandt's paternal grandfather?", "Oskar Brandt", ("father", "father"), "Who is Z?"),
        ("Who is the father-in-law of Ida Vell?", "Ida Vell", ("spouse", "father"), "Who is Z?"),
        ("Who is Godric Iii's stepmother?", "Godric Iii", ("father", "wife"), "Who is Z?"),
        ("Who is the mother-in-law of Anna Lind?", "Anna Lind", ("spouse", "mother"), "Who is Z?"),
        (
            "Where was the paternal grandfather of Anna Lund born?",
            "Anna Lund",
            ("father", "father"),
            "Where was Z born?",
        ),
        (
            "Where was the place of death of Maurice, Prince Of Tessin's father?",
            "Maurice, Prince Of Tessin",
            ("father",),
            "Where was the place of death of Z?",
        ),
        (
            "Who is the mother of the director of film Grey Coast?",
            "the director of film Grey Coast",
            ("mother",),
            "Who is Z?",
        ),
    ],
)
def test_a_question_about_a_relative_is_read_as_the_relations_from_the_one_it_names(question, named, relations, then):
    chain = kinship_chain(question)
    assert (chain.named, chain.relations, chain.then("Z")) == (named, relations, then)


@pytest.mark.parametrize("question", ["Who is known as the father of modern physics?", "Where was Oskar Brandt born?"])
def test_a_question_about_no_ones_relative_has_no_chain(question):
    assert kinship_chain(question) is None


def test_a_relative_is_read_from_words_said_of_the_sentences_subject_not_of_another_named_there():
    candidates = [
        # "daughter of" here is the wife's, not Tomas Brandt's.
        ("Tomas Brandt married Clara Holm, the only daughter of Erik Holm.", "Sources (1)"),
        ("Tomas Brandt (1801 – 1870), son of Viktor Brandt and Elsa Moll, was a Danish shipowner.", "Sources (1)"),
    ]
    assert [name for name, _, _ in relatives("father", "Tomas Brandt", candidates, {})] == ["Viktor Brandt"]
    assert [name for name, _, _ in relatives("mother", "Tomas Brandt", candidates, {})] == ["Elsa Moll"]
    assert [name for name, _, _ in relatives("wife", "Tomas Brandt", candidates, {})] == ["Clara Holm"]


def test_a_pronoun_in_the_passage_titled_with_the_name_says_the_relation_of_that_one():
    candidates = [
        ("Gunther (450 – 516) was King of the Westmark.", "Sources (7)"),
        ("He was the husband of Aldegund.", "Sources (7)"),
        ("He was the husband of Brunhild.", "Sources (8)"),
    ]
    found = relatives("wife", "Gunther", candidates, {"Sources (7)": "Gunther", "Sources (8)": "Sigmund"})
    assert [(name, citation) for name, _, citation in found] == [("Aldegund", "Sources (7)")]


def _statements(question, candidates, headings=None, **names):
    scorer = RelevanceScorer(question, [sentence for sentence, _ in candidates])
    return state_answers(question, candidates, scorer, headings=headings or {}, **names)


def test_a_paternal_grandfather_is_the_fathers_father_and_both_sentences_are_cited():
    candidates = [
        ("Oskar Brandt (died 1346) was a Danish magnate.", "Sources (1)"),
        ("Oskar's father, Tomas Brandt, was slain in 1318, when Oskar was under age.", "Sources (1)"),
        ("Oskar's mother's brother, Hans Moll, ruled the isles.", "Sources (1)"),
        ("Tomas Brandt (died 1318) was a Danish magnate.", "Sources (2)"),
        ("He was an illegitimate son of Aksel mac Brandt, and fought at Faughart.", "Sources (2)"),
    ]
    headings = {"Sources (1)": "Oskar Brandt", "Sources (2)": "Tomas Brandt"}
    (statement,) = _statements("Who is Oskar Brandt's paternal grandfather?", candidates, headings)
    assert statement.answer == "Aksel mac Brandt"
    assert statement.hops()[0][0] == "Tomas Brandt"
    line = statement.line()
    assert "through Tomas Brandt" in line and "[Data: Sources (1)]" in line and "[Data: Sources (2)]" in line


def test_a_stepmother_is_the_fathers_wife_read_where_the_fathers_passage_says_he():
    candidates = [
        ("Godric III (or Godwin), son of king Gunther, was king of the Westmark.", "Sources (1)"),
        ("Godric was killed in 534.", "Sources (1)"),
        ("Gunther (450 – 516) was King of the Westmark.", "Sources (2)"),
        ("He was the husband of Aldegund.", "Sources (2)"),
    ]
    headings = {"Sources (1)": "Godric III", "Sources (2)": "Gunther"}
    (statement,) = _statements("Who is Godric Iii's stepmother?", candidates, headings)
    assert statement.answer == "Aldegund" and statement.hops()[0][0] == "Gunther"


def test_a_father_in_law_is_followed_through_each_marriage_to_the_one_the_evidence_continues():
    # The first wife's father is nowhere in the evidence; the second wife's is.
    candidates = [
        ("In 1591 Johann Vell married firstly with Greta of Lindau.", "Sources (1)"),
        ("In 1598 Johann Vell married secondly with Christine of Ahrweiler.", "Sources (1)"),
        (
            "Born in Ahrweiler, she was born from the marriage of Wilhelm IV, Count of Ahrweiler and his wife Sabine.",
            "Sources (2)",
        ),
    ]
    headings = {"Sources (1)": "Johann Vell", "Sources (2)": "Christine of Ahrweiler (1578–1658)"}
    (statement,) = _statements("Who is the father-in-law of Johann Vell?", candidates, headings)
    assert statement.answer == "Wilhelm IV, Count of Ahrweiler"
    assert statement.hops()[0][0] == "Christine of Ahrweiler"


def test_a_question_asked_of_a_relative_is_answered_about_the_relative():
    # The question asks where the father died: not where the one it names died.
    candidates = [
        ("Henrik Dahl (1820 – 1871) was a Norwegian painter who died in Bergen.", "Sources (1)"),
        ("He was the second son of Nils the Elder, Duke of Vestfold, by his wife Agnes.", "Sources (1)"),
        ("Nils the Elder (1790 – 1858) was a Duke of Vestfold who died in Tønsberg.", "Sources (2)"),
    ]
    headings = {"Sources (1)": "Henrik Dahl", "Sources (2)": "Nils the Elder"}
    types = {"Bergen": "GEO", "Tønsberg": "GEO", "Duke of Vestfold": "PERSON"}
    (statement,) = _statements("Where did Henrik Dahl's father die?", candidates, headings, type_of=types.get)
    assert statement.answer == "Tønsberg" and statement.hops()[0][0] == "Nils the Elder, Duke of Vestfold"


def test_a_relative_is_named_with_the_title_after_the_comma_and_asked_about_in_their_own_passage():
    # Two Karl Augusts: the husband is the one styled Prince of Zerbst. "She was born at
    # Gottorp, the daughter of Karl August" names a Karl August, but tells her own birth.
    candidates = [
        ("Johanna of Gottorp (1712 – 1760) was a regent by marriage to Karl August, Prince of Zerbst.", "Sources (1)"),
        (
            "She was born at Gottorp, the daughter of Karl August, Duke of Gottorp and Albertina of Baden.",
            "Sources (1)",
        ),
        (
            "Karl August, Prince of Zerbst (29 November 1690, in Dornburg – 16 March 1747, in Zerbst) was a prince.",
            "Sources (2)",
        ),
    ]
    headings = {"Sources (1)": "Johanna of Gottorp", "Sources (2)": "Karl August, Prince of Zerbst"}
    types = {"Gottorp": "GEO", "Dornburg": "GEO", "Zerbst": "GEO"}
    (statement,) = _statements(
        "Where was the husband of Johanna Of Gottorp born?", candidates, headings, type_of=types.get
    )
    assert statement.hops()[0][0] == "Karl August, Prince of Zerbst"
    assert statement.answer == "Dornburg"


def test_the_mother_is_the_second_parent_named_whatever_stands_between():
    candidates = [
        (
            "Infante Ferdinand of Lindau (1884 – 1958) was the eldest son and child of Ludwig of Lindau "
            "and his wife, Infanta Maria of Tessin.",
            "Sources (1)",
        )
    ]
    found = relatives("mother", "Prince Ferdinand Of Lindau", candidates, {"Sources (1)": "Prince Ferdinand of Lindau"})
    assert [name for name, _, _ in found] == ["Maria of Tessin"]


def test_asked_of_the_relative_a_sentence_of_their_passage_says_it_of_them_in_other_words():
    # The death sentence names neither the father nor "death": it is in his passage, and
    # "assassinated" says how he died.
    candidates = [
        ("He succeeded his father Willem the Quiet as stadtholder of Zeeland in 1585.", "Sources (1)"),
        (
            "Willem I, Prince of Oranje (24 April 1533 – 10 July 1584), known as Willem the Quiet, led the revolt.",
            "Sources (2)",
        ),
        ("He was born in the House of Nassau.", "Sources (2)"),
        ("Declared an outlaw in 1580, he was assassinated by Balthasar Gerard in Delft in 1584.", "Sources (2)"),
    ]
    headings = {"Sources (1)": "Maurits, Prince of Oranje", "Sources (2)": "Willem the Quiet"}
    types = {"Delft": "GEO", "Zeeland": "GEO"}
    (statement,) = _statements(
        "Where was the place of death of Maurits, Prince Of Oranje's father?", candidates, headings, type_of=types.get
    )
    assert statement.hops()[0][0] == "Willem the Quiet"
    assert statement.answer == "Delft"


def test_a_spouse_named_before_whom_he_married_is_his_and_asked_why_they_died_in_their_passage():
    candidates = [
        ("Arne Holt (1889 – 1957) was a Danish critic.", "Sources (1)"),
        (
            "Holt is best remembered for his friendship with Per Lund and his bond with Sigrid Vang, whom he "
            "married in 1918, and for his essays.",
            "Sources (1)",
        ),
        ("Sigrid Vang (1888 – 1923) was a poet born in Aarhus.", "Sources (2)"),
        ("Vang was diagnosed with tuberculosis in 1917; the disease claimed her life at the age of 34.", "Sources (2)"),
        ("Per Lund died of a heart attack in Odense.", "Sources (3)"),
    ]
    headings = {"Sources (1)": "Arne Holt", "Sources (2)": "Sigrid Vang", "Sources (3)": "Per Lund"}
    assert [name for name, _, _ in relatives("wife", "Arne Holt", candidates, headings)] == ["Sigrid Vang"]
    (statement,) = _statements("Why did Arne Holt's wife die?", candidates, headings)
    assert statement.hops()[0][0] == "Sigrid Vang"
    assert statement.answer == "tuberculosis"
    # A place or a parent named before the words is no spouse; "would later marry" is.
    for sentence, spouse in (
        ("Arne Holt met Lise Berg in Paris, whom he married in 1950.", []),
        ("Arne Holt met Lise Berg, daughter of the painter Karl Berg, whom he married in 1950.", []),
        ("Arne Holt met Lise Berg, whom he would later marry.", ["Lise Berg"]),
        ("Arne Holt introduced his friend Tom Ek, whom he married to his sister.", []),
    ):
        found = relatives("wife", "Arne Holt", [(sentence, "Sources (1)")], {"Sources (1)": "Arne Holt"})
        assert [name for name, _, _ in found] == spouse, sentence
    # Whom she married, in the passage about him, is another's spouse.
    hers = [
        ("Arne Holt was a critic; he wrote for his own paper.", "Sources (1)"),
        ("He knew Lise Berg, whom she married later.", "Sources (1)"),
    ]
    assert relatives("wife", "Arne Holt", hers, {"Sources (1)": "Arne Holt"}) == []


def test_of_two_parents_the_father_is_the_one_bearing_the_childs_surname_whatever_their_order():
    candidates = [
        ("Oskar Lehner (born 1959) is a German film director.", "Sources (1)"),
        ("He was born in Starnberg as the son of writer Gisela Marx and the writer Klaus Lehner.", "Sources (1)"),
    ]
    headings = {"Sources (1)": "Oskar Lehner"}
    assert [name for name, _, _ in relatives("mother", "Oskar Lehner", candidates, headings)] == ["Gisela Marx"]
    assert [name for name, _, _ in relatives("father", "Oskar Lehner", candidates, headings)] == ["Klaus Lehner"]
    # A description is no name: the son of a farmer names no father.
    farmer = [("Oskar Lehner was the son of a farmer in Bavaria.", "Sources (2)")]
    assert relatives("father", "Oskar Lehner", farmer, {}) == []


def test_a_kinship_word_in_a_title_is_no_relation():
    assert kinship_chain("What nationality is the director of film Son Of Frankenstein?") is None
    assert kinship_chain("When was the director of film The Stepmother born?") is None


@pytest.mark.parametrize(
    ("question", "named", "relations"),
    [
        ("Who is Anna Lind's son in law?", "Anna Lind", ("daughter", "husband")),
        ("Who is the son-in law of Anna Lind?", "Anna Lind", ("daughter", "husband")),
        ("Who is Anna Lind's step-mother?", "Anna Lind", ("father", "wife")),
        ("Who is the father of Anna Lind's husband?", "Anna Lind", ("husband", "father")),
        ("Who is Anna Lind's husband's father?", "Anna Lind", ("husband", "father")),
        ("Did Anna Lind's father die in Paris?", "Anna Lind", ("father",)),
    ],
)
def test_kinship_words_are_read_however_joined_and_one_after_the_other(question, named, relations):
    chain = kinship_chain(question)
    assert (chain.named, chain.relations) == (named, relations)


@pytest.mark.parametrize(
    "question",
    [
        "Who was the first wife of Henry Vane?",  # which wife, not who the wife is
        "What is Apple's sister company?",
        "Who are Anna Lind's sons?",
        "Who's father is Anna Lind?",
        "Who was the grandson of Genghis Khan that founded the Yuan dynasty?",
    ],
)
def test_a_question_that_asks_which_relative_or_no_relative_at_all_is_read_as_before(question):
    assert kinship_chain(question) is None


@pytest.mark.parametrize(
    ("sentence", "father"),
    [
        ("Tom Ek is the son of John F. Kennedy.", ["John F. Kennedy"]),
        ("Tom Ek, son of Earl Hines, played piano.", ["Earl Hines"]),
        ("Tom Ek was the son of a Scottish farmer.", []),
        ("Tom Ek was the son of Olaf Berg's gardener.", []),
        ("Tom Ek played the son of Don Corleone in a 1990 film.", []),
        ("His father was Norwegian.", []),
    ],
)
def test_a_relatives_name_is_read_whole_and_only_when_it_is_one(sentence, father):
    found = relatives("father", "Tom Ek", [(sentence, "Sources (1)")], {"Sources (1)": "Tom Ek"})
    assert [name for name, _, _ in found] == father


def test_a_relation_said_of_another_is_not_the_subjects():
    candidates = [
        ("Tom Ek (1900 – 1970) was a Danish painter. He painted the harbour.", "Sources (1)"),
        ("Tom Ek's son was married to Clara Holm.", "Sources (1)"),
        ("She met him in Paris; her father, Olaf Berg, was a sailor.", "Sources (1)"),
        ("He was the husband of Anna Berg.", "Sources (1)"),
    ]
    headings = {"Sources (1)": "Tom Ek"}
    assert [name for name, _, _ in relatives("wife", "Tom Ek", candidates, headings)] == ["Anna Berg"]
    assert [name for name, _, _ in relatives("father", "Tom Ek", candidates, headings)] == []


def test_a_sentence_that_names_the_relative_and_the_answer_is_quoted_once():
    candidates = [("Anna Lind is the daughter of Olaf Lind, who was the son of Sven Lind.", "Sources (1)")]
    (statement,) = _statements("Who is Anna Lind's paternal grandfather?", candidates)
    assert statement.answer == "Sven Lind"
    assert statement.line().count("Anna Lind is the daughter") == 1
