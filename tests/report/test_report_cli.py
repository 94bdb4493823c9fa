"""`flashmark show --format`, `export` and `compare` through click, on a history holding the two
recorded runs (ids 1 and 2, see conftest.py); outputs are held against the golden files."""

from __future__ import annotations

import csv
import io
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner, Result

from flashmark.errors import ExitStatus
from flashmark.history.store import History
from flashmark.markdown import escape_inline
from flashmark.references.loader import PUBLISHED_LABEL, find_reference
from tests.report.recorded import DOCUMENT_NAMES, REPORT_DATA, read_golden
from tests.report.test_golden import REFERENCE


def new_file_mode() -> int:
    """The permissions a new ordinary file gets (0666 less the umask), not mkstemp's 0600."""
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def invoke(cli: click.Group, *args: str, env: dict[str, str] | None = None) -> Result:
    return CliRunner().invoke(cli, list(args), env=env)


Invoke = Callable[..., Result]


@pytest.fixture
def on_db(cli: click.Group, history_db: Path) -> Invoke:
    """A command run on the history of the recorded runs (its --db given last)."""
    return lambda *args: invoke(cli, *args, "--db", str(history_db))


@pytest.fixture
def monitor_id(cli: click.Group, history_db: Path, procfs: Path) -> int:
    """A real recording added to the history: `monitor` on the recorded (idle) /proc while a
    command runs; its id."""
    recorded = invoke(
        cli, "monitor", "mmcblk0", "--interval", "0.05", "--db", str(history_db), "--",
        sys.executable, "-c", "pass",
        env={"FLASHMARK_PROCFS_ROOT": str(procfs)},
    )  # fmt: skip
    assert recorded.exit_code == 0, recorded.stderr
    (entry,) = History(history_db).list(limit=1)
    assert entry.kind == "monitor"
    return entry.id


def stdout(result: Result) -> str:
    """What the command wrote, as written: Result.stdout turns the CSV's CRLF into LF."""
    return result.stdout_bytes.decode("utf-8")


def one_line_error(result: Result, status: ExitStatus, text: str) -> None:
    assert result.exit_code == status, result.stderr
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("flashmark: error: ")
    assert text in result.stderr
    assert stdout(result) == ""


@pytest.mark.parametrize(("index", "name"), list(enumerate(DOCUMENT_NAMES, start=1)))
@pytest.mark.parametrize("format_name", ["md", "csv"])
def test_show_prints_the_golden_markdown_and_csv(
    on_db: Invoke, index: int, name: str, format_name: str
) -> None:
    result = on_db("show", str(index), "--format", format_name)
    assert result.exit_code == 0, result.stderr
    assert stdout(result) == read_golden(f"{name}.{format_name}")


def test_show_json_is_the_saved_document_and_json_is_its_alias(
    on_db: Invoke, documents: dict[str, dict[str, Any]]
) -> None:
    shown, alias = on_db("show", "2", "--format", "json"), on_db("show", "2", "--json")
    assert shown.exit_code == alias.exit_code == 0
    assert json.loads(stdout(shown)) == documents["standard-fast-card"]
    assert stdout(alias) == stdout(shown)
    clash = on_db("show", "2", "--json", "--format", "md")
    one_line_error(clash, ExitStatus.USAGE, "--json is --format json")


def test_show_table_is_still_the_default(on_db: Invoke) -> None:
    result, table = on_db("show", "1"), on_db("show", "1", "--format", "table")
    assert result.exit_code == 0 and stdout(result) == stdout(table)
    assert "Grades (SD Association classes)" in stdout(result)


def test_show_html_renders_the_report(on_db: Invoke) -> None:
    result = on_db("show", "1", "--format", "html")
    assert result.exit_code == 0, result.stderr
    assert "<html" in stdout(result).lower()


def test_export_html_writes_the_report(on_db: Invoke, tmp_path: Path) -> None:
    output = tmp_path / "cards.html"
    result = on_db("export", "1", "2", "-o", str(output))
    assert result.exit_code == 0, result.stderr
    assert "<html" in output.read_text(encoding="utf-8").lower()


