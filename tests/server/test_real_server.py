"""`flashmark serve` as a real process on loopback: tokens made with `flashmark token`, results
sent with `flashmark upload` (what --dry-run prints is what arrives), and the service killed
with SIGKILL in the middle of concurrent uploads: every acknowledged result is there, whole,
and nothing half-stored."""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import signal
import threading
import time
import urllib.parse
import urllib.request
import zlib
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from flashmark.cli import main
from flashmark.errors import ExitStatus
from flashmark.probe.mmc import decode_mmc_cid
from flashmark.server.identifiers import Known
from flashmark.server.intake import HEADLINE_COLUMNS, accept
from flashmark.server.outgoing import outgoing
from flashmark.server.storage import open_storage
from flashmark.server.upload import machine_names
from tests.cli_runner import flashmark
from tests.conftest import DATA
from tests.server.conftest import RECORDED, Server, imported, recorded, variant

KILL_AFTER_ACKS = 40
MAX_UPLOADS = 600  # bounds of the kill test: count and time
MAX_SECONDS = 30.0


def test_token_commands_create_revoke_and_list(database):
    runner = CliRunner()
    made = runner.invoke(main, ["token", "create", "alice", "--database", database])
    assert made.exit_code == 0, made.output
    secret = made.stdout.strip()
    assert secret.startswith("fmk_") and len(secret) > 40
    again = runner.invoke(main, ["token", "create", "alice", "--database", database])
    assert again.exit_code == 2 and "exists already" in again.output
    bad = runner.invoke(main, ["token", "create", "a b;", "--database", database])
    assert bad.exit_code == 2
    with contextlib.closing(open_storage(database)) as storage:
        assert storage.token_for(secret) is not None
        # only the hash is kept
        assert all(secret not in repr(token) for token in storage.tokens())
    revoked = runner.invoke(main, ["token", "revoke", "alice", "--database", database])
    assert revoked.exit_code == 0 and "revoked" in revoked.output
    missing = runner.invoke(main, ["token", "revoke", "bob", "--database", database])
    assert missing.exit_code == 2 and "no token named 'bob'" in missing.output
    listed = runner.invoke(main, ["token", "list", "--database", database])
    assert "alice" in listed.output and "revoked" in listed.output


def read(server: Server, path: str) -> str:
    """GET `path` of a real service: its 200 answer's text."""
    with urllib.request.urlopen(f"{server.url}{path}", timeout=10) as response:
        assert response.status == 200, path
        return str(response.read().decode())


def with_cli_token(env: dict[str, str], database: str) -> dict[str, str]:
    """`env` with FLASHMARK_TOKEN set to a token `flashmark token create` made."""
    secret = CliRunner().invoke(main, ["token", "create", "cli", "--database", database])
    return {**env, "FLASHMARK_TOKEN": secret.stdout.strip()}


