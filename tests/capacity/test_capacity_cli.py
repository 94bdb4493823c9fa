"""`flashmark capacity` input handling that needs neither root nor a device."""

from __future__ import annotations

import json

from click.testing import CliRunner

from flashmark.cli import main
from tests.capacity.test_passport import capacity_document


def test_a_folder_is_refused_in_one_line_pointing_to_surface(tmp_path):
    result = CliRunner().invoke(main, ["capacity", str(tmp_path)])
    assert result.exit_code == 4
    assert result.stderr.count("\n") == 1
    assert f"`flashmark surface {tmp_path}`" in result.stderr
    assert "needs raw access to a block device" in result.stderr


def test_a_file_a_missing_path_and_no_device(tmp_path):
    afile = tmp_path / "image"
    afile.write_bytes(b"x")
    assert CliRunner().invoke(main, ["capacity", str(afile)]).exit_code == 4
    missing = CliRunner().invoke(main, ["capacity", str(tmp_path / "nope")])
    assert (missing.exit_code, "no such device" in missing.stderr) == (4, True)
    assert CliRunner().invoke(main, ["capacity"]).exit_code == 2


def test_restore_refuses_what_is_not_a_backup(tmp_path):
    bogus = tmp_path / "x.backup"
    bogus.write_bytes(b"hello\n")
    result = CliRunner().invoke(main, ["capacity", "--restore", str(bogus)])
    assert result.exit_code == 2
    assert "is not a flashmark capacity backup" in result.stderr
    both = CliRunner().invoke(main, ["capacity", "--restore", str(bogus), "--destructive"])
    assert both.exit_code == 2


def test_a_capacity_result_is_imported_shown_and_listed(tmp_path):
    path = tmp_path / "capacity.json"
    path.write_text(json.dumps(capacity_document("ab" * 16, "fake", 8 * 2**30)))
    imported = CliRunner().invoke(main, ["import", str(path)])
    assert imported.exit_code == 0, imported.output
    listed = CliRunner().invoke(main, ["history", "--json"])
    (entry,) = json.loads(listed.stdout)
    assert (entry["kind"], entry["label"]) == ("capacity", "fake")
    shown = CliRunner().invoke(main, ["show", str(entry["id"])])
    assert shown.exit_code == 0, shown.output
    assert "fake: stores 8.59 GB of the 62.28 GB it claims" in shown.stdout
