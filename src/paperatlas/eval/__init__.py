"""Quality benchmarks against public gold data: ``paperatlas eval tldr|keyphrases``.

Each task module exposes a click command; :mod:`paperatlas.eval.cli` groups them.
"""
