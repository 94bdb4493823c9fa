"""The two names a fleet's uploads carry: the campaign's and the board's label (pure), checked
the same way on the board (`flashmark upload`) and at the service's intake.

A campaign name is part of addresses (`/campaigns/NAME`): ASCII letters, digits, `.`, `_`, `-`.
A board label is shown in every row: letters and digits of any script and a few marks, no
control or formatting character, nothing a spreadsheet reads as a formula, and no identifier's
shape (flashmark.server.identifiers): an inventory naming boards by IP address would publish it.
"""

from __future__ import annotations

import re

from flashmark.errors import UsageError
from flashmark.server.identifiers import Known, identifier_in

NAME_MAX = 64
CAMPAIGN_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
# \w on str patterns: letters and digits of every script and "_"; not marks, not formats.
BOARD_LABEL = re.compile(r"[^\W_][\w.:+-]{0,63}")
CAMPAIGN_RULE = (
    "a campaign name is 1 to 64 ASCII letters, digits, '.', '_' and '-', starting with a "
    "letter or digit"
)
LABEL_RULE = (
    "a board label is 1 to 64 letters or digits, '.', '_', ':', '+' and '-', starting with a "
    "letter or digit"
)


def campaign_problem(value: object) -> str | None:
    """Why `value` cannot be a campaign name, or None."""
    if not isinstance(value, str) or CAMPAIGN_NAME.fullmatch(value) is None:
        return f"{CAMPAIGN_RULE}, not {_shown(value)}"
    return None


def label_problem(value: object) -> str | None:
    """Why `value` cannot be a board label, or None."""
    if not isinstance(value, str) or BOARD_LABEL.fullmatch(value) is None:
        return f"{LABEL_RULE}, not {_shown(value)}"
    found = identifier_in(value, Known())
    if found is not None:
        return (
            f"the board label {value!r} holds {found}: label boards by names that identify no "
            "machine (an inventory alias such as board-07 ansible_host=..., or flashmark_label)"
        )
    return None


def _shown(value: object) -> str:
    """A refused value in a message, bounded and with its controls escaped."""
    if isinstance(value, str):
        text = value if len(value) <= 80 else value[:77] + "..."
        return ascii(text)
    return f"a {type(value).__name__}" if value is not None else "null"


def natural_key(label: str) -> tuple[tuple[int, int | str], ...]:
    """board-2 before board-10: runs of digits compare as numbers."""
    return tuple(
        (0, int(part)) if part.isdigit() else (1, part.casefold())
        for part in re.findall(r"\d+|\D+", label)
    )


def campaign_choices(campaign: str | None, label: str | None) -> dict[str, str]:
    """`upload --campaign NAME --label LABEL` as the upload adds them (campaign, board_label),
    checked before anything is read; UsageError for one without the other or a bad name."""
    if campaign is None and label is None:
        return {}
    if campaign is None or label is None:
        raise UsageError(
            "--campaign and --label go together: a campaign shows each board by its label"
        )
    for option, problem in (
        ("--campaign", campaign_problem(campaign)),
        ("--label", label_problem(label)),
    ):
        if problem is not None:
            raise UsageError(f"{option}: {problem}")
    return {"campaign": campaign, "board_label": label}
