"""The Ray engine builds what the local engine builds: on a local Ray of two workers (``--engine ray`` on one
machine) and on a two-node cluster (``ray.cluster_utils.Cluster``: past one machine, issue 31), from the 200 ICML
2019 papers of :data:`conftest.ICML200`."""

from __future__ import annotations

import numpy as np
import pytest

from conftest import ICML200, by_id
from paperatlas.build import build


@pytest.mark.slow
def test_ray_on_a_local_two_worker_cluster_gives_what_the_local_engine_gives(local_build, tmp_path):
    pytest.importorskip("ray.data", reason="pip install 'paperatlas[ray]'")
    from paperatlas.engines.ray_engine import RayEngine

    db = tmp_path / "ray.db"
    rep = build([ICML200], db, engine=RayEngine(workers=2, precision="fp32"))
    assert rep.n_papers == 200 and rep.n_embedded == 200
    assert set(rep.worker_seconds) == {"embed", "keyphrases", "tldr"} and rep.per_paper_seconds > 0
    local_papers, local_vecs = by_id(local_build)
    ray_papers, ray_vecs = by_id(db)
    assert set(ray_papers) == set(local_papers)
    for pid, p in local_papers.items():
        q = ray_papers[pid]
        assert q.tldr == p.tldr and q.tldr_method == p.tldr_method, pid
        assert q.keyphrases == p.keyphrases, pid
    diff = max(float(np.abs(ray_vecs[pid] - local_vecs[pid]).max()) for pid in local_vecs)
    assert diff <= 1e-5, diff
    # the map and topics are fitted on the driver from the same vectors: same papers in the same topics
    assert [ray_papers[pid].topic_id for pid in sorted(local_papers)] == \
        [local_papers[pid].topic_id for pid in sorted(local_papers)]


@pytest.mark.slow
def test_ray_on_a_two_node_cluster_gives_what_the_local_engine_gives(local_build, tmp_path):
    """Past one machine: a head node and a worker node (``ray.cluster_utils.Cluster``), one worker actor on each.

    Every paper gets the same id, its vector within fp32 rounding, and the same topic as on the local engine.
    """
    pytest.importorskip("ray.data", reason="pip install 'paperatlas[ray]'")
    import ray
    from ray.cluster_utils import Cluster

    from paperatlas.engines.ray_engine import RayEngine

    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "include_dashboard": False})
    try:
        cluster.add_node(num_cpus=1)
        cluster.wait_for_nodes()
        db = tmp_path / "ray2.db"
        ray.init(address=cluster.address, log_to_driver=False)
        try:
            assert len([n for n in ray.nodes() if n["Alive"]]) == 2
            rep = build([ICML200], db, engine=RayEngine(address=cluster.address, workers=2, precision="fp32"))
        finally:
            ray.shutdown()
    finally:
        cluster.shutdown()
    assert rep.n_papers == 200 and rep.n_embedded == 200
    local_papers, local_vecs = by_id(local_build)
    ray_papers, ray_vecs = by_id(db)
    assert set(ray_papers) == set(local_papers)
    diff = max(float(np.abs(ray_vecs[pid] - local_vecs[pid]).max()) for pid in local_vecs)
    assert diff <= 1e-5, diff
    same = sum(ray_papers[pid].topic_id == p.topic_id for pid, p in local_papers.items())
    assert same >= 0.99 * len(local_papers), same
