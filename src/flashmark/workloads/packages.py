"""The synthetic package set: a deterministic stand-in for installing a desktop environment.

flashmark cannot download packages or run dpkg, so it generates, from a seed, a package set of
the shape of seed 002's Armbian desktop install (about 400 packages, 150 removed and installed
again), written the way dpkg writes (dpkg.py). Each constant names its source; the commands
that measured them are in docs/workloads.md. `scale` multiplies the package counts and keeps
every per-package distribution: a small scale is a sample of the same population.
"""

from __future__ import annotations

import itertools
import math
import random
from dataclasses import dataclass

PACKAGES = 400  # seed 002: "~400 packages"
REMOVED = 150  # seed 002: "deleting 150 of the installed 400 packages"
BASE_PACKAGES = 732  # packages of the measured Debian 12 system, already installed
STATUS_STANZA_BYTES = 895  # mean stanza of that system's /var/lib/dpkg/status
ARCHIVE_RATIO = 0.29  # Debian 12 xfce4: 141 MB of .deb for 484 MB installed
DEFAULT_SEED = 2  # seed 002

# (quantile, files in the package), measured (docs/workloads.md). Interpolated log-linearly.
FILES_PER_PACKAGE_QUANTILES: tuple[tuple[float, int], ...] = (
    (0.0, 1),
    (0.05, 3),
    (0.1, 4),
    (0.2, 4),
    (0.3, 5),
    (0.4, 5),
    (0.5, 7),
    (0.6, 9),
    (0.7, 14),
    (0.8, 32),
    (0.9, 109),
    (0.95, 264),
    (0.99, 1319),
    (1.0, 1319),  # capped at p99: a desktop has icon themes of that size, not toolchains
)

# (quantile, file size in bytes), measured on the same 94,846 files.
FILE_SIZE_QUANTILES: tuple[tuple[float, int], ...] = (
    (0.0, 0),
    (0.05, 188),
    (0.1, 403),
    (0.2, 688),
    (0.3, 1011),
    (0.4, 1291),
    (0.5, 1701),
    (0.6, 2536),
    (0.7, 4257),
    (0.8, 9288),
    (0.9, 23668),
    (0.95, 55568),
    (0.99, 296872),
    (0.999, 7295164),
    (1.0, 7295164),
)

# Where files go. Not measured: a plausible FHS layout, so that packages share directories
# (usr/bin, usr/lib, locale and icon folders) and directory updates contend as they do for
# dpkg. Every Debian package ships usr/share/doc/PKG/copyright and changelog.Debian.gz
# (Debian Policy 12.5, 12.7), hence two files in a private doc folder.
_SHARED_DIRS: tuple[tuple[str, float], ...] = (
    ("usr/bin", 0.05),
    ("usr/lib/aarch64-linux-gnu", 0.15),
    ("usr/share/man/man1", 0.05),
    ("usr/share/icons/hicolor/48x48/apps", 0.05),
    ("usr/share/icons/hicolor/scalable/apps", 0.05),
    ("usr/share/locale/de/LC_MESSAGES", 0.025),
    ("usr/share/locale/fr/LC_MESSAGES", 0.025),
    ("usr/share/locale/es/LC_MESSAGES", 0.025),
    ("usr/share/locale/ja/LC_MESSAGES", 0.025),
)
_PRIVATE_SHARE = 0.5  # the rest: usr/share/PKG/...
_DOC_FILES = ("copyright", "changelog.Debian.gz")


@dataclass(frozen=True)
class SyntheticFile:
    path: str  # relative to the emulated root, e.g. "usr/share/pkg017/f0003"
    size_bytes: int
    content_key: int  # where its bytes start in the content pool (deterministic)


@dataclass(frozen=True)
class SyntheticPackage:
    name: str
    files: tuple[SyntheticFile, ...]
    archive_bytes: int
    content_key: int

    @property
    def installed_bytes(self) -> int:
        return sum(f.size_bytes for f in self.files)

    @property
    def directories(self) -> tuple[str, ...]:
        """Folders the package's files need, parents first."""
        seen: dict[str, None] = {}
        for entry in self.files:
            parts = entry.path.split("/")[:-1]
            for depth in range(1, len(parts) + 1):
                seen.setdefault("/".join(parts[:depth]), None)
        return tuple(seen)


