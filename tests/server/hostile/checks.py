"""What every hostile case is judged by, whichever way its requests reach the service (the
application in this process, or a real `flashmark serve` over loopback): every answer below 500
for client input, every 4xx an RFC 9457 problem naming the field, nothing stored for a refused
upload, everything stored shown again on every page and download, no CSV cell a spreadsheet
would run."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from tests.server.hostile import cases as c

PROBLEM = "application/problem+json"
# A front page or API page larger than this would mean a page's cost is not bounded (50 rows
# of at most 200-character texts are about 100 kB).
PAGE_LIMIT_BYTES = 512 * 1024
# The problem type of a refused upload by its status (422: unsupported-schema, or
# invalid-document).
_KINDS = {400: "invalid-json", 413: "too-large", 415: "unsupported-media-type"}


@dataclass
class Answer:
    status: int
    headers: dict[str, str]  # names in lower case
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)

    @property
    def text(self) -> str:
        return self.body.decode("utf-8", "replace")


@dataclass
class Client:
    """A service with an upload token (and a revoked one), asked by `ask`; `kept` are the ids
    of the results it acknowledged to this client."""

    token: str
    revoked_token: str
    kept: list[int] = field(default_factory=list)

    def ask(
        self,
        method: str,
        target: str,
        body: bytes = b"",
        headers: Sequence[tuple[str, str]] = (),
    ) -> Answer:
        raise NotImplementedError

    def upload_headers(self, token: str | None = None, **extra: str) -> list[tuple[str, str]]:
        headers = [("Content-Type", "application/json")]
        if token != "":
            headers.append(("Authorization", f"Bearer {token or self.token}"))
        return headers + list(extra.items())

    def upload(self, document: Any, token: str | None = None, **headers: str) -> Answer:
        """POSTs a result: a document, its JSON bytes, or an index (c.distinct(index))."""
        document = c.distinct(document) if isinstance(document, int) else document
        body = document if isinstance(document, bytes) else json.dumps(document).encode()
        return self.ask("POST", "/api/v1/results", body, self.upload_headers(token, **headers))

    def count(self) -> int:
        return len(self.ask("GET", "/api/v1/export.jsonl").body.splitlines())

    def upload_faults(self, case: c.Upload) -> list[str]:
        """An upload refused as the case says (and nothing stored), or kept and shown."""
        before = self.count()
        answer = self.ask(
            "POST",
            "/api/v1/results",
            case.body,
            [("Content-Type", case.content_type), ("Authorization", f"Bearer {self.token}")],
        )
        if case.refused:
            faults = problem_faults(answer, case.status)
            kind = safe_json(answer).get("type", "").rpartition("/")[2]
            schema = "unsupported-schema" if case.pointer == "/schema" else "invalid-document"
            expected = _KINDS.get(answer.status, schema)
            if answer.status in (*_KINDS, 422) and kind != expected:
                faults.append(f"a {answer.status} problem of type {kind!r}, not {expected!r}")
            if case.pointer is not None and answer.status == 422:
                # the first error names the field itself, or a place inside it
                pointers = [e.get("pointer", "") for e in safe_json(answer).get("errors", [])]
                named = "#" + case.pointer.rstrip("/")
                first = pointers[0] if pointers else ""
                if not (first == named or first.startswith(named + "/")):
                    faults.append(f"the problem names {pointers}, not {case.pointer}")
            if self.count() != before:
                faults.append("a refused upload was stored")
            return faults
        if answer.status != 201:
            return [f"not kept: HTTP {answer.status} {answer.text[:300]}"]
        kept = answer.json()
        self.kept.append(int(kept["id"]))
        faults = []
        if tuple(kept.get("dropped", ())) != case.dropped:
            faults.append(f"dropped {kept.get('dropped')}, not {list(case.dropped)}")
        stored = self.ask("GET", f"/api/v1/results/{kept['id']}").json()
        for pointer in case.dropped:
            if _at(stored, pointer) is not None:
                faults.append(f"the unknown key {pointer} was stored")
        return faults + self.shows(int(kept["id"]))

    def request_faults(self, case: c.Request) -> list[str]:
        answer = self.ask(case.method, case.target, case.body, case.headers)
        faults = []
        if answer.status not in case.statuses:
            faults.append(f"HTTP {answer.status}, not {sorted(case.statuses)}: {answer.text[:200]}")
        if answer.status >= 400:
            faults += problem_faults(answer, answer.status)
        if case.never_in_answer:
            shown = answer.text + json.dumps(answer.headers)
            if case.never_in_answer in shown:
                faults.append(f"the answer holds {case.never_in_answer!r}")
        return faults

    def shows(self, result_id: int) -> list[str]:
        """What must answer 200 for a stored result: its pages, its JSON, its device page,
        and every view of its campaign."""
        faults = []
        summary = self.ask("GET", f"/api/v1/results?before={result_id + 1}&limit=1").json()
        model = summary["results"][0]["model_key"] if summary.get("results") else "unknown"
        for target in (
            f"/results/{result_id}",
            f"/api/v1/results/{result_id}",
            f"/devices/{model}?result={result_id}",
            f"/compare?id={result_id}&id={self.kept[0]}"
            if self.kept[0] != result_id
            else f"/results/{result_id}",
        ):
            answer = self.ask("GET", target)
            if answer.status != 200:
                faults.append(f"GET {target}: HTTP {answer.status} {answer.text[:200]}")
        document = safe_json(self.ask("GET", f"/api/v1/results/{result_id}"))
        campaign = document.get("campaign")
        if isinstance(campaign, str):
            for target in (
                f"/campaigns/{campaign}",
                f"/api/v1/campaigns/{campaign}",
                f"/api/v1/campaigns/{campaign}/export.csv",
            ):
                answer = self.ask("GET", target)
                if answer.status != 200:
                    faults.append(f"GET {target}: HTTP {answer.status} {answer.text[:200]}")
                elif str(document.get("board_label")) not in answer.text:
                    faults.append(f"GET {target} does not show the board label")
        return faults

    def reads_hold(self) -> list[str]:
        """Every page and download of the service answers, its pages bounded."""
        faults = []
        for target in ("/", "/api/v1/results", "/api/v1/results?limit=200"):
            answer = self.ask("GET", target)
            if answer.status != 200:
                faults.append(f"GET {target}: HTTP {answer.status}")
            elif len(answer.body) > PAGE_LIMIT_BYTES:
                faults.append(f"GET {target}: {len(answer.body)} bytes")
        for target in ("/api/v1/export.csv", "/api/v1/export.jsonl"):
            answer = self.ask("GET", target)
            if answer.status != 200:
                faults.append(f"GET {target}: HTTP {answer.status}")
        return faults


def problem_faults(answer: Answer, status: int) -> list[str]:
    faults = []
    if answer.status != status:
        faults.append(f"HTTP {answer.status}, not {status}: {answer.text[:200]}")
    if answer.status >= 500 and status < 500:
        faults.append(f"a server error for client input: {answer.text[:200]}")
    if answer.headers.get("content-type", "").split(";")[0] not in (PROBLEM, "text/html"):
        faults.append(f"not a problem document: {answer.headers.get('content-type')}")
    elif answer.headers.get("content-type") == PROBLEM:
        body = safe_json(answer)
        if body.get("status") != answer.status or not body.get("title") or not body.get("detail"):
            faults.append(f"a problem without status, title or detail: {answer.text[:200]}")
    return faults


def unavailable_faults(answer: Answer) -> list[str]:
    faults = problem_faults(answer, 503)
    if not answer.headers.get("retry-after"):
        faults.append("a 503 without Retry-After")
    return faults


def safe_json(answer: Answer) -> dict[str, Any]:
    try:
        value = answer.json()
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _at(document: Any, pointer: str) -> Any:
    for part in pointer.split("/")[1:]:
        if isinstance(document, dict):
            document = document.get(part)
        elif isinstance(document, list) and part.isdigit() and int(part) < len(document):
            document = document[int(part)]
        else:
            return None
    return document


def formula_cells(exported: str, text: str) -> list[str]:
    """The text is in the CSV, and no cell starts a formula at any separator."""
    rows = list(csv.reader(io.StringIO(exported)))
    cells = [cell for row in rows[1:] for cell in row]
    faults = []
    if not any(text.strip(" ").replace("'", "") in cell.replace("'", "") for cell in cells):
        faults.append(f"the text {text!r} is not in the download")
    for cell in cells:
        parts = [cell]
        for boundary in c.CSV_BOUNDARIES:
            parts += [part for piece in parts for part in piece.split(boundary)[1:]]
        for part in parts:
            if part.lstrip(" ").startswith(c.FORMULA_SIGNS):
                faults.append(f"a cell a spreadsheet would run: {cell!r} ({part[:20]!r})")
                break
    return faults
