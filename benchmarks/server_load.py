"""Load on the results service: 100,000 results in PostgreSQL, 20 concurrent clients, loopback.

    python3 benchmarks/server_load.py [--results 100000] [--clients 20] [--seconds 20]
                                      [--workers 2] [--database postgresql://...]
                                      [--server LABEL=SRC ...] [--repeat N]

`--server before=/tmp/main/src --server after=src --repeat 3` compares two versions of the
service: the same seeded database is copied for every run (CREATE DATABASE ... TEMPLATE),
the servers run one at a time from those source trees (PYTHONPATH), interleaved (before,
after, after, before, ...), every run with the same requests; then the p95 of each endpoint
over the runs (min/median/max), the errors and the SIGKILL check of every run.

Starts a throwaway PostgreSQL (initdb + pg_ctl on a unix socket in a temporary folder, default
settings: fsync on; as root it runs as the postgres user) unless --database is given, seeds it
with synthetic results, starts `flashmark serve --workers N` on 127.0.0.1, and runs phases of
closed-loop clients (each sends its next request when the last is answered), every phase
bounded in time and count:

- search page (`/?maker=...`, random filters), search API (`/api/v1/results?...`),
- device page (`/devices/MODEL?result=ID`: the model's results and the result's percentiles),
- upload (new documents of the size `flashmark run --profile quick` makes),
- a mix (40% search pages, 40% device pages, 20% uploads),
- SIGKILL of the service during uploads: acknowledged results lost and partial rows (both
  must be 0), checked in the database after the kill.

Seeded results are real documents (recorded runs, with other devices, boards, profiles and
figures): popular models get many results (Zipf), as they do on a community site. A sample of
them is checked through the service's own intake (same facts, same content hash). Prints
tables; asserts nothing about speed.
"""

from __future__ import annotations

import argparse
import asyncio
import copy
import dataclasses
import json
import math
import os
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from flashmark.server.intake import HEADLINES, Accepted, accept, content_hash
from flashmark.server.storage import Storage, open_storage

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from tests.server.throwaway_pg import ThrowawayPostgres, missing_reason  # noqa: E402

RECORDED = ROOT / "tests" / "data" / "report"
MAKERS = (
    (0x03, "0x5344", "SanDisk", ("SN64G", "SR128", "SL32G", "SE256", "SN16G", "SR512")),
    (0x9F, "0x5449", "Kingston", ("SD64G", "SD32G", "SD128", "SDCS2", "SDCG3")),
    (0x1B, "0x534d", "Samsung", ("EB1QT", "EC1S5", "ED2S5", "EF2S5", "GD4QT")),
    (0x27, "0x5048", "Phison", ("SD16G", "SD32G", "SD64G")),
    (0x74, "0x4a45", "Transcend", ("USD00", "USDU1")),
    (0x02, "0x544d", "Toshiba", ("SA16G", "SA32G", "SA64G")),
    (0x00, "0x0000", "Unknown", ("SD", "SD128", "NCard")),
)
OTHER_DEVICES = (
    ("nvme", "Samsung SSD 980", 1_000_204_886_016),
    ("nvme", "WD Blue SN570", 500_107_862_016),
    ("usb", "SanDisk Ultra Fit", 64_023_257_088),
    ("usb", "Samsung BAR Plus", 128_043_712_512),
    ("emmc", "BJTD4R", 31_268_536_320),
    ("emmc", "DA4064", 62_537_072_640),
)
BOARDS = (
    "Raspberry Pi 5 Model B Rev 1.0",
    "Raspberry Pi 4 Model B Rev 1.5",
    "Raspberry Pi 3 Model B Plus Rev 1.3",
    "Radxa ROCK 5B",
    "Orange Pi 5",
    "Hardkernel ODROID-N2Plus",
)
PROFILES = (("quick", 0.7), ("a1", 0.2), ("standard", 0.1))
CAPACITIES = (16, 32, 64, 128, 256, 512)


