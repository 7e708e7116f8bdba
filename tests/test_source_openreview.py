"""The OpenReview reader, on recorded API notes served to the real openreview-py client with ``responses``.

The test machines cannot reach OpenReview. ``notes_v1.json`` holds the real notes of two NeurIPS 2018 CDNNRIA
workshop papers with their decision and official reviews as the v1 API returns them; ``notes_v2.json`` the same
notes in API v2's shape (origins and trimming in tests/fixtures/sources/openreview/ORIGIN.md). ``serve`` answers
``GET /notes`` the way the API pages (``sort=id``, ``after``, ``limit``, ``with_count``), so the client's own
paging loop, parameters and Note parsing run unchanged.
"""

from __future__ import annotations

import copy
import json
import re
from urllib.parse import parse_qs, urlparse

import pytest
import requests
import responses
from click.testing import CliRunner

from conftest import FIXTURES
from paperatlas import sources
from paperatlas.cli import main
from paperatlas.model import SourceError
from paperatlas.sources.openreview import papers_from_notes, venue_of
from paperatlas.store import Atlas
from test_build_safety import HashEmbedder

DIR = FIXTURES / "sources" / "openreview"
V1 = json.loads((DIR / "notes_v1.json").read_text())
V2 = json.loads((DIR / "notes_v2.json").read_text())
VENUE = "NIPS.cc/2018/Workshop/CDNNRIA"
API1 = re.compile(r"https://api\.openreview\.net/notes.*")
API2 = re.compile(r"https://api2\.openreview\.net/notes.*")
TITLES = ["Targeted Dropout", "Rethinking the Value of Network Pruning"]


@pytest.fixture
def online(monkeypatch):
    monkeypatch.delenv("PAPERATLAS_OFFLINE")
    with responses.RequestsMock(assert_all_requests_are_fired=False) as rs:
        yield rs


def serve(rs, url: re.Pattern, by_invitation: dict[str, list]) -> list[dict]:
    """Answer ``GET /notes?invitation=...`` from recorded notes, paged as the API pages; returns the queries seen."""
    seen = []

    def answer(request):
        q = {k: v[0] for k, v in parse_qs(urlparse(request.url).query).items()}
        seen.append(q)
        notes = sorted(by_invitation.get(q.get("invitation"), []), key=lambda n: n["id"])
        if "after" in q:
            notes = [n for n in notes if n["id"] > q["after"]]
        page = notes[int(q.get("offset", 0)):][:int(q.get("limit", 1000))]
        counted = q.get("count") == "true" or "api.openreview" in request.url  # v2 counts on request, v1 always
        body = {"notes": page, **({"count": len(notes)} if counted else {})}
        return 200, {"Content-Type": "application/json"}, json.dumps(body)

    rs.add_callback(responses.GET, url, callback=answer)
    return seen


def with_decision(note: dict, decision: str, note_id: str) -> dict:
    """A copy of a recorded submission whose decision note says ``decision`` (for the accepted-only filter)."""
    note = copy.deepcopy(note)
    note["id"] = note["forum"] = note_id
    for r in note["details"].get("directReplies") or note["details"]["replies"]:
        if "decision" in r["content"]:
            r["content"]["decision"] = {"value": decision} if isinstance(r["content"]["decision"], dict) else decision
    return note


def test_v1_venue_read_through_the_real_client(online):
    v2_queries = serve(online, API2, {})  # not an API v2 venue: the reader falls back to v1
    v1_queries = serve(online, API1, {f"{VENUE}/-/Blind_Submission": V1["notes"]})
    dropout, pruning = sources.read(f"openreview:{VENUE}")
    assert [dropout.title, pruning.title] == TITLES
    assert dropout.authors == ["Aidan N. Gomez", "Ivan Zhang", "Kevin Swersky", "Yarin Gal", "Geoffrey E. Hinton"]
    assert dropout.abstract.startswith("Neural networks are extremely flexible models")
    assert (dropout.venue, dropout.year, dropout.status) == ("NeurIPS 2018 Workshop CDNNRIA", 2018, "Accepted")
    assert dropout.extra == {"openreview_id": "HkghWScuoQ", "ratings": [4.0], "confidences": [2.0],
                             "decision": "accept"}  # the public comment's "Rating: 3/5" text is not a review
    assert [(x.kind, x.url) for x in dropout.links] == [
        ("openreview", "https://openreview.net/forum?id=HkghWScuoQ"),
        ("paper", "https://openreview.net/pdf/1e9b22c08d7651c60362b60af660c1f92d304b7c.pdf")]
    assert (dropout.tldr, dropout.given_keyphrases) == ("", [])
    assert pruning.tldr.startswith("In network pruning, fine-tuning a pruned model only gives comparable")
    assert pruning.tldr_method == "author"
    assert pruning.given_keyphrases == ["Network Pruning", "Network Compression", "Architecture Search",
                                        "Training from Scratch"]
    assert pruning.extra["ratings"] == [4.0, 4.0, 4.0] and pruning.extra["confidences"] == [2.0, 2.0, 2.0]
    assert v2_queries[0]["invitation"] == f"{VENUE}/-/Submission" and v2_queries[0]["details"] == "directReplies"
    assert [q["invitation"] for q in v1_queries][:1] == [f"{VENUE}/-/Blind_Submission"]
    assert all(q["details"] == "directReplies" for q in v1_queries)


