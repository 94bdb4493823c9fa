"""`flashmark run`: being written in this session (placeholder so the CLI imports)."""
import click


@click.command("run")
def run_command() -> None:
    """Benchmark a folder or a device."""


@click.command("profiles")
def profiles_command() -> None:
    """List the profiles."""