@dataclasses.dataclass(frozen=True)
class Model:
    kind: str
    maker: str
    product: str
    capacity_bytes: int
    cid: tuple[int, str, str] | None  # manufacturer id, OEM id, revision
    speed: float  # scale of its figures


def models(rng: random.Random, count: int) -> list[Model]:
    found: list[Model] = []
    while len(found) < count:
        if rng.random() < 0.85:
            mid, oem, maker, names = rng.choice(MAKERS)
            gb = rng.choice(CAPACITIES)
            name = rng.choice(names)
            revision = f"{rng.randint(1, 9)}.{rng.randint(0, 9)}"
            capacity = int(gb * 1e9 * rng.uniform(0.95, 0.99))
            found.append(
                Model("sd", maker, name, capacity, (mid, oem, revision), rng.uniform(0.3, 2.0))
            )
        else:
            kind, name, capacity = rng.choice(OTHER_DEVICES)
            maker = name.split()[0] if kind != "emmc" else "Samsung"
            found.append(
                Model(kind, maker, f"{name} {len(found)}", capacity, None, rng.uniform(1.0, 20.0))
            )
    return found


def compact(document: dict[str, Any]) -> dict[str, Any]:
    """A recorded result without its per-second series and device activity (a seeded row
    needs its figures, not its charts; uploads in the load phases are full-size)."""
    document = copy.deepcopy(document)
    for test in document["tests"]:
        test["device_activity"] = None
        for side in ("read", "write"):
            if test.get(side) and test[side].get("bw_per_second"):
                test[side]["bw_per_second"]["samples"] = test[side]["bw_per_second"]["samples"][:8]
    document["workloads"] = []
    return document


def with_device(
    base: dict[str, Any], card: dict[str, Any], model: Model, board: str, profile: str
) -> dict[str, Any]:
    """`base` measured on `model` under `board`; `card`: the SD card registers to start from
    (the recorded standard run is of a virtual disk, which has none)."""
    document = copy.deepcopy(base)
    document["settings"]["profile"] = profile
    probe = document["probe"]
    probe["environment"]["board"] = board
    device = probe["devices"][-1]
    device.update(
        kind=model.kind,
        vendor=model.maker,
        model=model.product,
        capacity_bytes=model.capacity_bytes,
    )
    if model.cid is None:
        device["card"] = None
    else:
        mid, oem, revision = model.cid
        card = device["card"] = copy.deepcopy(card)
        card["manufacturer"] = model.maker
        card["cid"].update(
            manufacturer_id=mid, oem_id=oem, product_name=model.product, revision=revision
        )
    return document


class Seeder:
    """Synthetic results from per-(model, board, profile) templates read once by the intake;
    each row changes the start time, serial and figures, and its facts follow (checked)."""

    def __init__(self, rng: random.Random, catalogue: list[Model]) -> None:
        self.rng = rng
        self.catalogue = catalogue
        self.weights = [1 / (rank + 1) for rank in range(len(catalogue))]
        self.bases = {
            "quick": compact(json.loads((RECORDED / "quick-a1-card.json").read_text())),
            "standard": compact(json.loads((RECORDED / "standard-fast-card.json").read_text())),
        }
        self.bases["a1"] = self.bases["quick"]
        self.templates: dict[tuple[int, str, str], Accepted] = {}

    def result(self, index: int) -> tuple[Accepted, int]:
        rng = self.rng
        model_index = rng.choices(range(len(self.catalogue)), self.weights)[0]
        model = self.catalogue[model_index]
        board = rng.choice(BOARDS)
        profile = rng.choices([p for p, _ in PROFILES], [w for _, w in PROFILES])[0]
        key = (model_index, board, profile)
        if key not in self.templates:
            card = self.bases["quick"]["probe"]["devices"][-1]["card"]
            document = with_device(self.bases[profile], card, model, board, profile)
            self.templates[key] = accept(document)
        template = self.templates[key]
        document = dict(template.document)
        document["started_at"] = f"2025-{1 + index % 12:02d}-01T00:00:00.{index:06d}+00:00"
        tests = []
        headlines = dict(template.facts.headlines)
        by_test = {name: (column, side, metric) for column, name, side, metric in HEADLINES}
        factor = model.speed * rng.lognormvariate(0, 0.25)
        for test in document["tests"]:
            test = dict(test)
            for side in ("read", "write"):
                if test.get(side):
                    figures = dict(test[side])
                    figures["iops"] = round(figures["iops"] * factor, 3)
                    figures["bw_bytes"] = round(figures["bw_bytes"] * factor, 3)
                    test[side] = figures
                    column, wanted, metric = by_test.get(test["name"], (None, None, None))
                    if column and wanted == side:
                        headlines[column] = float(figures[metric])
            tests.append(test)
        document["tests"] = tests
        facts = dataclasses.replace(
            template.facts, started_at=document["started_at"], headlines=headlines
        )
        return Accepted(document, content_hash(document), facts), model_index


