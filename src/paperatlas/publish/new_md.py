"""The reader's what's-new digest (:func:`paperatlas.whatsnew.whats_new`) as Markdown or one HTML page.

Layout: a title and one line on the build (when, how many new papers, ranked for how many liked papers), the
topics that grew or appeared, the new papers grouped by topic (each with its rank, links, status and the reason it
is ranked there), then the new papers by authors the reader liked.
"""

from __future__ import annotations

from ..store import Atlas
from ..whatsnew import Digest, whats_new
from ._common import escape_md, markdown_page, md_url, one_line, paper_link, venue_text

#: most grown topics listed
MAX_GROWN = 10


def render_digest(digest: Digest, atlas: Atlas, title: str = "") -> str:
    """The digest as GitHub-flavoured Markdown.

    Args:
        digest: What :func:`~paperatlas.whatsnew.whats_new` returned.
        atlas: The atlas it was made from (topic labels).
        title: The document's title; default "What's new".

    Returns:
        The Markdown text.
    """
    out = [f"# {escape_md(title or 'What’s new')}", ""]
    b = digest.build
    if b is None or not digest.n_new:
        out.append("No build of this atlas has added papers yet: `paperatlas new` lists what the next build adds.")
        return "\n".join(out) + "\n"
    when = f" on {b.finished_at.replace('T', ' ')}" if b.finished_at else ""
    ranked = f", ranked for your {digest.n_liked} liked papers" if digest.n_liked else \
        " (like papers to have them ranked for you)"
    out += [f"Build {b.id}{when} added **{digest.n_new}** papers ({b.n_papers} in the atlas){ranked}.", ""]
    if digest.everything_new:
        out += [escape_md(digest.everything_new_note), ""]
    if digest.grown:
        out += ["## Topics that grew", "", escape_md(digest.growth_note), ""]
        for g in digest.grown[:MAX_GROWN]:
            how = "new topic" if g.appeared else f"+{g.n_new / g.n_before:.0%}"
            out.append(f"- **{escape_md(atlas.topic_label(g.topic.id))}**: {g.n_new} new ({how}, {g.excess:+.0f} "
                       f"beyond its share, p = {g.p_value:.2g}; {g.n_new + g.n_before} papers)")
        out.append("")
    more = f" ({escape_md(digest.shown_note)})" if digest.shown_note else ""
    out += [f"## New papers by topic{more}", "", "#n is a paper's rank among all the new papers.", ""]
    for topic, members in digest.groups:
        label = atlas.topic_label(topic.id) if topic is not None else "No topic"
        out += [f"### {escape_md(label)}", ""]
        for n in members:
            p = n.paper
            facts = venue_text(p) or p.status
            # a bullet with the rank written out: numbered items under topics would read 1, 2, 3, 6, 7, 12
            # (the ranks are over all new papers) and a Markdown renderer renumbers them 1, 2, 3, 4, ...
            out.append(f"- **#{n.rank}** {_title_link(p)}" + (f" — {escape_md(facts)}" if facts else ""))
            if p.tldr:
                out.append(f"  {escape_md(one_line(p.tldr))}")
            out.append(f"  *{escape_md(one_line(n.reason))}*")
        out.append("")
    if digest.by_liked_authors:
        out += ["## By authors you liked", ""]
        for name, papers in digest.by_liked_authors:
            titles = "; ".join(_title_link(p) for p in papers)
            out.append(f"- **{escape_md(name)}**: {titles}")
        out.append("")
    return "\n".join(out).rstrip() + "\n"


def _title_link(p) -> str:
    url = paper_link(p)
    return f"[{escape_md(p.title)}]({md_url(url)})" if url else f"**{escape_md(p.title)}**"


def render(atlas: Atlas, title: str = "") -> str:
    """``publish --format new-md``: the reader's digest of the last build that added papers, as Markdown.

    Args:
        atlas: The atlas (its history and the reader's likes).
        title: The document's title.

    Returns:
        The Markdown text.
    """
    return render_digest(whats_new(atlas, limit=None), atlas, title)


def render_html(atlas: Atlas, title: str = "") -> str:
    """``publish --format new-html``: :func:`render` as one standalone HTML page (no external assets).

    Args:
        atlas: The atlas.
        title: The page's title.

    Returns:
        The HTML page.
    """
    return markdown_page(render(atlas, title))
