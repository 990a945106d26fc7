"""The Web UI's workflow list with the ``AssayStatus`` column: completed, partial, failed runs.

Not part of the suite (no browser in CI; ``tests/workflows/common/test_details.py`` checks
the same through Temporal's API). Takes ``runs-by-assay-status.png`` with Debian's Chromium
driven by the ``playwright`` package (no browser download)::

    PYTHONPATH=. python tests/data/webui/screenshot.py OUT.png [RUN_PAGE.png]

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
        await asyncio.sleep(2)
        from playwright.async_api import async_playwright
        async with async_playwright() as pw:
            browser = await pw.chromium.launch(
                executable_path="/usr/bin/chromium",
                args=["--headless", "--no-sandbox", "--disable-gpu",
                      "--disable-background-networking"])
            page = await browser.new_page(viewport={"width": 1500, "height": 520})
            columns = {"default": [{"label": "Status"}, {"label": "AssayStatus"},
                                   {"label": "Workflow ID"}, {"label": "Type"},
                                   {"label": "Start"}, {"label": "End"}]}
            await page.add_init_script(
                f"window.localStorage.setItem('namespace-workflow-table-columns', "
                f"{json.dumps(json.dumps(columns))});")
            url = (f"http://127.0.0.1:{UI_PORT}/namespaces/default/workflows?query="
                   "AssayKind%3D%22run%22")
            await page.goto(url)
            await page.wait_for_timeout(6000)
            await page.screenshot(path=str(OUT))
            if SHOT:
                await page.goto(f"http://127.0.0.1:{UI_PORT}/namespaces/default/workflows/"
                                f"{report.run_id}")
                await page.wait_for_timeout(6000)
                await page.screenshot(path=str(SHOT), full_page=False)
            await browser.close()
    finally:
        await env.shutdown()


asyncio.run(main())
