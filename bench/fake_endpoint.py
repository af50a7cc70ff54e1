"""The LLM benchmarks' shared set-up: a fresh Dagster home and the OpenAI-compatible test
server (``tests/fake_openai.py``) with realistic latency, 300 ms per call plus 2 ms per
completion token, called with concurrency 16."""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tests.fake_openai import FakeOpenAI  # noqa: E402

CONCURRENCY = 16


@contextmanager
def fake_endpoint(work: Path) -> Iterator[tuple[FakeOpenAI, dict[str, str]]]:
    """(server, environment for ``graphrag-index``) with DAGSTER_HOME under ``work``."""
    home = work / "dagster_home"
    home.mkdir()
    shutil.copy(REPO / "dagster_home" / "dagster.yaml", home)
    with FakeOpenAI(latency_seconds=0.3, seconds_per_completion_token=0.002, embedding_dimensions=64) as fake:
        yield (
            fake,
            os.environ
            | {
                "DAGSTER_HOME": str(home),
                "GRAPHRAG_LLM_BASE_URL": fake.base_url,
                "GRAPHRAG_LLM_API_KEY": "sk-bench",
                "GRAPHRAG_LLM_MODEL": "fake-chat",
                "GRAPHRAG_EMBEDDING_MODEL": "fake-embed",
                "GRAPHRAG_LLM_CONCURRENCY": str(CONCURRENCY),
            },
        )
