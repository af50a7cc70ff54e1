"""A whole build of one corpus by its stages, in the order the asset graph runs them, on
an open store and without Dagster: for work outside an orchestrator and for checking
that the stages alone make the index the asset graph makes."""

from pathlib import Path

from ..build_state import why_redo_everything
from ..core.inputs import discover_sources
from ..llm.settings import LLMSettings
from ..settings import IndexSettings
from .extraction import chunk_and_extract, work_of_corpus
from .graph import embed_and_record, find_communities, merge_graph, publish, write_reports
from .methods import Log, Methods, plain_sessions
from .sources import read_sources


def build_corpus(settings: IndexSettings, methods: Methods, endpoint: LLMSettings, corpus: str, log: Log) -> None:
    """Read every file of the corpus in the settings' input folder, then chunk, extract,
    merge the graph, find communities, write reports, embed, record and publish the build.
    The stages that keep earlier work redo everything whose fingerprint changed."""
    keys = [source.partition_key for source in discover_sources(Path(settings.input_dir)) if source.corpus == corpus]
    with settings.store() as store:
        store.ensure_schema()
        read_sources(store, settings, keys, log)

        def redo(stage: str) -> bool:
            return bool(why_redo_everything(store, settings, corpus, stage))

        work = work_of_corpus(store, corpus, redo("chunking"), redo("extraction"))
        chunk_and_extract(store, settings, methods.extraction, log, work)
        merge_graph(store, settings, methods.graph, corpus)
        find_communities(store, settings, corpus)
        write_reports(store, methods.reports, corpus, redo("reports"))
        embed_and_record(store, settings, corpus, (endpoint, plain_sessions(endpoint)), redo("embeddings"))
    publish(settings.location(), settings.vectors, corpus, ())
