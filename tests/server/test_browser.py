"""Every kind of page of a real `flashmark serve` (PostgreSQL) in headless Chromium: it renders,
logs nothing to the console (a blocked inline script would: the CSP reports it), and asks for
nothing but the service's own address. One upload carries hostile HTML in every field."""

from __future__ import annotations

import contextlib
import json
import shutil
import subprocess

import pytest

from flashmark.server.outgoing import outgoing
from flashmark.server.storage import open_storage
from tests.conftest import DATA
from tests.report.html.devtools import Browser, find_chromium
from tests.report.html.test_browser import BROWSER_FLAGS, console_lines, page_requests
from tests.server.conftest import recorded, variant
from tests.server.hostile.harness import request
from tests.server.test_injection import poisoned

pytestmark = [pytest.mark.browser, pytest.mark.postgres]
TIMEOUT_S = 120
# The report test's flags, with the service's loopback address let through the rule that
# sends every other name nowhere.
FLAGS = tuple(
    "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"
    if flag.startswith("--host-resolver-rules")
    else flag
    for flag in BROWSER_FLAGS
)


@pytest.fixture(scope="module")
def chromium() -> str:
    return find_chromium()


def test_every_page_renders_quietly_and_asks_only_the_service(
    chromium, pg_server, start_server, tmp_path
):
    database = pg_server.create("browser_pages")
    with contextlib.closing(open_storage(database)) as storage:
        secret = storage.create_token("browser")
    server = start_server(database)

    def upload(document: dict[str, object]) -> int:
        headers = [("Authorization", f"Bearer {secret}"), ("Content-Type", "application/json")]
        answer = request(server, "POST", "/api/v1/results", json.dumps(document).encode(), headers)
        assert answer.status == 201, answer.text
        return int(answer.json()["id"])

    card = recorded("quick-a1-card")
    ids = [upload(variant(card, index)) for index in range(4)]
    hostile = upload(poisoned(card))
    other = upload(recorded("standard-fast-card"))
    saved = json.loads((DATA / "upload" / "health-emmc.json").read_text(encoding="utf-8"))
    reading = upload(outgoing(saved))
    pages = {
        "browse": "/",
        "search": "/?maker=Kingston&capacity=64G&profile=quick",
        "result": f"/results/{ids[0]}",
        "hostile result": f"/results/{hostile}",
        "device": f"/devices/sd-9f-0x5449-sd64g-6.1?result={ids[1]}",
        "compare": f"/compare?id={ids[0]}&id={other}&id={hostile}",
        "health reading": f"/health/{reading}",
        "device with health readings": "/devices/emmc-15-0x00-m8g1gc-0.3",
        "not found": "/results/424242",
    }
    for name, path in pages.items():
        profile = tmp_path / f"profile-{len(name)}-{abs(hash(name))}"
        net_log = tmp_path / f"net-{abs(hash(name))}.json"
        done = subprocess.run(
            [chromium, *FLAGS, f"--user-data-dir={profile}", "--dump-dom",
             f"--log-net-log={net_log}", "--enable-logging=stderr", "--v=0", server.url + path],
            capture_output=True, text=True, timeout=TIMEOUT_S, check=False,
        )  # fmt: skip
        shutil.rmtree(profile, ignore_errors=True)
        assert done.returncode == 0, (name, done.stderr[-2000:])
        assert "</body>" in done.stdout and ("<h1" in done.stdout or "<main" in done.stdout), name
        assert console_lines(done.stderr) == [], (name, console_lines(done.stderr))
        outside = [
            url
            for url in page_requests(net_log)  # the browser's own traffic left out
            if not url.startswith(server.url + "/") and url.startswith(("http", "ws", "ftp"))
        ]
        assert outside == [], (name, outside)
        if name != "not found":
            assert "Internal error" not in done.stdout and "Not found" not in done.stdout, name
        if name == "not found":
            assert "no result 424242" in done.stdout
        if name == "device":
            assert done.stdout.count("<rect") >= 6 * 20  # six histograms of 20 bins
            assert "percentile" in done.stdout
    # On a phone every page is as wide as the screen: wide tables scroll in their box, long
    # (and hostile) names wrap, nothing crosses its box's border.
    with Browser(chromium, allow_host="127.0.0.1") as browser:
        for name, path in pages.items():
            browser.console.clear()
            browser.open(server.url + path, 390, mobile=True)
            layout = browser.layout()
            assert (layout.viewport, layout.document_width) == (390, 390), (name, layout)
            assert layout.outside == [] and layout.spilling == [], (name, layout)
            assert layout.cut == [], (name, layout.cut)
            if name != "not found":  # its 404 status is logged as a resource that failed
                assert browser.console == [], (name, browser.console)
