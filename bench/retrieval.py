"""Benchmark: retrieval quality of every query mode on a public multi-hop set, 2Wiki-101
(``../shared/corpus/2wiki-101``: 101 2WikiMultihopQA questions with the titles of their 248
gold passages, over 6,119 Wikipedia passages), with BM25 (``bm25s``) as the reference.

    .venv/bin/python bench/retrieval.py                                  # index (~2 min), then query
    .venv/bin/python bench/retrieval.py --keep /tmp/bench2wiki           # keep the index ...
    .venv/bin/python bench/retrieval.py --keep /tmp/bench2wiki --reuse   # ... and query it again
    .venv/bin/python bench/retrieval.py --env GRAPHRAG_EMBEDDER=minilm --label minilm
    .venv/bin/python bench/retrieval.py --questions 10                   # a quick look

Indexes ``passages.jsonl`` alone with ``graphrag-index`` (fresh DAGSTER_HOME, offline: no
GRAPHRAG_* variable of the caller's environment reaches the indexer, only ``--env``), then
asks every question through the public API with ``use_llm=False`` at context budgets of
2k, 4k and 8k tokens. A gold passage is *present* when a text unit of its document is in
the context the mode built (``result.context["sources"]``).

Figures (see ``bench/README.md``):
- recall@k (basic and BM25): gold passages among the first k distinct documents of the
  ranking, averaged per question (the definition of the shared README's reference figures;
  the share of all 248 gold passages is in the JSON as ``recall_micro``);
- gold present @B: share of the 248 gold passages present in the context (micro-average);
- all gold @B: share of questions with every gold passage present;
- tokens: ``result.usage.context_tokens``; latency: wall time of the call.
"""

from __future__ import annotations

import argparse
import inspect
import json
import math
import os
import re
import resource
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import git, machine, write_json  # noqa: E402

from graphrag_assets.core.evaluation import Question, contains_answer, gold_present
from graphrag_query.evaluation import context_documents, distinct

REPO = Path(__file__).resolve().parent.parent
DATA = REPO.parent / "shared" / "corpus" / "2wiki-101"
CORPUS = "2wiki"
BUDGETS = (2000, 4000, 8000)
RECALL_AT = (2, 5, 8)
MODES = ("basic", "local", "global", "global_dynamic", "drift", "auto")
LABELS = {
    "bm25": "BM25 (bm25s)",
    "basic": "basic",
    "local": "local",
    "global": "global",
    "global_dynamic": "global dynamic",
    "drift": "drift",
    "auto": "auto",
}
TABLES = ["documents", "text_units", "entities", "relationships", "communities", "community_reports", "embeddings"]
BM25_DEPTH = 200  # ranked passages packed into the budgets (the same depth as basic's k)


# ---------------------------------------------------------------- data


def load_jsonl(path: Path) -> list[dict]:
    with open(path, encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


# ---------------------------------------------------------------- figures


def percentile(samples: list[float], share: float) -> float:
    """Nearest-rank percentile."""
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(share * len(ordered)) - 1))]


def recall_figures(rankings: list[list[str]], golds: list[list[str]], ks=RECALL_AT) -> dict:
    """From ranked distinct titles per question: recall@k averaged per question (``recall``),
    over all gold passages (``recall_micro``), and the share of questions with every gold
    passage in the top k (``all_evidence``)."""
    out: dict[str, dict[str, float]] = {"recall": {}, "recall_micro": {}, "all_evidence": {}}
    total = sum(len(set(g)) for g in golds)
    for k in ks:
        found = [len(set(g) & set(ranked[:k])) for ranked, g in zip(rankings, golds)]
        out["recall"][str(k)] = sum(f / len(set(g)) for f, g in zip(found, golds)) / len(golds)
        out["recall_micro"][str(k)] = sum(found) / total
        out["all_evidence"][str(k)] = sum(f == len(set(g)) for f, g in zip(found, golds)) / len(golds)
    return out


