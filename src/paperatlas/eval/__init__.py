"""Quality benchmarks against public gold data: TL;DRs, keyphrases, topics and recommendations, ours vs baselines.

Each task module (:mod:`.tldr_eval`, :mod:`.keyphrase_eval`, :mod:`.topic_eval`, :mod:`.recommend_eval`) loads
its gold data, runs the methods and returns rows and formatted tables; it raises :class:`EvalUnavailable` when an
optional package or a gold file is missing. The ``paperatlas eval`` commands (:mod:`paperatlas.cli.eval`) print
them. Topic filing (issue 28): :mod:`.gold_sets` (the labelled sets), :mod:`.topic_filing` (the clustering rows),
:mod:`.filing` (misfiled share, nearest level, k-means), :mod:`.label_agreement` (class names vs labels),
:mod:`.label_quality` (``eval labels`` on an atlas), :mod:`.run_compare` (``eval compare``) and
:mod:`.embed_cache` (the MiniLM vectors kept on disk). Cited answers and topic overviews (issue 29):
:mod:`.ask_eval` (``eval ask``: questions from seed 004, ours vs baselines), :mod:`.ask_atlas` (its atlas of seeds
001 + 004) and :mod:`.overview_eval` (the overviews' scores and a sample to judge).
"""

from ._common import EvalUnavailable

__all__ = ["EvalUnavailable"]
