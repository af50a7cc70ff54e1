"""Answer quality as numbers: the questions file, what counts as an answer or as evidence,
and how one build compares with the one before.

Plain functions over Polars frames: the query side asks the questions
(``graphrag_query.evaluation``), the Dagster shell stores the rows (table ``evaluations``)
and checks them against the previous build with these functions, and the benchmarks in
``bench/`` measure with the same definitions.
"""

from __future__ import annotations

import datetime as dt
import json
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import polars as pl

EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
# Token budgets at which the evidence a mode puts in its context is measured.
EVIDENCE_BUDGETS = (2000, 4000, 8000)
EVIDENCE_COLUMNS = tuple(f"gold_present_{budget // 1000}k" for budget in EVIDENCE_BUDGETS)

# One row per question and mode, as the query side measures it (the table adds the build).
MEASURE_COLUMNS = {
    "mode": pl.String,
    "question_id": pl.String,
    "question": pl.String,
    "kind": pl.String,
    "method": pl.String,
    "answer": pl.String,
    "generated_by": pl.String,
    "answer_contains": pl.Boolean,
    "refused": pl.Boolean,
    "gold_documents": pl.Int64,
    **{column: pl.Float64 for column in EVIDENCE_COLUMNS},
    "context_tokens": pl.Int64,
    "seconds": pl.Float64,
}
EVALUATION_COLUMNS = {
    "corpus": pl.String,
    "build_id": pl.String,
    "built_at": pl.Datetime("us", "UTC"),
    **MEASURE_COLUMNS,
    "evaluated_at": pl.Datetime("us", "UTC"),
}
# The rates compared between builds, per mode: a drop of any is a regression.
RATES = ("answer_contains", *EVIDENCE_COLUMNS)


class QuestionsError(ValueError):
    """A questions file that cannot be read: the message names the file and the line."""


@dataclass(frozen=True)
class Question:
    id: str
    question: str
    kind: str | None = None
    answers: tuple[str, ...] = ()  # expected answers and their aliases; any one counts
    gold_titles: tuple[str, ...] = ()  # documents holding the evidence, by title ...
    gold_ids: tuple[str, ...] = ()  # ... or by id: documents.id, or the source file's path in the corpus

    @property
    def gold(self) -> tuple[str, ...]:
        return self.gold_titles + self.gold_ids


