"""`flashmark fleet run` on six boards of this machine (Ansible hosts with local connections,
each with its own emulated card of known speed, history and label), into a campaign of a real
service on PostgreSQL: every board's line, the slow card flagged and no other, the failing card
reported with the tests it measured kept, the board with another fio refused before measuring,
nothing identifying a board sent but its label, and the failed board run again alone."""

from __future__ import annotations

import csv
import html
import io
import json
import re
import socket
import subprocess
from typing import Any

import pytest

from flashmark import __version__
from tests.fleet.conftest import BENCHMARK, CAMPAIGN, Fleet
from tests.report.html.devtools import Browser, find_chromium
from tests.report.html.test_browser import ARTIFACTS, console_lines, page_requests
from tests.server.test_browser import FLAGS

pytestmark = [pytest.mark.root, pytest.mark.fio, pytest.mark.ansible, pytest.mark.postgres]
COMPLETE = ("board-01", "board-02", "board-03", "board-04")


def campaign(fleet: Fleet) -> dict[str, Any]:
    answer: dict[str, Any] = fleet.lab.get(f"/api/v1/campaigns/{CAMPAIGN}")
    return answer


def test_every_board_gets_one_line_and_the_run_ends_with_the_verdict(fleet: Fleet):
    run = fleet.run
    lines = run.stdout.splitlines()
    assert len(lines) == 7, run.stdout + run.stderr
    by_board = {line.split()[0]: line for line in lines[:-1]}
    assert sorted(by_board) == [f"board-0{index}" for index in range(1, 7)]
    for board in COMPLETE:
        assert re.match(
            rf"{board} +uploaded +run 1 in \d+ s, on the service as result \d+", by_board[board]
        )
    assert re.match(
        r"board-05 +incomplete +the run stopped at rand-read-4k: the device failed",
        by_board["board-05"],
    )
    assert "its 2 test(s) are on the service as result" in by_board["board-05"]
    assert re.match(
        r"board-06 +refused +job hash \w+ differs from the campaign's \w+: "
        r"fio_version 'fio-3.99', not 'fio-",
        by_board["board-06"],
    )
    verdict = lines[-1]
    assert re.match(
        r"verdict: 5 boards, 1 outlier \(board-04: random 4K write (4[89]|5[01])% below the "
        r"fleet median",
        verdict,
    )
    assert "1 incomplete (board-05: the run stopped at rand-read-4k (exit 5))" in verdict
    assert "the other 3 within the fleet's band" in verdict
    assert "1 not on the service (board-06: refused)" in verdict
    assert verdict.endswith("run them again alone with --limit board-05,board-06")
    # Boards dropped out: the command says so in its exit status and last line.
    assert run.returncode == 1
    assert run.stderr.strip().splitlines()[-1] == (
        "flashmark: error: 2 of 6 boards' results are not whole in the campaign: run them "
        "again alone with --limit board-05,board-06"
    )


def test_the_campaign_flags_the_slow_card_and_no_other_at_its_known_speeds(fleet: Fleet):
    body = campaign(fleet)
    boards = {board["label"]: board for board in body["boards"]}
    assert sorted(boards) == ["board-01", "board-02", "board-03", "board-04", "board-05"]
    assert [label for label, board in boards.items() if board["outlier"]] == ["board-04"]
    slow = boards["board-04"]
    assert slow["flagged"] == ["rand_write_4k_iops", "rand_write_4k_q32_iops"]
    for reason in slow["reasons"]:  # half the speed: 50% below, give or take a second's noise
        assert re.match(
            r"random 4K write (at depth 32 )?(4[89]|5[012])% below the fleet median", reason
        )
    # Truth: each card's random writes at its throttle's cap, within 10%.
    for label in COMPLETE:
        cap = 200 if label == "board-04" else 400
        for column in ("rand_write_4k_iops", "rand_write_4k_q32_iops"):
            measured = boards[label]["figures"][column]["value"]
            assert measured == pytest.approx(cap, rel=0.10), (label, column, measured)
        read = boards[label]["figures"]["rand_read_4k_iops"]["value"]
        assert read == pytest.approx(800, rel=0.10), (label, read)
    failed = boards["board-05"]
    assert (failed["complete"], failed["failed_step"], failed["failed_status"]) == (
        False,
        "rand-read-4k",
        5,
    )
    assert failed["figures"]["seq_write_bps"]["value"] is not None
    assert failed["figures"]["rand_read_4k_iops"]["value"] is None
    write = {figure["column"]: figure for figure in body["figures"]}["rand_write_4k_iops"]
    assert write["boards"] == 4 and write["median"] == pytest.approx(400, rel=0.10)


