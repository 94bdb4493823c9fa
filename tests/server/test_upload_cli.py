"""`flashmark upload` without a service: --dry-run prints exactly the bytes an upload sends and
nothing else, the card link comes only when asked and differs per service, and a document that
cannot be sent is refused in one line naming the run and the field."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from flashmark.server.identifiers import Known
from flashmark.server.outgoing import outgoing
from flashmark.server.upload import body_of, card_link, machine_names
from tests.cli_runner import flashmark
from tests.conftest import DATA
from tests.server.conftest import imported, partial

SD_CARD_RUN = DATA / "upload" / "sd-card-run.json"


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
    assert "card_link" not in sent and sent["host"]["hostname"] == "(withheld)"
    assert not (tmp_path / "state").exists()  # no salt is made without --link-card


def test_link_card_links_one_cards_uploads_to_one_service(tmp_path: Path):
    no_card = tmp_path / "no-card.json"
    no_card.write_text(json.dumps({**read(SD_CARD_RUN), "probe": None, "passport": None}))
    env = imported(tmp_path, SD_CARD_RUN, no_card)
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
    # a run whose probe read no card names none: sent without a link, and said so
    both = flashmark(
        "upload", "1", "2", "--dry-run", "--link-card", "--server", "https://r.example", env=env
    )
    assert both.returncode == 0, both.stderr
    assert "run 2: no card serial or CID to link: no card_link" in both.stderr
    assert both.stdout.count('"card_link"') == 1 and both.stdout.count('"flashmark.result/1"') == 2


def test_a_document_the_allow_list_refuses_is_skipped_named_and_fails_the_command(
    tmp_path: Path,
):
    damaged = read(DATA / "report" / "quick-a1-card.json")
    damaged["grades"]["Z9"] = damaged["grades"].pop("A1")  # a grade this flashmark never made
    file = tmp_path / "damaged.json"
    file.write_text(json.dumps(damaged))
    env = imported(tmp_path, SD_CARD_RUN, file)
    done = flashmark("upload", "2", "1", "--dry-run", env=env)
    assert done.returncode == 2
    sent = body_of(outgoing(read(SD_CARD_RUN), Known().with_names(machine_names())))
    assert done.stdout == sent.decode()
    assert done.stderr.splitlines() == [
        "run 2 (benchmark): skipped: result.grades key cannot be sent: not one of flashmark's "
        "own words",
        f"run 1: dry run, nothing sent ({len(done.stdout):,} bytes)",
        "flashmark: error: run 2 cannot be uploaded (its document is refused, above); the "
        "others would be sent",
    ]


def test_a_kind_flashmark_does_not_upload_is_skipped_and_the_rest_go(tmp_path: Path):
    env = imported(tmp_path, DATA / "report" / "kinds" / "powercut.json", SD_CARD_RUN)
    done = flashmark("upload", "1", "2", "--dry-run", env=env)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["schema"] == "flashmark.result/1"
    assert done.stderr.splitlines()[0] == (
        "run 1 (powercut): skipped: powercut results are not uploaded "
        "(flashmark uploads result, health)"
    )
    alone = flashmark("upload", "1", "--dry-run", env=env)
    assert alone.returncode == 2 and alone.stdout == ""
    assert alone.stderr.splitlines()[-1] == (
        "flashmark: error: none of the results can be uploaded: nothing would be sent"
    )


def test_a_campaign_and_a_label_are_the_only_names_an_upload_adds(tmp_path: Path):
    env = imported(tmp_path, SD_CARD_RUN)
    plain = flashmark("upload", "1", "--dry-run", env=env)
    joined = flashmark(
        "upload", "1", "--dry-run", "--campaign", "lab-2026.11", "--label", "board-07", env=env
    )
    assert joined.returncode == 0, joined.stderr
    sent = json.loads(joined.stdout)
    assert (sent["campaign"], sent["board_label"]) == ("lab-2026.11", "board-07")
    # Everything else is what an upload without them sends.
    assert {k: v for k, v in sent.items() if k not in ("campaign", "board_label")} == json.loads(
        plain.stdout
    )
    # A board named like this machine may be labelled so: the user chose to send the label.
    host = sorted(machine_names(), key=len)[-1] if machine_names() else "board-07"
    if re.fullmatch(r"[^\W_][\w.:+-]{0,63}", host) and not re.search(r"[0-9a-f]{8}", host):
        named = flashmark("upload", "1", "--dry-run", "--campaign", "lab", "--label", host, env=env)
        assert named.returncode == 0, named.stderr
        assert json.loads(named.stdout)["board_label"] == host


def test_a_bad_campaign_or_label_is_refused_before_anything_is_read(tmp_path: Path):
    env = imported(tmp_path, SD_CARD_RUN)
    cases = {
        ("--campaign", "a/b", "--label", "board-1"): "--campaign: a campaign name is 1 to 64",
        ("--campaign", "lab", "--label", "192.168.1.7"): "--label: the board label "
        "'192.168.1.7' holds an IPv4 address",
        ("--campaign", "lab", "--label", "pi@lab"): "--label: a board label is 1 to 64",
        ("--campaign", "lab"): "--campaign and --label go together",
        ("--label", "board-1"): "--campaign and --label go together",
    }
    for options, message in cases.items():
        done = flashmark("upload", "1", "--dry-run", *options, env=env)
        assert done.returncode == 2, (options, done.stderr)
        assert done.stdout == ""
        assert done.stderr.startswith(f"flashmark: error: {message}"), done.stderr


def test_a_partial_result_says_so_without_its_error_text(tmp_path: Path):
    """A run whose card failed mid-run is sent with the step that failed and its exit status;
    the error's text, which may quote a path, stays here."""
    document = partial(read(SD_CARD_RUN), 2)
    document["partial"]["error"] = "the device failed (EIO) under /media/alice/CARD"
    sent = outgoing(document, Known())
    assert sent["partial"] == {**document["partial"], "error": "(withheld)"}


