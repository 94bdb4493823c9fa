"""Fault injection: how often flashmark holds under signals, stacked devices, database faults,
hostile paths, races, a hung device, power cuts, environment faults and hostile imports.

    sudo python3 benchmarks/faults.py [--seed 8] [--count 110] [--workers 6]
                                      [--only CATEGORY|CASE-ID ...] [--verbose]

The cases are the pytest tier's (tests/cli/faults/cases.py, same seed, same ids), run by the same
harness (tests/cli/faults/harness.py) against `sys.executable -m flashmark`, so PYTHONPATH decides
which flashmark is tried. `--count` is the number of signal deliveries (one generated hostile
folder name is added per 50). Prints a table per category (tried, held) and every failure with
its reasons; exits 0 whatever held (it is a benchmark: the tests assert).
Needs root, loop devices, the block throttle and fio.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the tests package

from tests.cli.faults import cases as c
from tests.cli.faults import harness


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=c.DEFAULT_SEED)
    parser.add_argument("--count", type=int, default=c.DEFAULT_SIGNAL_COUNT,
                        help="signal deliveries (default %(default)s)")  # fmt: skip
    parser.add_argument("--workers", type=int, default=harness.DEFAULT_WORKERS,
                        help="cases run at once (default %(default)s)")  # fmt: skip
    parser.add_argument("--only", nargs="+", default=[],
                        help="categories (e.g. signals) or case ids to run")  # fmt: skip
    parser.add_argument("--verbose", action="store_true", help="print every case as it ends")
    args = parser.parse_args()

    reason = harness.unavailable_reason()
    if reason is not None:
        print(f"faults: cannot run here: {reason}", file=sys.stderr)
        return 3
    selected = [
        case
        for category, cases in c.all_cases(args.seed, args.count).items()
        for case in cases
        if not args.only or category in args.only or case.id in args.only
    ]
    print(
        f"flashmark fault injection: seed {args.seed}, {args.count} signal deliveries, "
        f"{len(selected)} cases, {args.workers} at a time",
        flush=True,
    )

    def progress(outcome: harness.Outcome) -> None:
        if args.verbose or not outcome.held:
            mark = "held" if outcome.held else "FAILED"
            print(f"  {mark:<6} {outcome.category}: {outcome.case_id} ({outcome.note})", flush=True)

    started = time.monotonic()
    with harness.Lab(workers=args.workers, seed=args.seed) as lab:
        outcomes = lab.run(selected, on_done=progress)
    elapsed = time.monotonic() - started
    ordered = [outcomes[case.id] for case in selected]
    print_table(ordered, elapsed)
    return 0


def print_table(outcomes: list[harness.Outcome], elapsed_s: float) -> None:
    rows = harness.as_table(outcomes)
    print()
    print(f"{'category':<22}{'tried':>7}{'held':>7}{'held %':>9}{'case time':>11}")
    for row in rows:
        share = 100.0 * row["held"] / row["tried"]
        print(
            f"{row['category']:<22}{row['tried']:>7}{row['held']:>7}{share:>8.0f}%"
            f"{row['seconds']:>10.0f}s"
        )
    tried = sum(row["tried"] for row in rows)
    held = sum(row["held"] for row in rows)
    print(f"{'total':<22}{tried:>7}{held:>7}{100.0 * held / max(tried, 1):>8.0f}%"
          f"{elapsed_s:>10.0f}s wall")  # fmt: skip
    for row in rows:
        if not row["failures"]:
            continue
        print(f"\n{row['category']}: {len(row['failures'])} failed")
        for outcome in row["failures"]:
            print(f"  {outcome.case_id} ({outcome.note})")
            for problem in outcome.problems:
                print(f"    - {_short(problem)}")


def _short(text: str, limit: int = 300) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


if __name__ == "__main__":
    sys.exit(main())
