"""Optional generative models: backends, generated TL;DRs, topic labels and answers.

:mod:`.backends` (one protocol, ``complete(messages) -> str``, and a registry of backends), :mod:`.tldr`
(generated TL;DRs, checked against the abstract), :mod:`.labels` (generated topic labels, checked against the
topic's keyphrases and titles) and :mod:`.answer` (``ask --backend``: an extractive answer rewritten, each written
sentence kept only when the paper it cites supports it).
"""
