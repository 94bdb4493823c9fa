"""The job hash: one name for "the same benchmark", so that results of many boards can be
compared as one campaign (pure). It is made of exactly what fixes the jobs (flashmark's
version, fio's, the kind of target, the profile, area, lengths, ramps, direct I/O, engine and
workloads' scale), never the path, device or host, so a board computes it from its plan
(`run --job-hash`) and the results service from an uploaded document, and both agree.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Mapping
from typing import Any

from flashmark.bench.model import Settings, TargetKind
from flashmark.bench.run_result import Run

# Hex digits of the hash shown and stored: 64 bits tell a fleet's jobs apart with room to
# spare, and stay short enough to read in a message.
HASH_DIGITS = 16


def job_identity(
    flashmark_version: str, fio_version: str, target_kind: TargetKind, settings: Settings
) -> dict[str, Any]:
    """What makes two runs the same benchmark, as a JSON object (its keys sorted)."""
    return {
        "flashmark_version": flashmark_version,
        "fio_version": fio_version,
        "target_kind": str(target_kind),
        **{field.name: getattr(settings, field.name) for field in dataclasses.fields(settings)},
    }


def run_job_identity(run: Run) -> dict[str, Any]:
    """The identity of a measured run's jobs (also of a partial run: its settings are whole)."""
    return job_identity(run.flashmark_version, run.fio.version, run.target.kind, run.settings)


def job_hash(identity: Mapping[str, Any]) -> str:
    """sha256 of the identity's canonical JSON (sorted keys, no spaces), cut to HASH_DIGITS."""
    canonical = json.dumps(identity, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(canonical.encode("ascii")).hexdigest()[:HASH_DIGITS]


def differences(mine: Mapping[str, Any], theirs: Mapping[str, Any]) -> list[str]:
    """What differs between two identities, in words: `fio_version fio-3.33, not fio-3.35`."""
    return [
        f"{key} {mine.get(key)!r}, not {theirs.get(key)!r}"
        for key in sorted(set(mine) | set(theirs))
        if mine.get(key) != theirs.get(key)
    ]
