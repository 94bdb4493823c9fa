"""`flashmark upload` without a service: --dry-run prints exactly the bytes an upload sends and
nothing else, the card link comes only when asked and differs per service, and a document that
cannot be sent is refused in one line naming the run and the field."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from flashmark.server.identifiers import Known
from flashmark.server.outgoing import outgoing
from flashmark.server.upload import body_of, card_link, machine_names
from tests.cli_runner import flashmark
from tests.conftest import DATA

SD_CARD_RUN = DATA / "upload" / "sd-card-run.json"


def imported(tmp_path: Path, *files: Path) -> dict[str, str]:
    """The environment of a user whose history (a new one) holds `files`, ids from 1, with a
    state folder of its own (where the salt would go)."""
    env = {
        "FLASHMARK_DB": str(tmp_path / "history.sqlite3"),
        "XDG_STATE_HOME": str(tmp_path / "state"),
    }
    for file in files:
        done = flashmark("import", file, env=env)
        assert done.returncode == 0, done.stderr
    return env


def read(file: Path) -> dict[str, Any]:
    document: dict[str, Any] = json.loads(file.read_text(encoding="utf-8"))
    return document


def test_the_dry_run_prints_exactly_the_body_and_nothing_else(tmp_path: Path):
    env = imported(tmp_path, SD_CARD_RUN)
    done = flashmark("upload", "1", "--dry-run", env=env)
    assert done.returncode == 0, done.stderr
    body = body_of(outgoing(read(SD_CARD_RUN), Known().with_names(machine_names())))
    assert done.stdout == body.decode("utf-8")
    assert done.stderr == f"run 1: dry run, nothing sent ({len(body):,} bytes)\n"
    sent = json.loads(done.stdout)
    assert "card_link" not in sent and sent["host"]["hostname"] == "(not uploaded)"
    assert not (tmp_path / "state").exists()  # no salt is made without --link-card


def test_link_card_links_one_cards_uploads_to_one_service(tmp_path: Path):
    env = imported(tmp_path, SD_CARD_RUN, DATA / "upload" / "monitor.json")
    alone = flashmark("upload", "1", "--dry-run", "--link-card", env=env)
    assert alone.returncode == 2
    assert "--link-card needs --server URL" in alone.stderr and alone.stdout == ""

    def link(server: str) -> str:
        done = flashmark("upload", "1", "--dry-run", "--link-card", "--server", server, env=env)
        assert done.returncode == 0, done.stderr
        value: str = json.loads(done.stdout)["card_link"]
        return value

    first = link("https://results.example")
    salt_file = tmp_path / "state" / "flashmark" / "upload-salt"
    assert salt_file.stat().st_mode & 0o777 == 0o600
    salt = bytes.fromhex(salt_file.read_text())
    cid = read(SD_CARD_RUN)["probe"]["devices"][0]["card"]["cid"]["raw"]
    assert first == card_link(salt, "https://results.example", cid)
    assert link("https://results.example/") == first
    assert link("https://other.example") != first
    # a monitor recording names no card: sent without a link, and said so
    both = flashmark(
        "upload", "1", "2", "--dry-run", "--link-card", "--server", "https://r.example", env=env
    )
    assert both.returncode == 0, both.stderr
    assert "run 2: no card serial or CID to link: no card_link" in both.stderr
    assert both.stdout.count('"card_link"') == 1


def test_a_document_the_allow_list_refuses_is_named_and_nothing_is_printed(tmp_path: Path):
    damaged = read(DATA / "report" / "quick-a1-card.json")
    damaged["grades"]["Z9"] = damaged["grades"].pop("A1")  # a grade this flashmark never made
    file = tmp_path / "damaged.json"
    file.write_text(json.dumps(damaged))
    env = imported(tmp_path, SD_CARD_RUN, file)
    done = flashmark("upload", "1", "2", "--dry-run", env=env)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr == (
        "flashmark: error: run 2 (benchmark) cannot be uploaded: result.grades key cannot be "
        "sent: not one of flashmark's own words\n"
    )
