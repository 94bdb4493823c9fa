from flashmark.doctor.findings import OVER_CAP, THE_LIMIT_MARGIN, Finding, is_the_limit

CAP = 40e6
LINK = Finding(
    category="usb",
    what="USB 2.0 at 480 Mb/s",
    why="the port caps the device",
    fix="use a USB 3 port",
    cap_bytes_per_second=CAP,
)


def test_a_rate_within_the_margin_of_the_cap_is_the_limit() -> None:
    assert is_the_limit(LINK, CAP * (1 - THE_LIMIT_MARGIN) + 1)


def test_a_rate_further_below_the_cap_is_not_the_limit() -> None:
    assert not is_the_limit(LINK, CAP * (1 - THE_LIMIT_MARGIN) - 1)


def test_a_finding_without_a_cap_is_never_the_limit() -> None:
    assert not is_the_limit(
        Finding(category="host", what="swap on the card", why="wears it", fix="move swap"), 1e9
    )


def test_a_rate_well_above_the_cap_is_not_held_by_it() -> None:
    assert is_the_limit(LINK, CAP * (1 + OVER_CAP))
    assert not is_the_limit(LINK, CAP * (1 + OVER_CAP) + 1)
