"""Grades: every threshold of the SD Association classes, on both sides."""

import pytest

from flashmark.bench.profiles import (
    RAND_READ_4K,
    RAND_READ_4K_Q32,
    RAND_WRITE_4K,
    RAND_WRITE_4K_Q32,
    SEQ_WRITE,
)
from tests.bench.synthetic import direction, graded, result


def results(read_iops, write_iops, seq_mb_s, q32_factor=1.0):
    return [
        result(RAND_READ_4K, direction(read_iops)),
        result(RAND_WRITE_4K, direction(write_iops)),
        result(RAND_READ_4K_Q32, direction(read_iops * q32_factor)),
        result(RAND_WRITE_4K_Q32, direction(write_iops * q32_factor)),
        result(SEQ_WRITE, direction(10, seq_mb_s * 1e6)),
    ]


def grades(*args, **kwargs):
    return graded(results(*args, **kwargs))


def test_seed_002_extreme_pro_a2_meets_a1_not_a2():
    # Seed 002: SanDisk Extreme Pro A2 on a host without A2 support: 1766/732 IOPS, 50 MB/s.
    g = grades(1766, 732, 50)
    assert g["A1"].passed is True
    assert g["A2"].passed is False
    assert [c.passed for c in g["A2"].checks] == [False, False, True]
    assert g["U3"].passed is True and g["V30"].passed is True


@pytest.mark.parametrize("side", [+1, -1])
@pytest.mark.parametrize("check", range(3))
@pytest.mark.parametrize(("klass", "limits"), [("A1", (1500, 500, 10)), ("A2", (4000, 2000, 10))])
def test_each_app_class_threshold_decides_on_both_sides(klass, limits, check, side):
    values = [limit * 1.5 for limit in limits]
    values[check] = limits[check] * (1 + side * 0.03)
    g = grades(*values)[klass]
    assert g.checks[check].passed is (side > 0)
    assert g.checks[check].margin_pct == pytest.approx(side * 3.0)
    assert g.passed is (side > 0)


@pytest.mark.parametrize(("klass", "mb_s"), [("C10", 10), ("U1", 10), ("U3", 30), ("V30", 30)])
def test_speed_classes_read_sustained_sequential_write(klass, mb_s):
    assert grades(9999, 9999, mb_s * 1.03)[klass].passed is True
    assert grades(9999, 9999, mb_s * 0.97)[klass].passed is False
    check = grades(9999, 9999, mb_s)[klass].checks[0]
    assert (check.test, check.unit, check.threshold) == ("seq-write", "MB/s", mb_s)


def test_a2_reads_the_queue_depth_32_tests():
    g = grades(1600, 700, 20, q32_factor=3.0)  # deep queue reaches A2, depth 1 does not
    assert g["A2"].passed is True and g["A1"].passed is True
    assert [c.test for c in g["A2"].checks] == [
        "rand-read-4k-q32",
        "rand-write-4k-q32",
        "seq-write",
    ]


def test_a_grade_without_its_tests_is_unknown_not_failed():
    read_only = [r for r in results(3000, 900, 20) if r.write is None]
    g = graded(read_only)
    assert g["A1"].passed is None
    assert g["A1"].checks[0].passed is True and g["A1"].checks[1].value is None
    assert g["C10"].passed is None


def test_a_failed_check_fails_the_grade_even_if_another_is_unmeasured():
    read_only = [r for r in results(1000, 900, 20) if r.write is None]
    assert graded(read_only)["A1"].passed is False