def seed(storage: Storage, count: int, rng: random.Random) -> tuple[list[tuple[str, int]], float]:
    catalogue = models(rng, 400)
    seeder = Seeder(rng, catalogue)
    token = storage.token_for(storage.create_token("seed"))
    assert token is not None
    rows: list[tuple[str, int]] = []  # (model key, id) in insert order
    started = time.monotonic()
    batch: list[Accepted] = []
    for index in range(count):
        accepted, _ = seeder.result(index)
        batch.append(accepted)
        rows.append((accepted.facts.model_key, 0))
        if index < 300 and index % 3 == 0:  # the shortcut gives what the intake would
            again = accept(json.loads(json.dumps(accepted.document)))
            assert again.content_hash == accepted.content_hash, index
            assert again.facts == accepted.facts, (again.facts, accepted.facts)
        if len(batch) == 1000:
            storage.add_results(batch, token.id)
            batch = []
            if (index + 1) % 20000 == 0:
                print(
                    f"  seeded {index + 1} results ({time.monotonic() - started:.0f} s)",
                    file=sys.stderr,
                )
    if batch:
        storage.add_results(batch, token.id)
    # a fresh database numbers the rows 1..N in insert order: check a few
    for index in rng.sample(range(count), 50):
        row = storage.summary(index + 1)
        assert row is not None and row.model_key == rows[index][0], index
    return [(key, index + 1) for index, (key, _) in enumerate(rows)], time.monotonic() - started


# -- a small HTTP/1.1 client (keep-alive; the stdlib has no asyncio one) ---------------------------


class Connection:
    def __init__(self, host: str, port: int) -> None:
        self.host, self.port = host, port
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def request(
        self, method: str, path: str, body: bytes = b"", headers: dict[str, str] | None = None
    ) -> tuple[int, bytes]:
        if self.writer is None:
            self.reader, self.writer = await asyncio.open_connection(self.host, self.port)
        assert self.reader is not None
        lines = [
            f"{method} {path} HTTP/1.1",
            f"Host: {self.host}:{self.port}",
            f"Content-Length: {len(body)}",
        ]
        lines += [f"{name}: {value}" for name, value in (headers or {}).items()]
        self.writer.write(("\r\n".join(lines) + "\r\n\r\n").encode() + body)
        await self.writer.drain()
        status_line = await self.reader.readline()
        if not status_line:
            raise ConnectionResetError("the server closed the connection")
        status = int(status_line.split()[1])
        length = 0
        chunked = False
        while True:
            line = await self.reader.readline()
            if line in (b"\r\n", b""):
                break
            name, _, value = line.decode("latin-1").partition(":")
            if name.lower() == "content-length":
                length = int(value)
            elif name.lower() == "transfer-encoding" and "chunked" in value:
                chunked = True
        if not chunked:
            return status, await self.reader.readexactly(length)
        parts = []
        while True:
            size = int((await self.reader.readline()).split(b";")[0], 16)
            parts.append(await self.reader.readexactly(size + 2))
            if size == 0:
                return status, b"".join(parts)

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
            self.writer = None