def _places(value: Any, place: str) -> set[str]:
    """Every leaf's place in a document, as `upload --fields` writes it ([] for any item)."""
    if isinstance(value, dict):
        return {leaf for key, item in value.items() for leaf in _places(item, f"{place}.{key}")}
    if isinstance(value, list) and value:
        return {leaf for item in value for leaf in _places(item, f"{place}[]")}
    return {place}


def _unlisted(places: set[str], table: dict[str, str]) -> set[str]:
    """The places the table does not list: a null or an empty list stands where the table lists
    the fields of what it may hold."""
    return {
        place
        for place in places
        if place not in table
        and not any(row.startswith((f"{place}.", f"{place}[]")) for row in table)
    }


def test_the_fields_table_lists_every_place_an_upload_holds_and_what_stays_here(tmp_path: Path):
    done = flashmark("upload", "--fields", env={"FLASHMARK_DB": str(tmp_path / "none.sqlite3")})
    assert done.returncode == 0 and done.stderr == ""
    table = dict(line.split(None, 1) for line in done.stdout.splitlines())
    chosen = {"campaign": "fleet-1", "board_label": "board-07", "card_link": "0" * 32}
    sent = outgoing(read(SD_CARD_RUN), Known(), chosen)
    places = _places({key: sent[key] for key in sent if key not in chosen}, "result")
    places |= {f"upload.{key}" for key in chosen}
    # grades are kept by name: their places hold the grade's name where the table says KEY
    places = {re.sub(r"^result\.grades\.[^.]+", "result.grades.KEY", place) for place in places}
    assert _unlisted(places, table) == set()
    for private in ("result.host.hostname", "result.target.given", "result.target.folder"):
        assert table[private] == 'withheld: "(withheld)"'
    assert table["result.probe.devices[].serial"] == "always null"
    # a health reading's places too, and what of it stays here
    for file in ("health-emmc", "health-sd-vendor", "health-nvme"):
        reading = _places(outgoing(read(DATA / "upload" / f"{file}.json"), Known()), "health")
        assert _unlisted(reading, table) == set(), file
    for private in ("health.target", "health.device_key", "health.counter.boot_id"):
        assert table[private] == 'withheld: "(withheld)"'
    assert table["health.card_cid"].startswith("the CID with its serial (PSN) and CRC zeroed")
    assert table["health.skipped"] == "always []"
    assert not any(not place.startswith(("result.", "health.", "upload.")) for place in table)
