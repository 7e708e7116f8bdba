"""Under construction."""

import click


@click.command(name="tldr")
def tldr_command() -> None:
    """Under construction."""
    raise click.ClickException("not implemented yet")