def test_a_board_without_flashmark_gets_it_installed_from_the_controller_s_wheel(fleet: Fleet):
    installed = fleet.lab.installed
    assert installed is not None
    # The venv's own flashmark, from the wheel `flashmark fleet run` made and copied over.
    shown = subprocess.run(
        [str(installed / "bin" / "python"), "-c",
         "import flashmark, importlib.metadata as m; print(flashmark.__file__); "
         "print(m.distribution('flashmark').read_text('direct_url.json'))"],
        capture_output=True, text=True, timeout=60, check=True, env={"PATH": "/usr/bin:/bin"},
    )  # fmt: skip
    module, origin = shown.stdout.splitlines()
    assert module.startswith(str(installed / "lib"))
    assert json.loads(origin)["url"].endswith(f"/flashmark-{__version__}-py3-none-any.whl")
    assert installed.stat().st_uid == 0  # installed as root
    # Its copy of the wheel and the folder it was made in are gone.
    left = [p.name for p in fleet.lab.folder.iterdir() if p.is_dir()]
    assert [name for name in left if name.startswith("flashmark-")] == []
    assert re.search(r"^board-01 +uploaded", fleet.run.stdout, re.M)


def test_the_job_hash_a_board_plans_is_the_one_the_service_finds_in_its_result(fleet: Fleet):
    member = fleet.lab.members["board-02"]
    planned = subprocess.run(
        [*member.command, "run", str(member.target), *BENCHMARK, "--job-hash"],
        capture_output=True, text=True, timeout=120, check=True,
    )  # fmt: skip
    assert json.loads(planned.stdout)["job_hash"] == campaign(fleet)["job_hash"]


def test_the_failed_board_keeps_the_tests_it_measured_in_its_history(fleet: Fleet):
    member = fleet.lab.members["board-05"]
    shown = fleet.lab.flashmark("show", "1", "--json", "--db", str(member.history))
    assert shown.returncode == 0, shown.stderr
    document = json.loads(shown.stdout)
    assert [test["name"] for test in document["tests"]] == ["seq-write", "seq-read"]
    assert document["partial"]["failed_step"] == "rand-read-4k"
    assert document["partial"]["exit_status"] == 5


def test_no_board_sends_a_name_but_the_label_it_was_given(fleet: Fleet):
    host = socket.gethostname()
    for board in campaign(fleet)["boards"]:
        document = fleet.lab.get(f"/api/v1/results/{board['result']}")
        assert document["campaign"] == CAMPAIGN and document["board_label"] == board["label"]
        assert document["host"]["hostname"] == "(withheld)"
        text = json.dumps(document)
        member = fleet.lab.members[board["label"]]
        assert str(member.target) not in text and str(member.history) not in text
        assert re.search(rf"\b{re.escape(host)}\b", text) is None
        if member.board.fails_at:
            assert document["partial"]["error"] == "(withheld)"


def test_report_writes_the_campaign_page_as_one_file_and_as_csv(fleet: Fleet, tmp_path):
    url = fleet.lab.service.url
    page = tmp_path / "lab.html"
    made = fleet.lab.flashmark("report", "--campaign", CAMPAIGN, "--server", url, "-o", str(page))
    assert made.returncode == 0, made.stderr
    assert made.stderr.strip() == f"wrote {page}: campaign {CAMPAIGN}, 5 boards"
    text = page.read_text(encoding="utf-8")
    served = fleet.lab.get(f"/campaigns/{CAMPAIGN}").decode()
    # The file is the page: the same tables, with its style inline and nothing to fetch.
    body = re.search(r"<h1>.*</table>", text, re.S)
    assert body is not None and body.group() in served.replace('href="/', f'href="{url}/')
    assert '<link rel="stylesheet"' not in text and "<style>" in text
    assert re.search(r"""(src|href)=["']?(?!http://127\.0\.0\.1)[a-z]+:""", text) is None
    assert "default-src 'none'; style-src 'sha256-" in html.unescape(text)
    sheet = tmp_path / "lab.csv"
    made = fleet.lab.flashmark("report", "--campaign", CAMPAIGN, "--server", url, "-o", str(sheet))
    assert made.returncode == 0, made.stderr
    rows = list(csv.DictReader(io.StringIO(sheet.read_text(encoding="utf-8"))))
    assert [row["board"] for row in rows][:5] == [
        "board-01", "board-02", "board-03", "board-04", "board-05",
    ]  # fmt: skip
    assert [row["outlier"] for row in rows][:5] == ["false", "false", "false", "true", "false"]
    served_csv = fleet.lab.get(f"/api/v1/campaigns/{CAMPAIGN}/export.csv").decode()
    assert sheet.read_bytes().decode() == served_csv


