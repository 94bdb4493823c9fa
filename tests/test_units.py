import pytest

from flashmark.errors import UsageError
from flashmark.units import block_size_label, format_latency_ns, format_rate, parse_size


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("256M", 256 * 2**20),
        ("1G", 2**30),
        ("4k", 4096),
        ("512MiB", 512 * 2**20),
        ("1.5G", 3 * 2**29),
        ("4096", 4096),
    ],
)
def test_sizes_typed_by_users_are_binary_like_fio(text, expected):
    assert parse_size(text) == expected


@pytest.mark.parametrize("text", ["", "abc", "-1M", "0", "12X"])
def test_unreadable_sizes_name_the_input(text):
    with pytest.raises(UsageError, match="size"):
        parse_size(text)


def test_rates_are_shown_in_decimal_megabytes():
    # KDiskMark's mistake (KiB/s / 1000 labelled MB/s) would show 10.24 here.
    assert format_rate(10_000_000) == "10.0 MB/s"
    assert format_rate(1_730_560) == "1.73 MB/s"  # seed 000: 1690 KiB/s = 1731 kB/s


def test_block_size_labels_match_test_names():
    assert [block_size_label(b) for b in (1024, 4096, 16384, 2**20, 16 * 2**20)] == [
        "1k",
        "4k",
        "16k",
        "1M",
        "16M",
    ]


def test_latency_keeps_three_significant_digits():
    assert format_latency_ns(1_290_000) == "1.29 ms"
    assert format_latency_ns(812_000) == "812 µs"


def test_a_fractional_size_is_exact_and_a_huge_one_is_refused_not_overflowed():
    assert parse_size("2.5M") == 2_621_440
    assert parse_size("0.5k") == 512
    with pytest.raises(UsageError, match="too large"):
        parse_size("9" * 400)
    with pytest.raises(UsageError, match="too large"):
        parse_size("8388608T")  # 2**63 bytes, one past what fio can count