def test_a_monitor_recording_shows_as_markdown_and_csv(
    on_db: Invoke, history_db: Path, monitor_id: int
) -> None:
    document = History(history_db).get(monitor_id).document
    markdown = on_db("show", str(monitor_id), "--format", "md")
    assert markdown.exit_code == 0, markdown.stderr
    text = stdout(markdown)
    assert text.startswith(f"### flashmark monitor #{monitor_id}: mmcblk0 while ")
    summary = document["summary"]
    requests = next(line for line in text.splitlines() if line.startswith("| requests "))
    cells = [cell.strip() for cell in requests.strip("|").split("|")]
    assert cells == ["requests", str(summary["read_ios"]), str(summary["write_ios"])]
    assert f"Pattern: {escape_inline(summary['verdict'])}." in text
    as_csv = on_db("show", str(monitor_id), "--format", "csv")
    assert as_csv.exit_code == 0, as_csv.stderr
    rows = list(csv.DictReader(io.StringIO(stdout(as_csv), newline="")))
    assert len(rows) == len(document["samples"]) > 0
    for row, sample in zip(rows, document["samples"], strict=True):
        assert row["id"] == str(monitor_id) and row["device"] == "mmcblk0"
        assert float(row["t_s"]) == sample["t_s"]
        assert int(row["write_bytes"]) == sample["write_bytes"]
    exported = on_db("export", str(monitor_id), "-o", "-", "--format", "csv")
    assert exported.exit_code == 0 and stdout(exported) == stdout(as_csv)
    shown = on_db("show", str(monitor_id), "--format", "json")
    assert json.loads(stdout(shown))["id"] == monitor_id


def test_results_of_different_kinds_export_together(
    on_db: Invoke, monitor_id: int, tmp_path: Path
) -> None:
    """A run's table and a recording's have different columns: a CSV holds a table per kind,
    each under a row naming it, in the order first asked; Markdown, a section per result, and
    JSON, a list of the documents, take both in the order asked."""
    assert monitor_id == 3
    mixed = on_db("export", "1", "3", "2", "-o", "-", "--format", "csv")
    assert mixed.exit_code == 0, mixed.stderr
    runs = stdout(on_db("export", "1", "2", "-o", "-", "--format", "csv"))
    monitor_csv = stdout(on_db("show", "3", "--format", "csv"))
    assert stdout(mixed) == (
        "benchmark results\r\n" + runs + "\r\n" + "monitor results\r\n" + monitor_csv
    )
    # What a spreadsheet reads: the blocks, each its kind's header and rows, cut at empty rows.
    rows = list(csv.reader(io.StringIO(stdout(mixed), newline="")))
    blocks: list[list[list[str]]] = [[]]
    for row in rows:
        if row:
            blocks[-1].append(row)
        else:
            blocks.append([])
    assert [block[0] for block in blocks] == [["benchmark results"], ["monitor results"]]
    assert blocks[0][1:] == list(csv.reader(io.StringIO(runs, newline="")))
    assert blocks[1][1:] == list(csv.reader(io.StringIO(monitor_csv, newline="")))
    both = on_db("export", "3", "1", "-o", "-", "--format", "md")
    assert both.exit_code == 0, both.stderr
    monitor = stdout(on_db("show", "3", "--format", "md"))
    assert stdout(both) == monitor + "\n" + read_golden("quick-a1-card.md")
    as_json = on_db("export", "3", "1", "-o", str(tmp_path / "both.json"))
    assert as_json.exit_code == 0, as_json.stderr
    listed = json.loads((tmp_path / "both.json").read_text(encoding="utf-8"))
    assert [document["schema"] for document in listed] == [
        "flashmark.monitor/1",
        "flashmark.result/1",
    ]
    as_html = on_db("export", "3", "1", "-o", str(tmp_path / "both.html"))
    assert as_html.exit_code == 0, as_html.stderr


