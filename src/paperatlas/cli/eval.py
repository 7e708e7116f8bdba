"""``paperatlas eval``: score our methods and the baselines side by side on public gold data."""

from __future__ import annotations

import click

from ..eval.keyphrase_eval import keyphrases_command
from ..eval.recommend_eval import recommend_command
from ..eval.tldr_eval import tldr_command
from ..eval.topic_eval import topics_command


@click.group(name="eval")
def eval_group() -> None:
    """Score TL;DRs, keyphrases and topics against public gold data, ours vs baselines, in one run.

    \b
    paperatlas eval tldr         SciTLDR-A dev: ROUGE-1/2/L vs the author TL;DR and the best of all targets
    paperatlas eval keyphrases   COLM 2024+2025 author keywords and seed 004's Key Word lines: P/R/F1@5,10
    paperatlas eval topics       seed 004 sections, AAAI 2022 areas: NMI/ARI vs BERTopic, 10-NN accuracy
    paperatlas eval recommend    same gold classes: P@10, nDCG@10 of recommendations vs arxiv-sanity-lite
    """


eval_group.add_command(tldr_command)
eval_group.add_command(keyphrases_command)
eval_group.add_command(topics_command)
eval_group.add_command(recommend_command)
