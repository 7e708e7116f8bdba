"""Optional generative models: backends, generated TL;DRs and generated topic labels.

:mod:`.backends` (one protocol, ``complete(messages) -> str``, and a registry of backends), :mod:`.tldr`
(generated TL;DRs, checked against the abstract) and :mod:`.labels` (generated topic labels, checked against the
topic's keyphrases and titles).
"""
