"""Topics: clustering, human-readable labels and the 2-D map layout.

Method ``"ward+ctfidf-keyphrase v1"``:

* **Clusters**: agglomerative clustering with Ward linkage (scikit-learn) on the L2-normalised paper
  embeddings; every paper gets a topic (no outlier bucket). The number of topics defaults to
  :func:`default_n_topics` (about one per 30 papers, 6-40).
* **Labels**: class-based TF-IDF (c-TF-IDF, Grootendorst 2022, BERTopic: ``W(t,c) = tf(t,c) · log(1 + A / f(t))``
  with ``A`` the average number of terms per topic and ``f(t)`` the term's frequency over all topics) over the
  papers' keyphrases. The label is the best-scoring keyphrase that occurs in several of the topic's papers,
  written in sentence case (``"Graph neural networks"``), made distinct from labels already taken, joined with a
  second strong keyphrase when it is not a variant of the first (``"Adversarial robustness & certified defenses"``).
* **Map**: UMAP (McInnes et al. 2018, ``umap-learn``) to 2-D with cosine metric, ``n_neighbors=15``,
  ``min_dist=0.1`` and a fixed ``random_state`` so the same input gives the same map.
"""

from __future__ import annotations

import math
from collections import Counter

import numpy as np

from .keyphrases import phrase_key
from .model import Topic

METHOD = "ward+ctfidf-keyphrase v1"
LAYOUT_METHOD = "umap-cosine-2d v1"


def default_n_topics(n_papers: int) -> int:
    """About one topic per 30 papers, at least 6 (fewer only when there are fewer papers), at most 40."""
    return max(min(6, n_papers), min(40, round(n_papers / 30)))


def cluster(vectors: np.ndarray, n_topics: int) -> np.ndarray:
    """Topic index per paper: ``(n_papers,)`` int in ``[0, n_topics)``, ordered by decreasing topic size
    (topic 0 is the largest). ``vectors`` is ``(n_papers, dim)`` float32, L2-normalised."""
    from sklearn.cluster import AgglomerativeClustering

    n = len(vectors)
    if n == 0:
        return np.zeros(0, dtype=int)
    k = max(1, min(n_topics, n))
    if k == 1:
        raw = np.zeros(n, dtype=int)
    else:
        raw = AgglomerativeClustering(n_clusters=k, linkage="ward").fit_predict(vectors)
    order = [c for c, _ in sorted(Counter(raw.tolist()).items(), key=lambda kv: (-kv[1], kv[0]))]
    remap = {c: i for i, c in enumerate(order)}
    return np.array([remap[c] for c in raw], dtype=int)


def layout_2d(vectors: np.ndarray, seed: int = 42) -> np.ndarray:
    """2-D map coordinates ``(n_papers, 2)`` float32 (unitless) from ``(n_papers, dim)`` embeddings via UMAP.

    Tiny inputs (fewer than 5 papers) fall back to PCA, where UMAP's neighbour graph is undefined.
    """
    n = len(vectors)
    if n == 0:
        return np.zeros((0, 2), dtype=np.float32)
    if n < 5:
        from sklearn.decomposition import PCA

        comps = min(2, n)
        out = np.zeros((n, 2), dtype=np.float32)
        out[:, :comps] = PCA(n_components=comps, random_state=seed).fit_transform(vectors) if n > 1 else 0
        return out
    import umap

    reducer = umap.UMAP(n_components=2, n_neighbors=min(15, n - 1), min_dist=0.1, metric="cosine",
                        random_state=seed, n_jobs=1, init="spectral" if n > 20 else "random")
    return reducer.fit_transform(vectors).astype(np.float32)


def _sentence_case(phrase: str) -> str:
    return phrase[:1].upper() + phrase[1:] if phrase else phrase