def presence_figures(present: list[list[bool]], tokens: list[float], seconds: list[float]) -> dict:
    """``present``: per question, per gold passage, whether it is in the context."""
    flat = [p for row in present for p in row]
    return {
        "gold_present": sum(flat) / len(flat),
        "all_gold_present": sum(all(row) for row in present) / len(present),
        "context_tokens_mean": statistics.fmean(tokens),
        "context_tokens_median": statistics.median(tokens),
        "latency_median_ms": statistics.median(seconds) * 1000,
        "latency_p95_ms": percentile(seconds, 0.95) * 1000,
        "questions": len(present),
    }


def stated_lines(answer: str) -> str:
    """An extractive answer's stated phrases (its "Answer: ..." lines, without the quoted
    sentence that follows each phrase), else the whole answer (a model's)."""
    lines = [line for line in answer.splitlines() if line.startswith("Answer: ")]
    if not lines:
        return answer
    return "\n".join(re.split(r", (?:from|through) | — ", line, maxsplit=1)[0] for line in lines)


# ---------------------------------------------------------------- BM25


class BM25:
    """bm25s over "title text" per passage, English stop words (the shared README's reference)."""

    def __init__(self, passages: list[dict]):
        import bm25s

        self._bm25s = bm25s
        self.passages = passages
        self.retriever = bm25s.BM25()
        corpus = [f"{p['title']} {p['text']}" for p in passages]
        self.retriever.index(bm25s.tokenize(corpus, stopwords="en", show_progress=False), show_progress=False)

    def rank(self, question: str, k: int = BM25_DEPTH) -> list[int]:
        tokens = self._bm25s.tokenize([question], stopwords="en", show_progress=False)
        documents, _ = self.retriever.retrieve(tokens, k=min(k, len(self.passages)), show_progress=False)
        return [int(i) for i in documents[0]]


def pack_passages(passages: list[dict], budget: int) -> tuple[list[str], int]:
    """Ranked passages, one line "title: text" each, in order until the next does not fit
    (as ``graphrag_query.context.pack`` packs): (titles kept, tokens used)."""
    from graphrag_common.tokens import count_tokens

    used, kept = 0, []
    for passage in passages:
        cost = count_tokens(f"{passage['title']}: {passage['text']}".replace("\n", " ") + "\n")
        if used + cost > budget:
            break
        used += cost
        kept.append(passage["title"])
    return kept, used


def run_bm25(passages: list[dict], questions: list[dict], budgets=BUDGETS) -> dict:
    started = time.perf_counter()
    bm25 = BM25(passages)
    index_seconds = time.perf_counter() - started
    golds = [q["gold_titles"] for q in questions]
    rankings, seconds, packed = [], [], {b: ([], []) for b in budgets}
    for question in questions:
        t0 = time.perf_counter()
        order = bm25.rank(question["question"])
        seconds.append(time.perf_counter() - t0)
        ranked = [passages[i] for i in order]
        rankings.append(distinct(p["title"] for p in ranked))
        for budget in budgets:
            titles, used = pack_passages(ranked, budget)
            packed[budget][0].append([g in set(titles) for g in question["gold_titles"]])
            packed[budget][1].append(used)
    figures = recall_figures(rankings, golds, (*RECALL_AT, 20))
    return {
        "index_seconds": round(index_seconds, 2),
        **figures,
        "budgets": {str(b): presence_figures(packed[b][0], packed[b][1], seconds) for b in budgets},
        "per_question": [
            {"top8": r[:8], "present_4k": packed[4000][0][i] if 4000 in packed else None}
            for i, r in enumerate(rankings)
        ],
    }


# ---------------------------------------------------------------- indexing


