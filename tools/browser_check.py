"""The real-browser check: JupyterLab on 127.0.0.1, headless Chromium, the quickstart notebook.

Starts JupyterLab on a free local port with a random token (config, runtime, settings and
workspaces in a temporary folder), opens ``notebooks/01_quickstart.ipynb`` (a copy) in headless
Chromium driven by Playwright, runs every cell, and proves from the page that the widgets
rendered: the knowledge-graph explorer and the query playground are in the DOM, react to a
dropdown change and a button click, and no "Loading widget…" or "Error displaying widget" text
is left. It then opens the run's HTML report at a laptop width and checks that the page does not
scroll sideways. Screenshots (PNG) and a JSON summary go to ``--out``.

    python tools/browser_check.py [--out runs/browser-check]

Exit codes: 0 checked, 1 a check failed, 77 Chromium or Playwright is not installed.
Chromium: ``$COSTEER_LAB_CHROMIUM`` or ``chromium`` on PATH (Debian: ``apt-get install
chromium``; ``make test`` installs it when run as root). Playwright never downloads a browser here.
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = "01_quickstart.ipynb"
SKIP = 77
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


def find_chromium() -> str | None:
    """The Chromium executable to drive, or ``None``."""
    return os.environ.get("COSTEER_LAB_CHROMIUM") or shutil.which("chromium")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _wait_http(url: str, timeout: float, proc: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"JupyterLab exited with code {proc.returncode}")
        try:
            with urllib.request.urlopen(url, timeout=2) as resp:
                if resp.status == 200:
                    return
        except OSError:
            time.sleep(0.3)
    raise RuntimeError(f"JupyterLab did not answer {url} within {timeout:.0f} s")


def start_lab(work: Path, token: str, port: int) -> subprocess.Popen[bytes]:
    """JupyterLab serving ``work`` on 127.0.0.1 (its state kept inside ``work``)."""
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "COSTEER_LAB_REPO_ROOT": str(ROOT),
        "COSTEER_LAB_NB_OUT_DIR": str(work / "quickstart-out"),
        "JUPYTER_CONFIG_DIR": str(work / ".jupyter"),
        "JUPYTER_RUNTIME_DIR": str(work / ".runtime"),
        "JUPYTER_DATA_DIR": str(work / ".data"),
    }
    cmd = [
        sys.executable, "-m", "jupyterlab", "--no-browser", "--ip=127.0.0.1", f"--port={port}",
        f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={work}",
        "--LabApp.expose_app_in_browser=True", f"--LabApp.user_settings_dir={work / '.settings'}",
        f"--LabApp.workspaces_dir={work / '.workspaces'}",
    ]  # fmt: skip
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        cmd.append("--allow-root")  # CI and containers run as root
    news = work / ".settings" / "@jupyterlab" / "apputils-extension"
    news.mkdir(parents=True, exist_ok=True)  # no "get notified about Jupyter news?" pop-up
    (news / "notification.jupyterlab-settings").write_text('{"fetchNews": "false"}')
    log = (work / "jupyterlab.log").open("wb")
    return subprocess.Popen(cmd, cwd=work, env=env, stdout=log, stderr=subprocess.STDOUT)


_KERNEL_IDLE = """() => {
  const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;
  const k = w && w.sessionContext && w.sessionContext.session && w.sessionContext.session.kernel;
  return !!k && k.status === 'idle';
}"""
_ALL_RUN = """() => {
  const prompts = [...document.querySelectorAll('.jp-CodeCell .jp-InputPrompt')];
  return prompts.length > 0 && prompts.every(p => /\\[\\d+\\]/.test(p.textContent));
}"""


def check_report(ctx: Any, report: Path | None, out: Path, ms: float) -> dict[str, Any]:
    """Open the run's HTML report (written after the notebook ran) at a laptop width: the page
    must not scroll sideways (wide tables scroll inside their own box)."""
    if report is None:
        return {}
    from costeer_lab.viz import report_experiment

    path = report_experiment(report)
    page = ctx.new_page()
    page.set_viewport_size({"width": 1100, "height": 900})
    page.goto(path.resolve().as_uri(), timeout=ms)
    widths = page.evaluate(
        "() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]"
    )
    page.screenshot(path=str(out / "report.png"), full_page=False)
    page.close()
    return {"report_page_width": widths[0], "report_viewport_width": widths[1]}


def drive(
    chromium: str,
    url: str,
    out: Path,
    profile: Path,
    timeout_s: float,
    report: Path | None = None,
) -> dict[str, Any]:
    """Open the notebook, run it, check the widgets, save screenshots; returns the findings."""
    from playwright.sync_api import sync_playwright

    ms = timeout_s * 1000
    found: dict[str, Any] = {}
    with sync_playwright() as pw:
        ctx = pw.chromium.launch_persistent_context(
            str(profile),
            executable_path=chromium,
            headless=True,
            args=CHROMIUM_FLAGS,
            viewport={"width": 1280, "height": 1000},
        )
        try:
            page = ctx.new_page()
            page.goto(url, timeout=ms)
            page.wait_for_selector(".jp-Notebook .jp-CodeCell", timeout=ms)
            page.wait_for_function(_KERNEL_IDLE, timeout=ms)
            page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
            page.wait_for_function(_ALL_RUN, timeout=ms, polling=500)
            page.wait_for_function(_KERNEL_IDLE, timeout=ms)
            explorer = page.locator(".costeer-knowledge-explorer")
            playground = page.locator(".costeer-query-playground")
            explorer.wait_for(timeout=ms)
            playground.wait_for(timeout=ms)
            body = page.inner_text("body")
            found["loading_widget_text"] = "Loading widget" in body
            found["widget_error_text"] = "Error displaying widget" in body
            found["traceback_text"] = "Traceback" in body
            found["explorer_text"] = explorer.inner_text()[:400]
            select = explorer.locator("select")
            labels = [o.strip() for o in select.locator("option").all_inner_texts()]
            found["explorer_tasks"] = labels
            explorer.scroll_into_view_if_needed()
            explorer.screenshot(path=str(out / "explorer.png"))
            page.screenshot(path=str(out / "notebook.png"))
            # another task: the detail pane must follow (a round trip through the kernel)
            other = labels[-1] if labels else ""
            select.select_option(label=other)
            task_id = other.rsplit("(", 1)[-1].rstrip(")")
            explorer.locator("h4", has_text=f"({task_id})").wait_for(timeout=ms)
            found["explorer_followed_dropdown"] = f"({task_id})" in explorer.inner_text()
            explorer.screenshot(path=str(out / "explorer_other_task.png"))
            # the playground: a new query through the text area and the button
            before = playground.inner_text()
            playground.locator("textarea").fill("rolling sum of a list of numbers")
            playground.get_by_role("button", name="search").click()
            page.wait_for_function(
                "(b) => document.querySelector('.costeer-query-playground').innerText !== b",
                arg=before,
                timeout=ms,
            )
            playground.locator("table").first.wait_for(timeout=ms)
            found["playground_tables"] = playground.locator("table").count()
            found["playground_text"] = playground.inner_text()[:400]
            playground.scroll_into_view_if_needed()
            playground.screenshot(path=str(out / "playground.png"))
            found["loading_widget_text_after"] = "Loading widget" in page.inner_text("body")
            found.update(check_report(ctx, report, out, ms))
        finally:
            ctx.close()
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "runs" / "browser-check")
    parser.add_argument("--timeout", type=float, default=240.0, help="seconds per wait")
    args = parser.parse_args()
    chromium = find_chromium()
    try:
        import playwright  # noqa: F401
    except ImportError:
        print("skip: the playwright package is not installed", file=sys.stderr)
        return SKIP
    if chromium is None:
        print("skip: no Chromium (apt-get install chromium, or set COSTEER_LAB_CHROMIUM)")
        return SKIP
    out = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    token, port = secrets.token_hex(16), _free_port()
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="costeer-browser-") as tmp:
        work = Path(tmp)
        shutil.copy(ROOT / "notebooks" / NOTEBOOK, work / NOTEBOOK)
        lab = start_lab(work, token, port)
        try:
            _wait_http(f"http://127.0.0.1:{port}/api/status?token={token}", args.timeout, lab)
            url = f"http://127.0.0.1:{port}/lab/tree/{NOTEBOOK}?token={token}"
            run_dir = work / "quickstart-out" / "run"
            found = drive(chromium, url, out, work / "chromium-profile", args.timeout, run_dir)
        except Exception as exc:
            log = (work / "jupyterlab.log").read_text(errors="replace")[-3000:]
            print(f"browser check failed: {type(exc).__name__}: {exc}\n{log}", file=sys.stderr)
            return 1
        finally:
            lab.terminate()
            try:
                lab.wait(timeout=30)
            except subprocess.TimeoutExpired:
                lab.kill()
    found["seconds"] = round(time.monotonic() - started, 1)
    found["screenshots"] = sorted(p.name for p in out.glob("*.png"))
    ok = (
        not found["loading_widget_text"]
        and not found["loading_widget_text_after"]
        and not found["widget_error_text"]
        and not found["traceback_text"]
        and len(found["explorer_tasks"]) >= 2
        and found["explorer_followed_dropdown"]
        and found["playground_tables"] >= 1
        and found["report_page_width"] <= found["report_viewport_width"]
    )
    found["ok"] = ok
    (out / "browser_check.json").write_text(json.dumps(found, indent=2), encoding="utf-8")
    print(json.dumps(found, indent=2))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
