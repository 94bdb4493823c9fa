"""`flashmark history` and `flashmark show`: being written in this session (placeholder)."""
import click


@click.command("history")
def history_command() -> None:
    """List saved runs."""


@click.command("show")
def show_command() -> None:
    """Show one run."""