Request = tuple[str, str, str, bytes, dict[str, str]]  # label, method, path, body, headers


async def phase(
    host: str,
    port: int,
    clients: int,
    seconds: float,
    limit: int,
    next_request: Callable[[int], Request],
    pace_s: float = 0.0,
) -> dict[str, dict[str, Any]]:
    """Clients until `seconds` pass or `limit` requests were sent: closed loop (the next
    request as soon as the answer is in), or paced (one request every `pace_s` per client,
    never sooner; at once when an answer took longer)."""
    stats: dict[str, dict[str, Any]] = {}
    sent = 0
    deadline = time.monotonic() + seconds

    async def client(number: int) -> None:
        nonlocal sent
        connection = Connection(host, port)
        # paced clients start spread over one interval, not all at once
        due = time.monotonic() + pace_s * number / clients
        try:
            while time.monotonic() < deadline and sent < limit:
                if pace_s:
                    await asyncio.sleep(max(0.0, due - time.monotonic()))
                    due = max(due + pace_s, time.monotonic())
                sent += 1
                label, method, path, body, headers = next_request(number)
                entry = stats.setdefault(label, {"times": [], "errors": 0, "statuses": {}})
                started = time.perf_counter()
                try:
                    status, _ = await asyncio.wait_for(
                        connection.request(method, path, body, headers), timeout=30
                    )
                except (OSError, asyncio.IncompleteReadError, TimeoutError, ValueError):
                    entry["errors"] += 1
                    connection.close()
                    continue
                entry["times"].append(time.perf_counter() - started)
                entry["statuses"][status] = entry["statuses"].get(status, 0) + 1
                if status >= 400 or status not in (200, 201):
                    entry["errors"] += 1
        finally:
            connection.close()

    await asyncio.gather(*(client(number) for number in range(clients)))
    return stats


@dataclasses.dataclass(frozen=True)
class Figures:
    """One endpoint in one phase: answers, their rate and latency, and the errors (failed
    requests and answers other than 200/201)."""

    n: int
    per_s: float
    p50_ms: float | None
    p95_ms: float | None
    max_ms: float | None
    errors: int


def figures(entry: dict[str, Any], elapsed: float) -> Figures:
    times = sorted(entry["times"])
    if not times:
        return Figures(0, 0.0, None, None, None, entry["errors"])
    p95 = times[min(len(times) - 1, math.ceil(0.95 * len(times)) - 1)]  # nearest rank
    return Figures(
        len(times),
        len(times) / elapsed,
        statistics.median(times) * 1000,
        p95 * 1000,
        times[-1] * 1000,
        entry["errors"],
    )


def _ms(value: float | None) -> str:
    return "" if value is None else f"{value:.1f}"


def table(rows: list[tuple[str, Figures]]) -> None:
    print(
        f"| {'endpoint':<40} | {'n':>6} | {'req/s':>6} | {'p50 ms':>7} | {'p95 ms':>7} | "
        f"{'max ms':>7} | errors |"
    )
    print(
        f"| {'-' * 40} | {'-' * 6}: | {'-' * 6}: | {'-' * 7}: | {'-' * 7}: | {'-' * 7}: | -----: |"
    )
    for label, row in rows:
        print(
            f"| {label:<40} | {row.n:>6} | {row.per_s:>6.0f} | {_ms(row.p50_ms):>7} | "
            f"{_ms(row.p95_ms):>7} | {_ms(row.max_ms):>7} | {row.errors:>6} |"
        )


def start_server(
    database: str, workers: int, port: int, log: Path, src: str | None = None
) -> subprocess.Popen[bytes]:
    """`flashmark serve` from this tree, or from the source tree `src` (its PYTHONPATH)."""
    env = dict(os.environ)
    if src is not None:
        env["PYTHONPATH"] = str(Path(src).resolve())
    with log.open("wb") as output:
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "flashmark",
                "serve",
                "--database",
                database,
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
                "--workers",
                str(workers),
                "--uploads-per-minute",
                "1000000",
            ],
            stdout=output,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            env=env,
        )
    deadline = time.monotonic() + 60
    while True:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/v1", timeout=2):
                return process
        except OSError:
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the server did not start: {log.read_text()}") from None
            time.sleep(0.1)