def clean_environment(extra: dict[str, str]) -> dict[str, str]:
    """The caller's environment without any GRAPHRAG_* setting (no LLM or embedding endpoint,
    default index settings), plus ``extra``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GRAPHRAG_")}
    return env | extra


def build_index(work: Path, passages_file: Path, env_extra: dict[str, str], corpus: str = CORPUS) -> dict:
    """Index ``passages_file`` alone with graphrag-index in a child process: wall time, peak
    RSS (the largest finished child, KiB on Linux) and the CLI's summary."""
    for name in ["input", "dagster_home", "lancedb", "index.duckdb", "index.duckdb.wal", "index_run.json"]:
        path = work / name
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        elif path.exists() or path.is_symlink():
            path.unlink()
    for stale in work.glob("index*.duckdb*"):  # snapshots published beside the file
        shutil.rmtree(stale) if stale.is_dir() else stale.unlink()
    (work / "input").mkdir(parents=True)
    # A copy, not a symlink: the indexer reads nothing that resolves outside its input folder.
    shutil.copyfile(passages_file, work / "input" / passages_file.name)
    home = work / "dagster_home"
    home.mkdir()
    shutil.copy(REPO / "dagster_home" / "dagster.yaml", home / "dagster.yaml")
    env = clean_environment(env_extra) | {"DAGSTER_HOME": str(home)}
    command = [
        sys.executable,
        "-m",
        "graphrag_evaluation.cli",
        "--input",
        str(work / "input"),
        "--corpus",
        corpus,
        "--db",
        str(work / "index.duckdb"),
        "--vectors",
        str(work / "lancedb"),
    ]
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    started = time.perf_counter()
    # cwd: the work folder, so that `-m` finds the packages the way this process does (a
    # PYTHONPATH pointing at another checkout is not shadowed by the repo's folder).
    result = subprocess.run(command, cwd=work, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - started
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    if result.returncode != 0:
        raise SystemExit(
            f"graphrag-index failed ({result.returncode}):\n{result.stdout[-2000:]}\n{result.stderr[-4000:]}"
        )
    info = {
        "command": shlex.join(["graphrag-index", *command[3:]]),
        "env": env_extra,
        "wall_seconds": round(wall, 1),
        "peak_rss_mib": round(peak / 1024) if peak > before else None,
        "summary": result.stdout.strip().splitlines()[-1] if result.stdout.strip() else "",
    }
    (work / "index_run.json").write_text(json.dumps(info, indent=2) + "\n")
    return info


def row_counts(reader) -> dict[str, int]:
    import duckdb

    with duckdb.connect(str(reader.source), read_only=True) as connection:
        return {
            t: connection.execute(f'SELECT count(*) FROM "{t}" WHERE corpus = ?', [reader.corpus]).fetchone()[0]
            for t in TABLES
        }


# ---------------------------------------------------------------- query modes


class Modes:
    """Each mode through the public API, offline, with the budget passed the way the
    installed API accepts it (``budget=``; global: ``reduce_budget=`` when it has no
    ``budget``; drift and search without a budget)."""

    def __init__(self, reader):
        import graphrag_query as gq

        self.reader = reader
        self.functions = {
            "basic": (gq.basic_search, {"k": 200}),
            "local": (gq.local_search, {}),
            "global": (gq.global_search, {"dynamic": False}),
            "global_dynamic": (gq.global_search, {"dynamic": True}),
            "drift": (gq.drift_search, {}),
            "auto": (gq.search, {"method": "auto"}),
        }
        self.budget_argument = {}
        for mode, (function, _) in self.functions.items():
            parameters = inspect.signature(function).parameters
            if "budget" in parameters:
                self.budget_argument[mode] = "budget"
            elif mode.startswith("global") and "reduce_budget" in parameters:
                self.budget_argument[mode] = "reduce_budget"
            else:
                self.budget_argument[mode] = None
        self.basic_search = gq.basic_search

    def run(self, mode: str, question: str, budget: int):
        function, options = self.functions[mode]
        argument = self.budget_argument[mode]
        options = options | ({argument: budget} if argument else {})
        started = time.perf_counter()
        result = function(question, reader=self.reader, use_llm=False, **options)
        return result, time.perf_counter() - started

    def ranking(self, question: str, k: int = max(RECALL_AT)) -> list[str]:
        """Document ids of basic search's ranking, distinct, best first."""
        result = self.basic_search(question, reader=self.reader, use_llm=False, k=k, budget=10**6)
        return distinct(result.context["sources"]["document_id"].to_list())


class Tallies:
    """What ``run_modes`` collects, per mode and budget: the gold passages present, the
    context tokens and seconds (``runs``); for questions with expected answers, whether
    the answer holds one (anywhere, or in its stated "Answer:" lines) or is the no-data
    answer (``answered``); calls whose context has no sources; per question its details
    and the basic ranking's titles; local's answer hits at the detail budget."""

    def __init__(self, budgets, modes):
        self.runs = {m: {b: {"present": [], "tokens": [], "seconds": []} for b in budgets} for m in modes}
        self.answered = {
            m: {b: {"contains": [], "stated": [], "refused": [], "characters": []} for b in budgets} for m in modes
        }
        self.no_sources: dict[str, int] = {m: 0 for m in modes}
        self.per_question: list[dict] = []
        self.rankings: list[list] = []
        self.answer_hits: list[list[bool]] = []


def run_modes(reader, questions: list[dict], budgets=BUDGETS, modes=MODES, progress=print) -> dict:
    """Every mode at every budget for every question: the figures, and per question the gold
    passages present at 4k (or the middle budget) and the mode auto chose."""
    modes_api = Modes(reader)
    detail_budget = 4000 if 4000 in budgets else budgets[len(budgets) // 2]
    tallies = ask_every_mode(reader, modes_api, questions, budgets, modes, detail_budget, progress)
    figures = mode_figures(tallies, questions, budgets, modes, detail_budget)
    chosen: dict[str, int] = {}
    for detail in tallies.per_question:
        if "auto_method" in detail:
            chosen[detail["auto_method"]] = chosen.get(detail["auto_method"], 0) + 1
    return {
        "figures": figures,
        "budget_argument": {m: modes_api.budget_argument[m] for m in modes},
        "modes_without_budget": [m for m in modes if modes_api.budget_argument[m] is None],
        "modes_budget_on_reduce_only": [m for m in modes if modes_api.budget_argument[m] == "reduce_budget"],
        "calls_without_sources": {m: n for m, n in tallies.no_sources.items() if n},
        "auto_methods": chosen,
        "per_question": tallies.per_question,
    }


def ask_every_mode(reader, modes_api, questions, budgets, modes, detail_budget, progress) -> Tallies:
    from graphrag_query.result import NO_DATA_ANSWER

    units = reader.table("text_units").select("id", "document_id")
    documents = reader.table("documents").select("id", "title")
    unit_document = dict(zip(units["id"].to_list(), units["document_id"].to_list()))
    title_of = dict(zip(documents["id"].to_list(), documents["title"].to_list()))
    tallies = Tallies(budgets, modes)
    started = time.perf_counter()
    for number, question in enumerate(questions, 1):
        text, gold = question["question"], question["gold_titles"]
        detail = {"id": question["id"], "question": text, "gold_titles": gold, "present_4k": {}}
        tallies.rankings.append([title_of.get(d) for d in modes_api.ranking(text)])
        for mode in modes:
            # Without a budget the call does not depend on B: run once, count it at each B.
            once = None
            for budget in budgets:
                if once is None or modes_api.budget_argument[mode] is not None:
                    once = modes_api.run(mode, text, budget)
                result, seconds = once
                documents_in = context_documents(result, unit_document)
                if documents_in is None:
                    tallies.no_sources[mode] += 1
                    titles = set()
                else:
                    titles = {title_of.get(d) for d in documents_in}
                present = gold_present(Question(question["id"], text, gold_titles=tuple(gold)), [], titles)
                run = tallies.runs[mode][budget]
                run["present"].append(present)
                if question.get("answers"):
                    measured = tallies.answered[mode][budget]
                    measured["contains"].append(contains_answer(result.answer, question["answers"]))
                    measured["stated"].append(contains_answer(stated_lines(result.answer), question["answers"]))
                    measured["refused"].append(result.answer == NO_DATA_ANSWER)
                    measured["characters"].append(len(result.answer))  # a longer answer holds more
                run["tokens"].append(result.usage.context_tokens)
                run["seconds"].append(seconds)
                if budget == detail_budget:
                    record_detail(detail, tallies, mode, result, present, gold)
        tallies.per_question.append(detail)
        if progress and (number % 10 == 0 or number == len(questions)):
            progress(f"  {number}/{len(questions)} questions, {time.perf_counter() - started:.0f} s")
    return tallies


def record_detail(detail: dict, tallies: Tallies, mode: str, result, present, gold: list[str]) -> None:
    """A question's details at the detail budget: the gold passages present, the mode auto
    chose and why, the gold titles in local's answer."""
    detail["present_4k"][mode] = present
    if mode == "auto":
        detail["auto_method"] = result.method
        detail["auto_route_reason"] = result.route_reason
    if mode == "local":
        answer = (result.answer or "").casefold()
        hits = [g.casefold() in answer for g in gold]
        tallies.answer_hits.append(hits)
        detail["gold_title_in_local_answer"] = hits


def mode_figures(tallies: Tallies, questions: list[dict], budgets, modes, detail_budget: int) -> dict:
    """Per mode and budget the presence figures and the answers' rates; basic's recall of
    its ranking; local's gold titles in the answer."""
    figures = {
        m: {
            "budgets": {
                str(b): presence_figures(**{k: tallies.runs[m][b][k] for k in ("present", "tokens", "seconds")})
                for b in budgets
            }
        }
        for m in modes
    }
    for m in modes:
        for b in budgets:
            measured = tallies.answered[m][b]
            if measured["contains"]:
                figures[m]["budgets"][str(b)] |= {
                    "answer_questions": len(measured["contains"]),
                    **{name: sum(values) / len(values) for name, values in measured.items()},
                }
    if "basic" in figures:
        figures["basic"] |= recall_figures(tallies.rankings, [q["gold_titles"] for q in questions])
        for detail, ranked in zip(tallies.per_question, tallies.rankings):
            detail["basic_top8"] = ranked[:8]
    answer_hits = tallies.answer_hits
    if "local" in figures and answer_hits:
        flat = [h for row in answer_hits for h in row]
        figures["local"]["gold_title_in_answer"] = {
            "budget": detail_budget,
            "gold_titles": sum(flat) / len(flat),
            "questions_all_titles": sum(all(r) for r in answer_hits) / len(answer_hits),
        }
    return figures


# ---------------------------------------------------------------- report


def _pct(value) -> str:
    return "" if value is None else f"{100 * value:.1f}"


def markdown_table(bm25: dict, modes: dict) -> str:
    figures = modes["figures"]
    notes = []
    header = (
        "| | recall@2 | recall@5 | recall@8 | gold present @2k | @4k | @8k | all gold @4k | tokens used @4k (mean) "
        "| latency @4k median / p95 |\n"
        "|---|---|---|---|---|---|---|---|---|---|"
    )
    rows = [header]

    def row(name: str, data: dict, mark: str = "") -> str:
        recall = data.get("recall", {})
        budgets = data["budgets"]
        b4 = budgets.get("4000", {})
        cells = [
            name + mark,
            *(_pct(recall.get(str(k))) for k in RECALL_AT),
            *(_pct(budgets.get(str(b), {}).get("gold_present")) for b in BUDGETS),
            _pct(b4.get("all_gold_present")),
            f"{b4['context_tokens_mean']:.0f}" if b4 else "",
            f"{b4['latency_median_ms']:.1f} / {b4['latency_p95_ms']:.1f} ms" if b4 else "",
        ]
        return "| " + " | ".join(cells) + " |"

    rows.append(row(LABELS["bm25"], bm25))
    for mode in MODES:
        if mode not in figures:
            continue
        mark = ""
        argument = modes["budget_argument"][mode]
        if argument is None:
            mark = " *"
        elif argument == "reduce_budget":
            mark = " +"
        if mode in modes["calls_without_sources"]:
            mark += " (no sources)"
        rows.append(row(LABELS[mode], figures[mode], mark))
    if modes["modes_without_budget"]:
        notes.append(
            "\\* ran without a budget (the API has no `budget` parameter yet): the same context at every budget."
        )
    if modes["modes_budget_on_reduce_only"]:
        notes.append("\\+ the budget is the reduce budget only (`reduce_budget=`); map batches are not limited by it.")
    if modes["calls_without_sources"]:
        notes.append(
            "(no sources): the context has no `sources` frame, so nothing counts as present: "
            + ", ".join(f"{m} {n} calls" for m, n in modes["calls_without_sources"].items())
            + "."
        )
    return "\n".join(rows) + ("\n\n" + "\n".join(notes) if notes else "")


def git_state() -> dict:
    import graphrag_query

    code = Path(graphrag_query.__file__).resolve().parent.parent
    return {
        "commit": git("rev-parse", "--short", "HEAD"),
        # The packages measured: the checkout (with its uncommitted changes listed), or
        # another copy put first on PYTHONPATH (e.g. `git archive HEAD` of a clean tree).
        "code": str(code),
        "modified_code": git(
            "status", "--porcelain", "--", "graphrag_assets", "graphrag_query", "graphrag_evaluation"
        ).splitlines()
        if code == REPO
        else None,
    }


# ---------------------------------------------------------------- main


def arguments(argv: list[str] | None) -> tuple[argparse.Namespace, dict[str, str]]:
    """The options and the settings given with --env."""
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--data",
        default=str(DATA),
        help="folder with passages.jsonl and questions.jsonl (default: ../shared/corpus/2wiki-101)",
    )
    parser.add_argument("--keep", help="build the index in this folder and keep it")
    parser.add_argument(
        "--reuse",
        action="store_true",
        help="with --keep: query the index already in the folder instead of building it again",
    )
    parser.add_argument(
        "--env",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="setting for the indexer and the queries (repeatable), e.g. GRAPHRAG_EMBEDDER=minilm",
    )
    parser.add_argument("--label", help="name of this configuration (output: bench/results/retrieval_<label>.json)")
    parser.add_argument("--questions", type=int, help="the first N questions only")
    parser.add_argument("--out", help="JSON output (default: bench/results/retrieval.json, or retrieval_<label>.json)")
    options = parser.parse_args(argv)

    extra = {}
    for pair in options.env:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            parser.error(f"--env expects KEY=VALUE, got {pair!r}")
        extra[key] = value
    if options.reuse and not options.keep:
        parser.error("--reuse needs --keep DIR")
    return options, extra


def indexed(work: Path, passages_file: Path, passages: list[dict], extra: dict, reuse: bool) -> dict:
    """The index in ``work``: the one already there with ``reuse``, else built now; its run's figures."""
    if reuse and (work / "index.duckdb").exists():
        print(f"reusing the index in {work}")
        saved = work / "index_run.json"
        index = json.loads(saved.read_text()) if saved.exists() else {}
        index["reused"] = True
        if index.get("env", extra) != extra:
            print(f"warning: the index was built with --env {index.get('env')}, not {extra}", file=sys.stderr)
        return index
    print(f"indexing {passages_file} ({len(passages)} passages) into {work} ...", flush=True)
    index = build_index(work, passages_file, extra)
    index["reused"] = False
    print(f"  {index['wall_seconds']} s, peak RSS {index['peak_rss_mib']} MiB: {index['summary']}", flush=True)
    return index


def measured(options, passages_file: Path, passages: list[dict], questions: list[dict], extra: dict):
    """Index the passages (or reuse the index), then BM25 and every mode: (index, bm25, modes)."""
    work = Path(options.keep) if options.keep else Path(tempfile.mkdtemp(prefix="graphrag-bench-2wiki-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        index = indexed(work, passages_file, passages, extra, options.reuse)

        from graphrag_query import IndexReader

        reader = IndexReader(database=str(work / "index.duckdb"), corpus=CORPUS).load()
        index["rows"] = row_counts(reader)
        print(f"BM25 over {len(passages)} passages ...", flush=True)
        bm25 = run_bm25(passages, questions)
        print(f"{len(questions)} questions x {len(MODES)} modes x budgets {BUDGETS} ...", flush=True)
        modes = run_modes(reader, questions)
    finally:
        if not options.keep:
            shutil.rmtree(work, ignore_errors=True)
    bm25_per_question = bm25.pop("per_question")
    for detail, extra_bm25 in zip(modes["per_question"], bm25_per_question):
        detail["bm25_top8"] = extra_bm25["top8"]
        detail["present_4k"]["bm25"] = extra_bm25["present_4k"]
    return index, bm25, modes


FIGURE_DEFINITIONS = {  # what each figure of the result means
    "recall": (
        "gold passages among the first k distinct documents of the ranking, averaged per "
        "question (recall_micro: "
        "over all gold passages)"
    ),
    "gold_present": (
        "share of all gold passages (micro) with a text unit of their document in result.context['sources']"
    ),
    "all_gold_present": "share of questions with every gold passage present",
    "gold_title_in_answer": (
        "local at 4k: gold titles found (case-insensitive) in the extractive answer; a crude proxy"
    ),
    "bm25": (
        f"bm25s, English stop words, 'title text' per passage; ranked top {BM25_DEPTH} packed as 'title: text' "
        f"lines until the budget is full"
    ),
}


def print_summary(table: str, bm25: dict, modes: dict, out: Path) -> None:
    print()
    print(table)
    local_answer = modes["figures"].get("local", {}).get("gold_title_in_answer")
    if local_answer:
        print(
            f"\ngold title in answer (local @4k, extractive): {_pct(local_answer['gold_titles'])} % of gold "
            f"titles, "
            f"all titles for {_pct(local_answer['questions_all_titles'])} % of questions"
        )
    print(f"auto chose: {modes['auto_methods']}")
    print(f"BM25 recall@20 {_pct(bm25['recall']['20'])} %, all evidence@8 {_pct(bm25['all_evidence']['8'])} %")
    print(f"written to {out}")


def main(argv: list[str] | None = None) -> None:
    options, extra = arguments(argv)
    out = (
        Path(options.out)
        if options.out
        else REPO / "bench" / "results" / (f"retrieval_{options.label}.json" if options.label else "retrieval.json")
    )
    data = Path(options.data)
    passages_file, questions_file = data / "passages.jsonl", data / "questions.jsonl"
    if not passages_file.exists() or not questions_file.exists():
        raise SystemExit(f"{data} must hold passages.jsonl and questions.jsonl (see ../shared/README.md)")
    passages, questions = load_jsonl(passages_file), load_jsonl(questions_file)
    if options.questions:
        questions = questions[: options.questions]

    # The queries run in this process: the same settings as the indexer, nothing else.
    for key in [k for k in os.environ if k.startswith("GRAPHRAG_")]:
        del os.environ[key]
    os.environ.update(extra)
    state = git_state()
    load_start = os.getloadavg()  # latencies are wall times: other work on the machine shows in them
    index, bm25, modes = measured(options, passages_file, passages, questions, extra)
    table = markdown_table(bm25, modes)
    result = {
        "benchmark": "2wiki-101 retrieval",
        "label": options.label or "default",
        "command": shlex.join([Path(sys.executable).name, *sys.argv])
        if argv is None
        else shlex.join(["bench/retrieval.py", *argv]),
        "data": str(data),
        "passages": len(passages),
        "questions": len(questions),
        "gold_passages": sum(len(q["gold_titles"]) for q in questions),
        "budgets": list(BUDGETS),
        "date": time.strftime("%Y-%m-%d"),
        "git": state,
        "machine": machine(),
        "load_average_1_5_15_min": {
            "start": [round(x, 2) for x in load_start],
            "end": [round(x, 2) for x in os.getloadavg()],
        },
        "env": extra,
        "index": index,
        "bm25": bm25,
        "modes": modes["figures"],
        "budget_argument": modes["budget_argument"],
        "modes_without_budget": modes["modes_without_budget"],
        "modes_budget_on_reduce_only": modes["modes_budget_on_reduce_only"],
        "calls_without_sources": modes["calls_without_sources"],
        "auto_methods": modes["auto_methods"],
        "definitions": FIGURE_DEFINITIONS,
        "table_markdown": table,
        "per_question": modes["per_question"],
    }
    write_json(out, result)
    print_summary(table, bm25, modes, out)


if __name__ == "__main__":
    main()
