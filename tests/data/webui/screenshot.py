"""The Web UI's workflow list with the ``AssayStatus`` column: completed, partial, failed runs.

Not part of the suite (no browser in CI; ``tests/workflows/common/test_details.py`` checks
the same through Temporal's API). Takes ``runs-by-assay-status.png`` (and, given a second
path, ``run-waiting-details.png``: a run at its plan gate, its *User Metadata* tab) with
Debian's Chromium driven by the ``playwright`` package (no browser download)::

    PYTHONPATH=. python tests/data/webui/screenshot.py docs/images/runs-by-assay-status.png \
        [docs/images/run-waiting-details.png]

The column is the UI's own setting (its table's column picker), set here in the browser's
storage as a person's choice would leave it.
"""

import asyncio
import json
import sys
import tempfile
import uuid
from pathlib import Path

from temporalio.testing import WorkflowEnvironment

from tests.conftest import binary
from tests.workflows.harness import Harness, task
from workers.stack.temporal import dev_server_flags
from workflows.client import DATA_CONVERTER

UI_PORT = 28233
OUT = Path(sys.argv[1])
SHOT = Path(sys.argv[2]) if len(sys.argv) > 2 else None


async def browse(list_png: Path, waiting_png: Path | None, waiting_run: str) -> None:
    """The list with the ``AssayStatus`` column; a waiting run's *User Metadata* tab."""
    from playwright.async_api import async_playwright

    async with async_playwright() as pw:
        browser = await pw.chromium.launch(
            executable_path="/usr/bin/chromium",
            args=["--headless", "--no-sandbox", "--disable-gpu",
                  "--disable-background-networking"])
        page = await browser.new_page(viewport={"width": 1500, "height": 640})
        columns = {"default": [{"label": "Status"}, {"label": "AssayStatus"},
                               {"label": "Workflow ID"}, {"label": "Type"},
                               {"label": "Start"}, {"label": "End"}]}
        await page.add_init_script(
            f"window.localStorage.setItem('namespace-workflow-table-columns', "
            f"{json.dumps(json.dumps(columns))});")
        base = f"http://127.0.0.1:{UI_PORT}/namespaces/default/workflows"
        await page.goto(f"{base}?query=AssayKind%3D%22run%22")
        await page.wait_for_timeout(6000)
        await page.screenshot(path=str(list_png))
        if waiting_png is not None:
            await page.goto(f"{base}/{waiting_run}")
            await page.wait_for_timeout(3000)
            await page.get_by_text("User Metadata").first.click()
            await page.wait_for_timeout(4000)
            await page.screenshot(path=str(waiting_png))
        await browser.close()


async def main() -> None:
    env = await WorkflowEnvironment.start_local(
        dev_server_existing_path=binary("temporal"), data_converter=DATA_CONVERTER,
        dev_server_extra_args=[*dev_server_flags()], ui=True, ui_port=UI_PORT)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            h = Harness(env, f"shot-{uuid.uuid4().hex[:6]}", Path(tmp))
            for plan in ([task("fit")], [task("load"), task("fit", behave="crash")],
                         [task("fit", behave="crash")]):
                report = await h.run(plan)
                print(report.run_id, report.status)
            req = h.request([task("fit")], gates={"plan": {
                "human": True, "approvers": ["ada"], "timeout_s": 7 * 86_400}})
            async with h.worker():
                await env.client.start_workflow("ResearchWorkflow", req, id=req.run_id,
                                                task_queue=h.queue)
                await asyncio.sleep(3)
                await browse(OUT, SHOT, req.run_id)
    finally:
        await env.shutdown()


asyncio.run(main())