def test_v2_venue_and_no_v1_request(online):
    serve(online, API2, {f"{VENUE}/-/Submission": V2["notes"]})
    v1_queries = serve(online, API1, {})
    dropout, pruning = sources.read(f"openreview:{VENUE}")
    assert (dropout.title, dropout.extra["ratings"], dropout.status) == ("Targeted Dropout", [4.0], "Accepted")
    assert (pruning.tldr_method, pruning.extra["decision"]) == ("author", "accept")
    assert pruning.tldr == "In network pruning, fine-tuning a pruned model only gives comparable or worse " \
                          "performance than training it from scratch. This advocate a rethinking of existing " \
                          "pruning algorithms."
    assert v1_queries == []


def test_accepted_papers_by_default_rejected_ones_on_request_from_the_same_cache(online):
    notes = V1["notes"] + [with_decision(V1["notes"][0], "Reject", "zzRejected1"),
                           with_decision(V1["notes"][1], "Invite to Workshop Track", "zzInvited1")]
    serve(online, API2, {})
    v1_queries = serve(online, API1, {f"{VENUE}/-/Blind_Submission": notes})
    assert [p.title for p in sources.read(f"openreview:{VENUE}")] == TITLES
    asked = len(v1_queries)
    everything = sources.read(f"openreview:{VENUE}", include_rejected=True)
    assert [(p.extra["openreview_id"], p.status) for p in everything] == [
        ("HkghWScuoQ", "Accepted"), ("r1eLk2mKiX", "Accepted"), ("zzInvited1", ""), ("zzRejected1", "Rejected")]
    assert everything[2].extra["decision"] == "Invite to Workshop Track"  # in the API's order (sort=id)
    assert len(v1_queries) == asked  # --include-rejected filtered the cached notes: no new fetch


@pytest.mark.parametrize("decision, status", [
    ("Accept (Oral)", "Oral"), ("Accept (spotlight)", "Spotlight"), ("Accept (Poster)", "Poster"),
    ("Accept: notable-top-5%", "Oral"), ("Accept: notable-top-25%", "Spotlight"), ("Accept: poster", "Poster"),
    ("Accept", "Accepted"), ("Reject", "Rejected"), ("Withdrawn", "Withdrawn")])
def test_decision_wordings_give_the_status(decision, status):
    for body in (V1, V2):
        (p,) = papers_from_notes([with_decision(body["notes"][1], decision, "x")], VENUE, "notes.json",
                                 include_rejected=True)
        assert (p.status, p.extra["decision"]) == (status, decision)


def test_v2_status_from_the_venue_fields_when_no_decision_is_public():
    def placed(venueid: str, venue: str) -> dict:
        note = copy.deepcopy(V2["notes"][0])
        replies = note["details"]["directReplies"]
        note["details"]["directReplies"] = [r for r in replies if "decision" not in r["content"]]
        note["content"]["venueid"], note["content"]["venue"] = {"value": venueid}, {"value": venue}
        return note

    notes = [placed(VENUE, "NeurIPS 2018 Workshop CDNNRIA oral"),
             placed(f"{VENUE}/Rejected_Submission", "Submitted to NeurIPS 2018 Workshop CDNNRIA"),
             placed(f"{VENUE}/Withdrawn_Submission", "NeurIPS 2018 Workshop CDNNRIA Withdrawn Submission"),
             placed(f"{VENUE}/Submission", "NeurIPS 2018 Workshop CDNNRIA Submission")]
    everything = papers_from_notes(notes, VENUE, "notes.json", include_rejected=True)
    assert [p.status for p in everything] == ["Oral", "Rejected", "Withdrawn", ""]
    assert len(papers_from_notes(notes, VENUE, "notes.json")) == 2  # the oral, and the one not decided yet


def test_a_rebuild_reads_the_cache_and_a_failure_names_the_source(online):
    serve(online, API2, {f"{VENUE}/-/Submission": V2["notes"]})
    first = sources.read(f"openreview:{VENUE}")
    online.reset()
    online.add(responses.GET, API2, body=requests.ConnectionError("network unreachable"))
    online.add(responses.GET, API1, body=requests.ConnectionError("network unreachable"))
    again = sources.read(f"openreview:{VENUE}")
    assert [(p.title, p.extra, p.status, p.links) for p in again] == \
           [(p.title, p.extra, p.status, p.links) for p in first]
    with pytest.raises(SourceError) as err:
        sources.read(f"openreview:{VENUE}", refresh=True)
    assert str(err.value).startswith(f"openreview:{VENUE}: cannot reach OpenReview")
    assert "network unreachable" in str(err.value) and "drop --refresh to build from the copy fetched" in str(err.value)
    with pytest.raises(SourceError) as err:
        sources.read("openreview:ICLR.cc/2099/Conference")
    assert str(err.value).startswith("openreview:ICLR.cc/2099/Conference: cannot reach OpenReview")
    assert "nothing is cached for it yet" in str(err.value)