def stop(process: subprocess.Popen[bytes], how: int = signal.SIGTERM) -> None:
    if process.poll() is None:
        os.killpg(process.pid, how)
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=30)


@dataclasses.dataclass(frozen=True)
class Killed:
    """The service killed with SIGKILL during uploads, then the database read back."""

    attempted: int
    acknowledged: int
    stored: int
    lost: int  # acknowledged, and not stored as sent
    partial: int  # stored rows whose document does not match their content hash


@dataclasses.dataclass(frozen=True)
class Run:
    server: str  # its label
    closed: list[tuple[str, Figures]]
    paced: list[tuple[str, Figures]]
    killed: Killed
    load: tuple[float, float]  # load average before and after the closed-loop phases


@dataclasses.dataclass(frozen=True)
class Seeded:
    rows: list[tuple[str, int]]  # (model key, id)
    secret: str  # an upload token
    seconds: float


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--results", type=int, default=100_000)
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=20.0, help="length of each phase")
    parser.add_argument("--limit", type=int, default=50_000, help="most requests per phase")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument(
        "--pace-ms", type=float, default=100.0, help="interval of each client, paced phases"
    )
    parser.add_argument("--database", help="an existing, empty PostgreSQL database")
    parser.add_argument(
        "--server",
        action="append",
        default=[],
        metavar="LABEL=SRC",
        help="run the service from the source tree SRC (e.g. a checkout of main's src); "
        "give it twice to compare (default: this tree)",
    )
    parser.add_argument("--repeat", type=int, default=1, help="runs of each server")
    parser.add_argument("--seed-only", action="store_true", help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.seed_only:  # a database for one server's code (see seed_for)
        made = prepare(options.database, options)
        print(json.dumps({"secret": made.secret, "seconds": made.seconds}))
        return
    servers: list[tuple[str, str | None]] = []
    for given in options.server:
        label, _, src = given.partition("=")
        if not label or not src or not (Path(src) / "flashmark").is_dir():
            parser.error(f"--server {given}: LABEL=SRC, SRC a folder holding flashmark/")
        servers.append((label, src))
    servers = servers or [("this tree", None)]
    runs = len(servers) * options.repeat
    if options.database is not None:
        if runs > 1:
            parser.error("several runs copy a seeded database: leave --database out")
        only = prepare(options.database, options)
        result = measure(options.database, only, options, *servers[0])
        summary([result], servers, options)
        return
    if missing_reason():
        sys.exit(f"server_load: {missing_reason()}")
    with ThrowawayPostgres() as pg:
        # One seeded database per server, made by that server's own code (its migrations:
        # an older service refuses a database a newer one migrated), with the same rows.
        seeded = {
            label: seed_for(pg, f"seeded{index}", src, options)
            for index, (label, src) in enumerate(servers)
        }
        results = []
        for index, (label, src) in enumerate(interleaved(servers, options.repeat)):
            print(f"\n## Run {index + 1} of {runs}: {label}", flush=True)
            # Every run starts from the same database: a copy of its server's seeded one.
            template = f"seeded{[name for name, _ in servers].index(label)}"
            database = pg.create(f"run{index}", template=template)
            try:
                results.append(measure(database, seeded[label], options, label, src))
            finally:
                pg.drop(f"run{index}")
        summary(results, servers, options)


def seed_for(
    pg: ThrowawayPostgres, name: str, src: str | None, options: argparse.Namespace
) -> Seeded:
    """A seeded database made by this script run with the flashmark of `src`."""
    database = pg.create(name)
    env = dict(os.environ)
    if src is not None:
        env["PYTHONPATH"] = str(Path(src).resolve())
    done = subprocess.run(
        [
            sys.executable,
            __file__,
            "--seed-only",
            "--database",
            database,
            "--results",
            str(options.results),
        ],
        env=env,
        stdout=subprocess.PIPE,
        check=True,
        timeout=3600,
    )
    lines = done.stdout.decode().splitlines()
    print("\n".join(lines[:-1]))
    made = json.loads(lines[-1])
    import psycopg

    with psycopg.connect(database) as connection:
        rows = connection.execute("SELECT model_key, id FROM results ORDER BY id").fetchall()
    return Seeded(
        [(str(key), int(result_id)) for key, result_id in rows], made["secret"], made["seconds"]
    )


def interleaved(servers: list[tuple[str, str | None]], repeat: int) -> list[tuple[str, str | None]]:
    """A B, B A, A B, ...: each server runs as often first as second, so a drift of the
    machine's other load over the runs does not favour one."""
    order = []
    for index in range(repeat):
        order += servers if index % 2 == 0 else servers[::-1]
    return order


def prepare(database: str, options: argparse.Namespace) -> Seeded:
    rng = random.Random(2026)
    storage = open_storage(database)
    try:
        print(f"seeding {options.results} results ...", file=sys.stderr)
        rows, seconds = seed(storage, options.results, rng)
        secret = storage.create_token("load")
    finally:
        storage.close()
    # What autovacuum does a little later on its own: statistics for the planner and the
    # visibility map (index-only scans), so the phases do not measure it running meanwhile.
    import psycopg

    with psycopg.connect(database, autocommit=True) as connection:
        connection.execute("VACUUM ANALYZE results")
    by_model = {key for key, _ in rows}
    print(f"\nSeeded {len(rows)} results in {seconds:.0f} s ({len(by_model)} device models).")
    return Seeded(rows, secret, seconds)


def measure(
    database: str,
    seeded: Seeded,
    options: argparse.Namespace,
    label: str = "this tree",
    src: str | None = None,
) -> Run:
    rows = seeded.rows
    rng = random.Random(2026)  # the same requests in every run
    by_model: dict[str, list[int]] = {}
    for key, result_id in rows:
        by_model.setdefault(key, []).append(result_id)
    popular = sorted(by_model, key=lambda key: -len(by_model[key]))
    print(
        f"Largest model: {len(by_model[popular[0]])} results; median "
        f"{statistics.median(len(v) for v in by_model.values()):.0f}."
    )

    upload_base = json.loads((RECORDED / "quick-a1-card.json").read_text())
    counter = iter(range(10**9))
    upload_headers = {
        "Authorization": f"Bearer {seeded.secret}",
        "Content-Type": "application/json",
    }

    def search_params() -> str:
        choice = rng.random()
        _, _, maker, names = rng.choice(MAKERS)
        if choice < 0.25:
            params = {"maker": maker}
        elif choice < 0.45:
            params = {"name": rng.choice(names)[:4].lower()}
        elif choice < 0.6:
            params = {"capacity": f"{rng.choice(CAPACITIES)}G", "medium": "sd"}
        elif choice < 0.75:
            params = {"board": rng.choice(BOARDS).split(" Rev")[0], "profile": "quick"}
        elif choice < 0.9:
            params = {
                "maker": maker,
                "capacity": f"{rng.choice(CAPACITIES)}G",
                "profile": rng.choice(["quick", "a1"]),
            }
        else:
            params = {"model": rng.choice(popular[:50])}
        return urllib.parse.urlencode(params)

    def device_path() -> str:
        key = popular[min(int(rng.paretovariate(1.0)) - 1, len(popular) - 1)]
        return f"/devices/{key}?result={rng.choice(by_model[key])}"

    # The client shares the CPUs with the server: each body is the recorded document with
    # another start time put into its bytes, not a copy serialised again.
    upload_template = json.dumps({**upload_base, "started_at": "STARTED-AT"}).encode()

    def upload_body() -> bytes:
        started_at = f"2026-06-01T00:00:00.{next(counter):06d}+00:00"
        return upload_template.replace(b"STARTED-AT", started_at.encode())

    def search_page(_: int) -> Request:
        return ("search page  GET /?...", "GET", "/?" + search_params(), b"", {})

    def search_api(_: int) -> Request:
        return (
            "search API   GET /api/v1/results?...",
            "GET",
            "/api/v1/results?" + search_params(),
            b"",
            {},
        )

    def device_page(_: int) -> Request:
        return ("device page  GET /devices/KEY?result=ID", "GET", device_path(), b"", {})

    def upload(_: int) -> Request:
        return (
            "upload       POST /api/v1/results",
            "POST",
            "/api/v1/results",
            upload_body(),
            upload_headers,
        )

    def mixed(number: int) -> Request:
        pick = rng.random()
        label, method, path, body, headers = (
            search_page(number)
            if pick < 0.4
            else device_page(number)
            if pick < 0.8
            else upload(number)
        )
        return ("mixed: " + label.split()[0] + " " + label.split()[1], method, path, body, headers)

    port = _free_port()
    tables: dict[float, list[tuple[str, Figures]]] = {}
    load: tuple[float, float] = (0.0, 0.0)
    with tempfile.TemporaryDirectory(prefix="flashmark-load-") as folder:
        log = Path(folder) / "serve.log"
        server = start_server(database, options.workers, port, log, src)
        try:
            # warm-up: connections, caches, first templates
            asyncio.run(phase("127.0.0.1", port, 4, 3, 400, mixed))
            for pace_s in (0.0, options.pace_ms / 1000):
                results: list[tuple[str, Figures]] = []
                load_before = os.getloadavg()[0]
                for generator in (search_page, search_api, device_page, upload, mixed):
                    started = time.monotonic()
                    stats = asyncio.run(
                        phase(
                            "127.0.0.1",
                            port,
                            options.clients,
                            options.seconds,
                            options.limit,
                            generator,
                            pace_s,
                        )
                    )
                    elapsed = time.monotonic() - started
                    results += [
                        (name, figures(entry, elapsed)) for name, entry in sorted(stats.items())
                    ]
                    print(f"  phase {generator.__name__}: done", file=sys.stderr)
                mode = (
                    "closed loop"
                    if not pace_s
                    else f"paced: one request every {pace_s * 1000:g} ms per client"
                )
                print(
                    f"\n{label}: {options.clients} concurrent clients ({mode}), "
                    f"{options.workers} server processes, {options.seconds:g} s per phase, "
                    f"loopback; {len(rows)} results in PostgreSQL; load average "
                    f"{load_before:.1f} before, {os.getloadavg()[0]:.1f} after "
                    f"({os.cpu_count()} CPUs):\n"
                )
                table(results)
                tables[pace_s] = results
                if not pace_s:
                    load = (load_before, os.getloadavg()[0])
        finally:
            stop(server)
        print(f"\n{label}: killed with SIGKILL during uploads ({options.clients} clients):\n")
        result = killed(database, options, port, log, upload_body, upload_headers, src)
    print("| uploads attempted | acknowledged | stored | acknowledged but lost | partial rows |")
    print("| ---: | ---: | ---: | ---: | ---: |")
    print(
        f"| {result.attempted} | {result.acknowledged} | {result.stored} | {result.lost} | "
        f"{result.partial} |",
        flush=True,
    )
    return Run(label, tables[0.0], tables[options.pace_ms / 1000], result, load)


def summary(
    runs: list[Run], servers: list[tuple[str, str | None]], options: argparse.Namespace
) -> None:
    """p95 of each endpoint over the runs of each server: min/median/max; errors summed."""
    labels = [label for label, _ in servers]
    repeat = options.repeat
    for mode in ("closed", "paced"):
        described = (
            "closed loop"
            if mode == "closed"
            else f"paced, one request every {options.pace_ms:g} ms per client"
        )
        print(
            f"\n### Summary, {described}: p95 ms over {repeat} run(s) of each server "
            f"(min / median / max), median req/s, errors in all runs\n"
        )
        header = "| endpoint | " + " | ".join(
            f"{label} p95 ms | {label} req/s | {label} errors" for label in labels
        )
        print(header + " |")
        print("| --- | " + " | ".join("---: | ---: | ---:" for _ in labels) + " |")
        endpoints = [name for name, _ in getattr(runs[0], mode)]
        for endpoint in endpoints:
            cells = []
            for label in labels:
                found = [
                    row
                    for run in runs
                    if run.server == label
                    for name, row in getattr(run, mode)
                    if name == endpoint
                ]
                p95s = sorted(row.p95_ms for row in found if row.p95_ms is not None)
                spread = (
                    f"{p95s[0]:.1f} / {statistics.median(p95s):.1f} / {p95s[-1]:.1f}"
                    if p95s
                    else ""
                )
                rate = statistics.median(row.per_s for row in found) if found else 0.0
                cells.append(f"{spread} | {rate:.0f} | {sum(row.errors for row in found)}")
            print(f"| {endpoint.strip()} | " + " | ".join(cells) + " |")
    print("\n### SIGKILL during uploads, every run\n")
    print(
        "| run | server | attempted | acknowledged | stored | acknowledged but lost | "
        "partial rows | load average (closed loop) |"
    )
    print("| ---: | --- | ---: | ---: | ---: | ---: | ---: | --- |")
    for index, run in enumerate(runs):
        k = run.killed
        print(
            f"| {index + 1} | {run.server} | {k.attempted} | {k.acknowledged} | {k.stored} | "
            f"{k.lost} | {k.partial} | {run.load[0]:.1f} to {run.load[1]:.1f} |"
        )


def killed(
    database: str,
    options: argparse.Namespace,
    port: int,
    log: Path,
    upload_body: Callable[[], bytes],
    headers: dict[str, str],
    src: str | None = None,
) -> Killed:
    # The database is read as it is, not through this tree's Storage (which would migrate
    # it: a server from an older tree would then refuse it).
    import psycopg

    with psycopg.connect(database) as connection:
        row = connection.execute("SELECT COALESCE(MAX(id), 0) FROM results").fetchone()
        assert row is not None  # an aggregate always gives one row
        before = row[0]
    server = start_server(database, options.workers, port, log, src)
    acknowledged: dict[int, bytes] = {}
    attempted = 0

    async def client() -> None:
        nonlocal attempted
        connection = Connection("127.0.0.1", port)
        try:
            while attempted < options.limit:  # ends with the kill; bounded all the same
                body = upload_body()
                attempted += 1
                try:
                    status, answer = await connection.request(
                        "POST", "/api/v1/results", body, headers
                    )
                except (OSError, asyncio.IncompleteReadError, ValueError, IndexError):
                    return
                if status == 201:
                    acknowledged[int(json.loads(answer)["id"])] = body
        finally:
            connection.close()

    async def load() -> None:
        tasks = [asyncio.create_task(client()) for _ in range(options.clients)]
        await asyncio.sleep(3.0)
        os.killpg(server.pid, signal.SIGKILL)
        await asyncio.wait_for(asyncio.gather(*tasks), timeout=60)

    asyncio.run(load())
    server.wait(timeout=30)
    lost = partial = stored = 0
    with psycopg.connect(database) as connection:
        for result_id, body in acknowledged.items():
            row = connection.execute(
                "SELECT document FROM results WHERE id = %s", (result_id,)
            ).fetchone()
            sent = {k: v for k, v in json.loads(body).items() if k != "id"}
            if row is None or json.loads(zlib.decompress(bytes(row[0]))) != sent:
                lost += 1
        for row in connection.execute(
            "SELECT content_hash, document FROM results WHERE id > %s", (before,)
        ).fetchall():
            stored += 1
            document = json.loads(zlib.decompress(bytes(row[1])))
            if content_hash(document) != row[0]:
                partial += 1
    return Killed(attempted, len(acknowledged), stored, lost, partial)


def _free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


if __name__ == "__main__":
    main()
