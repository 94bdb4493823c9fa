"""`flashmark references`: the table and the JSON document, and the golden JSON output.

Regenerate the golden file after a deliberate data change with:
    flashmark references --json > tests/references/data/references.json
"""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner, Result

from flashmark.cli import main

GOLDEN = Path(__file__).parent / "data" / "references.json"


def _invoke(*args: str) -> Result:
    return CliRunner().invoke(main, ["references", *args], catch_exceptions=False)


def test_table_is_labelled_as_published_figures_with_units() -> None:
    result = _invoke("--source", "002")
    assert result.exit_code == 0, result.output
    out = result.output
    assert "published figures, not measured here" in out
    assert "Performance impact of MMC storage used on SBC" in out
    assert "seed002-sandisk-extreme-pro-a2-64gb" in out
    assert "1766 IOPS" in out and "190 s" in out and "65 MB/s" in out
    assert "NanoPi M4" in out and "sd-card-bench" in out
    assert "seed000" not in out


def test_table_keeps_published_notation_and_flags() -> None:
    result = _invoke("--source", "3", "--kind", "microsd")
    assert result.exit_code == 0, result.output
    assert "42,53 MB/s" in result.output  # decimal comma as published
    assert "tbd" in result.output
    assert "seed003-iozone-usb2reader-kingston-msd-8gb" in result.output
    result = _invoke("--source", "0")
    assert "1690 KiB/s*" in result.output  # loose: buffered
    assert "11.0 MiB/s*!" in result.output  # suspect: disagrees with its fio line
    assert "buffered I/O" in result.output


def test_json_document_shape() -> None:
    result = _invoke("--json", "--kind", "nvme")
    assert result.exit_code == 0, result.output
    document = json.loads(result.output)
    assert document["schema"] == "flashmark.references/1"
    assert document["label"] == "published figures, not measured here"
    (nvme,) = document["references"]
    assert nvme["slug"] == "seed001-nvme"
    assert nvme["source"]["seed"] == "001_0b88e5fb4fef5e4d.txt"
    assert nvme["setup"]["host_board"] == "Raspberry Pi 5"
    seq = nvme["measurements"][0]
    assert seq["published"] == {
        "text": "785",
        "value": 785.0,
        "unit": "MB/s",
        "unit_read_as": "MB/s",
    }
    assert seq["value"] == 785_000_000 and seq["unit"] == "B/s"


def test_json_golden_output() -> None:
    result = _invoke("--json")
    assert result.exit_code == 0, result.output
    assert result.output == GOLDEN.read_text(encoding="utf-8")


def test_empty_selection_and_bad_source() -> None:
    result = _invoke("--kind", "ufs", "--source", "000")
    assert result.exit_code == 0 and "No reference matches" in result.output
    assert json.loads(_invoke("--json", "--kind", "cf", "--source", "1").output)["references"] == []
    result = CliRunner().invoke(main, ["references", "--source", "42"])
    assert result.exit_code == 2
    assert "unknown source '42'" in result.output
    result = CliRunner().invoke(main, ["references", "--kind", "floppy"])
    assert result.exit_code == 2


def test_sources_are_named_as_they_name_themselves_never_by_file_name() -> None:
    """The table once said "seed 000: 000_a6b929c6c046e3f3.txt" where the source has no
    title; now a source is its title, author and year as its text gives them."""
    out = CliRunner().invoke(main, ["references"], env={"COLUMNS": "200"}).output
    assert ".txt" not in out and "seed 0" not in out
    assert '"Performance impact of MMC storage used on SBC" (2018), sd-card-bench' in out
    assert "untitled post by Ryder, fio" in out
    assert "untitled post (2019), fio" in out


def test_citations_use_only_what_the_source_states() -> None:
    from flashmark.references.loader import load_references

    citations = {device.source.seed_id: device.source.citation for device in load_references()}
    assert citations == {
        "000": "untitled post (2019)",
        "001": "untitled post by Ryder",
        "002": '"Performance impact of MMC storage used on SBC" (2018)',
        "003": '"Benchmarking microSD cards and more"',
    }
