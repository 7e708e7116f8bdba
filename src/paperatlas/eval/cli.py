"""``paperatlas eval``: score our methods and the baselines side by side on public gold data."""

from __future__ import annotations

import click

from .keyphrase_eval import keyphrases_command
from .tldr_eval import tldr_command


@click.group(name="eval")
def eval_group() -> None:
    """Score TL;DRs and keyphrases against public gold data, ours vs baselines, in one run.

    \b
    paperatlas eval tldr         SciTLDR-A dev: ROUGE-1/2/L vs the author TL;DR and the best of all targets
    paperatlas eval keyphrases   COLM 2024+2025 author keywords and seed 004's Key Word lines: P/R/F1@5,10
    """


eval_group.add_command(tldr_command)
eval_group.add_command(keyphrases_command)