def test_upload_sends_what_the_dry_run_shows(database, start_server, tmp_path: Path):
    uploads = (DATA / "upload" / f"{kind}-fake.json" for kind in ("surface", "capacity"))
    env = imported(tmp_path, *(DATA / "report" / f"{name}.json" for name in RECORDED), *uploads)
    server = start_server(database)
    dry = flashmark("upload", "1", "--dry-run", "--link-card", "--server", server.url, env=env)
    assert dry.returncode == 0, dry.stderr
    assert "0x36980065" not in dry.stdout and "36980065" not in dry.stdout
    shown = json.loads(dry.stdout)
    assert shown["host"]["hostname"] == "(withheld)" and len(shown["card_link"]) == 32
    assert (tmp_path / "state" / "flashmark" / "upload-salt").stat().st_mode & 0o777 == 0o600

    env = with_cli_token(env, database)
    sent = flashmark("upload", "1", "2", "--link-card", "--server", server.url, env=env)
    assert sent.returncode == 0, sent.stderr
    assert f"run 1: uploaded as 1: {server.url}/api/v1/results/1" in sent.stdout
    again = flashmark("upload", "1", "--link-card", "--server", server.url, env=env)
    assert "already on the service as 1" in again.stdout
    stored = json.loads(read(server, "/api/v1/results/1"))
    assert {k: v for k, v in stored.items() if k != "id"} == shown
    # The service shows it, on its own page and among the results of its card model.
    for page in ("/results/1", "/devices/sd-9f-0x5449-sd64g-6.1?result=1"):
        assert "SD64G" in read(server, page)

    # a kind the service does not take is skipped, one line saying why; the rest still go
    mixed = flashmark("upload", "3", "2", "4", "--link-card", "--server", server.url, env=env)
    assert mixed.returncode == 0, mixed.stderr
    assert mixed.stdout == f"run 2: already on the service as 2: {server.url}/api/v1/results/2\n"
    assert mixed.stderr.splitlines() == [
        "run 3 (surface): skipped: surface results are not uploaded "
        "(flashmark uploads result, health)",
        "run 4 (capacity): skipped: capacity results are not uploaded "
        "(flashmark uploads result, health)",
    ]
    # ... and when that leaves nothing to send, the command fails in one more line
    alone = flashmark("upload", "3", "--server", server.url, env=env)
    assert alone.returncode == 2 and alone.stdout == ""
    assert alone.stderr.splitlines()[1:] == [
        "flashmark: error: none of the results can be uploaded: nothing was sent"
    ]
    # the service refusing the token, or not answering, is the service's exit status
    refused = flashmark(
        "upload", "1", "--server", server.url, env={**env, "FLASHMARK_TOKEN": "fmk_wrong"}
    )
    assert refused.returncode == ExitStatus.SERVICE
    assert "refused the result: the token is not known to this service (HTTP 401" in (
        refused.stderr
    )
    unreachable = flashmark("upload", "1", "--server", "http://127.0.0.1:9", env=env)
    assert unreachable.returncode == ExitStatus.SERVICE and "cannot reach" in unreachable.stderr
    no_token = flashmark("upload", "1", "--server", server.url, env={**env, "FLASHMARK_TOKEN": ""})
    assert no_token.returncode == 2 and "needs a token" in no_token.stderr


def test_a_health_reading_is_uploaded_without_a_serial_and_shown_with_its_model(
    database, start_server, tmp_path: Path
):
    saved = json.loads((DATA / "upload" / "health-emmc.json").read_text(encoding="utf-8"))
    env = imported(tmp_path, DATA / "upload" / "health-emmc.json")
    server = start_server(database)
    dry = flashmark("upload", "1", "--dry-run", "--server", server.url, env=env)
    assert dry.returncode == 0, dry.stderr
    shown = json.loads(dry.stdout)
    # The card's CID goes with its serial (PSN) and CRC zeroed: the rest of it is the same.
    cid = decode_mmc_cid(shown["card_cid"])
    assert cid.serial == 0 and shown["card_cid"][30:] == "00"
    assert shown["card_cid"][:20] == saved["card_cid"][:20]  # maker, OEM, name, revision
    serial = f"{decode_mmc_cid(saved['card_cid']).serial:08x}"
    boot_id = saved["counter"]["boot_id"]
    for secret in (serial, saved["card_cid"], saved["device_key"], boot_id):
        assert secret not in dry.stdout
    assert shown["device_key"] == shown["target"] == shown["counter"]["boot_id"] == "(withheld)"
    assert shown["skipped"] == []
    # And the rest as the upload rules build it (each rule: test_upload_allowlist.py).
    assert shown == outgoing(saved, Known().with_names(machine_names()))

    env = with_cli_token(env, database)
    sent = flashmark("upload", "1", "--server", server.url, env=env)
    assert sent.returncode == 0, sent.stderr
    assert sent.stdout == f"run 1: uploaded as 1: {server.url}/api/v1/health/1\n"
    again = flashmark("upload", "1", "--server", server.url, env=env)
    assert again.stdout == f"run 1: already on the service as 1: {server.url}/api/v1/health/1\n"
    stored = json.loads(read(server, "/api/v1/health/1"))
    assert {key: value for key, value in stored.items() if key != "id"} == shown
    assert json.loads(read(server, "/api/v1"))["accepted_schemas"] == [
        "flashmark.result/1",
        "flashmark.health/1",
    ]
    # Its page, and the page of its card model: the runs of the same model would be listed there
    # too (the eMMC run recorded on the same board has this model key: test_upload_allowlist).
    page = read(server, "/health/1")
    assert "M8G1GC" in page and "life used: type A 0-10%" in page
    listed = read(server, "/devices/emmc-15-0x00-m8g1gc-0.3")
    assert 'href="/health/1"' in listed and shown["summary"] in listed
    assert "0-10" in listed  # its wear, in percent


