"""Hostile input that needs a real results service, on SQLite and on PostgreSQL: what reaches
`flashmark serve`'s socket as no application sees it (a malformed Content-Length, no Host, a
chunked body over the limit), the client address uvicorn believes (X-Forwarded-For from
loopback), the options that choose the links' host, storage faults under a running service,
killed processes, and passwords and tokens in what the commands print.

Each test runs on a lab (tests/server/hostile/harness.py): real `flashmark serve` processes on
an SQLite file or a throwaway PostgreSQL. Validation of what the application reads runs in
this process: test_hostile_input.py.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import shutil
import signal
import socket
import threading
import time
import urllib.parse
from collections.abc import Iterator, Sequence
from pathlib import Path

import psutil
import pytest

from tests.server.conftest import Server, backup, free_port, skip_or_fail
from tests.server.hostile import cases as c
from tests.server.hostile.checks import problem_faults, safe_json, unavailable_faults
from tests.server.hostile.harness import (
    Lab,
    listeners,
    request,
    sqlite_values,
    stamp,
    wait_until,
)
from tests.server.throwaway_pg import missing_reason

pytestmark = pytest.mark.hostile


@pytest.fixture(
    scope="module", params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]
)
def lab(request: pytest.FixtureRequest) -> Iterator[Lab]:
    """One engine's lab: a database, a `flashmark serve` on it and a token."""
    pytest.importorskip("starlette", reason="the server extra is not installed")
    if request.param == "postgres" and (reason := missing_reason()):
        skip_or_fail(reason)
    with Lab(request.param) as opened:
        yield opened


CONNECTIONS = 16  # all on one of 2 sockets by chance: 2 * 2^-16
sqlite_only = pytest.mark.parametrize("lab", ["sqlite"], indirect=True)
postgres_only = pytest.mark.parametrize(
    "lab", [pytest.param("postgres", marks=pytest.mark.postgres)], indirect=True
)


# -- the socket ----------------------------------------------------------------------------------


def test_a_chunked_body_over_the_limit_is_refused(lab: Lab):
    body = b" " * (c.MAX_UPLOAD_BYTES + 1)
    answer = lab.ask("POST", "/api/v1/results", body, lab.upload_headers(), chunked=True)
    assert not problem_faults(answer, 413)


@pytest.mark.parametrize(
    ("raw", "statuses"),
    [
        (b"POST /api/v1/results HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {token}\r\n"
         b"Content-Type: application/json\r\nContent-Length: 12abc\r\n\r\n{}", range(400, 500)),
        (b"GET /api/v1 HTTP/1.0\r\n\r\n", (400,)),
    ],
    ids=["a-content-length-that-is-not-a-number", "a-request-naming-no-host"],
)  # fmt: skip
def test_a_request_no_client_library_would_send_is_refused(
    lab: Lab, raw: bytes, statuses: Sequence[int]
):
    assert lab.main is not None
    with socket.create_connection((lab.main.host, lab.main.port), timeout=10) as connection:
        connection.sendall(raw.replace(b"{token}", lab.token.encode()))
        reply = b""
        while chunk := connection.recv(65536):
            reply += chunk
    status = int(reply.split(b" ", 2)[1]) if reply.startswith(b"HTTP/") else 0
    assert status in statuses, reply[:120]


