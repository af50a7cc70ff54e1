"""Answer quality as part of the asset graph, on a real Dagster instance and DuckDB file:
each build of a corpus with a questions file is evaluated before it is published, a build
that answers worse fails the check (a warning, or with GRAPHRAG_EVAL_BLOCKS_PUBLISHING a
refusal to publish it), the view shows the trend, and graphrag-eval measures the same."""

from __future__ import annotations

import json

from dagster import AssetCheckKey, AssetCheckSeverity, AssetKey
from dagster._core.storage.asset_check_execution_record import AssetCheckExecutionRecordStatus

from graphrag_assets.storage.snapshot import open_published, published_builds, read_pointer
from graphrag_query.eval_cli import main as graphrag_eval

QUESTIONS = [
    {
        "id": "founded",
        "question": "When was Calder Shipping founded?",
        "answers": ["1921"],
        "gold_titles": ["calder_shipping.txt"],
    },
    {
        "id": "operations",
        "question": "Who is the operations manager of Calder Shipping?",
        "answers": ["Elena Marsh"],
        "gold_titles": ["calder_shipping.txt"],
    },
    {
        "id": "friends",
        "question": "Who founded Friends of the Verrin?",
        "answers": ["Clara Okafor", "Okafor"],
        "gold_ids": ["river_cleanup.txt"],  # the source file's path
    },
    {
        "id": "festival",
        "question": "Who moved the Tide Lantern Festival to Saltmarsh Square?",
        "answers": ["Jonah Whitcombe"],
        "gold_titles": ["Origins of the Tide Lantern Festival"],
    },
]
CHECK = AssetCheckKey(AssetKey("evaluations"), "answers_did_not_regress")


def _questions(tmp_path, monkeypatch, **settings: str):
    path = tmp_path / "questions.jsonl"
    path.write_text("".join(json.dumps(q) + "\n" for q in QUESTIONS))
    monkeypatch.setenv("GRAPHRAG_EVAL_QUESTIONS", f"default={path}")
    monkeypatch.setenv("GRAPHRAG_EVAL_MODES", "basic,local")
    for name, value in settings.items():
        monkeypatch.setenv(name, value)
    return path


def _forget_the_founding(input_dir) -> None:
    """An edit that takes the answer to "When was Calder Shipping founded?" out of the corpus."""
    path = input_dir / "default" / "calder_shipping.txt"
    text = path.read_text()
    edited = text.replace(
        "The company was founded in 1921 by the brothers Edwin and Walter Ashdown, who bought",
        "The brothers Edwin and Walter Ashdown bought",
    )
    assert edited != text and "1921" not in edited
    path.write_text(edited)


def _latest_check(instance):
    record = instance.event_log_storage.get_latest_asset_check_execution_by_key([CHECK])[CHECK]
    evaluation = record.event.dagster_event.event_specific_data
    return record.status, evaluation.severity, {name: value.value for name, value in evaluation.metadata.items()}