def test_sigkill_during_uploads_loses_no_acknowledged_result(database, start_server):
    with contextlib.closing(open_storage(database)) as storage:
        secret = storage.create_token("load")
    server = start_server(database, "--uploads-per-minute", "1000000")
    base = recorded("quick-a1-card")
    bodies = [json.dumps(variant(base, index)).encode() for index in range(MAX_UPLOADS)]
    acknowledged: dict[int, bytes] = {}
    attempted = 0
    lock = threading.Lock()
    stop = time.monotonic() + MAX_SECONDS
    address = urllib.parse.urlsplit(server.url)

    def client(worker: int) -> None:
        nonlocal attempted
        connection = http.client.HTTPConnection(address.hostname, address.port, timeout=10)
        for index in range(worker, MAX_UPLOADS, 8):
            if time.monotonic() > stop:
                return
            with lock:
                attempted += 1
            try:
                connection.request(
                    "POST",
                    "/api/v1/results",
                    body=bodies[index],
                    headers={
                        "Authorization": f"Bearer {secret}",
                        "Content-Type": "application/json",
                    },
                )
                response = connection.getresponse()
                answer = json.loads(response.read())
            except (OSError, http.client.HTTPException, ValueError):
                return  # the server is gone: what was not acknowledged may or may not be kept
            assert response.status == 201, answer
            with lock:
                acknowledged[int(answer["id"])] = bodies[index]

    threads = [threading.Thread(target=client, args=(worker,)) for worker in range(8)]
    for thread in threads:
        thread.start()
    while len(acknowledged) < KILL_AFTER_ACKS and time.monotonic() < stop:
        time.sleep(0.005)
    os.killpg(server.process.pid, signal.SIGKILL)
    for thread in threads:
        thread.join(timeout=30)
    server.process.wait(timeout=30)
    assert len(acknowledged) >= KILL_AFTER_ACKS
    assert len(acknowledged) < attempted <= MAX_UPLOADS  # killed in the middle

    with contextlib.closing(open_storage(database)) as storage:
        rows = _stored_rows(storage)
    for result_id, body in acknowledged.items():
        assert result_id in rows, f"acknowledged result {result_id} was lost"
        sent = {k: v for k, v in json.loads(body).items() if k != "id"}
        assert rows[result_id]["document"] == sent
    for result_id, row in rows.items():  # every stored row is whole and consistent
        kept = accept(row["document"])
        assert kept.content_hash == row["content_hash"], result_id
        assert [kept.facts.headlines[c] for c in HEADLINE_COLUMNS] == row["headlines"]
    assert len(rows) <= attempted


def _stored_rows(storage: Any) -> dict[int, dict[str, Any]]:
    rows = {}
    with storage._transaction() as run:  # the raw table: what a crash could have left
        for row in run(
            "SELECT id, content_hash, document, " + ", ".join(HEADLINE_COLUMNS) + " FROM results"
        ).fetchall():
            document = json.loads(zlib.decompress(bytes(row[2])))
            rows[int(row[0])] = {
                "content_hash": row[1],
                "document": document,
                "headlines": list(row[3:]),
            }
    return rows


def test_serve_with_no_options_keeps_an_sqlite_file_in_the_data_folder(start_server, tmp_path):
    env = {"XDG_DATA_HOME": str(tmp_path / "data"), "FLASHMARK_SERVER_DB": ""}
    server = start_server(None, env=env)
    assert "No results" in read(server, "/")
    assert (tmp_path / "data" / "flashmark" / "server.sqlite3").is_file()


def test_several_processes_need_postgresql(tmp_path):
    result = CliRunner().invoke(
        main, ["serve", "--database", str(tmp_path / "s.sqlite3"), "--workers", "2"]
    )
    assert result.exit_code == 2 and "several processes need PostgreSQL" in result.output
    missing = CliRunner().invoke(main, ["serve", "--database", str(tmp_path / "no" / "s.db")])
    assert missing.exit_code == 6 and "does not exist" in missing.output


# nan, inf, -1 and past 64 bits, for every numeric option: cli/test_numeric_options.py
@pytest.mark.parametrize(("option", "value"), [("--max-upload-bytes", "1e9"), ("--workers", "0")])
def test_serve_refuses_numbers_that_are_not_numbers(tmp_path, option, value):
    result = CliRunner().invoke(
        main, ["serve", "--database", str(tmp_path / "s.sqlite3"), option, value]
    )
    assert result.exit_code == 2, (option, value, result.output)
