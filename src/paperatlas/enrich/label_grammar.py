"""Whether a phrase reads as a fragment when it is a topic label: it ends in an adjective (or a verb).

Split out of :mod:`paperatlas.enrich.labels`, which uses :func:`adjectival` and :func:`dangling`.
"""

from __future__ import annotations

_ADJECTIVE_ENDINGS = ("al", "ed", "ive", "ic", "ous", "ent", "ant", "ary", "ble", "ial", "ical", "less", "wise")
_ADJECTIVES = frozenset({"deep", "private", "efficient", "robust", "sparse", "fair", "large", "small",
                         "low", "high", "multi", "pre", "fast", "local", "global", "few", "self", "semi", "non",
                         "continuous-time", "fully-connected", "pre-trained", "self-supervised", "multi-agent"})


#: last parts of hyphenated compounds that are adjectives (``layer-wise``, ``worst-case``, ``model-free``)
_COMPOUND_ADJECTIVE_ENDS = frozenset({"wise", "case", "free", "aware", "like", "agnostic", "specific", "based"})


def adjectival(phrase: str) -> bool:
    """Whether a phrase (as written) ends in an adjective-like word (``adversarial``, ``pre-trained``, ``layer-wise``).

    Such a phrase is a fragment of a noun phrase, not a name.
    """
    last = phrase.lower().split()[-1] if phrase.strip() else ""
    parts = last.split("-")
    return last in _ADJECTIVES or parts[-1] in _ADJECTIVES or (
        len(parts[-1]) > 4 and parts[-1].endswith(_ADJECTIVE_ENDINGS)) or (
        len(parts) > 1 and parts[-1] in _COMPOUND_ADJECTIVE_ENDS)


#: adjective (and verb: ``neural networks generalize``) endings of a phrase's last word that make it a fragment as
#: a label (``group equivariant``), and the
#: nouns among such words (``gradient descent`` and ``spectral filtering`` are names, so ``-ent`` and ``-ed`` are not
#: in the list)
_DANGLING_ENDINGS = ("ive", "ous", "ant", "ical", "able", "ible", "ize", "ify")
_NOUNS = frozenset({"objective", "alternative", "derivative", "initiative", "narrative", "representative",
                    "variable", "variant", "constant", "assistant", "participant", "table"})


def dangling(phrase: str) -> bool:
    """Whether a phrase (as written) would read as a fragment as a label: it ends in an adjective.

    Narrower than :func:`adjectival`, which also reads ``-ent``, ``-ed`` and ``-al`` words as adjectives (right
    for a fragment's first word, wrong for ``gradient descent`` or ``graph retrieval``): the last word is a known
    adjective (``robust``, ``self-supervised``), a compound adjective (``layer-wise``) or ends in ``-ive``,
    ``-ous``, ``-ant``, ``-ical``, ``-able``, ``-ible`` (or a verb's ``-ize``, ``-ify``) and is not a noun of
    :data:`_NOUNS`.
    """
    last = phrase.lower().split()[-1] if phrase.strip() else ""
    parts = last.split("-")
    if last in _ADJECTIVES or parts[-1] in _ADJECTIVES or (len(parts) > 1 and parts[-1] in _COMPOUND_ADJECTIVE_ENDS):
        return True
    return len(parts[-1]) > 5 and parts[-1].endswith(_DANGLING_ENDINGS) and parts[-1] not in _NOUNS
