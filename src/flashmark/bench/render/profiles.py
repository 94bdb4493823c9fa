"""`flashmark profiles`: the test profiles, their tests and defaults, as a table or a document."""

from __future__ import annotations

from typing import Any

from rich.table import Table

from flashmark.bench.plan import default_follow_ramp_s, follows_at_another_depth
from flashmark.bench.profiles import PROFILES
from flashmark.bench.render.cells import ramps_text
from flashmark.units import format_size


def profiles_document() -> list[dict[str, Any]]:
    """Every profile with its defaults and tests, as `flashmark profiles --json` prints them."""
    return [
        {
            "name": profile.name,
            "summary": profile.summary,
            "default_size_bytes": profile.default_size_bytes,
            "default_runtime_s": profile.default_runtime_s,
            "default_ramp_s": profile.default_ramp_s,
            "follow_ramp_s": default_follow_ramp_s(profile),
            "tests": [
                {"name": test.name, "description": test.description} for test in profile.tests
            ],
        }
        for profile in PROFILES.values()
    ]


def profiles_table() -> Table:
    """A row per profile: its name and summary, its defaults, its tests."""
    table = Table(header_style="bold")
    table.add_column("profile")
    table.add_column("defaults")
    table.add_column("tests")
    for profile in PROFILES.values():
        table.add_row(
            f"{profile.name}\n[dim]{profile.summary}[/dim]",
            f"--size {format_size(profile.default_size_bytes)}\n"
            f"--runtime {profile.default_runtime_s} s\n"
            "--ramp "
            + ramps_text(
                profile.default_ramp_s,
                default_follow_ramp_s(profile),
                depth_change=follows_at_another_depth(profile.tests),
            ),
            ", ".join(profile.test_names()),
        )
    return table