def test_bad_tokens_are_slowed_per_address(lab: Lab):
    """12 wrong tokens from one address (X-Forwarded-For, believed from loopback): the 11th on
    are refused with 429, even a right one; another address is not slowed."""
    # RFC 5737 documentation addresses: headers only, no packet goes there. The service
    # believes X-Forwarded-For from 127.0.0.1 only (uvicorn's --forwarded-allow-ips).
    guesser, other = "198.51.100.1", "198.51.100.2"
    body = json.dumps(c.distinct(901)).encode()
    statuses = []
    for attempt in range(12):
        headers = lab.upload_headers(f"fmk_guess-{attempt}", **{"X-Forwarded-For": guesser})
        statuses.append(lab.ask("POST", "/api/v1/results", body, headers).status)
    assert statuses[:10] == [401] * 10, statuses
    assert statuses[10:] == [429, 429], statuses
    right = lab.upload(body, **{"X-Forwarded-For": guesser})
    assert right.status == 429, f"a right token from the slowed address: HTTP {right.status}"
    wait = int(right.headers.get("retry-after", "0"))
    assert 1 <= wait <= 60, f"Retry-After {wait}"
    assert safe_json(right).get("type") == "/api/v1/problems/too-many-bad-tokens"
    elsewhere = lab.upload(body, **{"X-Forwarded-For": other})
    assert elsewhere.status == 201, f"another address was slowed too: HTTP {elsewhere.status}"


def test_links_name_the_trusted_host_or_the_base_url(lab: Lab):
    """serve's --base-url and --trusted-host: links from either, never from another Host."""
    assert lab.main is not None
    answer = lab.ask("GET", "/api/v1", headers=[("Host", f"localhost:{lab.main.port}")])
    assert answer.status == 200
    assert answer.json()["results"] == f"http://localhost:{lab.main.port}/api/v1/results"
    server = lab.serve(lab.database("base-url"), "--base-url", "https://results.example")
    for host in ("127.0.0.1", "evil.example"):
        answer = request(server, "GET", "/api/v1", headers=[("Host", host)])
        assert answer.status == 200, f"--base-url, Host {host}: HTTP {answer.status}"
        assert answer.json()["results"] == "https://results.example/api/v1/results"
    server = lab.serve(lab.database("trusted"), "--trusted-host", "results.example")
    answer = request(server, "GET", "/api/v1", headers=[("Host", "results.example")])
    assert answer.status == 200 and "http://results.example/" in answer.text, answer.text[:200]
    answer = request(server, "GET", "/api/v1", headers=[("Host", "127.0.0.1")])
    assert answer.status == 400, f"a host not in --trusted-host: HTTP {answer.status}"


# -- storage faults ------------------------------------------------------------------------------


def _started(index: int) -> str:
    return str(c.distinct(index)["started_at"])


def _service(lab: Lab, name: str, *options: str) -> tuple[str, str, Server]:
    database = lab.database(name)
    token = lab.create_token(database, "storage")
    return database, token, lab.serve(database, *options)


@sqlite_only
def test_a_removed_then_restored_folder_loses_no_acknowledged_upload(lab: Lab):
    name, token, server = _service(lab, "removed", "--uploads-per-minute", "100000")
    database = Path(name)
    acknowledged = set()
    for index in range(3):
        answer = lab.upload_to(server, token, 3000 + index)
        assert answer.status == 201, f"before: HTTP {answer.status}"
        acknowledged.add(int(answer.json()["id"]))
    copy = lab.folder / "removed-backup.sqlite3"
    backup(database, copy)
    keep = lab.folder / "removed-inode"  # hard links: the removed files stay readable
    keep.mkdir()
    for suffix in ("", "-wal"):
        with contextlib.suppress(FileNotFoundError):
            os.link(f"{database}{suffix}", keep / f"db{suffix}")
    before = stamp(keep / "db", keep / "db-wal")
    shutil.rmtree(database.parent)
    faults = []
    for index in range(4):
        faults += unavailable_faults(lab.upload_to(server, token, 3100 + index))
    faults += unavailable_faults(request(server, "GET", "/api/v1/results"))
    assert not faults, faults
    assert stamp(keep / "db", keep / "db-wal") == before, "written into the removed file"
    database.parent.mkdir()
    shutil.copy(copy, database)
    for index in range(3):
        answer = lab.upload_to(server, token, 3200 + index)
        assert answer.status == 201, f"after the folder is back: HTTP {answer.status}"
        acknowledged.add(int(answer.json()["id"]))
    removed = sqlite_values(keep / "db", "started_at", alone=True)
    assert not {_started(3200 + n) for n in range(3)} & removed, "written into the removed file"
    missing = acknowledged - sqlite_values(database)
    assert not missing, f"acknowledged but not in the file: {sorted(missing)}"


