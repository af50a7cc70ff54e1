"""Answer quality as the index measures it (graphrag_assets.core.evaluation): the questions
files the project ships with, what counts as an answer, and a build compared with the one
before."""

from __future__ import annotations

import datetime as dt

import polars as pl
import pytest

from graphrag_assets.core.evaluation import (
    MEASURE_COLUMNS,
    Question,
    QuestionsError,
    compare,
    contains_answer,
    gold_present,
    questions_file_for,
    read_questions,
    summary,
    trend_svg,
    with_build,
)

from .conftest import shared_path


def test_both_shared_question_sets_are_read():
    carol = read_questions(shared_path("corpus", "christmas_carol-questions.jsonl"))
    assert len(carol) == 27
    clerk = next(q for q in carol if q.id == "cc01")
    assert clerk.kind == "local" and "Bob Cratchit" in clerk.answers and not clerk.gold
    wiki = read_questions(shared_path("corpus", "2wiki-101", "questions.jsonl"))
    assert len(wiki) == 101
    assert wiki[0].gold_titles == ("Lothair II", "Ermengarde of Tours") and wiki[0].answers == ()


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"question": "Who?"}\nnot json\n', "line 2: not JSON"),
        ('{"answers": ["x"]}\n', "line 1: each line needs a non-empty string 'question'"),
        ('{"id": "a", "question": "Who?"}\n{"id": "a", "question": "Why?"}\n', "line 2: id 'a' is used twice"),
        ('{"question": "Who?", "answers": [1]}\n', "'answers' must be a string or a list of strings"),
        ("\n\n", "has no questions"),
    ],
)
def test_a_bad_questions_file_is_named_with_its_line(tmp_path, content, message):
    path = tmp_path / "questions.jsonl"
    path.write_text(content)
    with pytest.raises(QuestionsError, match=message) as raised:
        read_questions(path)
    assert str(path) in str(raised.value)


def test_the_setting_names_a_file_per_corpus_or_one_for_all():
    setting = "carol=/q/carol.jsonl, wiki=/q/wiki.jsonl"
    assert str(questions_file_for("wiki", setting)) == "/q/wiki.jsonl"
    assert questions_file_for("other", setting) is None
    assert str(questions_file_for("other", "/q/all.jsonl,carol=/q/carol.jsonl")) == "/q/all.jsonl"
    assert str(questions_file_for("carol", "/q/all.jsonl,carol=/q/carol.jsonl")) == "/q/carol.jsonl"
    assert questions_file_for("carol", None) is None


def test_an_answer_contains_an_expected_answer_as_whole_words_with_aliases():
    assert contains_answer("His clerk, Bob Cratchit, earns fifteen shillings.", ["Bob Cratchit", "Cratchit"])
    assert contains_answer("Mr. CRATCHIT's family", ["Cratchit"])  # case and punctuation ignored
    assert contains_answer("Fezziwig's ball", ["fezziwig s ball", "Fezzíwig"])
    assert contains_answer("The café opened in 1921.", ["cafe"])  # accents ignored
    assert not contains_answer("Scrooge and Marleyville", ["Marley"])  # not inside another word
    assert not contains_answer("seventy years", ["seven"])
    assert contains_answer("anything", []) is None


def test_gold_documents_are_found_by_title_or_by_id_or_source_path():
    question = Question("q", "Who?", gold_titles=("Lothair II", "Ermengarde"), gold_ids=("notes.txt", "doc-9"))
    found = gold_present(question, ["doc-9", "doc-3"], ["Lothair II", "Other"], ["notes.md", "other.txt"])
    assert found == [True, False, False, True]


def _rows(build: int, answers: dict[str, bool], evidence: dict[str, float | None]) -> pl.DataFrame:
    measures = pl.DataFrame(
        [
            {
                "mode": "local",
                "question_id": qid,
                "question": f"question {qid}?",
                "kind": None,
                "method": "local",
                "answer": "",
                "generated_by": "extractive",
                "answer_contains": found,
                "refused": False,
                "gold_documents": 1,
                "gold_present_2k": evidence[qid],
                "gold_present_4k": evidence[qid],
                "gold_present_8k": evidence[qid],
                "context_tokens": 100,
                "seconds": 0.1,
            }
            for qid, found in answers.items()
        ],
        schema=MEASURE_COLUMNS,
    )
    return with_build(measures, "c", dt.datetime(2026, 1, build, tzinfo=dt.UTC))


def test_a_build_that_answers_worse_names_the_questions_that_regressed():
    before = _rows(1, {"a": True, "b": True, "c": True, "d": False}, {"a": 1.0, "b": 1.0, "c": 1.0, "d": 0.0})
    after = _rows(2, {"a": True, "b": False, "c": True, "d": True}, {"a": 1.0, "b": 0.0, "c": 1.0, "d": 1.0})
    comparison = compare(before, after, max_drop_points=5)
    # b lost its answer and its evidence; d improved, and improving is no regression.
    assert comparison.regressed.select("question_id", "what").to_dicts() == [
        {
            "question_id": "b",
            "what": (
                "lost the expected answer; evidence @2k 1.0 -> 0.0; evidence @4k 1.0 -> 0.0; evidence @8k 1.0 -> 0.0"
            ),
        }
    ]
    # One question of four lost, one gained: the rates did not fall, only question b got worse.
    assert comparison.drops == [] and comparison.passed
    # A drop within the allowance passes; beyond it fails, naming the rate.
    worse = _rows(3, {"a": False, "b": False, "c": True, "d": False}, {"a": 1.0, "b": 1.0, "c": 1.0, "d": 0.0})
    assert compare(before, worse, max_drop_points=60).passed
    assert compare(before, worse, max_drop_points=5).drops == ["local: answer_contains 75% -> 25%"]


def test_the_trend_plot_has_a_line_per_mode_over_builds():
    rows = pl.concat([_rows(day, {"a": day % 2 == 0, "b": True}, {"a": 1.0, "b": None}) for day in (1, 2, 3)])
    trend = summary(rows)
    assert trend.height == 3 and trend["answer_contains"].to_list() == [0.5, 1.0, 0.5]
    svg = trend_svg(trend)
    assert svg.startswith("<svg") and svg.count("<circle") == 3 and ">local</text>" in svg
