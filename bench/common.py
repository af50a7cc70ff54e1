"""What every benchmark records about where and on what it ran."""

from __future__ import annotations

import json
import platform
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def machine() -> dict:
    """Cores, memory, Python and platform of this machine."""
    import psutil

    return {
        "cpus": psutil.cpu_count(),
        "memory_gib": round(psutil.virtual_memory().total / 2**30, 1),
        "python": platform.python_version(),
        "platform": platform.platform(),
    }


def git(*args: str) -> str:
    """A git command's output in the checkout ("" where git or the checkout is missing)."""
    try:
        return subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True, timeout=30).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def write_json(path: str | Path, data: dict) -> None:
    """A result file, its folder made if needed."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
