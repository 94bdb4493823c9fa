"""The synthetic desktop: deterministic, scaled as a sample of one population, sourced numbers."""

from __future__ import annotations

import statistics

import pytest

from flashmark.workloads.packages import (
    FILE_SIZE_QUANTILES,
    FILES_PER_PACKAGE_QUANTILES,
    boot_file_set,
    draw_quantile,
    generate_package_set,
)


def test_the_same_seed_gives_the_same_desktop_and_another_seed_another() -> None:
    first, again = generate_package_set(0.05), generate_package_set(0.05)
    assert first == again
    other = generate_package_set(0.05, seed=3)
    assert [p.files for p in other.packages] != [p.files for p in first.packages]


def test_full_scale_is_seed_002s_desktop() -> None:
    full = generate_package_set(1.0)
    assert len(full.packages) == 400 and len(full.removed) == 150  # seed 002
    assert 15_000 < full.file_count < 30_000
    # ~0.8 GB installed + ~0.24 GB of archives; seed 002's eMMC wrote 0.96 GB in that install.
    assert 0.5e9 < full.installed_bytes < 1.2e9
    assert full.archive_bytes == pytest.approx(0.29 * full.installed_bytes, rel=0.01)
    sizes = sorted(f.size_bytes for p in full.packages for f in p.files)
    assert statistics.median(sizes) == pytest.approx(1701, rel=0.15)  # measured median
    counts = sorted(len(p.files) for p in full.packages)
    assert statistics.median(counts) == pytest.approx(7, abs=2)
    assert max(counts) <= 1319


def test_a_small_scale_keeps_the_proportions() -> None:
    small = generate_package_set(0.02)
    assert len(small.packages) == 8 and len(small.removed) == 3
    assert len(set(small.removed)) == 3 and all(0 <= i < 8 for i in small.removed)
    assert small.base_packages == 15  # 732 * 0.02


def test_every_package_has_its_debian_doc_files_and_unique_paths() -> None:
    package_set = generate_package_set(0.1)
    paths = [f.path for p in package_set.packages for f in p.files]
    assert len(paths) == len(set(paths))
    for package in package_set.packages:
        doc = f"usr/share/doc/{package.name}"
        assert {f"{doc}/copyright", f"{doc}/changelog.Debian.gz"} <= {f.path for f in package.files}
        assert package.directories[0] == "usr"


def test_quantile_tables_are_inverted_at_their_points() -> None:
    for table in (FILES_PER_PACKAGE_QUANTILES, FILE_SIZE_QUANTILES):
        for quantile, value in table:
            assert draw_quantile(table, quantile) == value
        assert draw_quantile(table, -1) == table[0][1] and draw_quantile(table, 2) == table[-1][1]


def test_the_boot_set_reads_seed_002s_130_mb_at_scale_one() -> None:
    files = boot_file_set(1.0)
    total = sum(f.size_bytes for f in files)
    assert 132_409 * 1024 <= total < 132_409 * 1024 + 7_300_000  # stops at the first file over
    assert boot_file_set(1.0) == files
    with pytest.raises(ValueError):
        boot_file_set(0)
