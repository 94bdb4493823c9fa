"""`flashmark report` on the command line: what it writes, and one line for what it refuses."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from markupsafe import escape

from flashmark.errors import ExitStatus
from tests.cli_runner import flashmark
from tests.report.html.conftest import REFERENCE_SLUGS
from tests.report.html.page import Page
from tests.report.test_report_cli import new_file_mode


@pytest.fixture
def invoke(cli, saved_runs):
    def run(*args: str, db: Path | None = None, **env: str):
        return CliRunner().invoke(
            cli, ["report", *args], env={"FLASHMARK_DB": str(db or saved_runs.db), **env}
        )

    return run


def test_writes_the_page_and_says_so(invoke, saved_runs, tmp_path):
    path = tmp_path / "cards.html"
    result = invoke(*map(str, saved_runs.ids[:2]), "-o", str(path))
    assert result.exit_code == 0, result.output
    assert f"wrote {path}: 2 benchmark results" in result.stderr
    assert result.stdout == ""
    page = Page(path.read_text(encoding="utf-8"))
    assert len([e for e in page.all("article")]) == 2
    assert oct(path.stat().st_mode & 0o777) == oct(new_file_mode())
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cards.html"]  # no temporary left


def test_dash_writes_to_stdout(invoke, saved_runs):
    result = invoke(str(saved_runs.ids[0]), "--reference", REFERENCE_SLUGS[1], "-o", "-")
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("<!DOCTYPE html>") and result.stdout.endswith("</html>\n")


def test_an_existing_file_is_kept_unless_forced(invoke, saved_runs, tmp_path):
    path = tmp_path / "report.html"
    path.write_text("mine")
    refused = invoke(str(saved_runs.ids[0]), "-o", str(path))
    assert refused.exit_code == ExitStatus.USAGE
    assert refused.stderr.strip().splitlines() == [
        f"flashmark: error: {path} exists: add --force to overwrite it, or choose another -o"
    ]
    assert path.read_text() == "mine"
    forced = invoke(str(saved_runs.ids[0]), "-o", str(path), "--force")
    assert forced.exit_code == 0, forced.output
    assert path.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["42"], "no run 42 in the history"),
        (["1", "1"], "run 1 is given twice"),
        (["1", "--reference", "no-such-card"], "unknown reference 'no-such-card'"),
        (["1", "--reference", "sandisk-extreme-pro"], "did you mean seed002-sandisk-extreme-pro"),
    ],
)
def test_bad_input_is_one_line_and_usage_status(invoke, tmp_path, arguments, message):
    path = tmp_path / "report.html"
    result = invoke(*arguments, "-o", str(path))
    assert result.exit_code == ExitStatus.USAGE
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0] and "Traceback" not in result.output
    assert not path.exists()


def test_an_unwritable_place_is_one_line(invoke, saved_runs, tmp_path):
    path = tmp_path / "no-such-folder" / "report.html"
    result = invoke(str(saved_runs.ids[0]), "-o", str(path))
    assert result.exit_code == ExitStatus.USAGE
    assert result.stderr.strip().splitlines() == [
        f"flashmark: error: cannot create {path}: the folder {path.parent} does not exist: "
        "create it, or choose another -o"
    ]


def test_a_monitor_recording_gets_its_own_section(invoke, procfs, tmp_path):
    # A real `flashmark monitor` recording (of `true`, on a recorded /proc) in its own history
    db = tmp_path / "history.sqlite3"
    env = {"FLASHMARK_DB": str(db), "FLASHMARK_PROCFS_ROOT": str(procfs), "FLASHMARK_JSON": ""}
    monitored = flashmark(
        "monitor", "mmcblk0", "--interval", "0.05", "--json", "--", "true", env=env
    )
    assert monitored.returncode == 0, monitored.stderr
    document = json.loads(monitored.stdout)
    path = tmp_path / "report.html"
    result = invoke("1", "-o", str(path), db=db)
    assert result.exit_code == 0, result.output
    assert f"wrote {path}: 1 monitor result" in result.stderr
    text = path.read_text(encoding="utf-8")
    page = Page(text)
    sections = [e.attributes["id"] for e in page.all("section")]
    assert sections == ["monitor"]  # no benchmark part without a run
    links = [e.attributes["href"] for e in page.all("a")]
    assert links == ["#monitor"]
    assert 'id="monitor-1"' in text
    assert f"Pattern: {escape(document['summary']['verdict'])}." in text
    assert f"{document['summary']['read_ios']}" in text


def test_ids_are_required(invoke, tmp_path):
    result = invoke("-o", str(tmp_path / "report.html"))
    assert result.exit_code == ExitStatus.USAGE
    assert result.stderr == (
        "flashmark: error: name the runs to report (IDs from `flashmark history`), or --campaign\n"
    )
