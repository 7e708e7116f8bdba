"""Under construction."""

import click


@click.command(name="keyphrases")
def keyphrases_command() -> None:
    """Under construction."""
    raise click.ClickException("not implemented yet")