@dataclass(frozen=True)
class PackageSet:
    seed: int
    scale: float
    packages: tuple[SyntheticPackage, ...]
    removed: tuple[int, ...]  # indexes into packages: the autoremove subset, install order
    base_packages: int  # packages already in the status database

    @property
    def file_count(self) -> int:
        return sum(len(p.files) for p in self.packages)

    @property
    def installed_bytes(self) -> int:
        return sum(p.installed_bytes for p in self.packages)

    @property
    def archive_bytes(self) -> int:
        return sum(p.archive_bytes for p in self.packages)

    def removed_packages(self) -> tuple[SyntheticPackage, ...]:
        return tuple(self.packages[i] for i in self.removed)


def scaled_count(full: int, scale: float, minimum: int = 1) -> int:
    return max(minimum, round(full * scale))


def draw_quantile(table: tuple[tuple[float, int], ...], u: float) -> int:
    """Inverse CDF from a quantile table, log-linear between points (sizes are log-spread)."""
    u = min(max(u, 0.0), 1.0)
    for (q0, v0), (q1, v1) in itertools.pairwise(table):
        if u <= q1:
            t = 0.0 if q1 == q0 else (u - q0) / (q1 - q0)
            low, high = math.log1p(v0), math.log1p(v1)
            return round(math.expm1(low + (high - low) * t))
    return table[-1][1]


def generate_package_set(scale: float = 1.0, seed: int = DEFAULT_SEED) -> PackageSet:
    """The package set for `scale` (1.0 = seed 002's desktop). Same arguments, same set."""
    if not scale > 0:
        raise ValueError(f"scale must be positive, got {scale}")
    rng = random.Random(seed)
    count = scaled_count(PACKAGES, scale)
    packages = tuple(_generate_package(rng, index) for index in range(count))
    removed_count = min(count, scaled_count(REMOVED, scale))
    removed = tuple(sorted(rng.sample(range(count), removed_count)))
    return PackageSet(
        seed=seed,
        scale=scale,
        packages=packages,
        removed=removed,
        base_packages=scaled_count(BASE_PACKAGES, scale, minimum=0),
    )


def _generate_package(rng: random.Random, index: int) -> SyntheticPackage:
    name = f"fmpkg{index:04d}"
    total = max(len(_DOC_FILES), draw_quantile(FILES_PER_PACKAGE_QUANTILES, rng.random()))
    files: list[SyntheticFile] = []
    for doc in _DOC_FILES:
        files.append(_file(rng, f"usr/share/doc/{name}/{doc}"))
    shared_names = [d for d, _ in _SHARED_DIRS]
    shared_weights = [w for _, w in _SHARED_DIRS]
    for number in range(total - len(_DOC_FILES)):
        if rng.random() < _PRIVATE_SHARE:
            folder = f"usr/share/{name}/d{number // 64:02d}"  # keep folders below ~64 entries
        else:
            folder = rng.choices(shared_names, shared_weights)[0]
        files.append(_file(rng, f"{folder}/{name}-f{number:04d}"))
    installed = sum(f.size_bytes for f in files)
    return SyntheticPackage(
        name=name,
        files=tuple(files),
        archive_bytes=max(1024, round(installed * ARCHIVE_RATIO)),
        content_key=rng.getrandbits(32),
    )


def _file(rng: random.Random, path: str) -> SyntheticFile:
    return SyntheticFile(
        path=path,
        size_bytes=draw_quantile(FILE_SIZE_QUANTILES, rng.random()),
        content_key=rng.getrandbits(32),
    )


def boot_file_set(scale: float = 1.0, seed: int = DEFAULT_SEED) -> tuple[SyntheticFile, ...]:
    """Files a boot reads: seed 002's eMMC read 132,409 kB in the first ~16 s of boot.

    Sizes come from the same measured distribution as package files (a boot reads programs,
    libraries and their configuration, i.e. installed package files); the set stops at the
    first file that reaches the scaled total. Order is shuffled: a boot reads in dependency
    order, not directory order.
    """
    if not scale > 0:
        raise ValueError(f"scale must be positive, got {scale}")
    target = max(64 * 1024, round(BOOT_READ_BYTES * scale))
    rng = random.Random(seed * 7919 + 1)
    files: list[SyntheticFile] = []
    total = 0
    while total < target:
        number = len(files)
        folder = f"boot{number % 16:02d}"
        entry = _file(rng, f"{folder}/b{number:05d}")
        files.append(entry)
        total += entry.size_bytes
    rng.shuffle(files)
    return tuple(files)


BOOT_READ_BYTES = 132_409 * 1024  # seed 002, iostat's first row while booting (kB = KiB)
