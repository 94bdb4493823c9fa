"""The typed confirmation every command that overwrites a device asks for (`--destructive`)."""

from __future__ import annotations

import sys

import click

from flashmark.errors import ConfirmationRefused


def confirm_overwrite(node: str, given: str, consequence: str, *, yes: bool) -> None:
    """Ask the user to type the device path before `consequence` happens to `node`.

    `--yes` confirms without asking; without a terminal nothing can be typed, so the command
    is refused and told about `--yes`. The path as the user gave it is accepted as well.
    """
    if yes:
        return
    if not sys.stdin.isatty():
        raise ConfirmationRefused(
            f"--destructive on {node} needs a typed confirmation and there is no terminal; "
            "add --yes to confirm"
        )
    answer = click.prompt(
        f"{consequence}\nType the device path to continue",
        default="",
        show_default=False,
        err=True,
    )
    if answer.strip() not in (node, given):
        raise ConfirmationRefused(f"confirmation did not match {node}; nothing was written")
