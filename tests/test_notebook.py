"""The notebook is executed, so it cannot rot."""

import nbformat
from nbclient import NotebookClient

from .conftest import REPO


def test_quickstart_notebook_runs_and_answers_every_mode():
    notebook = nbformat.read(REPO / "notebooks" / "quickstart.ipynb", as_version=4)
    NotebookClient(notebook, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(REPO / "notebooks")}}).execute()
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
