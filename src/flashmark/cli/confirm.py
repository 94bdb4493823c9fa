"""The typed confirmations: before a command overwrites a device (`--destructive`), and before a
folder scan fills the filesystem the system runs from or a non-removable disk."""

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


ALLOW_SYSTEM_DISK = "--allow-system-disk"


def confirm_filling(where: str, reason: str, answer_with: str, *, allowed: bool) -> None:
    """Ask the user to type `answer_with` before all the free space of the filesystem `where`
    (its label) is filled, `reason` saying why that needs consent (its system, a fixed disk).

    Only ALLOW_SYSTEM_DISK confirms without asking: `--yes`, which scripts pass for
    --destructive, does not. Without a terminal the command is refused and told about it."""
    if allowed:
        return
    line = f"refusing to fill {where}: {reason}"
    remedy = f"add {ALLOW_SYSTEM_DISK} to fill it anyway, or give --size to write less"
    if not sys.stdin.isatty():
        raise ConfirmationRefused(f"{line}; {remedy}")
    answer = click.prompt(
        f"This fills {where} up to the space flashmark leaves free: {reason}.\n"
        f"Type {answer_with} to continue",
        default="",
        show_default=False,
        err=True,
    )
    if answer.strip() != answer_with:
        raise ConfirmationRefused(f"confirmation did not match {answer_with}; nothing was written")
