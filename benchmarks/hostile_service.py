"""Hostile input to the results service: how much of it holds, on SQLite and on PostgreSQL.

    python3 benchmarks/hostile_service.py [--engine sqlite|postgres ...] [--only CATEGORY|ID ...]
                                          [--verbose]

The cases are the pytest tier's (tests/server/hostile/cases.py, same ids), run by the same harness
(tests/server/hostile/harness.py) against real `sys.executable -m flashmark serve` processes, so
PYTHONPATH decides which flashmark is tried: one service on an SQLite file, one on a throwaway
PostgreSQL (initdb + pg_ctl on a unix socket, removed afterwards). Prints a table per engine
(category, tried, held) and every failure with its reasons; exits 0 whatever held (it is a
benchmark: the tests assert). Needs the server extra and, for PostgreSQL, its binaries.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the tests package

from tests.server.hostile import cases as c
from tests.server.hostile import harness
from tests.server.throwaway_pg import missing_reason


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--engine", nargs="+", choices=c.ENGINES, default=list(c.ENGINES))
    parser.add_argument("--only", nargs="+", default=[],
                        help="categories (e.g. numbers) or case ids to run")  # fmt: skip
    parser.add_argument("--verbose", action="store_true", help="print every case as it ends")
    args = parser.parse_args()

    def progress(outcome: harness.Outcome) -> None:
        if args.verbose or not outcome.held:
            mark = "held" if outcome.held else "FAILED"
            print(
                f"  {mark:<6} {outcome.case_id} ({outcome.note}; {outcome.seconds:.1f} s)",
                flush=True,
            )
            for problem in outcome.problems:
                print(f"         - {problem[:400]}", flush=True)

    tables = {}
    for engine in args.engine:
        if engine == "postgres" and (reason := missing_reason()):
            print(f"hostile_service: postgres skipped: {reason}", file=sys.stderr)
            continue
        selected = [
            case
            for case in c.cases_for(engine)
            if not args.only or case.category in args.only or case.id in args.only
        ]
        print(f"{engine}: {len(selected)} cases", flush=True)
        started = time.monotonic()
        with harness.Lab(engine) as lab:
            outcomes = lab.run(selected, on_done=progress)
        tables[engine] = (harness.as_table(list(outcomes.values())), time.monotonic() - started)
    for engine, (rows, elapsed) in tables.items():
        print_table(engine, rows, elapsed)
    return 0


def print_table(engine: str, rows: list[dict[str, object]], elapsed_s: float) -> None:
    print()
    print(f"{engine}: {elapsed_s:.0f} s")
    print(f"{'category':<26}{'tried':>7}{'held':>7}{'held %':>9}")
    tried = held = 0
    for row in rows:
        share = 100.0 * int(str(row["held"])) / int(str(row["tried"]))
        print(f"{row['category']!s:<26}{row['tried']!s:>7}{row['held']!s:>7}{share:>8.0f}%")
        tried += int(str(row["tried"]))
        held += int(str(row["held"]))
    if tried:
        print(f"{'all':<26}{tried:>7}{held:>7}{100.0 * held / tried:>8.0f}%")


if __name__ == "__main__":
    raise SystemExit(main())