@sqlite_only
def test_a_file_replaced_by_garbage_is_unavailable_until_a_database_is_back(lab: Lab):
    name, token, server = _service(lab, "garbage", "--uploads-per-minute", "100000")
    database = Path(name)
    assert lab.upload_to(server, token, 3300).status == 201, "first upload"
    copy = lab.folder / "garbage-backup.sqlite3"
    backup(database, copy)
    garbage = database.with_name("garbage")
    garbage.write_bytes(b"not a database" * 1000)
    os.replace(garbage, database)
    faults = []
    for index in range(3):
        faults += unavailable_faults(lab.upload_to(server, token, 3310 + index))
    assert not faults, faults
    assert database.read_bytes().startswith(b"not a database"), "the garbage was written into"
    staged = database.with_name("staged")
    shutil.copy(copy, staged)
    os.replace(staged, database)
    answer = lab.upload_to(server, token, 3320)
    assert answer.status == 201, f"after a service database is back: HTTP {answer.status}"
    assert int(answer.json()["id"]) in sqlite_values(database), "acknowledged but not in the file"


@sqlite_only
def test_a_file_replaced_by_a_copy_is_the_one_written_and_read(lab: Lab):
    name, token, server = _service(lab, "copy", "--uploads-per-minute", "100000")
    database = Path(name)
    assert lab.upload_to(server, token, 3400).status == 201, "first upload"
    copy = database.with_name("copy.sqlite3")
    backup(database, copy)
    assert lab.upload_to(server, token, 3401).status == 201, "second upload"
    old = lab.folder / "copy-old-inode"  # a hard link: the replaced file stays readable
    os.link(database, old)
    os.replace(copy, database)  # a backup put back while the service runs
    answer = lab.upload_to(server, token, 3402)
    assert answer.status == 201, f"after the copy was put in place: HTTP {answer.status}"
    assert int(answer.json()["id"]) in sqlite_values(database), "acknowledged but not in the file"
    replaced = sqlite_values(old, "started_at", alone=True)
    assert _started(3402) not in replaced, "written into the replaced file"
    assert _started(3401) not in sqlite_values(database, "started_at"), "read the old file's WAL"
    listed = request(server, "GET", "/api/v1/results").json()["results"]
    assert len(listed) == 2, f"the service does not show the new file: {len(listed)} results"


@sqlite_only
def test_reads_of_a_removed_file_are_unavailable_and_create_nothing(lab: Lab):
    name, token, server = _service(lab, "reads")
    database = Path(name)
    answer = lab.upload_to(server, token, 3500)
    assert answer.status == 201, "upload"
    result_id = answer.json()["id"]
    for suffix in ("", "-wal", "-shm"):
        with contextlib.suppress(FileNotFoundError):
            os.unlink(f"{database}{suffix}")
    faults = []
    for target in (
        "/",
        "/api/v1/results",
        f"/api/v1/results/{result_id}",
        "/api/v1/export.jsonl",
        "/devices/sd-9f-0x5449-sd64g-6.1",
    ):
        answer = request(server, "GET", target, headers=[("Accept", "application/json")])
        faults += [f"GET {target}: {fault}" for fault in unavailable_faults(answer)]
    assert not faults, faults
    assert not database.exists(), "a new database file was created"


def _database_name(url: str) -> str:
    return urllib.parse.urlsplit(url).path.lstrip("/")


@postgres_only
def test_uploads_after_a_postgres_restart_are_kept(lab: Lab):
    assert lab.postgres is not None
    before = lab.upload(3600)
    assert before.status == 201, "before"
    lab.postgres.restart()
    for index in range(3):  # each on a connection the pool held before the restart
        answer = lab.upload(3601 + index)
        assert answer.status == 201, f"after the restart: HTTP {answer.status} {answer.text}"
    answer = lab.ask("GET", "/api/v1/results")
    assert answer.status == 200, f"reading after the restart: HTTP {answer.status}"