@pytest.mark.browser
def test_the_campaign_page_renders_in_chromium_quietly_and_fits_a_phone(fleet: Fleet, tmp_path):
    chromium = find_chromium()
    url = f"{fleet.lab.service.url}/campaigns/{CAMPAIGN}"
    net_log = tmp_path / "net.json"
    done = subprocess.run(
        [chromium, *FLAGS, f"--user-data-dir={tmp_path / 'profile'}", "--dump-dom",
         f"--log-net-log={net_log}", "--enable-logging=stderr", "--v=0", url],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert console_lines(done.stderr) == []
    outside = [
        request
        for request in page_requests(net_log)
        if request.startswith(("http", "ws", "ftp"))
        and not request.startswith(fleet.lab.service.url + "/")
    ]
    assert outside == []
    rows = re.findall(
        r'<tr class="([^"]*)">\s*<th scope="row"><a href="/results/\d+">([^<]+)<', done.stdout
    )
    assert rows == [
        ("", "board-01"), ("", "board-02"), ("", "board-03"), ("outlier", "board-04"),
        ("incomplete", "board-05"),
    ]  # fmt: skip
    assert done.stdout.count('class="n flagged"') == 2  # board-04's two random-write figures
    with Browser(chromium, allow_host="127.0.0.1") as browser:
        browser.open(url, 390, mobile=True)
        layout = browser.layout()
        assert (layout.viewport, layout.document_width) == (390, 390), layout
        assert layout.outside == [] and layout.spilling == [], layout
        assert browser.console == []
        ARTIFACTS.mkdir(exist_ok=True)
        browser.screenshot(ARTIFACTS / "campaign-phone.png")
        browser.open(url, 1280)
        browser.screenshot(ARTIFACTS / "campaign.png")
    # The report file of the same campaign: its inline style allowed by its hash (a refused
    # one is a console error), nothing asked of any network.
    page = tmp_path / "campaign.html"
    made = fleet.lab.flashmark(
        "report", "--campaign", CAMPAIGN, "--server", fleet.lab.service.url, "-o", str(page)
    )
    assert made.returncode == 0, made.stderr
    file_log = tmp_path / "file-net.json"
    done = subprocess.run(
        [chromium, *FLAGS, f"--user-data-dir={tmp_path / 'profile-file'}", "--dump-dom",
         f"--log-net-log={file_log}", "--enable-logging=stderr", "--v=0", page.as_uri()],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0 and console_lines(done.stderr) == [], done.stderr[-2000:]
    assert [r for r in page_requests(file_log) if re.match(r"(https?|wss?|ftp):", r)] == []
    with Browser(chromium) as browser:
        browser.open(page.as_uri(), 390, mobile=True)
        layout = browser.layout()
        assert (layout.viewport, layout.document_width) == (390, 390), layout
        assert browser.console == []
        # The page's style applied: the verdict's box has its border.
        assert (
            browser.evaluate("getComputedStyle(document.querySelector('.verdict')).borderLeftStyle")
            == "solid"
        )


def test_a_board_run_again_alone_completes_the_campaign(fleet: Fleet):
    """Last: it changes the campaign. board-05 gets a new card and runs alone (--limit); the
    others' results stay; its partial result stays listed as its earlier one."""
    before = {board["label"]: board["result"] for board in campaign(fleet)["boards"]}
    fleet.lab.replace_card("board-05")
    again = fleet.lab.fleet(CAMPAIGN, *BENCHMARK, "--limit", "board-05")
    assert again.returncode == 0, again.stdout + again.stderr
    lines = again.stdout.splitlines()
    assert len(lines) == 2 and re.match(r"board-05 +uploaded +run 2 in", lines[0])
    assert lines[1].startswith("verdict: 5 boards, 1 outlier (board-04")
    assert "incomplete" not in lines[1]
    after = {board["label"]: board for board in campaign(fleet)["boards"]}
    assert {label: board["result"] for label, board in after.items() if label != "board-05"} == {
        label: result for label, result in before.items() if label != "board-05"
    }
    assert after["board-05"]["complete"] and after["board-05"]["earlier"] == [before["board-05"]]
    assert not after["board-05"]["outlier"]
