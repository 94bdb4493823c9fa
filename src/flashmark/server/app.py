"""The results service as an ASGI application (Starlette; `flashmark serve` runs it in uvicorn).

Reading is public, writing needs a token. Every error is a JSON problem (RFC 9457,
`application/problem+json`) with the status that fits; a browser asking for HTML gets the same
message as a page. Database work and the CPU-bound parts (reading an upload, drawing a report)
run in the thread pool, so one slow request does not hold the event loop.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import ipaddress
import itertools
import json
import logging
import math
import os
import re
import time
import urllib.parse
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field, fields
from functools import partial
from typing import Any, TypeVar

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import MutableHeaders
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response, StreamingResponse
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from flashmark.bench.document import document_to_run
from flashmark.errors import ResultFormatError
from flashmark.health.kind import HEALTH
from flashmark.report.html import KindResults, render_html_report, render_report
from flashmark.server.campaign import (
    Campaign,
    build_campaign,
    campaign_csv,
    campaign_to_json,
)
from flashmark.server.campaign_names import CAMPAIGN_NAME
from flashmark.server.campaign_page import campaign_page
from flashmark.server.intake import (
    ACCEPTED_SCHEMAS,
    HEADLINE_COLUMNS,
    Accepted,
    AcceptedReading,
    Summary,
    UploadRejected,
    parse_upload,
)
from flashmark.server.ranking import GroupCache, count_upload, standings
from flashmark.server.storage import (
    CampaignRefused,
    ReadingRow,
    ResultRow,
    Search,
    Storage,
    StorageError,
    Stored,
    open_storage,
    with_id,
)
from flashmark.server.views import (
    TEMPLATES,
    TableRows,
    charts,
    csv_text,
    rounded,
    templates,
    with_navigation,
    with_withheld_marked,
)

CONFIG_ENV = "FLASHMARK_SERVE_CONFIG"  # how `serve --workers N` hands the settings to workers
T = TypeVar("T")
_LOG = logging.getLogger("flashmark.server")
_MAX_ID = 2**63 - 1
_MAX_TEXT = 200  # longest search text
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\ud800-\udfff]")
_MAX_COMPARE = 8
_PAGE_SIZE = 50
# Pages fetch nothing but their own style sheet; forms post to this site only.
_CSP = (
    "default-src 'none'; style-src 'self'; form-action 'self'; base-uri 'none'; "
    "frame-ancestors 'none'"
)
# Every answer: no framing by another site (CSP Level 2 frame-ancestors; X-Frame-Options,
# RFC 7034, for browsers without it), no guessing of types, no referrer to other sites.
_FRAMING = "frame-ancestors 'none'"
_HEADERS = {
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
}
# A result's facts as the search API and the CSV export give them, in their order.
_ROW_FACTS = (
    "uploaded_at",
    *(fact.name for fact in fields(Summary) if fact.name not in ("card_serial", "headlines")),
)
_CSV_COLUMNS = ("id", "url", *_ROW_FACTS, "card_serial", *HEADLINE_COLUMNS)
# The device page lists a model's profiles by count: at most this many (each is a link).
_PROFILES_SHOWN = 50
# Links are built from the request's Host only when it names one of these (with no
# --base-url and no --trusted-host): the service's own loopback names.
LOOPBACK_HOSTS = ("localhost", "127.0.0.1", "::1")
_HOST = re.compile(
    r"(?:\[(?P<ipv6>[0-9A-Fa-f:.]{2,45})\]|(?P<name>[A-Za-z0-9.-]{1,253}))(?::[0-9]{1,5})?"
)


@dataclass(frozen=True)
class ServerConfig:
    database: str
    # For links in answers. Without it, the request's Host when it names a trusted host
    # (trusted_hosts, else LOOPBACK_HOSTS); requests naming another host are refused.
    base_url: str | None = None
    trusted_hosts: tuple[str, ...] = ()
    max_upload_bytes: int = 4 * 1024 * 1024
    uploads_per_minute: float = 60.0  # per token and server process (a token bucket)
    upload_burst: int = 30
    pool_size: int = 10
    # Failed token attempts of one address (IPv4 address, IPv6 /64) before it is slowed to
    # one attempt every 60 / bad_tokens_per_minute seconds (per server process).
    bad_token_burst: int = 10
    bad_tokens_per_minute: float = 6.0


@dataclass(eq=False)
class Problem(Exception):
    """An error answer: RFC 9457 fields. `kind` becomes the type URI's last part; `pointer`
    (a JSON pointer) names the field of the request body that is wrong."""

    status: int
    kind: str
    detail: str
    headers: Mapping[str, str] = field(default_factory=dict)
    pointer: str | None = None


_TITLES = {
    400: "Bad request",
    403: "Forbidden",
    401: "Unauthorized",
    404: "Not found",
    405: "Method not allowed",
    409: "Conflict",
    413: "Body too large",
    415: "Unsupported media type",
    422: "Unprocessable result",
    429: "Too many uploads",
    500: "Internal error",
    503: "Database unavailable",
}


@dataclass
class TokenBuckets:
    """A token bucket per key (an upload token's id, a client address): `burst` at once, then
    `per_minute`. The `size` most recently used keys are kept (least recently used forgotten
    first, as full again): memory stays bounded whatever the number of keys. Kept in the
    process: with several server processes each allows this much (docs/server.md). `key`
    makes the key of what is given: IPv6 addresses count per /64, the block one host usually
    has (address_key)."""

    per_minute: float
    burst: int
    size: int = 10_000
    key: Callable[[Any], Any] = lambda given: given
    # key: (tokens, when they were counted), the most recently used last
    buckets: OrderedDict[Any, tuple[float, float]] = field(default_factory=OrderedDict)

    def wait_s(self, given: Any, now: float) -> float:
        """0 when `given` has a token now, else the seconds until it has one."""
        tokens = self._tokens(self.key(given), now)
        if tokens >= 1.0:
            return 0.0
        return (1.0 - tokens) / self._rate if self._rate > 0 else math.inf

    def take(self, given: Any, now: float) -> None:
        """One token of `given` used (at none, it stays at none)."""
        key = self.key(given)
        tokens = self._tokens(key, now)
        self.buckets.pop(key, None)
        self.buckets[key] = (max(tokens - 1.0, 0.0), now)
        while len(self.buckets) > self.size:
            self.buckets.popitem(last=False)

    def _tokens(self, key: Any, now: float) -> float:
        """The tokens of `key` at `now`: refilled since they were counted, at most `burst`."""
        tokens, counted = self.buckets.get(key, (float(self.burst), now))
        return min(float(self.burst), tokens + (now - counted) * self._rate)

    @property
    def _rate(self) -> float:
        return self.per_minute / 60.0


def address_key(address: str) -> str:
    try:
        parsed = ipaddress.ip_address(address)
    except ValueError:
        return address[:64]
    if parsed.version == 6:
        return str(ipaddress.ip_network(f"{parsed}/64", strict=False))
    return str(parsed)


class SecurityHeaders:
    """ASGI middleware around the whole service, its 500 answers included: every answer
    refuses to be framed by another site (a Content-Security-Policy with frame-ancestors
    'none', added to the answer's own policy when it has one without it, and X-Frame-Options:
    DENY), to have its type guessed, and to send a referrer to other sites."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def secured(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                policies = headers.getlist("content-security-policy")
                if not any("frame-ancestors" in policy for policy in policies):
                    headers.append("content-security-policy", _FRAMING)
                headers.update(_HEADERS)
            await send(message)

        await self.app(scope, receive, secured)


class HostChecked:
    """ASGI middleware of every route that makes links: sets the request's `root`, the address
    links start with: --base-url, else the request's own address when its Host names a trusted
    host. Without --base-url, a request naming another host is refused: a Host header naming
    another site would make the answer point there."""

    def __init__(self, app: ASGIApp, config: ServerConfig) -> None:
        self.app = app
        self.base_url = config.base_url.rstrip("/") if config.base_url else None
        trusted = tuple(host.lower().rstrip(".").strip("[]") for host in config.trusted_hosts)
        self.trusted = trusted or LOOPBACK_HOSTS

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        request = Request(scope)
        root = self.base_url
        if root is None:
            host = _host_of(request)
            if host is None or host[0] not in self.trusted:
                shown = request.headers.get("host", "")[:100]
                raise Problem(
                    400,
                    "untrusted-host",
                    f"this service does not answer for the host {shown!r} (it answers for "
                    f"{', '.join(self.trusted)}): its operator sets --base-url or --trusted-host",
                )
            root = f"{request.url.scheme}://{host[1]}"
        request.state.root = root
        await self.app(scope, receive, send)


class _Application(Starlette):
    def build_middleware_stack(self) -> ASGIApp:
        # Outside Starlette's own error middleware, so that a 500 answer is secured too.
        return SecurityHeaders(super().build_middleware_stack())


def create_app(config: ServerConfig) -> Starlette:
    service = ResultsService(config)
    checked = [Middleware(HostChecked, config=config)]
    routes = [
        Route(path, endpoint, methods=methods, middleware=checked)
        for path, endpoint, methods in (
            ("/", service.browse, None),
            ("/results/{id}", service.result_page, None),
            ("/health/{id}", service.reading_page, None),
            ("/compare", service.compare_page, None),
            ("/devices/{key}", service.device_page, None),
            ("/campaigns/{name}", service.campaign_view, None),
            ("/api/v1", service.api_index, None),
            ("/api/v1/results", service.upload, ["POST"]),
            ("/api/v1/results", service.api_search, None),
            ("/api/v1/results/{id}", service.api_result, None),
            ("/api/v1/health/{id}", service.api_reading, None),
            ("/api/v1/export.csv", service.export_csv, None),
            ("/api/v1/export.jsonl", service.export_jsonl, None),
            ("/api/v1/campaigns/{name}", service.api_campaign, None),
            ("/api/v1/campaigns/{name}/export.csv", service.campaign_export, None),
        )
    ]
    # The style sheet makes no links: it is served whatever the Host.
    routes.append(Route("/static/server.css", service.stylesheet))
    return _Application(
        routes=routes,
        lifespan=service.lifespan,
        exception_handlers=dict.fromkeys(
            (Problem, HTTPException, StorageError, Exception), service.on_error
        ),
    )


class ResultsService:
    """The service's state (its storage, templates, limits and caches) and its route
    handlers; create_app routes requests to them."""

    def __init__(self, config: ServerConfig) -> None:
        self.config = config
        self.templates = templates()
        self.style = (TEMPLATES / "server.css").read_bytes()
        self.limiter = TokenBuckets(config.uploads_per_minute, config.upload_burst)
        # Failed token attempts by address: an address out of them is refused (429) before
        # its token is even looked at, so a right token guessed then is refused too.
        self.failures = TokenBuckets(
            config.bad_tokens_per_minute, config.bad_token_burst, key=address_key
        )
        # Figures of device models (sorted, per profile) and their counts per profile: a
        # device page of a popular model would otherwise read thousands of rows.
        self.groups: GroupCache[dict[str, list[float]]] = GroupCache()
        self.counts: GroupCache[dict[str, int]] = GroupCache()
        self.table_rows = TableRows()
        self.reading: dict[tuple[str, str], asyncio.Future[dict[str, list[float]]]] = {}
        # Stored results never change, so a report page drawn once (tens of milliseconds of
        # charts) is kept.
        self.report_of = functools.lru_cache(maxsize=64)(self._report_of)
        self._storage: Storage | None = None

    @asynccontextmanager
    async def lifespan(self, app: Starlette) -> AsyncIterator[None]:
        config = self.config
        self._storage = await run_in_threadpool(
            partial(open_storage, config.database, pool_size=config.pool_size)
        )
        try:
            yield
        finally:
            await run_in_threadpool(self._storage.close)

    @property
    def storage(self) -> Storage:
        assert self._storage is not None, "requests are answered between start-up and shut-down"
        return self._storage

    def page(self, name: str, status: int = 200, **values: Any) -> HTMLResponse:
        return _html(self.templates.get_template(name).render(**values), status)

    def navigated(
        self, report: str, template: str = "navigation.html", **values: Any
    ) -> HTMLResponse:
        """A report page with the service's links (`template`) at the top of its body. The
        report keeps its own policy (a meta element: no request at all); a meta policy cannot
        say frame-ancestors (CSP Level 2, 7.7.1), so SecurityHeaders adds it."""
        navigation = self.templates.get_template(template).render(**values)
        return HTMLResponse(with_navigation(report, navigation))

    # -- API ------------------------------------------------------------------------------------
    async def api_index(self, request: Request) -> Response:
        root = request.state.root
        return JSONResponse(
            {
                "accepted_schemas": list(ACCEPTED_SCHEMAS),
                "max_upload_bytes": self.config.max_upload_bytes,
                "uploads_per_minute": self.config.uploads_per_minute,
                "results": f"{root}/api/v1/results",
                "export_csv": f"{root}/api/v1/export.csv",
                "export_jsonl": f"{root}/api/v1/export.jsonl",
                "campaigns": f"{root}/api/v1/campaigns/{{name}}",
            }
        )

    async def upload(self, request: Request) -> Response:
        address = request.client.host if request.client else ""
        now = time.monotonic()
        _wait(
            self.failures.wait_s(address, now),
            "too-many-bad-tokens",
            f"too many uploads with a wrong token from {address}",
        )
        try:
            token = await run_in_threadpool(self.storage.token_for, _bearer(request))
            if token is None:
                raise _unauthorized("invalid-token", "the token is not known to this service")
            if token.revoked_at is not None:
                raise _unauthorized(
                    "revoked-token", f"the token {token.name!r} was revoked at {token.revoked_at}"
                )
        except Problem as refused:
            if refused.kind != "missing-token":  # a guess, not a request without one
                self.failures.take(address, now)
            raise
        now = time.monotonic()
        _wait(
            self.limiter.wait_s(token.id, now),
            "rate-limited",
            f"token {token.name!r} may upload {self.config.uploads_per_minute:g} results a minute",
        )
        self.limiter.take(token.id, now)
        kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
        if kind != "application/json" and not kind.endswith("+json"):
            raise Problem(
                415,
                "unsupported-media-type",
                f"send the result as application/json, not {kind or 'no type'!r}",
            )
        body = await _body(request, self.config.max_upload_bytes)
        try:  # one trip to the thread pool: reading the document, then storing it
            accepted, stored = await run_in_threadpool(_keep, self.storage, body, token.id)
        except UploadRejected as error:
            status = 400 if error.problem == "invalid-json" else 422
            raise Problem(status, error.problem, str(error), pointer=error.pointer) from None
        except CampaignRefused as refused:
            status = 403 if refused.kind == "campaign-of-another-token" else 409
            raise Problem(status, refused.kind, str(refused), pointer="/campaign") from None
        if stored.created and isinstance(accepted, Accepted):
            # this process's pages count it at once, others' within 30 s
            facts = accepted.facts
            count_upload(self.groups, self.counts, facts.model_key, facts.profile, facts.headlines)
        root = request.state.root
        # A health reading has addresses of its own: its ids are not a run's.
        kind = "results" if isinstance(accepted, Accepted) else "health"
        url = f"{root}/api/v1/{kind}/{stored.id}"
        return JSONResponse(
            {
                "id": stored.id,
                "url": url,
                "page": f"{root}/{kind}/{stored.id}",
                "created": stored.created,
                # Keys this service does not know (a newer flashmark's): not kept.
                "dropped": list(accepted.dropped),
            },
            status_code=201 if stored.created else 200,
            headers={"Location": url},
        )

    async def api_result(self, request: Request) -> Response:
        return await _stored_document(request, self.storage.document, "result")

    async def api_reading(self, request: Request) -> Response:
        return await _stored_document(request, self.storage.reading_document, "health reading")

    async def searched(self, request: Request, path: str) -> tuple[list[ResultRow], str | None]:
        """A page of the search the query asks for, and the address of the page after it."""
        params = request.query_params
        rows, more = await run_in_threadpool(_page_of, self.storage, _search(params))
        return rows, _following(path, params, rows, more)

    async def api_search(self, request: Request) -> Response:
        root = request.state.root
        rows, following = await self.searched(request, f"{root}/api/v1/results")
        results = [
            {
                "id": row.id,
                "url": f"{root}/api/v1/results/{row.id}",
                "page": f"{root}/results/{row.id}",
                **{name: getattr(row, name) for name in _ROW_FACTS},
                "headlines": dict(row.headlines),
            }
            for row in rows
        ]
        headers = {} if following is None else {"Link": f'<{following}>; rel="next"'}  # RFC 8288
        return JSONResponse({"results": results, "next": following}, headers=headers)

    async def export_csv(self, request: Request) -> Response:
        lines = _csv_lines(await _batches(self.storage), request.state.root)
        return _download(StreamingResponse, lines, "text/csv", "flashmark-results.csv")

    async def export_jsonl(self, request: Request) -> Response:
        lines = _jsonl_lines(await _batches(self.storage))
        return _download(StreamingResponse, lines, "application/jsonl", "flashmark-results.jsonl")

    # -- pages ----------------------------------------------------------------------------------
    async def browse(self, request: Request) -> Response:
        rows, following = await self.searched(request, "/")
        return self.page(
            "browse.html",
            rows=rows,
            table_rows=self.table_rows(rows),
            query=request.query_params,
            following=following,
            searching=bool(request.query_params),
        )

    def _report_of(self, ids: tuple[int, ...]) -> str:
        """The report page of these results; a missing id raises (and is not kept)."""
        documents = [_found(self.storage.document(i), f"result {i}") for i in ids]
        try:
            return with_withheld_marked(render_html_report([document_to_run(d) for d in documents]))
        except ResultFormatError as error:  # an upload of an earlier pre-release flashmark
            raise Problem(
                409, "unreadable-result", f"this service cannot read that upload: {error}"
            ) from None

    async def result_page(self, request: Request) -> Response:
        result_id = _result_id(request.path_params["id"])
        summary = _found(
            await run_in_threadpool(self.storage.summary, result_id), f"result {result_id}"
        )
        report = await run_in_threadpool(self.report_of, (result_id,))
        return self.navigated(report, result_id=result_id, model_key=summary.model_key)

    async def reading_page(self, request: Request) -> Response:
        """A health reading's page: its kind's card of the report, as `flashmark report`
        draws it, with the service's navigation."""
        reading_id = _result_id(request.path_params["id"])
        found = await run_in_threadpool(_reading_report, self.storage, reading_id)
        model_key, report = _found(found, f"health reading {reading_id}")
        return self.navigated(
            report, "reading_navigation.html", reading_id=reading_id, model_key=model_key
        )

    async def compare_page(self, request: Request) -> Response:
        values = request.query_params.getlist("id")
        ids = tuple(dict.fromkeys(_result_id(value) for value in values))
        if not 2 <= len(ids) <= _MAX_COMPARE:
            raise Problem(
                400,
                "bad-query",
                f"compare 2 to {_MAX_COMPARE} different results: /compare?id=1&id=2",
            )
        report = await run_in_threadpool(self.report_of, ids)
        return self.navigated(report, result_id=None, model_key=None)

    async def figures_of(self, group: tuple[str, str]) -> dict[str, list[float]]:
        """A group's sorted figures: cached; read once however many pages want them at the
        same moment; an expired entry is shown while it is read again in the background."""
        cached, fresh = self.groups.lookup(group)
        if cached is not None and fresh:
            return cached
        future = self.reading.get(group)
        if future is None:
            future = asyncio.ensure_future(
                run_in_threadpool(self.storage.group_figures, group[0], group[1])
            )
            self.reading[group] = future

            def done(finished: asyncio.Future[dict[str, list[float]]]) -> None:
                self.reading.pop(group, None)
                if not finished.cancelled() and finished.exception() is None:
                    self.groups.put(group, finished.result())

            future.add_done_callback(done)
        if cached is not None:
            return cached
        return await asyncio.shield(future)

    async def device_page(self, request: Request) -> Response:
        key = request.path_params["key"]
        if not re.fullmatch(r"[a-z0-9._-]{1,120}", key):
            raise Problem(404, "not-found", "no such device model (model keys are lower case)")
        params = request.query_params
        result_id = _result_id(params["result"]) if params.get("result") else None
        # A chosen result sets the profile (the parameter is not read then); a wrong result
        # is answered before a wrong `before`.
        profile = None if result_id is not None else _text(params, "profile")
        try:
            before, wrong_before = _int(params, "before", 1, _MAX_ID), None
        except Problem as error:
            before, wrong_before = None, error
        known = self.counts.get((key, ""))
        # The database work of a page in one trip to the thread pool (each trip costs about as
        # much as a query, more on a busy machine).
        chosen, rows, more, profiles, readings = await run_in_threadpool(
            _device_rows, self.storage, key, result_id, profile, before, known is None
        )
        if result_id is not None and chosen is None:
            raise Problem(
                404,
                "not-found",
                f"no result {params['result']} of the model {key} on this service",
            )
        if wrong_before is not None:
            raise wrong_before
        if chosen is not None:
            profile = chosen.profile
        if profiles is not None:
            self.counts.put((key, ""), profiles)
        profiles = (known if profiles is None else profiles) or {}
        if not profiles and not readings:
            raise Problem(404, "not-found", f"no results of the model {key} on this service")
        shown_profiles = dict(
            sorted(profiles.items(), key=lambda item: (-item[1], item[0]))[:_PROFILES_SHOWN]
        )
        standing = []
        if chosen is not None:
            figures = await self.figures_of((key, chosen.profile))
            standing = charts(standings(figures, chosen.headlines))
        return self.page(
            "device.html",
            key=key,
            rows=rows,
            table_rows=self.table_rows(rows),
            profiles=shown_profiles,
            more_profiles=len(profiles) - len(shown_profiles),
            profile=profile,
            chosen=chosen,
            readings=readings,
            charts=standing,
            following=_following(f"/devices/{key}", params, rows, more),
            searching=True,
        )

    async def campaign_of(self, request: Request) -> Campaign:
        """The campaign the address names, with every figure of its boards' card models."""
        name = request.path_params["name"]
        if CAMPAIGN_NAME.fullmatch(name) is None:
            raise Problem(404, "not-found", "no such campaign (names are letters, digits, .-_)")
        record = _found(await run_in_threadpool(self.storage.campaign, name), f"campaign {name}")
        groups_read = {(r.row.model_key, r.row.profile) for r in record.results}
        figures = {group: await self.figures_of(group) for group in groups_read}
        return build_campaign(record, figures)

    async def campaign_view(self, request: Request) -> Response:
        campaign = await self.campaign_of(request)
        return _html(campaign_page(campaign, standalone=False))

    async def api_campaign(self, request: Request) -> Response:
        campaign = await self.campaign_of(request)
        return JSONResponse(campaign_to_json(campaign, request.state.root))

    async def campaign_export(self, request: Request) -> Response:
        campaign = await self.campaign_of(request)
        text = campaign_csv(campaign, request.state.root)
        return _download(Response, text, "text/csv", f"{campaign.name}.csv")

    async def stylesheet(self, request: Request) -> Response:
        return Response(
            self.style, media_type="text/css", headers={"Cache-Control": "public, max-age=3600"}
        )

    # -- errors ---------------------------------------------------------------------------------
    def problem_response(self, request: Request, problem: Problem) -> Response:
        title = _TITLES.get(problem.status, "Error")
        body: dict[str, Any] = {
            "type": f"/api/v1/problems/{problem.kind}",
            "title": title,
            "status": problem.status,
            "detail": problem.detail,
            "instance": request.url.path,
        }
        if problem.pointer is not None:
            # RFC 9457 §3's own example of a validation problem: each error with its JSON
            # pointer as a URI fragment ("#" + the pointer, percent-encoded, RFC 6901 §6).
            fragment = "#" + urllib.parse.quote(problem.pointer, safe="/~!$&'()*+,;=:@?")
            body["errors"] = [{"detail": problem.detail, "pointer": fragment}]
        wants_page = not request.url.path.startswith(
            "/api/"
        ) and "text/html" in request.headers.get("accept", "")
        if wants_page:
            response: Response = self.page("error.html", problem.status, problem=body)
            response.headers.update(problem.headers)
            return response
        return JSONResponse(
            body, problem.status, headers=problem.headers, media_type="application/problem+json"
        )

    async def on_error(self, request: Request, error: Exception) -> Response:
        """Every error as a problem: the service's own, Starlette's 404 and 405, a database
        that cannot be used (503), a bug (500, logged)."""
        if isinstance(error, HTTPException):
            path = request.url.path
            kind, detail = {
                404: ("not-found", f"nothing at {path} (the API is under /api/v1)"),
                405: ("method-not-allowed", f"{request.method} is not allowed on {path}"),
            }.get(error.status_code, ("http", str(error.detail)))
            error = Problem(error.status_code, kind, detail, error.headers or {})
        elif isinstance(error, StorageError):
            _LOG.error("database error on %s: %s", request.url.path, error)
            detail = "the database cannot be reached now: try again later"
            error = Problem(503, "database-unavailable", detail, {"Retry-After": "5"})
        elif not isinstance(error, Problem):
            _LOG.exception("internal error on %s", request.url.path)
            detail = "the service failed on this request (its log has the details)"
            error = Problem(500, "internal-error", detail)
        return self.problem_response(request, error)


def app_from_environment() -> Starlette:
    """The application of one of `serve --workers N`'s processes (uvicorn imports it by name)."""
    return create_app(ServerConfig(**json.loads(os.environ[CONFIG_ENV])))


_CHALLENGE = {"WWW-Authenticate": 'Bearer realm="flashmark"'}


def _wait(seconds: float, kind: str, why: str) -> None:
    """The 429 of a client that must wait `seconds` (none when 0)."""
    if seconds > 0:
        wait = str(math.ceil(seconds))
        raise Problem(429, kind, f"{why}: try again in {wait} s", {"Retry-After": wait})


def _html(text: str, status: int = 200) -> HTMLResponse:
    """A page of the service: it fetches nothing but the style sheet, forms post here only."""
    return HTMLResponse(text, status, headers={"Content-Security-Policy": _CSP})


def _download(response: type[Response], content: Any, media_type: str, name: str) -> Response:
    """A file to save as `name` (UTF-8 text)."""
    return response(
        content,
        media_type=f"{media_type}; charset=utf-8",
        headers={"Content-Disposition": f'attachment; filename="{name}"'},
    )


def _host_of(request: Request) -> tuple[str, str] | None:
    """The Host header's name (lower case, without a final dot or IPv6 brackets) and the
    header itself, or None when it is not a host name or address with an optional port."""
    header = request.headers.get("host", "")
    match = _HOST.fullmatch(header)
    if match is None:
        return None
    name = (match.group("ipv6") or match.group("name") or "").lower().rstrip(".")
    return name, header


def _bearer(request: Request) -> str:
    header = request.headers.get("authorization", "")
    scheme, _, secret = header.partition(" ")
    if not header:
        raise _unauthorized(
            "missing-token",
            "uploading needs a token: Authorization: Bearer TOKEN "
            "(an operator makes one with `flashmark token create NAME`)",
        )
    secret = secret.strip()
    if scheme.lower() != "bearer" or not re.fullmatch(r"[A-Za-z0-9_\-]{1,200}", secret):
        raise _unauthorized("invalid-token", "the Authorization header must be 'Bearer TOKEN'")
    return secret


def _unauthorized(kind: str, detail: str) -> Problem:
    return Problem(401, kind, detail, _CHALLENGE)


async def _body(request: Request, limit: int) -> bytes:
    """The body, refused with 413 as soon as it passes `limit` (never read whole first)."""
    declared = request.headers.get("content-length")
    too_large = Problem(413, "too-large", f"a result may have at most {limit} bytes")
    if declared is not None:
        if not declared.isdigit():
            raise Problem(400, "bad-request", "Content-Length must be a number of bytes")
        if int(declared) > limit:
            raise too_large
    chunks = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise too_large
        chunks.append(chunk)
    return b"".join(chunks)


async def _stored_document(
    request: Request, read: Callable[[int], dict[str, Any] | None], what: str
) -> Response:
    """The stored document the address's id names, read by `read`."""
    row_id = _result_id(request.path_params["id"])
    document = await run_in_threadpool(read, row_id)
    return JSONResponse(_found(document, f"{what} {row_id}"))


def _found(value: T | None, what: str) -> T:
    """`value`, or the 404 that says there is no `what` ("result 3") on this service."""
    if value is None:
        raise Problem(404, "not-found", f"no {what} on this service")
    return value


def _following(
    path: str, params: Mapping[str, str], rows: Sequence[ResultRow], more: bool
) -> str | None:
    """The address of the page after `rows` (the same query, before its last id), if `more`."""
    if not more:
        return None
    return f"{path}?{urllib.parse.urlencode({**params, 'before': str(rows[-1].id)})}"


def _result_id(text: str) -> int:
    if not re.fullmatch(r"[0-9]{1,19}", text) or not 1 <= int(text) <= _MAX_ID:
        raise Problem(404, "not-found", f"no result {text[:40]!r}: ids are whole numbers")
    return int(text)


def _text(params: Mapping[str, str], name: str) -> str | None:
    value = params.get(name, "").strip()
    if len(value) > _MAX_TEXT:
        raise Problem(400, "bad-query", f"{name} may have at most {_MAX_TEXT} characters")
    if _CONTROL.search(value):  # no stored text holds one (documents.strict); PostgreSQL
        # refuses NUL in a query parameter
        raise Problem(400, "bad-query", f"{name} may not hold control characters")
    return value or None


def _int(params: Mapping[str, str], name: str, low: int, high: int) -> int | None:
    value = params.get(name, "").strip()
    if not value:
        return None
    if not re.fullmatch(r"[0-9]{1,19}", value) or not low <= int(value) <= high:
        raise Problem(400, "bad-query", f"{name} must be a whole number from {low} to {high}")
    return int(value)


# "", "b", "k", "kb", ... "tb": powers of 10.
_UNITS = {
    prefix + suffix: 10**power
    for prefix, power in (("", 0), ("k", 3), ("m", 6), ("g", 9), ("t", 12))
    for suffix in ("", "b")
}


def _capacity(params: Mapping[str, str]) -> int | None:
    """Nominal capacity as printed on a card: bytes, or with k/M/G/T (powers of 10): 64G."""
    value = params.get("capacity", "").strip().lower()
    if not value:
        return None
    # At most 10^16 bytes (10 PB): the bounds stay within the BIGINT column.
    match = re.fullmatch(r"([0-9]{1,16}(?:\.[0-9]{1,3})?)\s*([a-z]{0,2})", value)
    if match is None or match.group(2) not in _UNITS:
        raise Problem(400, "bad-query", "capacity is a size such as 64G, 512GB or 1T")
    size = int(float(match.group(1)) * _UNITS[match.group(2)])
    if not 0 < size <= 10**16:
        raise Problem(400, "bad-query", "capacity must be above 0 and at most 10P (10^16 bytes)")
    return size


def _search(params: Mapping[str, str]) -> Search:
    return Search(
        maker=_text(params, "maker"),
        name=_text(params, "name"),
        capacity_bytes=_capacity(params),
        model=_text(params, "model"),
        medium=_text(params, "medium"),
        board=_text(params, "board"),
        profile=_text(params, "profile"),
        before=_int(params, "before", 1, _MAX_ID),
        limit=_int(params, "limit", 1, 200) or _PAGE_SIZE,
    )


def _keep(
    storage: Storage, body: bytes, token_id: int
) -> tuple[Accepted | AcceptedReading, Stored]:
    accepted = parse_upload(body)
    if isinstance(accepted, AcceptedReading):
        return accepted, storage.add_reading(accepted, token_id)
    return accepted, storage.add_result(accepted, token_id)


def _page_of(storage: Storage, search: Search) -> tuple[list[ResultRow], bool]:
    """One page of a search, and whether another follows (one row more is asked for)."""
    rows = storage.search(dataclasses.replace(search, limit=search.limit + 1))
    return rows[: search.limit], len(rows) > search.limit


def _device_rows(
    storage: Storage,
    key: str,
    result_id: int | None,
    profile: str | None,
    before: int | None,
    count_profiles: bool,
) -> tuple[ResultRow | None, list[ResultRow], bool, dict[str, int] | None, list[ReadingRow]]:
    """What a device page reads: the chosen result (None when it is not of this model), a
    page of the model's results (of the chosen result's profile, else of `profile`), and,
    when asked, the model's results per profile; and the model's newest health readings."""
    chosen = None
    if result_id is not None:
        chosen = storage.summary(result_id)
        if chosen is None or chosen.model_key != key:
            return None, [], False, None, []
        profile = chosen.profile
    search = Search(model=key, profile=profile, before=before, limit=_PAGE_SIZE)
    rows, more = _page_of(storage, search)
    profiles = storage.profiles_of_model(key) if count_profiles else None
    return chosen, rows, more, profiles, storage.readings_of_model(key, _PAGE_SIZE)


def _reading_report(storage: Storage, reading_id: int) -> tuple[str, str] | None:
    """A reading's model key and its report page, or None when there is no such reading."""
    row = storage.reading(reading_id)
    document = storage.reading_document(reading_id)
    if row is None or document is None:
        return None
    result = HEALTH.from_document(document)
    page = render_report([KindResults(HEALTH, (result,))])
    return row.facts.model_key, with_withheld_marked(page)


Batches = Iterator[list[tuple[ResultRow, bytes]]]


async def _batches(storage: Storage) -> Batches:
    """Every result in batches, the first one read now: a database that cannot be read is a
    503 before the download starts (once its status is sent, a failure can only cut it)."""
    batches = storage.export_batches()
    first = await run_in_threadpool(next, batches, None)
    return itertools.chain([] if first is None else [first], batches)


def _csv_lines(batches: Batches, root: str) -> Iterator[str]:
    yield csv_text([_CSV_COLUMNS])
    for batch in batches:
        yield csv_text(
            [
                row.id,
                f"{root}/api/v1/results/{row.id}",
                *(getattr(row, name) for name in _ROW_FACTS),
                row.card_serial,
                *(rounded(row.headlines[column]) for column in HEADLINE_COLUMNS),
            ]
            for row, _ in batch
        )


def _jsonl_lines(batches: Batches) -> Iterator[bytes]:
    for batch in batches:
        lines = []
        for row, stored in batch:
            document = with_id(row.id, json.loads(stored))
            lines.append(json.dumps(document, ensure_ascii=False, separators=(",", ":")))
        yield ("\n".join(lines) + "\n").encode("utf-8")