def test_a_build_that_loses_an_answer_warns_naming_the_question(
    index, input_dir, instance, tmp_path, monkeypatch, capsys
):
    questions = _questions(tmp_path, monkeypatch)
    settings, report = index(input_dir)
    assert not report.failed_runs
    status, _, _ = _latest_check(instance)
    assert status == AssetCheckExecutionRecordStatus.SUCCEEDED
    first = instance.get_latest_materialization_event(AssetKey("evaluations")).asset_materialization.metadata
    assert first["local_answer_contains"].value == 1.0 and first["basic_gold_present_4k"].value == 1.0

    _forget_the_founding(input_dir)
    _, report = index(input_dir)
    assert not report.failed_runs  # a warning: the build is published
    status, severity, metadata = _latest_check(instance)
    assert status == AssetCheckExecutionRecordStatus.FAILED and severity == AssetCheckSeverity.WARN
    assert (
        "local / founded (When was Calder Shipping founded?): lost the expected answer"
        in metadata["regressed_questions"]
    )
    assert "operations" not in metadata["regressed_questions"]
    assert "local: answer_contains 100% -> 75%" in metadata["drops"]
    latest = instance.get_latest_materialization_event(AssetKey("evaluations")).asset_materialization.metadata
    assert latest["local_answer_contains"].value == 0.75
    assert "data:image/svg+xml;base64," in latest["answer_trend"].value

    # The view of the published snapshot: two builds per mode, the second one answer down.
    with open_published(read_pointer(settings.location())) as snapshot:
        trend = snapshot.execute(
            "SELECT mode, questions, answer_contains, answer_contains_change, gold_present_4k FROM evaluation_trend "
            "WHERE corpus = 'default' ORDER BY mode, built_at"
        ).pl()
        builds = snapshot.execute(
            "SELECT count(*) FROM evaluations JOIN corpus_builds USING (corpus, built_at)"
        ).fetchone()[0]
    assert trend["mode"].to_list() == ["basic", "basic", "local", "local"]
    assert trend["answer_contains"].to_list() == [1.0, 0.75, 1.0, 0.75]
    assert trend["answer_contains_change"].to_list()[1::2] == [-0.25, -0.25]
    assert builds == 2 * len(QUESTIONS)  # the last build's rows (2 modes) join its corpus_builds row

    # graphrag-eval measures the published corpus the same way, as a table or as JSON.
    capsys.readouterr()
    assert graphrag_eval([str(questions), "--db", settings.db, "--modes", "local,drift"]) == 0
    table = capsys.readouterr().out
    assert "| local | 4 | 75% | 0 |" in table and "| drift | 4 |" in table
    assert graphrag_eval(["--db", settings.db, "--modes", "basic", "--json"]) == 0  # the setting's file
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert graphrag_eval(["--db", settings.db, "--corpus", "elsewhere"]) == 2
    assert "no questions file" in capsys.readouterr().err
    assert graphrag_eval([str(questions), "--db", settings.db, "--corpus", "elsewhere"]) == 2
    assert "no corpus 'elsewhere'" in capsys.readouterr().err
    assert {row["question_id"]: row["answer_contains"] for row in rows} == {
        "founded": False,
        "operations": True,
        "friends": True,
        "festival": True,
    }


def test_with_blocking_a_build_that_answers_worse_is_not_published(index, input_dir, instance, tmp_path, monkeypatch):
    _questions(tmp_path, monkeypatch, GRAPHRAG_EVAL_BLOCKS_PUBLISHING="true", GRAPHRAG_EVAL_MAX_DROP="10")
    settings, report = index(input_dir)
    assert not report.failed_runs
    published = published_builds(settings.location())

    _forget_the_founding(input_dir)
    _, report = index(input_dir)
    assert report.failed_runs
    assert "not published: its answers regressed" in " ".join(report.errors)
    status, severity, metadata = _latest_check(instance)
    assert status == AssetCheckExecutionRecordStatus.FAILED and severity == AssetCheckSeverity.ERROR
    assert "basic / founded" in metadata["regressed_questions"]
    assert published_builds(settings.location()) == published  # readers keep the build that answered

    # The next pass finishes the publication only to refuse it again: the verdict is the table's.
    _, report = index(input_dir)
    assert report.failed_runs and published_builds(settings.location()) == published


def test_a_bad_questions_file_warns_and_the_build_is_published(index, input_dir, instance, tmp_path, monkeypatch):
    path = tmp_path / "questions.jsonl"
    path.write_text('{"question": "Who?"}\n{"question": \n')
    monkeypatch.setenv("GRAPHRAG_EVAL_QUESTIONS", str(path))
    settings, report = index(input_dir)
    assert not report.failed_runs and published_builds(settings.location())
    status, severity, metadata = _latest_check(instance)
    assert status == AssetCheckExecutionRecordStatus.FAILED and severity == AssetCheckSeverity.WARN
    assert f"{path}, line 2: not JSON" in metadata["problem"]