@postgres_only
def test_uploads_after_the_connections_were_terminated_are_kept(lab: Lab):
    import psycopg

    assert lab.postgres is not None
    name = _database_name(lab.main_database)
    with psycopg.connect(lab.postgres.url(), autocommit=True) as admin:
        admin.execute(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = %s",
            (name,),
        )
    for index in range(3):
        answer = lab.upload(3700 + index)
        assert answer.status == 201, f"after its connections ended: HTTP {answer.status}"


@postgres_only
def test_a_dropped_database_is_unavailable(lab: Lab):
    assert lab.postgres is not None
    database, token, server = _service(lab, "dropped")
    assert lab.upload_to(server, token, 3800).status == 201, "upload"
    lab.postgres.drop(_database_name(database))
    # Each request waits for a connection as long as the pool does (5 s): one read, one upload.
    answer = request(server, "GET", "/api/v1/results")
    faults = [f"GET /api/v1/results: {fault}" for fault in unavailable_faults(answer)]
    faults += unavailable_faults(lab.upload_to(server, token, 3801))
    assert not faults, faults


@postgres_only
def test_no_upload_acknowledged_while_postgres_restarts_is_lost(lab: Lab):
    """Uploads while PostgreSQL restarts: each is acknowledged and kept, or refused with 503;
    none is acknowledged and lost, none answered 500."""
    assert lab.postgres is not None
    database, token, server = _service(lab, "restart", "--uploads-per-minute", "100000")
    acknowledged: set[int] = set()
    statuses: dict[int, int] = {}
    stop = threading.Event()

    def client(worker: int) -> None:
        index = 0
        while not stop.is_set() and index < 200:
            with contextlib.suppress(OSError, http.client.HTTPException):
                answer = lab.upload_to(server, token, 4000 + worker * 1000 + index)
                statuses[answer.status] = statuses.get(answer.status, 0) + 1
                if answer.status == 201:
                    acknowledged.add(int(answer.json()["id"]))
            index += 1

    threads = [threading.Thread(target=client, args=(n,)) for n in range(3)]
    for thread in threads:
        thread.start()
    time.sleep(0.3)
    lab.postgres.restart()
    time.sleep(0.3)
    stop.set()
    for thread in threads:
        thread.join(60)
    assert set(statuses) <= {201, 503}, f"answers other than 201 and 503: {statuses}"
    after = lab.upload_to(server, token, 9999)
    assert after.status == 201, f"after the restart: HTTP {after.status}"
    acknowledged.add(int(after.json()["id"]))
    import psycopg

    with psycopg.connect(database) as connection:
        stored = {int(row[0]) for row in connection.execute("SELECT id FROM results")}
    assert acknowledged <= stored, f"acknowledged and lost: {sorted(acknowledged - stored)}"


# -- processes -----------------------------------------------------------------------------------


@sqlite_only
def test_sigkill_leaves_nothing_serving_or_listening(lab: Lab):
    server = lab.serve(lab.database("sigkill"))
    children = psutil.Process(server.process.pid).children(recursive=True)
    server.process.kill()
    server.process.wait(10)
    psutil.wait_procs(children, timeout=10)
    assert not server.answers(), "something still answers after SIGKILL"
    assert not listeners(server.port), f"still listening: {listeners(server.port)}"


def _workers(lab: Lab, name: str, port: int | None = None) -> tuple[Server, list[psutil.Process]]:
    server = lab.serve(lab.database(name), "--workers", "2", port=port)

    def own_listeners() -> set[int]:
        # Listeners of this service's processes only: on a port a killed service used, its
        # workers may still be closing when this one starts.
        with contextlib.suppress(psutil.Error):
            tree = psutil.Process(server.process.pid).children(recursive=True)
            return set(listeners(server.port)) & {child.pid for child in tree}
        return set()

    assert wait_until(lambda: len(own_listeners()) >= 2, 60), (
        f"two processes do not listen: {listeners(server.port)}"
    )
    return server, psutil.Process(server.process.pid).children(recursive=True)


