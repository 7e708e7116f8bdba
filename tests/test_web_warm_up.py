"""The web app's background warm-up gives way to requests and never makes one wait on it."""

from __future__ import annotations

import sys
import threading

from paperatlas.authors import atlas_authors
from paperatlas.search.terms import spelling_vocabulary
from paperatlas.store import Atlas
from paperatlas.web.busy import WARM_SWITCH_SECONDS, fast_switching


def test_a_request_computes_what_a_paused_warm_up_has_not_finished_instead_of_waiting_for_it(sample_atlas):
    atlas = Atlas(sample_atlas)
    release, paused = threading.Event(), threading.Event()

    def pause() -> None:  # a warm-up stuck behind a long request
        paused.set()
        release.wait(30)

    warmers = [threading.Thread(target=atlas_authors, args=(atlas, pause)),
               threading.Thread(target=spelling_vocabulary, args=(atlas, pause))]
    for t in warmers:
        t.start()
    assert paused.wait(10)
    got: dict = {}
    request = threading.Thread(target=lambda: got.update(authors=atlas_authors(atlas),
                                                         vocab=spelling_vocabulary(atlas)))
    request.start()
    request.join(10)
    finished_first = not request.is_alive()
    release.set()
    for t in warmers:
        t.join(30)
    assert finished_first, "the request waited for the paused warm-up"
    # the warm-up's late result does not replace the one requests already use
    assert atlas_authors(atlas) is got["authors"] and spelling_vocabulary(atlas) is got["vocab"]
    assert any(len(e.papers) > 1 for e in got["authors"].entries.values()) and got["vocab"]["learning"] > 1


def test_the_short_switch_interval_lasts_while_any_warm_up_runs_and_is_restored_after_the_last():
    before = sys.getswitchinterval()
    with fast_switching():
        with fast_switching():
            assert sys.getswitchinterval() == WARM_SWITCH_SECONDS
        assert sys.getswitchinterval() == WARM_SWITCH_SECONDS
    assert sys.getswitchinterval() == before
