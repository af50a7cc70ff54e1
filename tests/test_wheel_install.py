"""A non-editable install (a wheel, what `pip install .` or a package index gives) carries
everything the indexer reads at run time: the prompt files and the package's own modules,
with no checkout beside it."""

import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import duckdb

from .conftest import REPO

# What a wheel is built from: the packaging files and the packages, not the tests or data.
BUILD_INPUTS = [
    "pyproject.toml",
    "README.md",
    "graphrag_assets",
    "graphrag_query",
    "graphrag_common",
    "graphrag_evaluation",
]


def _build_wheel(tmp_path: Path) -> Path:
    source = tmp_path / "source"
    source.mkdir()
    for name in BUILD_INPUTS:
        path = REPO / name
        if path.is_dir():
            shutil.copytree(path, source / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(path, source / name)
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", str(tmp_path / "dist"), str(source)],
        check=True,
        timeout=600,
    )
    return next((tmp_path / "dist").glob("graphrag_dagster-*.whl"))


def _venv_with_wheel(tmp_path: Path, wheel: Path) -> Path:
    """A new virtual environment holding the wheel; its dependencies come from the test
    environment's site-packages (a path line, so the test environment's editable install of
    this project is not on the new environment's path)."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    python = venv / "bin" / "python"
    site_packages = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    Path(site_packages, "test-dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", "--no-deps", "--no-index", str(wheel)], check=True, timeout=300
    )
    return venv


def test_the_wheel_indexes_the_sample_offline_and_finds_its_prompts(tmp_path):
    venv = _venv_with_wheel(tmp_path, _build_wheel(tmp_path))
    work = tmp_path / "work"  # not the checkout: nothing can be imported from it
    shutil.copytree(REPO / "sample_corpus", work / "input")
    environment = {
        "PATH": f"{venv / 'bin'}:{os.environ['PATH']}",
        "HOME": str(tmp_path),
        "DAGSTER_HOME": str(tmp_path / "dagster_home"),
        "GRAPHRAG_DB": str(work / "index.duckdb"),
        "GRAPHRAG_VECTORS": str(work / "lancedb"),
    }
    (tmp_path / "dagster_home").mkdir()

    located = subprocess.run(
        [
            str(venv / "bin" / "python"),
            "-c",
            "import graphrag_assets; from graphrag_assets.llm.prompts import load_prompt, prompts_dir; "
            "print(graphrag_assets.__file__); print(prompts_dir()); print(load_prompt('extract_graph').text[:40]); "
            "from graphrag_query.llm import QUERY_PROMPTS; "
            "print(load_prompt('global_map', QUERY_PROMPTS).text.splitlines()[0])",
        ],
        cwd=work,
        env=environment,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert located.returncode == 0, located.stderr[-2000:]
    package_file, prompts, prompt_start = located.stdout.splitlines()[:3]
    assert package_file.startswith(str(venv)) and prompts.startswith(str(venv))
    assert prompt_start.startswith("[task: extract_graph]")
    # The query side's prompts, beside its code, are in the wheel too.
    assert located.stdout.splitlines()[-1] == "[task: global_map]"

    indexed = subprocess.run(
        [str(venv / "bin" / "graphrag-index"), "--input", str(work / "input")],
        cwd=work,
        env=environment,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert indexed.returncode == 0, indexed.stdout[-2000:] + indexed.stderr[-3000:]
    with duckdb.connect(str(work / "index.duckdb"), read_only=True) as connection:
        entities, reports = connection.execute(
            "SELECT (SELECT count(*) FROM entities), (SELECT count(*) FROM community_reports)"
        ).fetchone()
    assert entities > 0 and reports > 0

    answered = subprocess.run(
        [str(venv / "bin" / "graphrag-query"), "--method", "local", "Who founded the Harbor Institute?"],
        cwd=work,
        env=environment,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert answered.returncode == 0, answered.stderr[-2000:]
    assert "Penhallow" in answered.stdout