def label_topics(assign: np.ndarray, keyphrases: list[list[str]], max_terms: int = 10) -> list[tuple[str, list[str]]]:
    """``(label, top_terms)`` per topic index (see module doc for the c-TF-IDF weighting).

    ``assign`` is ``(n_papers,)`` topic indices, ``keyphrases`` one list per paper. Labels are unique.
    """
    n_topics = int(assign.max()) + 1 if len(assign) else 0
    tf: list[Counter[str]] = [Counter() for _ in range(n_topics)]
    forms: dict[str, Counter[str]] = {}
    for t, kps in zip(assign.tolist(), keyphrases, strict=True):
        for kp in dict.fromkeys(kps):
            k = phrase_key(kp)
            tf[t][k] += 1
            forms.setdefault(k, Counter())[kp] += 1
    total = Counter()
    for c in tf:
        total.update(c)
    avg = sum(total.values()) / max(n_topics, 1)
    taken: set[str] = set()
    out: list[tuple[str, list[str]]] = []
    for t in range(n_topics):
        size = int((assign == t).sum())
        scored = sorted(((f * math.log(1 + avg / total[k]) * (1 + 0.3 * (len(k.split()) > 1)), k)
                         for k, f in tf[t].items()), reverse=True)
        support = max(2, round(0.05 * size)) if size >= 6 else 1
        good = [k for s, k in scored if tf[t][k] >= support] or [k for _, k in scored]
        top_terms = [_display(forms, k) for k in good[:max_terms]]
        weight = {k: s for s, k in scored}
        label = ""
        free = [k for k in good if k not in taken]
        if free:
            # a specific multi-word phrase beats a slightly stronger single word ("backdoor attacks" > "attacks")
            multi = [k for k in free[:4] if len(k.split()) > 1 and weight[k] >= 0.7 * weight[free[0]]]
            k = multi[0] if multi and len(free[0].split()) == 1 else free[0]
            label = _sentence_case(_display(forms, k))
            # add a second strong, distinct term to make labels specific (not an acronym of the first)
            for k2 in free[:5]:
                if k2 == k or set(k2.split()) & set(k.split()) or any(_is_acronym_pair(k, w) for w in k2.split()):
                    continue
                if len(k2.split()) > 1 and weight[k2] >= 0.5 * weight[k]:
                    label = f"{label} & {_display(forms, k2)}"
                    break
            taken.add(k)
        out.append((label or f"Topic {t + 1}", top_terms))
    return out


def _is_acronym_pair(a: str, b: str) -> bool:
    """True when one phrase key is the acronym of the other (``gan`` / ``generative adversarial network``,
    ``ebm`` / ``energy based model``, ``nas`` / ``neural architecture search``)."""
    for short, long_ in ((a, b), (b, a)):
        words = long_.replace("-", " ").split()
        if len(short.split()) == 1 and len(words) > 1:
            initials = "".join(w[0] for w in words)
            if short.rstrip("s") in (initials, initials.rstrip("s")) or initials.startswith(short.rstrip("s")):
                return True
    return False


def _display(forms: dict[str, Counter[str]], key: str) -> str:
    """Most common spelling of a phrase key; plural forms preferred for multi-word noun phrases as people write
    topic names in the plural (``graph neural networks``)."""
    best = forms[key].most_common(1)[0][0]
    plural = [f for f in forms[key] if f.lower().endswith("s") and not best.lower().endswith("s")]
    return plural[0] if plural and len(best.split()) > 1 else best


def build_topics(vectors: np.ndarray, keyphrases: list[list[str]], n_topics: int | None = None,
                 seed: int = 42) -> tuple[np.ndarray, np.ndarray, list[Topic]]:
    """Cluster, label and lay out papers.

    Returns ``(topic_id per paper (n_papers,) int, coordinates (n_papers, 2) float32, topics)`` where topic ids
    are ``0..n-1`` by decreasing size and each :class:`Topic` carries its label, size, top terms and centroid.
    """
    n_topics = n_topics or default_n_topics(len(vectors))
    assign = cluster(vectors, n_topics)
    xy = layout_2d(vectors, seed=seed)
    labels = label_topics(assign, keyphrases)
    topics = []
    for t, (label, terms) in enumerate(labels):
        members = assign == t
        # the median sits inside the topic's main mass even when a few members lie far away
        cx, cy = (np.median(xy[members], axis=0).tolist() if members.any() else (0.0, 0.0))
        topics.append(Topic(id=t, label=label, size=int(members.sum()), keyphrases=terms, x=float(cx), y=float(cy),
                            method=METHOD))
    return assign, xy, topics
