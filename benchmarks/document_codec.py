"""How long flashmark takes to read and write its recorded documents (every kind's codec).

    python3 -m benchmarks.document_codec [--repeat N] [--rounds R]   (from the repository root)

The readers are on the results service's path (one per upload, through the strict check) and
on `flashmark history`'s; the writers on every command's. For each recorded document of
tests/data (report goldens and upload documents) it times N readings (`from_document`), N
writings of what was read (`to_document`) and N strict checks (kinds.strict, as an upload or an
import is read), and prints milliseconds per operation, the best of --rounds rounds (a busy
machine only ever slows a round down). Prints a table; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from flashmark.kinds.registry import DOCUMENT_KINDS, kind_of
from flashmark.kinds.strict import check_document

DATA = Path(__file__).resolve().parent.parent / "tests" / "data"
FOLDERS = ("report", "upload")


def documents() -> list[tuple[str, dict[str, Any]]]:
    found = []
    for folder in FOLDERS:
        for path in sorted((DATA / folder).glob("*.json")):
            document = json.loads(path.read_text())
            if isinstance(document, dict) and document.get("schema") in DOCUMENT_KINDS:
                found.append((f"{folder}/{path.name}", document))
    return found


def best_ms(operation: Callable[[], object], repeat: int, rounds: int) -> float:
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(repeat):
            operation()
        times.append((time.perf_counter() - start) / repeat * 1000)
    return min(times)


def timings(document: dict[str, Any], repeat: int, rounds: int) -> tuple[float, float, float]:
    kind = kind_of(document)
    value = kind.from_document(document)
    return (
        best_ms(lambda: kind.from_document(document), repeat, rounds),
        best_ms(lambda: kind.to_document(value), repeat, rounds),
        best_ms(lambda: check_document(document, DOCUMENT_KINDS), max(1, repeat // 10), rounds),
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=5)
    options = parser.parse_args()
    print(f"{'document':34} {'kind':10} {'KiB':>6} {'read ms':>8} {'write ms':>9} {'check ms':>9}")
    totals = [0.0, 0.0, 0.0]
    for name, document in documents():
        times = timings(document, options.repeat, options.rounds)
        totals = [total + one for total, one in zip(totals, times, strict=True)]
        size = len(json.dumps(document)) / 1024
        print(
            f"{name:34} {kind_of(document).name:10} {size:6.0f} "
            f"{times[0]:8.3f} {times[1]:9.3f} {times[2]:9.3f}"
        )
    print(f"{'all':34} {'':10} {'':6} {totals[0]:8.3f} {totals[1]:9.3f} {totals[2]:9.3f}")


if __name__ == "__main__":
    main()
