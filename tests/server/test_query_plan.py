"""A search by maker, capacity and profile goes through the index made for it (migration
0002-maker-profile-index) on both engines, and finds what a search without it finds."""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import itertools

from flashmark.server.intake import accept
from flashmark.server.migrations import POSTGRES
from flashmark.server.storage import _SUMMARY, Search, _filters, open_storage
from tests.server.conftest import recorded

MAKERS = ("kingston", "sandisk", "samsung", "lexar", "transcend", "toshiba", "phison", "pny")
PROFILES = ("quick", "a1", "standard")
CAPACITIES = (16, 32, 64, 128, 256, 512)


def test_a_maker_capacity_and_profile_search_uses_its_index(database):
    base = accept(recorded("quick-a1-card"))
    with contextlib.closing(open_storage(database)) as storage:
        token = storage.token_for(storage.create_token("plan"))
        assert token is not None
        rows = []
        for index, (maker, profile, gb) in enumerate(
            itertools.islice(itertools.cycle(itertools.product(MAKERS, PROFILES, CAPACITIES)), 3000)
        ):
            facts = dataclasses.replace(
                base.facts,
                maker=maker.title(),
                profile=profile,
                capacity_bytes=int(gb * 0.97e9),
                started_at=f"2026-01-01T00:00:00.{index:06d}+00:00",
            )
            unique = hashlib.sha256(str(index).encode()).hexdigest()
            rows.append(dataclasses.replace(base, content_hash=unique, facts=facts))
        storage.add_results(rows, token.id)
        search = Search(maker="Kingston", capacity_bytes=64 * 10**9, profile="a1", limit=51)
        where, parameters = _filters(search)
        sql = f"SELECT {_SUMMARY} FROM results WHERE {' AND '.join(where)} ORDER BY id DESC LIMIT ?"
        explain = "EXPLAIN" if storage.dialect is POSTGRES else "EXPLAIN QUERY PLAN"
        with storage._transaction() as run:
            run("ANALYZE")
            plan = " ".join(str(row) for row in run(f"{explain} {sql}", (*parameters, 51)))
        assert "results_maker_profile" in plan, plan
        found = storage.search(search)
        expected = [
            row.id
            for row in storage.search(Search(limit=3000))
            if row.maker == "Kingston"
            and row.profile == "a1"
            and row.capacity_bytes is not None
            and 0.88 * 64e9 <= row.capacity_bytes <= 1.02 * 64e9
        ][:51]
        assert [row.id for row in found] == expected and len(expected) > 0