@postgres_only
def test_workers_end_with_their_killed_parent_and_a_service_restarts_on_its_port(lab: Lab):
    server, children = _workers(lab, "restart-a")
    os.kill(server.process.pid, signal.SIGKILL)
    server.process.wait(10)
    _, alive = psutil.wait_procs(children, timeout=15)  # they end with their parent
    assert not alive, f"still running after the parent was killed: {[p.pid for p in alive]}"
    assert not server.answers(), "something still answers"
    restarted, _ = _workers(lab, "restart-b", port=server.port)
    listening = set(listeners(server.port))
    old = {child.pid for child in children}
    assert not listening & old, f"an old process listens beside the new service: {listening}"
    answer = request(restarted, "GET", "/api/v1")
    assert answer.status == 200, f"the restarted service: HTTP {answer.status}"


@pytest.mark.parametrize(
    ("lab", "workers"),
    [("sqlite", 1), pytest.param("postgres", 2, marks=pytest.mark.postgres)],
    indirect=["lab"],
)
def test_a_second_service_on_a_taken_port_is_refused(lab: Lab, workers: int):
    """Beside one process, or beside running workers: exit 3 in one line, the first serving."""
    first = lab.serve(lab.database("first")) if workers == 1 else _workers(lab, "first")[0]
    log = lab.folder / f"second-{workers}.log"
    second = lab.start(
        "serve", "--database", lab.database("second"), "--workers", str(workers),
        "--host", "127.0.0.1", "--port", str(first.port),
        log=log,
    )  # fmt: skip
    status = second.wait(60)
    output = log.read_text()
    assert status == 3, f"a second service on a taken port: exit {status}: {output[-300:]}"
    assert "cannot listen" in output and output.count("\n") == 1, output[-300:]
    assert first.answers(), "the first service stopped answering"
    assert len(listeners(first.port)) == workers, f"listeners: {listeners(first.port)}"


@postgres_only
def test_two_workers_share_the_connections_and_sigterm_stops_them(lab: Lab):
    """`--workers 2`: both processes take connections (each listens on its own SO_REUSEPORT
    socket), and SIGTERM to the parent stops them all."""
    server, children = _workers(lab, "shared")
    connections = [
        http.client.HTTPConnection(server.host, server.port, timeout=10) for _ in range(CONNECTIONS)
    ]
    try:
        for connection in connections:  # kept open: each stays with the process that took it
            connection.request("GET", "/api/v1")
            answer = connection.getresponse()
            assert answer.status == 200 and "accepted_schemas" in json.loads(answer.read())
        taken = {
            child.pid: sum(
                1
                for held in child.net_connections(kind="tcp")
                if held.status == psutil.CONN_ESTABLISHED and held.laddr.port == server.port
            )
            for child in children
        }
        serving = [count for count in taken.values() if count]
        assert len(serving) == 2 and sum(serving) == CONNECTIONS, taken
    finally:
        for connection in connections:
            connection.close()
    os.kill(server.process.pid, signal.SIGTERM)
    status = server.process.wait(60)
    _, alive = psutil.wait_procs(children, timeout=30)
    assert status == 0, f"exit {status}: {server.output()[-500:]}"
    assert not alive, f"left running: {[p.pid for p in alive]}"


# -- secrets -------------------------------------------------------------------------------------

