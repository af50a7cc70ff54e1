"""The auto router on a small labelled set of question kinds over the sample index:
corpus-wide (global), questions that name entities of the index, multi-hop ones included
(local), short fact questions that name nothing the index knows (basic). Its reasons
must be true: every entity it cites is in the question, as whole words."""

import re

import pytest

from graphrag_common.lexical import fold
from graphrag_query import IndexReader
from graphrag_query.router import named_entities, route

LABELLED = [
    # corpus-wide, thematic
    ("What are the main themes across these documents?", "global"),
    ("Summarize what the collection says about the harbour.", "global"),
    ("What are the key issues raised in these documents?", "global"),
    ("总结这些文件的主要主题。", "global"),
    # naming entities, one hop or several
    ("What did Victor Ashdown decide about Gullwing Pier?", "local"),
    ("Where does the person who runs the Discovery Room work?", "local"),
    ("Which university did Mara Ellison visit in Xiamen?", "local"),
    ("Who leads the organisation that Clara Okafor volunteers for?", "local"),
    ("王海燕在哪里工作？", "local"),
    # short facts naming no entity of the index
    ("How many volunteers came on the first day?", "basic"),
    ("When was the new seawall finished?", "basic"),
    ("Who cleaned the storm drains?", "basic"),
]


@pytest.fixture(scope="module")
def reader(sample_index):
    return IndexReader(sample_index.db).load()


@pytest.mark.parametrize("question, kind", LABELLED)
def test_router_sends_each_kind_of_question_to_its_mode(reader, question, kind):
    method, reason = route(question, reader)
    assert method == kind, reason
    assert reason


def _words(text: str) -> str:
    return " " + " ".join(fold(w) for w in re.findall(r"[^\W_]+", text)) + " "


@pytest.mark.parametrize("question", [q for q, kind in LABELLED if kind == "local"])
def test_the_entities_a_reason_cites_are_in_the_question_as_whole_words(reader, question):
    named = named_entities(question, reader)
    assert named
    for title in named:
        if re.search(r"[\u4e00-\u9fff]", title):
            assert title in question
        else:
            assert _words(title) in _words(question), (title, question)


def test_names_inside_other_words_are_not_entities_of_the_question(reader):
    # "Calder" is inside "Calderon", "Renn" inside "Rennes", "Drake" inside "Drakes": none is named.
    assert named_entities("Is Calderon near Rennes or Drakesville?", reader) == []