def test_the_readmes_export_of_a_run_and_a_capacity_probe_writes_results_csv(
    on_db: Invoke, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The README's `flashmark export ID ID -o results.csv`, as written, of a benchmark and a
    capacity result: one file, a table per kind, each what `show --format csv` gives alone."""
    imported = on_db("import", str(REPORT_DATA / "kinds" / "capacity.json"))
    assert imported.exit_code == 0, imported.stderr
    monkeypatch.chdir(tmp_path)
    done = on_db("export", "1", "3", "-o", "results.csv")
    assert done.exit_code == 0, done.stderr
    run_csv = stdout(on_db("show", "1", "--format", "csv"))
    capacity_csv = stdout(on_db("show", "3", "--format", "csv"))
    written = (tmp_path / "results.csv").read_bytes().decode("utf-8")
    assert written == (
        "benchmark results\r\n" + run_csv + "\r\n" + "capacity results\r\n" + capacity_csv
    )


@pytest.mark.parametrize("suffix", ["md", "csv", "json"])
def test_export_picks_the_format_from_the_suffix(
    on_db: Invoke, tmp_path: Path, suffix: str
) -> None:
    output = tmp_path / "out" / f"card.{suffix}"
    output.parent.mkdir()
    result = on_db("export", "1", "-o", str(output))
    assert result.exit_code == 0, result.stderr
    with output.open(encoding="utf-8", newline="") as stream:
        written = stream.read()
    assert written == stdout(on_db("show", "1", "--format", suffix))
    if suffix != "json":
        assert written == read_golden(f"quick-a1-card.{suffix}")
    assert [p.name for p in output.parent.iterdir()] == [output.name]  # no temporary left


def test_export_of_several_runs(
    on_db: Invoke, tmp_path: Path, documents: dict[str, dict[str, Any]]
) -> None:
    as_json = on_db("export", "1", "2", "-o", str(tmp_path / "runs.json"))
    assert as_json.exit_code == 0, as_json.stderr
    listed = json.loads((tmp_path / "runs.json").read_text(encoding="utf-8"))
    assert listed == [documents[name] for name in DOCUMENT_NAMES]
    as_csv = on_db("export", "1", "2", "-o", "-", "--format", "csv")
    single = [read_golden(f"{name}.csv").splitlines(keepends=True) for name in DOCUMENT_NAMES]
    assert stdout(as_csv) == "".join(single[0] + single[1][1:])  # one header, then both runs
    as_md = on_db("export", "1", "2", "-o", "-", "--format", "md")
    assert stdout(as_md) == "\n".join(read_golden(f"{name}.md") for name in DOCUMENT_NAMES)


def test_export_refuses_to_overwrite_without_force(on_db: Invoke, tmp_path: Path) -> None:
    output = tmp_path / "card.md"
    output.write_text("mine\n", encoding="utf-8")
    refused = on_db("export", "1", "-o", str(output))
    one_line_error(refused, ExitStatus.USAGE, "add --force")
    assert output.read_text(encoding="utf-8") == "mine\n"
    forced = on_db("export", "1", "-o", str(output), "--force")
    assert forced.exit_code == 0, forced.stderr
    assert output.read_text(encoding="utf-8") == read_golden("quick-a1-card.md")
    assert output.stat().st_mode & 0o777 == new_file_mode()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["-o", "card.txt"], "cannot tell the format of 'card.txt'"),
        (["-o", "-"], "--format"),
        (["-o", "missing-folder/card.md"], "the folder missing-folder does not exist"),
        (
            ["-o", "/proc/card.csv"],
            "cannot create /proc/card.csv: /proc is on a filesystem where no file can be",
        ),
    ],
)
def test_export_says_what_is_wrong_with_the_output(
    on_db: Invoke, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, args: list[str], message: str
) -> None:
    monkeypatch.chdir(tmp_path)
    one_line_error(on_db("export", "1", *args), ExitStatus.USAGE, message)


def test_compare_two_runs_and_a_published_reference(
    on_db: Invoke, documents: dict[str, dict[str, Any]]
) -> None:
    compared = ("compare", "1", "2", "--reference", REFERENCE)
    result = on_db(*compared)
    assert result.exit_code == 0, result.stderr
    first, second = (documents[name] for name in DOCUMENT_NAMES)
    seq_read = [
        next(t for t in doc["tests"] if t["name"] == "seq-read")["read"]["bw_bytes"]
        for doc in (first, second)
    ]
    text = " ".join(stdout(result).split())  # rich wraps long lines and header cells
    assert f"({seq_read[1] / seq_read[0]:.2f}x)" in text
    assert PUBLISHED_LABEL in text
    assert f"R1 = {REFERENCE}, {find_reference(REFERENCE).name}: {PUBLISHED_LABEL}" in text
    for format_name in ("md", "csv", "json"):
        shown = stdout(on_db(*compared, "--format", format_name))
        read = json.loads if format_name == "json" else str
        assert read(shown) == read(read_golden(f"compare.{format_name}")), format_name


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["show", "42"], "no run 42 in the history"),
        (["export", "1", "42", "-o", "-", "--format", "md"], "no run 42 in the history"),
        (["compare", "1", "42"], "no run 42 in the history"),
        (["compare", "1", "--reference", "seed002-nope"], "unknown reference 'seed002-nope'"),
        (["compare", "1"], "give a second ID or a --reference SLUG"),
    ],
)
def test_bad_ids_and_slugs_are_one_line_errors(
    on_db: Invoke, args: list[str], message: str
) -> None:
    result = on_db(*args)
    one_line_error(result, ExitStatus.USAGE, message)
    if "no run" in message:
        assert "it holds 1-2" in result.stderr


def test_a_json_export_of_several_results_imports_back(
    cli: click.Group, on_db: Invoke, history_db: Path, monitor_id: int, tmp_path: Path
) -> None:
    """`export`'s JSON list is what `import` reads: each document is added to another history
    in the order of the list, and one already held is said once, not added again."""
    exported = tmp_path / "results.json"
    done = on_db("export", str(monitor_id), "1", "2", "-o", str(exported))
    assert done.exit_code == 0, done.stderr
    other = tmp_path / "other.sqlite3"
    imported = invoke(cli, "import", str(exported), "--db", str(other))
    assert imported.exit_code == 0, imported.stderr
    assert imported.stdout.splitlines() == [
        f"{exported} (item {n} of 3): added as {n} (`flashmark show {n}`)" for n in (1, 2, 3)
    ]
    mine = {entry.id: entry for entry in History(history_db).list()}
    theirs = {entry.id: entry for entry in History(other).list()}
    assert [theirs[n].kind for n in (1, 2, 3)] == ["monitor", "benchmark", "benchmark"]
    for new, old in ((1, 3), (2, 1), (3, 2)):
        shown_new = invoke(cli, "show", str(new), "--format", "md", "--db", str(other))
        shown_old = on_db("show", str(old), "--format", "md")
        assert stdout(shown_new).replace(f"#{new}", "#") == stdout(shown_old).replace(
            f"#{old}", "#"
        )
        assert theirs[new].target == mine[old].target
    again = on_db("import", str(exported))
    assert again.exit_code == 0, again.stderr
    assert again.stdout.splitlines() == [
        f"{exported} (item {n} of 3): already in the history as {old}; not added again "
        f"(`flashmark show {old}`)"
        for n, old in ((1, 3), (2, 1), (3, 2))
    ]
    assert len(History(history_db).list()) == 3


def test_an_import_of_a_list_checks_every_document_first(
    cli: click.Group, history_db: Path, tmp_path: Path, documents: dict[str, dict[str, Any]]
) -> None:
    path = tmp_path / "results.json"
    path.write_text(json.dumps([documents[DOCUMENT_NAMES[0]], {"schema": "something/1"}]))
    other = tmp_path / "other.sqlite3"
    refused = invoke(cli, "import", str(path), "--db", str(other))
    one_line_error(refused, ExitStatus.USAGE, f"{path} (item 2 of 2): ")
    assert not other.exists()  # nothing added: the first document waits for the second


@pytest.mark.parametrize(
    ("name", "format_name"),
    [
        ("quick-a1-card", "table"),
        ("quick-a1-card", "md"),
        ("quick-a1-card", "csv"),
        ("kinds/workload", "md"),  # its terminal view names no target
        ("kinds/workload", "csv"),
    ],
)
def test_control_characters_in_a_folder_name_are_escaped_where_it_is_shown(
    cli: click.Group, tmp_path: Path, format_name: str, name: str
) -> None:
    """A folder's name may hold a newline or an escape sequence: shown raw it would split the
    target line, the Markdown table or code, the CSV row, or colour the terminal."""
    folder = "/media/card\nred\x1b[31m\t"
    shown = "/media/card\\nred\\x1b[31m\\t"
    document = json.loads((REPORT_DATA / f"{name}.json").read_text())
    if name == "quick-a1-card":
        document["target"]["given"] = document["target"]["folder"] = folder
        document["target"]["path"] = f"{folder}/.flashmark-1-2.tmp"
        kind, target = "benchmark", folder
    else:
        document["target"] = folder
        kind, target = "workload", folder
    path = tmp_path / "history.sqlite3"
    History(path).save(kind=kind, target=target, label="x", document=document)
    done = invoke(cli, "show", "1", "--format", format_name, "--db", str(path))
    assert done.exit_code == 0, done.stderr
    text = stdout(done)
    assert "\x1b" not in text and "card\n" not in text and "card\r" not in text
    assert shown in text or escape_inline(shown) in text  # in Markdown's code or its text
    if format_name == "csv":
        rows = list(csv.DictReader(io.StringIO(text, newline="")))
        assert rows and all(row["target"] == shown for row in rows)
