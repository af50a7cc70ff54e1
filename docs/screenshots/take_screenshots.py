"""The README's pictures of the Dagster UI, taken by headless Chromium; rerun after a UI change.

    apt-get install -y chromium fonts-wqy-microhei   # Debian's Chromium; a CJK font for the Chinese labels
    .venv/bin/pip install -e ".[docs]"                # Playwright (its own browsers are not used)
    .venv/bin/python docs/screenshots/take_screenshots.py [--chromium /usr/bin/chromium]

Indexes sample_corpus/ offline into a temporary directory with `graphrag-index` (its runs in a
temporary DAGSTER_HOME with the repository's dagster.yaml), serves that run history with
`dagster-webserver` on a free port (the webserver of `dg dev` without its daemon, so that no
sensor starts runs while the pictures are taken), and writes beside this file:
asset-graph.png (the global asset lineage), communities-map.png (the community map of the
`communities` materialization's metadata) and entities-columns.png (the `entities` column
schema). The server and the temporary directory are removed whatever happens.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
OUT = Path(__file__).resolve().parent
VIEWPORT = {"width": 1400, "height": 900}
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
# Text that must not be on a picture: Dagster's first-visit dialog and its error pages.
UNWANTED = ["Join the Dagster community", "Something went wrong", "Unexpected GraphQL error", "Page not found"]


def offline_env(**extra: str) -> dict[str, str]:
    """The environment without the caller's GraphRAG and OpenAI settings: the offline defaults."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GRAPHRAG_", "OPENAI_", "DAGSTER_"))}
    return env | extra


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_server(process: subprocess.Popen, url: str, log: Path, timeout: float = 180.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            sys.exit(f"dagster-webserver exited with status {process.returncode}:\n{log.read_text()[-3000:]}")
        try:
            with urllib.request.urlopen(f"{url}/server_info", timeout=2):
                return
        except OSError:
            time.sleep(0.5)
    sys.exit(f"dagster-webserver did not answer within {timeout:.0f} s:\n{log.read_text()[-3000:]}")


def stop(process: subprocess.Popen) -> None:
    """SIGTERM to the server's process group (webserver and code server), SIGKILL after 20 s."""
    if process.poll() is not None:
        return
    os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(20)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()


def shoot(page, path: Path) -> None:
    text = page.inner_text("body")
    wrong = [phrase for phrase in UNWANTED if phrase in text]
    if wrong:
        sys.exit(f"{path.name}: the page shows {wrong}")
    page.screenshot(path=str(path))
    print(f"wrote {path.relative_to(REPO)} ({path.stat().st_size // 1024} KiB)")


def take(url: str, chromium: str) -> None:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, args=CHROMIUM_FLAGS, headless=True)
        try:

            def new_page():  # a fresh browser context each: nothing remembered from the previous picture
                page = browser.new_page(viewport=VIEWPORT)
                page.set_default_timeout(60_000)
                return page

            # (a) The global asset lineage, both groups expanded, fitted to the page without
            # the navigation and the asset tree (expanding lays the graph out again).
            page = new_page()
            page.goto(f"{url}/asset-groups")
            page.get_by_text("sources", exact=True).first.wait_for()
            page.get_by_text("Hide navigation", exact=True).click()
            page.locator("button:has([aria-label=panel_show_right])").click()
            page.wait_for_timeout(500)
            page.mouse.click(VIEWPORT["width"] // 2, 250, button="right")  # the graph's background menu
            page.get_by_role("menuitem", name="Expand all groups").click()
            page.get_by_text("published_index", exact=True).first.wait_for()
            page.wait_for_timeout(3000)  # statuses and the fitted zoom
            shoot(page, OUT / "asset-graph.png")

            # (b) The communities materialization: its metadata, with the level-0 map opened.
            page = new_page()
            page.goto(f"{url}/assets/communities?view=events")
            row = page.locator("tr", has_text="community_map_level_0")
            row.wait_for()
            row.scroll_into_view_if_needed()
            page.locator("tr", has_text="community_map").get_by_text("[Show Markdown]").click()
            page.locator("[role=dialog] img").first.wait_for()
            page.wait_for_timeout(1000)
            shoot(page, OUT / "communities-map.png")

            # (c) The entities asset: its columns, types and descriptions.
            page = new_page()
            page.goto(f"{url}/assets/entities")
            page.get_by_text("Column name", exact=True).wait_for()
            page.wait_for_timeout(1000)
            page.get_by_text("Columns", exact=True).first.scroll_into_view_if_needed()
            shoot(page, OUT / "entities-columns.png")
        finally:
            browser.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chromium", default="/usr/bin/chromium", help="Chromium executable (default: %(default)s)")
    args = parser.parse_args()
    bin_dir = Path(sys.executable).parent
    with tempfile.TemporaryDirectory(prefix="graphrag-screenshots-") as temp:
        temp = Path(temp)
        home = temp / "dagster_home"
        home.mkdir()
        shutil.copy(REPO / "dagster_home" / "dagster.yaml", home)
        index = {
            "GRAPHRAG_INPUT_DIR": str(REPO / "sample_corpus"),
            "GRAPHRAG_DB": str(temp / "index" / "graphrag.duckdb"),
            "GRAPHRAG_VECTORS": str(temp / "index" / "lancedb"),
        }
        env = offline_env(DAGSTER_HOME=str(home), **index)
        subprocess.run([bin_dir / "graphrag-index"], cwd=REPO, env=env, check=True)

        port = free_port()
        log = temp / "webserver.log"
        with log.open("w") as out:
            server = subprocess.Popen(
                [bin_dir / "dagster-webserver", "-w", "workspace.yaml", "-h", "127.0.0.1", "-p", str(port)],
                cwd=REPO,
                env=env,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # its own process group, stopped as a whole
            )
            try:
                url = f"http://127.0.0.1:{port}"
                wait_for_server(server, url, log)
                take(url, args.chromium)
            finally:
                stop(server)


if __name__ == "__main__":
    main()
