"""Quality benchmarks against public gold data: TL;DRs, keyphrases, topics and recommendations, ours vs baselines.

Each task module (:mod:`.tldr_eval`, :mod:`.keyphrase_eval`, :mod:`.topic_eval`, :mod:`.recommend_eval`) loads
its gold data, runs the methods and returns rows and formatted tables; it raises :class:`EvalUnavailable` when an
optional package or a gold file is missing. The ``paperatlas eval`` commands (:mod:`paperatlas.cli.eval`) print
them.
"""

from ._common import EvalUnavailable

__all__ = ["EvalUnavailable"]
