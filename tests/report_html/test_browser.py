"""The report in a real browser: headless Chromium (Debian's `chromium`) opens the file offline,
draws every chart, logs nothing to its console, and requests nothing from the network.

Artifacts for a person to look at are kept in test-artifacts/ at the repository root
(gitignored): report.png (laptop), report-phone.png (phone) and report.pdf (print CSS).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.report_html.page import Page

pytestmark = pytest.mark.browser

ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
TIMEOUT_S = 120
# Quiet Chromium's own background traffic (component updates, sign-in checks); whatever of it
# remains is told apart from the page's requests below, and the host resolver rule keeps all
# of it on this machine.
BROWSER_FLAGS = (
    "--headless",
    "--no-sandbox",  # CI runs as root, where Chromium's sandbox refuses to start
    "--disable-gpu",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-extensions",
    "--host-resolver-rules=MAP * ~NOTFOUND",
    "--timeout=10000",
    "--virtual-time-budget=5000",
)


@pytest.fixture(scope="module")
def chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        reason = "Chromium is not installed (apt-get install chromium)"
        if os.environ.get("CI") == "true":  # .ci/run installs it: a skip would hide a failure
            pytest.fail(reason)
        pytest.skip(reason)
    return found


def browse(
    chromium: str, tmp_path: Path, url: str, *flags: str
) -> subprocess.CompletedProcess[str]:
    profile = tmp_path / "profile"  # a fresh user data dir for each run
    shutil.rmtree(profile, ignore_errors=True)
    return subprocess.run(
        [chromium, *BROWSER_FLAGS, f"--user-data-dir={profile}", *flags, url],
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        env={**os.environ, "LC_ALL": "C"},
        check=False,
    )


def console_lines(stderr: str) -> list[str]:
    """Chromium logs what a page writes to its console (errors, CSP refusals) as CONSOLE."""
    return [line for line in stderr.splitlines() if "CONSOLE" in line]


def page_requests(net_log: Path) -> list[str]:
    """URLs the page asked for, from a --log-net-log file.

    Every request Chromium starts is logged with its initiator: the page's (opaque for a
    file:// page, "null") or "not an origin" for the browser's own background requests, which
    are left out here.
    """
    log = json.loads(net_log.read_text())
    start_job = log["constants"]["logEventTypes"]["URL_REQUEST_START_JOB"]
    return [
        params["url"]
        for event in log["events"]
        if event["type"] == start_job
        and "url" in (params := event.get("params", {}))
        and params.get("initiator") != "not an origin"
    ]


def test_chromium_draws_every_chart_quietly_and_offline(chromium, report_path, tmp_path):
    net_log = tmp_path / "net-log.json"
    done = browse(
        chromium,
        tmp_path,
        report_path.as_uri(),
        "--dump-dom",
        f"--log-net-log={net_log}",
        "--enable-logging=stderr",
        "--v=0",
    )
    assert done.returncode == 0, done.stderr[-2000:]
    body = Page(done.stdout).all("body")[0].attributes
    expected = len(Page(report_path.read_text(encoding="utf-8")).charts)
    assert expected > 0 and body["data-charts"] == str(expected)
    # the page's script counted the charts the browser laid out and drew
    assert body.get("data-charts-drawn") == str(expected)
    assert console_lines(done.stderr) == []
    requests = page_requests(net_log)
    assert not [url for url in requests if re.match(r"(https?|wss?|ftp):", url)], requests


def test_the_checks_see_a_page_that_does_fetch_and_fail(chromium, tmp_path):
    """The same checks on a page with an external image and a script error: they fail, so
    they would have caught a report that did either."""
    page = tmp_path / "control.html"
    page.write_text(
        '<!DOCTYPE html><html><head><meta charset="utf-8"><title>control</title></head><body>'
        '<img src="https://example.invalid/chart.png" alt="">'
        "<script>notDefined();</script></body></html>"
    )
    net_log = tmp_path / "net-log.json"
    done = browse(
        chromium,
        tmp_path,
        page.as_uri(),
        "--dump-dom",
        f"--log-net-log={net_log}",
        "--enable-logging=stderr",
        "--v=0",
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "https://example.invalid/chart.png" in page_requests(net_log)
    assert any("notDefined" in line for line in console_lines(done.stderr))


def test_screenshots_and_print_are_kept_as_artifacts(chromium, report_path, tmp_path):
    ARTIFACTS.mkdir(exist_ok=True)
    for name, size in (("report.png", "1280,4000"), ("report-phone.png", "390,3000")):
        target = ARTIFACTS / name
        target.unlink(missing_ok=True)
        done = browse(
            chromium,
            tmp_path,
            report_path.as_uri(),
            f"--screenshot={target}",
            f"--window-size={size}",
            "--hide-scrollbars",
        )
        assert done.returncode == 0, done.stderr[-2000:]
        assert target.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert target.stat().st_size > 50_000  # a drawn page, not a blank one
    pdf = ARTIFACTS / "report.pdf"
    pdf.unlink(missing_ok=True)
    done = browse(
        chromium, tmp_path, report_path.as_uri(), f"--print-to-pdf={pdf}", "--no-pdf-header-footer"
    )
    assert done.returncode == 0, done.stderr[-2000:]
    content = pdf.read_bytes()
    assert content.startswith(b"%PDF")
    assert len(re.findall(rb"/Type\s*/Page\b", content)) > 1  # several printed pages