def _strings(value: object, where: str, key: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return tuple(value)
    raise QuestionsError(f"{where}: {key!r} must be a string or a list of strings, got {value!r}")


def read_questions(path: str | Path) -> list[Question]:
    """The questions of a JSONL file, one object a line: ``question`` (required), ``id``
    (default: the line number), ``kind``, ``answers`` (or ``answer``), ``gold_titles``,
    ``gold_ids``. Other keys are ignored."""
    path = Path(path)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as error:
        raise QuestionsError(f"questions file {path} cannot be read: {error}") from None
    questions, seen = [], set()
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        where = f"{path}, line {number}"
        try:
            row = json.loads(line)
        except json.JSONDecodeError as error:
            raise QuestionsError(f"{where}: not JSON ({error.msg})") from None
        if not isinstance(row, dict) or not isinstance(row.get("question"), str) or not row["question"].strip():
            raise QuestionsError(f"{where}: each line needs a non-empty string 'question'")
        question_id = str(row.get("id", number))
        if question_id in seen:
            raise QuestionsError(f"{where}: id {question_id!r} is used twice")
        seen.add(question_id)
        questions.append(
            Question(
                id=question_id,
                question=row["question"],
                kind=row.get("kind"),
                answers=_strings(row.get("answers", row.get("answer")), where, "answers"),
                gold_titles=_strings(row.get("gold_titles"), where, "gold_titles"),
                gold_ids=_strings(row.get("gold_ids"), where, "gold_ids"),
            )
        )
    if not questions:
        raise QuestionsError(f"questions file {path} has no questions")
    return questions


def questions_file_for(corpus: str, setting: str | None) -> Path | None:
    """The questions file the setting names for ``corpus``: ``CORPUS=FILE`` pairs separated
    by commas, or one FILE for every corpus; None when the corpus has none."""
    if not setting:
        return None
    every = None
    for item in filter(None, (part.strip() for part in setting.split(","))):
        name, sep, file = item.partition("=")
        if not sep:
            every = item
        elif name.strip() == corpus:
            return Path(file.strip())
    return Path(every) if every else None


def build_id(corpus: str, built_at: dt.datetime | int) -> str:
    """The id of a build: the corpus and its ``corpus_builds.built_at`` in epoch
    microseconds (the number the vector mirror and the published pointer record, which
    ``built_at`` may already be)."""
    stamp = built_at if isinstance(built_at, int) else (built_at - EPOCH) // dt.timedelta(microseconds=1)
    return f"{corpus}@{stamp}"


def with_build(measures: pl.DataFrame, corpus: str, built_at: dt.datetime) -> pl.DataFrame:
    """Rows of ``evaluate`` as rows of the ``evaluations`` table, for this build."""
    return measures.with_columns(
        pl.lit(corpus).alias("corpus"),
        pl.lit(build_id(corpus, built_at)).alias("build_id"),
        pl.lit(built_at, pl.Datetime("us", "UTC")).alias("built_at"),
        pl.lit(dt.datetime.now(dt.UTC), pl.Datetime("us", "UTC")).alias("evaluated_at"),
    ).select(list(EVALUATION_COLUMNS))


def normalised(text: str) -> str:
    """Lower case, accents and punctuation gone, one space between words, with a space at
    both ends: a phrase is in a text when its normalised form is in the text's."""
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    kept = "".join(" " if not (c.isalnum() or unicodedata.combining(c)) else c for c in decomposed)
    plain = "".join(c for c in kept if not unicodedata.combining(c))
    return " " + " ".join(plain.split()) + " "


def contains_answer(answer: str, expected: Sequence[str]) -> bool | None:
    """Whether the answer states one of the expected answers (or aliases) as whole words;
    None when the question has none."""
    options = [normalised(option) for option in expected if normalised(option).strip()]
    if not options:
        return None
    text = normalised(answer)
    return any(option in text for option in options)


def gold_present(
    question: Question, document_ids: Iterable[str], titles: Iterable[str], source_paths: Iterable[str] = ()
) -> list[bool]:
    """Per gold document of the question (titles first, then ids), whether the context
    holds a text unit of it, given the ids, titles and source paths of the context's
    documents. A gold id matches a document's id or its source file's path."""
    ids, names = set(document_ids) | set(source_paths), set(titles)
    return [title in names for title in question.gold_titles] + [gold in ids for gold in question.gold_ids]


def share(flags: Sequence[bool]) -> float | None:
    return sum(flags) / len(flags) if flags else None


def summary(rows: pl.DataFrame) -> pl.DataFrame:
    """Per build and mode (in build order): questions, the share of answers holding an
    expected answer (of the questions that have answers), refusals, the share of gold
    documents present at each budget, the median seconds."""
    return (
        rows.group_by("build_id", "mode")
        .agg(
            pl.col("built_at").first(),
            pl.len().alias("questions"),
            pl.col("answer_contains").mean(),
            pl.col("refused").sum().alias("refusals"),
            *(pl.col(column).mean() for column in EVIDENCE_COLUMNS),
            pl.col("seconds").median().alias("median_seconds"),
        )
        .sort("built_at", "mode")
    )


@dataclass(frozen=True)
class Comparison:
    """This build against the previous one: the rates per mode of both, the drops beyond
    the allowed one, and the questions whose answer or evidence got worse."""

    drops: list[str]  # "local: answer_contains 0.80 -> 0.70"
    regressed: pl.DataFrame  # mode, question_id, question, what

    @property
    def passed(self) -> bool:
        return not self.drops


def compare(previous: pl.DataFrame, current: pl.DataFrame, max_drop_points: float) -> Comparison:
    """``previous`` and ``current``: one build's rows each (``EVALUATION_COLUMNS``). A mode
    regresses when one of its rates falls by more than ``max_drop_points`` percentage
    points; a question regresses when its answer lost the expected answer, it is refused
    where it was not, or less of its evidence is present at some budget."""
    drops = []
    before = {row["mode"]: row for row in summary(previous).iter_rows(named=True)}
    for now in summary(current).iter_rows(named=True):
        then = before.get(now["mode"])
        if then is None:
            continue
        for rate in RATES:
            old, new = then[rate], now[rate]
            if old is not None and new is not None and (old - new) * 100 > max_drop_points:
                drops.append(f"{now['mode']}: {rate} {old:.0%} -> {new:.0%}")
        if now["refusals"] > then["refusals"]:
            share_then, share_now = then["refusals"] / then["questions"], now["refusals"] / now["questions"]
            if (share_now - share_then) * 100 > max_drop_points:
                drops.append(f"{now['mode']}: refusals {then['refusals']} -> {now['refusals']}")
    keys = ["mode", "question_id"]
    joined = current.join(previous, on=keys, how="inner", suffix="_before")
    worse = [
        pl.when(pl.col("answer_contains_before") & ~pl.col("answer_contains")).then(pl.lit("lost the expected answer")),
        pl.when(pl.col("refused") & ~pl.col("refused_before")).then(pl.lit("refused")),
        *(
            pl.when(pl.col(column) < pl.col(f"{column}_before")).then(
                pl.format(f"evidence @{column.removeprefix('gold_present_')} {{}} -> {{}}", column + "_before", column)
            )
            for column in EVIDENCE_COLUMNS
        ),
    ]
    regressed = (
        joined.with_columns(pl.concat_str(worse, separator="; ", ignore_nulls=True).alias("what"))
        .filter(pl.col("what") != "")
        .select("mode", "question_id", "question", "what")
        .sort(keys)
    )
    return Comparison(drops, regressed)


def summary_markdown(summary_rows: pl.DataFrame) -> str:
    """The summary as a markdown table, one row per build and mode."""
    lines = [
        "| build | mode | questions | answer contains | refusals | "
        + " | ".join(f"evidence @{c.removeprefix('gold_present_')}" for c in EVIDENCE_COLUMNS)
        + " | median s |",
        "|---" * (6 + len(EVIDENCE_COLUMNS)) + "|",
    ]

    def percent(value: float | None) -> str:
        return "" if value is None else f"{value:.0%}"

    for row in summary_rows.iter_rows(named=True):
        cells = [
            row["built_at"].strftime("%Y-%m-%d %H:%M:%S"),
            row["mode"],
            str(row["questions"]),
            percent(row["answer_contains"]),
            str(row["refusals"]),
            *(percent(row[column]) for column in EVIDENCE_COLUMNS),
            f"{row['median_seconds']:.2f}",
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


TREND_COLOURS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b")


def trend_svg(summary_rows: pl.DataFrame, rate: str = "answer_contains", width: int = 480, height: int = 200) -> str:
    """A line per mode of one rate (0-100 %) over builds, oldest left: an SVG for the UI."""
    builds = summary_rows.select("build_id", "built_at").unique().sort("built_at")["build_id"].to_list()
    position = {build: i for i, build in enumerate(builds)}
    left, right, top, bottom = 40, 90, 10, 25
    plot_w, plot_h = width - left - right, height - top - bottom

    def x(index: int) -> float:
        return left + (plot_w * index / (len(builds) - 1) if len(builds) > 1 else plot_w / 2)

    def y(value: float) -> float:
        return top + plot_h * (1 - value)

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif" '
        'font-size="11">',
        f'<rect x="{left}" y="{top}" width="{plot_w}" height="{plot_h}" fill="none" stroke="#ccc"/>',
    ]
    for tick in (0, 0.5, 1):
        parts.append(f'<text x="{left - 4}" y="{y(tick) + 4:.1f}" text-anchor="end">{tick:.0%}</text>')
    parts.append(f'<text x="{left}" y="{height - 8}">{len(builds)} builds, oldest left: {rate}</text>')
    modes = summary_rows.filter(pl.col(rate).is_not_null())["mode"].unique().sort().to_list()
    for number, mode in enumerate(modes):
        colour = TREND_COLOURS[number % len(TREND_COLOURS)]
        points = [
            (x(position[row["build_id"]]), y(row[rate]))
            for row in summary_rows.filter((pl.col("mode") == mode) & pl.col(rate).is_not_null())
            .sort("built_at")
            .iter_rows(named=True)
        ]
        path = " ".join(f"{px:.1f},{py:.1f}" for px, py in points)
        parts.append(f'<polyline points="{path}" fill="none" stroke="{colour}" stroke-width="2"/>')
        parts += [f'<circle cx="{px:.1f}" cy="{py:.1f}" r="3" fill="{colour}"/>' for px, py in points]
        parts.append(f'<text x="{width - right + 8}" y="{top + 12 + 14 * number}" fill="{colour}">{mode}</text>')
    parts.append("</svg>")
    return "\n".join(parts)