def test_an_error_answer_and_an_unknown_venue_are_source_errors(online):
    # An error answer in the API's {"name", "message"} shape (not retried by the client, unlike 429/5xx).
    online.add(responses.GET, API2, status=403, json={"name": "ForbiddenError", "message": "Forbidden for guests"})
    with pytest.raises(SourceError, match=r"^openreview:ICLR\.cc/2024/Conference: cannot reach OpenReview.*"
                                          r"Forbidden for guests.*nothing is cached"):
        sources.read("openreview:ICLR.cc/2024/Conference")
    online.reset()
    serve(online, API2, {})
    serve(online, API1, {})
    with pytest.raises(SourceError, match="no submissions under this venue id"):
        sources.read("openreview:ICLR.cc/2024/Conferenc")


def test_offline_builds_from_the_cache_only(online, monkeypatch):
    serve(online, API2, {f"{VENUE}/-/Submission": V2["notes"]})
    assert len(sources.read(f"openreview:{VENUE}")) == 2
    monkeypatch.setenv("PAPERATLAS_OFFLINE", "1")
    calls = len(online.calls)
    assert [p.title for p in sources.read(f"openreview:{VENUE}")] == TITLES and len(online.calls) == calls
    with pytest.raises(SourceError, match="offline.*nothing is cached"):
        sources.read("openreview:ICLR.cc/2025/Conference")


def test_saved_notes_files_and_a_malformed_note(tmp_path):
    assert sources.detect_format(DIR / "notes_v1.json") == "openreview"
    dropout, pruning = sources.read(DIR / "notes_v2.json")
    assert (dropout.venue, dropout.year, pruning.tldr_method) == ("NeurIPS 2018 Workshop CDNNRIA", 2018, "author")
    body = copy.deepcopy(V1)
    body["notes"].insert(1, {"id": "x", "forum": "x", "invitation": "a/-/b", "content": {"abstract": "no title"}})
    body["notes"].insert(2, ["not", "a", "note"])
    bad = tmp_path / "notes.json"
    bad.write_text(json.dumps(body))
    with pytest.warns(sources.RecordSkipped) as skipped:
        assert [p.title for p in sources.read(bad)] == TITLES
    assert [str(w.message) for w in skipped] == [f"{bad}:record 1: note 'x' has no title",
                                                 f"{bad}:record 2: not an OpenReview note (no content object)"]
    with pytest.raises(SourceError, match=r"notes\.json:record 1: note 'x' has no title"):
        sources.read(bad, strict=True)
    (tmp_path / "cut.json").write_text(json.dumps(V1)[:2000])
    with pytest.raises(SourceError, match=r"cut\.json:\d+: invalid JSON"):
        sources.read(tmp_path / "cut.json", format="openreview")


def test_a_fetch_cache_file_is_a_notes_file(online, tmp_path):
    serve(online, API2, {f"{VENUE}/-/Submission": V2["notes"]})
    sources.read(f"openreview:{VENUE}", cache_dir=tmp_path)
    (cached,) = tmp_path.glob("openreview/*.json")
    assert sources.detect_format(cached) == "openreview"
    assert [(p.title, p.venue) for p in sources.read(cached)] == [(t, "NeurIPS 2018 Workshop CDNNRIA") for t in TITLES]


def test_venue_ids_name_venues():
    assert venue_of("ICLR.cc/2025/Conference") == ("ICLR 2025", 2025)
    assert venue_of("NeurIPS.cc/2023/Conference") == ("NeurIPS 2023", 2023)
    assert venue_of("NIPS.cc/2018/Workshop/CDNNRIA") == ("NeurIPS 2018 Workshop CDNNRIA", 2018)
    assert venue_of("TMLR") == ("TMLR", None)


def test_build_from_an_openreview_venue_on_the_command_line(online, tmp_path, monkeypatch):
    serve(online, API2, {f"{VENUE}/-/Submission": V2["notes"]})
    monkeypatch.setattr("paperatlas.engines.local.get_embedder", lambda **_: HashEmbedder())
    db = tmp_path / "venue.db"
    res = CliRunner().invoke(main, ["build", f"openreview:{VENUE}", "--db", str(db), "--replace"])
    assert res.exit_code == 0, res.output
    atlas = Atlas(db)
    by_title = {p.title: p for p in atlas.papers}
    assert sorted(by_title) == sorted(TITLES) and atlas.meta["sources"] == [f"openreview:{VENUE}"]
    pruning = by_title["Rethinking the Value of Network Pruning"]
    assert pruning.tldr_method == "author" and pruning.tldr.startswith("In network pruning")  # kept by the build
    assert pruning.extra["ratings"] == [4.0, 4.0, 4.0]
