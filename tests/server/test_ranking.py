"""Percentile ranks and histograms of a device page (pure), and the cache that keeps them."""

from __future__ import annotations

from flashmark.server.intake import HEADLINE_COLUMNS
from flashmark.server.ranking import BINS, GroupCache, count_upload, standings


def headlines(value: float | None) -> dict[str, float | None]:
    return dict.fromkeys(HEADLINE_COLUMNS, value)


def test_ties_count_half_and_the_ends_are_not_0_or_100():
    figures = {key: [1.0, 2.0, 2.0, 3.0] for key in HEADLINE_COLUMNS}
    ranked = standings(figures, headlines(2.0))[0]
    assert (ranked.count, ranked.below, ranked.equal) == (4, 1, 2)
    assert ranked.percentile == 50.0
    assert standings(figures, headlines(3.0))[0].percentile == 87.5
    assert standings(figures, headlines(1.0))[0].percentile == 12.5
    alone = standings({key: [5.0] for key in HEADLINE_COLUMNS}, headlines(5.0))[0]
    assert alone.percentile == 50.0 and alone.bins == (1,) + (0,) * (BINS - 1)


def test_bins_cover_the_range_and_the_maximum_falls_in_the_last():
    values = [float(v) for v in range(101)]  # 0..100
    ranked = standings(dict.fromkeys(HEADLINE_COLUMNS, values), headlines(None))[0]
    assert len(ranked.bins) == BINS and sum(ranked.bins) == 101
    assert ranked.bins[0] == 5 and ranked.bins[-1] == 6  # 0..4, and 95..100
    assert ranked.percentile is None and (ranked.low, ranked.high) == (0.0, 100.0)


def test_a_figure_the_group_lacks():
    ranked = standings({}, headlines(3.0))[0]
    assert ranked.count == 0 and ranked.percentile is None and ranked.bins == ()


def test_the_cache_expires_and_keeps_the_newest_groups():
    cache: GroupCache[int] = GroupCache(seconds=60, groups=2)
    cache.put(("a", "quick"), 1)
    cache.put(("a", "a1"), 2)
    cache.put(("b", "quick"), 3)  # the oldest, ("a", "quick"), leaves
    assert cache.get(("a", "quick")) is None and cache.get(("b", "quick")) == 3
    assert cache.get(("a", "a1")) == 2
    expired: GroupCache[int] = GroupCache(seconds=-1)
    expired.put(("c", "quick"), 4)
    assert expired.get(("c", "quick")) is None
    assert expired.lookup(("c", "quick")) == (4, False)  # shown while read again
    assert expired.lookup(("d", "quick")) == (None, False)


def test_an_upload_joins_its_cached_group_in_order():
    groups: GroupCache[dict[str, list[float]]] = GroupCache()
    counts: GroupCache[dict[str, int]] = GroupCache()
    groups.put(("m", "quick"), {column: [1.0, 3.0] for column in HEADLINE_COLUMNS})
    counts.put(("m", ""), {"quick": 2})
    count_upload(groups, counts, "m", "quick", headlines(2.0))
    count_upload(groups, counts, "other", "quick", headlines(9.0))  # not cached: nothing
    figures = groups.get(("m", "quick"))
    assert figures is not None and figures[HEADLINE_COLUMNS[0]] == [1.0, 2.0, 3.0]
    assert counts.get(("m", "")) == {"quick": 3}
    assert standings(figures, headlines(2.0))[0].percentile == 50.0
