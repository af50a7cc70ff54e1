"""The notebook is executed, so it cannot rot."""

import tempfile
from pathlib import Path

import nbformat
from nbclient import NotebookClient

from .conftest import REPO


def test_quickstart_notebook_runs_and_answers_every_mode_and_leaves_nothing_behind():
    notebook = nbformat.read(REPO / "notebooks" / "quickstart.ipynb", as_version=4)
    temporary = Path(tempfile.gettempdir())
    before = set(temporary.glob("graphrag-notebook-*"))
    NotebookClient(
        notebook, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(REPO / "notebooks")}}
    ).execute()
    assert set(temporary.glob("graphrag-notebook-*")) == before
    outputs = "\n".join(
        output.get("text", "") + str(output.get("data", {}).get("text/plain", ""))
        for cell in notebook.cells
        if cell.cell_type == "code"
        for output in cell.outputs
    )
    for method in ["global", "local", "drift", "basic"]:
        assert f"=== {method}" in outputs
    assert "Extractive answer (no LLM configured)" in outputs
    assert "1 source run(s), 1 graph run(s)" in outputs
    # Every question is answered from the index, the Chinese one too.
    assert "unable to answer" not in outputs and "王海燕教授" in outputs

    # A displayed result: its answer, sources and usage, the context folded (not a dump).
    displayed = [
        o["data"]
        for cell in notebook.cells
        if cell.cell_type == "code"
        for o in cell.outputs
        if "text/html" in o.get("data", {}) and "SearchResult(" in o["data"].get("text/plain", "")
    ]
    assert len(displayed) == 1
    assert (
        "local search (extractive, no LLM)" in displayed[0]["text/markdown"]
        and "**Sources**" in displayed[0]["text/markdown"]
    )
    assert "<details><summary>context: entities" in displayed[0]["text/html"]
    assert len(displayed[0]["text/plain"]) < 1_000

    # The map of the communities is displayed as a picture, not a path.
    pictures = [
        o["data"]["image/svg+xml"]
        for cell in notebook.cells
        if cell.cell_type == "code"
        for o in cell.outputs
        if "image/svg+xml" in o.get("data", {})
    ]
    assert len(pictures) == 1 and "<title>Communities, level 0</title>" in pictures[0]