# --database values with a password nothing listens for (port 1; a socket folder that is not
# there), each with its own password so that every form is looked for in the output.
UNREACHABLE = [
    ("url", "postgresql://u:S3cretPW1@127.0.0.1:1/db", ("S3cretPW1",)),
    ("postgres-scheme", "postgres://u:S3cretPW2@127.0.0.1:1/db", ("S3cretPW2",)),
    ("percent-encoded", "postgresql://u:S3cr%40tPW3@127.0.0.1:1/db", ("S3cr%40tPW3", "S3cr@tPW3")),
    ("query", "postgresql://u@127.0.0.1:1/db?password=S3cretPW4", ("S3cretPW4",)),
    ("conninfo", "host=127.0.0.1 port=1 user=u password=S3cretPW5 dbname=db", ("S3cretPW5",)),
    ("conninfo-quoted", "host=/nowhere port=1 password='S3cret PW6' dbname=db", ("S3cret PW6",)),
    ("conninfo-malformed", "host=127.0.0.1 password S3cretPW7", ("S3cretPW7",)),
]


@sqlite_only  # the lab only runs the commands: the database they name is unreachable
@pytest.mark.parametrize(("database", "secrets"), [(u, s) for _, u, s in UNREACHABLE],
                         ids=[f"unreachable-{name}" for name, _, _ in UNREACHABLE])  # fmt: skip
def test_no_command_prints_the_password_of_an_unreachable_database(
    lab: Lab, database: str, secrets: tuple[str, ...]
):
    for command in (
        ("serve", "--port", str(free_port())),
        ("token", "list"),
        ("token", "create", "x"),
        ("serve", "--debug", "--port", str(free_port())),
    ):
        done = lab.flashmark(*command, "--database", database, timeout=120)
        output = done.stdout + done.stderr
        for secret in secrets:
            assert secret not in output, f"{' '.join(command)} printed the password: {output}"
        assert done.returncode == 6, f"{' '.join(command)}: exit {done.returncode}: {output}"


def test_the_upload_token_is_never_logged_or_listed(lab: Lab):
    database = lab.database("logged")
    token = lab.create_token(database, "logged")
    server = lab.serve(database, "--debug")
    assert lab.upload_to(server, token, 5000).status == 201, "upload"
    wrong = request(server, "POST", "/api/v1/results", b"{}", lab.upload_headers(token + "x"))
    assert token not in wrong.text, "a refusal echoed the token"
    listed = lab.flashmark("token", "list", "--database", database)
    time.sleep(0.2)
    assert token not in server.output(), "the service log holds the token"
    assert token not in listed.stdout + listed.stderr, "token list printed the token"


@postgres_only
def test_no_password_of_a_live_postgres_is_printed(lab: Lab):
    """A live PostgreSQL (trust authentication ignores the password) reached by URLs and a
    key=value string that hold one: nothing the service or the token commands print holds
    it, not even after its connections were ended and PostgreSQL restarted."""
    assert lab.postgres is not None and lab.postgres.folder is not None
    database = lab.database("password")
    name = _database_name(database)
    socket_folder = lab.postgres.folder
    forms = {
        "L1vePass%40word": f"postgresql://postgres:L1vePass%40word@/{name}?host={socket_folder}",
        "L1vePassQuery": f"postgres:///{name}?host={socket_folder}&user=postgres"
        "&password=L1vePassQuery",
        "L1vePassKV": f"host={socket_folder} dbname={name} user=postgres password=L1vePassKV",
    }
    for secret, url in forms.items():
        made = lab.flashmark("token", "create", f"t{len(secret)}", "--database", url)
        assert made.returncode == 0, f"token create: {made.stderr}"
        token = made.stdout.strip()
        server = lab.serve(url, "--debug")
        assert lab.upload_to(server, token, 5100 + len(secret)).status == 201, "upload"
        lab.postgres.restart()
        lab.upload_to(server, token, 5200 + len(secret))
        listed = lab.flashmark("token", "list", "--database", url)
        output = server.output() + listed.stdout + listed.stderr + made.stderr
        for form in {secret, urllib.parse.unquote(secret)}:
            assert form not in output, f"the password {form!r} was printed: {output[-500:]}"
        os.killpg(server.process.pid, signal.SIGTERM)
        server.process.wait(60)
