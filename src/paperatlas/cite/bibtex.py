r"""BibTeX entries of papers, built and written with bibtexparser 2.x (the ``bibtex`` export, "Copy BibTeX").

Entries are built with ``Library`` / ``Entry`` / ``Field`` and written with ``bibtexparser.write_string``.

Entry types
    ``@inproceedings`` with ``booktitle`` when the venue is a conference or workshop (``ICLR 2021``,
    ``NeurIPS 2020 Workshop``, ``Proceedings of ...``; see :func:`is_conference`), ``@article`` with ``journal``
    for any other venue (``Nature``, ``JMLR``, ``Proceedings of the IEEE``), ``@misc`` when the paper has no venue
    (or ``@misc`` with ``howpublished`` for a thesis, e.g. ``PhD Thesis``).

Fields
    ``title``, ``author`` (names joined with ``" and "``), ``year``, ``booktitle``/``journal``, ``url`` (the paper
    link, else its arXiv page, else its DOI, else the code link), ``doi`` (bare), ``pdf`` (a second paper link),
    ``code`` (the code link, beside a paper link),
    ``note`` (``Status: Oral``), ``abstract``, ``keywords`` (keyphrases, else the listing's given keyphrases,
    joined with ``", "``). Empty fields are left out.

Citation keys
    ``<first author's last name><year><first significant title word>``, ASCII lower-case letters and digits only
    (``arakelyan2021complex``); a key already taken gets ``a``, ``b``, ... appended. Entries are in paper-id order,
    so keys are stable across runs.

Values are written brace-enclosed. Text is TeX that a reader's LaTeX will run, so only the text commands of
:data:`TEXT_COMMANDS` are kept (``\emph``, ``\textbf``, accents ``\'`` ``\v`` ``\ss``, Greek letters, ``\ell``,
``\mathcal``, ``\sqrt``, ...); any other control word (``\input``, ``\write18``, ``\immediate``, ``\def``,
``\catcode``, ``\csname``, ``\usepackage``, an unknown macro) is written as text, its backslash as
``\textbackslash{}`` (``\backslash{}`` in math), and ``^^`` (TeX's character-code notation, which would spell a
backslash as ``^^5c``) as ``^{}^`` (:func:`neutralize_tex`); in the link fields (``url``, ``doi``, ``pdf``,
``code``) a backslash or ``^`` is percent-encoded (:func:`url_value`). Bare ``&``, ``%`` and ``#`` are
backslash-escaped for LaTeX (``MPC \& Value``). Braces that are balanced in the text (``{BERT}``, ``\{\pm 1\}``)
are kept as they are; an unmatched ``{``
or ``}`` becomes ``\textbraceleft{}`` / ``\textbraceright{}``, so the file re-parses (with bibtexparser and with
BibTeX itself) to the same entries. Non-ASCII text is written as UTF-8 (biber / BibTeX 0.99d+ read it).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from itertools import count, product
from string import ascii_lowercase

import bibtexparser
from bibtexparser.model import Entry, Field

from ..model import Paper
from ..text import strip_accents
from .links import code_link, doi_of, paper_link, paper_year, second_link

# Venue words/acronyms that make a venue a conference (matched as whole words, case-insensitively for words).
_CONFERENCE_WORDS = re.compile(r"\b(?:conference|conf|workshops?|symposium|proceedings|meeting|congress|"
                               r"colloquium|summit)\b", re.IGNORECASE)
_CONFERENCE_ACRONYMS = frozenset("""
    AAAI AAMAS ACCV ACL AISTATS ALT BMVC CHI CIKM COLING COLM COLT CONLL CORL CVPR EACL ECAI ECCV ECIR ECML EMNLP
    FAT FACCT FOCS ICASSP ICCV ICDE ICDM ICLR ICML ICRA IJCAI IJCNLP INTERSPEECH IROS ISIT KDD L4DC LREC MICCAI
    MIDL MLSYS NAACL NEURIPS NIPS RECSYS RSS SDM SIGGRAPH SIGIR SODA STOC UAI WACV WSDM WWW 3DV
""".split())
# Journals whose name starts like a conference's proceedings.
_JOURNAL_PROCEEDINGS = re.compile(
    r"\bproceedings of the (?:ieee|national academy|royal society|american mathematical)\b", re.IGNORECASE)
_THESIS = re.compile(r"\bthesis\b|\bdissertation\b", re.IGNORECASE)
_JOURNAL_WORDS = re.compile(r"\b(?:journal|transactions|letters|review|magazine|annals)\b", re.IGNORECASE)

# Title words skipped when choosing the key's title word.
_STOPWORDS = frozenset("a an the on of in for to and or with by from at as is are via towards toward".split())
# Name parts that are not the family name.
_NAME_SUFFIXES = frozenset("jr jr. sr sr. ii iii iv".split())

# A brace, with group 1 set when it is backslash-escaped ("\\{") and group 2 the brace itself.
_ANY_BRACE_RE = re.compile(r"(\\)?([{}])")
#: The control words a BibTeX value may keep: text formatting, accents and special letters, text symbols, Greek
#: letters and the math commonly in titles and abstracts. Every other control word is neutralised
#: (:func:`neutralize_tex`): none of these reads, writes or runs anything, nor (re)defines a command.
TEXT_COMMANDS = frozenset("""
    emph textbf textit textsc texttt textrm textsf textsl textup textmd textnormal underline mbox text em bf it sc
    tt rm sf sl up md normalfont textsuperscript textsubscript url
    v c u H k r b d t ss SS o O ae AE oe OE aa AA l L i j dh DH th TH ng NG
    textbackslash textbraceleft textbraceright textasciitilde textasciicircum textunderscore textbar textless
    textgreater textendash textemdash textquoteleft textquoteright textquotedblleft textquotedblright textdegree
    textregistered texttrademark textcopyright textellipsis textperiodcentered textbullet textsection textdagger
    textdaggerdbl textpm texttimes textmu ldots dots cdots vdots ddots S P dag ddag copyright pounds euro LaTeX
    TeX BibTeX LaTeXe
    alpha beta gamma delta epsilon varepsilon zeta eta theta vartheta iota kappa varkappa lambda mu nu xi pi
    varpi rho varrho sigma varsigma tau upsilon phi varphi chi psi omega Gamma Delta Theta Lambda Xi Pi Sigma
    Upsilon Phi Psi Omega varGamma varDelta varTheta varLambda varXi varPi varSigma varUpsilon varPhi varPsi
    varOmega
    mathcal mathbb mathbf mathit mathrm mathsf mathtt mathfrak mathscr mathds mathnormal boldsymbol bm
    operatorname sqrt frac dfrac tfrac binom log ln lg exp sin cos tan sinh cosh tanh arcsin arccos arctan max
    min sup inf lim liminf limsup arg det dim ker Pr deg gcd hom mod bmod pmod infty partial nabla sum prod
    coprod int iint oint bigcup bigcap bigoplus bigotimes bigvee bigwedge cup cap setminus smallsetminus in
    notin ni subset subseteq subsetneq supset supseteq supsetneq emptyset varnothing forall exists nexists neg
    lnot land lor wedge vee to rightarrow leftarrow Rightarrow Leftarrow leftrightarrow Leftrightarrow
    longrightarrow longleftarrow Longrightarrow Longleftarrow longleftrightarrow mapsto longmapsto implies iff
    gets uparrow downarrow updownarrow hookrightarrow rightharpoonup rightleftharpoons times cdot div pm mp
    ast star circ bullet oplus ominus otimes odot oslash leq le geq ge neq ne leqslant geqslant ll gg lesssim
    gtrsim approx sim simeq cong equiv propto perp parallel mid nmid asymp prec succ preceq succeq triangleq
    coloneqq sqsubseteq sqsupseteq ell hbar imath jmath Re Im aleph beth wp prime angle triangle top bot
    vdash dashv models langle rangle lceil rceil lfloor rfloor left right middle big Big bigg Bigg bigl bigr
    Bigl Bigr biggl biggr vert Vert lvert rvert lVert rVert backslash hat widehat tilde widetilde bar overline
    vec dot ddot acute grave check breve mathring overrightarrow overleftarrow underbrace overbrace quad qquad
    colon dagger ddagger not natural sharp flat checkmark diamond square Box blacksquare limits nolimits
    displaystyle textstyle scriptstyle scriptscriptstyle ensuremath dotsc dotsb dotsm dotsi dotso Tilde Hat Bar
    Vec Dot Ddot overset underset stackrel substack over atop choose smash phantom hphantom vphantom cal mit
    mathop mathbin mathrel mathord tiny scriptsize footnotesize small normalsize large Large LARGE huge Huge
    hspace newline
""".split())

# A control sequence as TeX reads it: a backslash and then a run of letters (a control word; "@" counts, as it does
# inside packages, and non-ASCII letters, as XeTeX and LuaTeX read them), or one other character (a control symbol).
_CONTROL_SEQUENCE_RE = re.compile(r"\\((?:[^\W\d_]|@)+)|\\.", re.DOTALL)
# Inline math: its neutralised backslash is \backslash{} (\textbackslash is a text-mode command).
_MATH_RE = re.compile(r"((?<!\\)\$(?:\\.|[^$\\])*\$)", re.DOTALL)

# LaTeX specials that break a compiled bibliography when bare: "&" (alignment tab), "%" (comment), "#" (parameter).
_TEX_SPECIAL_RE = re.compile(r"(?<!\\)([&%#])")


def is_conference(venue: str) -> bool:
    """Whether ``venue`` names a conference or workshop rather than a journal.

    A conference venue has a known acronym like ``ICLR``/``NeurIPS``, or a word such as *Conference*, *Workshop*,
    *Symposium*, *Proceedings*. Journals named like proceedings (``Proceedings of the IEEE``) and theses are not
    conferences, nor is a venue with a journal word (*Journal*, *Transactions*, ...) and no conference word.

    Args:
        venue: a paper's venue.

    Returns:
        True for a conference or workshop; False otherwise, including an empty venue.
    """
    if not venue.strip() or _JOURNAL_PROCEEDINGS.search(venue) or _THESIS.search(venue):
        return False
    if _CONFERENCE_WORDS.search(venue):
        return True
    if _JOURNAL_WORDS.search(venue):
        return False
    tokens = re.findall(r"[A-Za-z0-9]+", venue)
    return any(t.upper() in _CONFERENCE_ACRONYMS for t in tokens)


def balance_braces(text: str) -> str:
    r"""``text`` made safe to write inside ``{...}``.

    Every unmatched brace is replaced by ``\textbraceleft{}`` / ``\textbraceright{}`` and trailing backslashes
    are dropped. Plain braces (``{BERT}``) and backslash-escaped ones (``\{\pm 1\}``) are matched separately:
    bibtexparser ignores escaped braces while BibTeX itself counts them, so both kinds must balance for the value to
    read back the same in either.

    Args:
        text: a field value.

    Returns:
        The value with its braces balanced.
    """
    replace: dict[int, str] = {}
    stacks: dict[bool, list[int]] = {True: [], False: []}
    for m in _ANY_BRACE_RE.finditer(text):
        escaped = m.group(1) is not None
        stack = stacks[escaped]
        if m.group(2) == "{":
            stack.append(m.start())
        elif stack:
            stack.pop()
        else:
            replace[m.start()] = m.group(0)
    for escaped, stack in stacks.items():
        for i in stack:
            replace[i] = "\\{" if escaped else "{"
    if replace:
        out, pos = [], 0
        for i in sorted(replace):
            out.append(text[pos:i])
            out.append("\\textbraceleft{}" if replace[i].endswith("{") else "\\textbraceright{}")
            pos = i + len(replace[i])
        out.append(text[pos:])
        text = "".join(out)
    # Trailing backslashes (and the spaces around them) would escape the value's closing brace.
    while text.rstrip().endswith("\\"):
        text = text.rstrip().rstrip("\\").rstrip()
    return text


def neutralize_tex(text: str, math_only: bool = False) -> str:
    r"""``text`` with every control word outside :data:`TEXT_COMMANDS` made printed text that TeX cannot run.

    TeX reads a control word as a backslash and a run of letters; one not in :data:`TEXT_COMMANDS` (``\input``,
    ``\write``, ``\immediate``, ``\openout``, ``\catcode``, ``\def``, ``\csname``, ``\usepackage``, ...)
    gets its backslash written as ``\textbackslash{}`` (``\backslash{}`` inside ``$...$``), so the reader's LaTeX
    prints ``\input{/etc/passwd}`` instead of reading the file. Control symbols (``\'``, ``\"``, ``\&``,
    ``\{``, ``\\``) are kept: none of them acts on files or definitions. ``^^`` becomes ``^{}^``, because TeX
    turns ``^^5c`` into a backslash before it reads commands.

    Args:
        text: a field value, as TeX source.
        math_only: for a text that is plain but for ``$...$`` math (CSL-JSON's, whose ``$...$`` pandoc reads as TeX
            and writes into LaTeX as it is): a text without ``$`` is returned as it is; one with ``$`` is neutralised
            whole, since a reader may find math where this function does not.

    Returns:
        The value with disallowed control words neutralised (``"\emph{On} \input{x}"`` ->
        ``"\emph{On} \textbackslash{}input{x}"``); text without them is returned unchanged.
    """
    if "\\" not in text and "^^" not in text:
        return text
    if math_only and "$" not in text:
        return text
    text = re.sub(r"\^(?=\^)", "^{}", text)

    def part(segment: str, math: bool) -> str:
        slash = "\\backslash{}" if math else "\\textbackslash{}"
        return _CONTROL_SEQUENCE_RE.sub(
            lambda m: m.group(0) if m.group(1) is None or m.group(1) in TEXT_COMMANDS else slash + m.group(1),
            segment)

    return "".join(part(p, p.startswith("$") and p.endswith("$") and len(p) > 1) for p in _MATH_RE.split(text))


def url_value(url: str) -> str:
    r"""A link field's value (``url``, ``doi``, ``pdf``, ``code``): one that TeX cannot read as a command.

    Args:
        url: an http(s) URL or a bare DOI.

    Returns:
        ``url`` with ``\`` and ``^`` percent-encoded (``%5C``, ``%5E``: neither is a valid URL character, and a style
        that typesets the link outside ``\url`` would read them as a command or as ``^^5c``, a backslash) and its
        braces balanced (:func:`balance_braces`).
    """
    return balance_braces(url.replace("\\", "%5C").replace("^", "%5E"))


def tex_escape(text: str) -> str:
    r"""``text`` with bare ``&``, ``%`` and ``#`` backslash-escaped, as LaTeX needs them in a bibliography.

    Outside ``$...$`` math, a ``~`` is written ``\textasciitilde{}`` and ``--`` as ``-{}-`` (bare, LaTeX reads them as
    a non-breaking space and an en dash, so "by ~1 dB" and "NMF -- the" would not read back as written).

    Args:
        text: a field value.

    Returns:
        The value with bare specials escaped (``"MPC & Value"`` -> ``"MPC \& Value"``); already escaped ones are
        left alone.
    """
    text = _TEX_SPECIAL_RE.sub(r"\\\1", text)
    if "~" not in text and "--" not in text:
        return text
    parts = re.split(r"(\$[^$]*\$)", text)
    return "".join(p if p.startswith("$") and p.endswith("$") and len(p) > 1
                   else re.sub(r"-(?=-)", "-{}", re.sub(r"(?<!\\)~", r"\\textasciitilde{}", p)) for p in parts)


def _clean(text: str) -> str:
    """One text value, cleaned for BibTeX.

    Whitespace folded (paragraph breaks kept as a blank line), commands that could act on the reader's machine
    neutralised (:func:`neutralize_tex`), LaTeX specials escaped (:func:`tex_escape`), braces balanced
    (:func:`balance_braces`).
    """
    paras = [" ".join(p.split()) for p in re.split(r"\n\s*\n", text or "")]
    return balance_braces(tex_escape(neutralize_tex("\n\n".join(p for p in paras if p))))


def _ascii_word(text: str) -> str:
    return re.sub(r"[^a-z0-9]", "", strip_accents(text).lower())


def _last_name(author: str) -> str:
    author = " ".join(author.split())
    if "," in author:  # "Last, First"
        return _ascii_word(author.split(",")[0])
    parts = [p for p in author.split(" ") if p.lower() not in _NAME_SUFFIXES]
    for part in reversed(parts):
        word = _ascii_word(part)
        if word:
            return word
    return ""


def citation_key(p: Paper) -> str:
    """The base citation key of ``p`` (before de-duplication).

    Args:
        p: the paper.

    Returns:
        The first author's last name + year + first significant title word, ASCII lower-case letters and digits,
        e.g. ``"frankle2019lottery"``; ``"anon"`` stands in for a missing author, ``"paper"`` for a missing word.
    """
    last = _last_name(p.authors[0]) if p.authors else ""
    year = paper_year(p)
    words = [_ascii_word(w) for w in re.findall(r"[A-Za-z0-9]+", strip_accents(p.title or ""))]
    words = [w for w in words if w]
    word = next((w for w in words if w not in _STOPWORDS), words[0] if words else "paper")
    return f"{last or 'anon'}{year or ''}{word}"


def _suffixes() -> Iterable[str]:
    for n in count(1):
        for letters in product(ascii_lowercase, repeat=n):
            yield "".join(letters)


def unique_keys(papers: Iterable[Paper]) -> list[str]:
    """Citation keys for ``papers``, unique within them.

    Each is :func:`citation_key`, with ``a``, ``b``, ... (then ``aa``, ...) appended to a key that is already taken.
    Suffixes are handed out in paper-id order, so a paper gets the same key whatever order the papers come in (the
    BibTeX and CSL-JSON exports of one list agree).

    Args:
        papers: the papers.

    Returns:
        One key per paper, in the papers' order.
    """
    papers = list(papers)
    used: set[str] = set()
    keys: list[str] = [""] * len(papers)
    for i in sorted(range(len(papers)), key=lambda i: (papers[i].id, i)):
        base = key = citation_key(papers[i])
        if key in used:
            key = next(base + s for s in _suffixes() if base + s not in used)
        used.add(key)
        keys[i] = key
    return keys


#: lower-case words BibTeX rightly reads as a name particle (its "von" part: ``Aaron van den Oord``)
NAME_PARTICLES = frozenset("van von der den de del della da di du le la les des dos das ter ten zu y".split())


def lowercase_given_name(name: str) -> bool:
    """Whether a "First Last" name has a lower-case word that is no particle (``suchismita padhy``).

    BibTeX's name grammar (and bibtexparser's) would read that word as a "von" part and leave the given name
    empty; such names are written "Last, First".

    Args:
        name: an author name as listed.

    Returns:
        True when a word before the last is lower-case and neither in :data:`NAME_PARTICLES` nor a ``d'`` prefix,
        and the name has no comma.
    """
    words = name.split()
    return "," not in name and len(words) > 1 and any(
        w[:1].islower() and w.lower() not in NAME_PARTICLES and not re.match(r"d['’]", w) for w in words[:-1])


def _author_field(authors: list[str]) -> str:
    names = []
    for a in authors:
        a = " ".join(a.split())
        if not a:
            continue
        if lowercase_given_name(a):  # written "Last, First" so the lower-case given name stays a given name
            words = a.split(" ")
            a = f"{words[-1]}, {' '.join(words[:-1])}"
        # A name containing the word "and" (an organisation) would be split by BibTeX: protect it with braces.
        names.append(f"{{{a}}}" if re.search(r"\band\b", a, re.IGNORECASE) else a)
    return " and ".join(names)


def main_url(p: Paper) -> str:
    """A paper's one URL to cite: its paper link, else its arXiv page, else its DOI, else its code link.

    Args:
        p: the paper.

    Returns:
        The URL, or ``""`` when the paper has no link at all.
    """
    arxiv = str(p.extra.get("arxiv_id") or "").strip()
    doi = doi_of(p)
    return (paper_link(p) or (f"https://arxiv.org/abs/{arxiv}" if arxiv else "")
            or (f"https://doi.org/{doi}" if doi else "") or code_link(p))


def paper_entry(p: Paper, key: str) -> Entry:
    """The bibtexparser :class:`Entry` for one paper (see the module docstring for entry types and fields).

    Args:
        p: the paper.
        key: its citation key (see :func:`unique_keys`).

    Returns:
        The entry, values unenclosed (the writer adds the braces) and empty fields left out.
    """
    venue = " ".join((p.venue or "").split())
    if not venue:
        entry_type, venue_field = "misc", ""
    elif _THESIS.search(venue):
        entry_type, venue_field = "misc", "howpublished"
    elif is_conference(venue):
        entry_type, venue_field = "inproceedings", "booktitle"
    else:
        entry_type, venue_field = "article", "journal"
    year = paper_year(p)
    values = [
        ("title", _clean(p.title)),
        ("author", _clean(_author_field(p.authors))),
        ("year", str(year) if year else ""),
        (venue_field, _clean(venue) if venue_field else ""),
        ("url", url_value(main_url(p))),
        ("doi", url_value(doi_of(p))),
        ("pdf", url_value(second_link(p))),
        ("code", url_value(code_link(p)) if paper_link(p) else ""),
        ("note", _clean(f"Status: {p.status}") if p.status else ""),
        ("abstract", _clean(p.abstract)),
        ("keywords", _clean(", ".join(k for k in (p.keyphrases or p.given_keyphrases) if k.strip()))),
    ]
    return Entry(entry_type, key, [Field(k, v) for k, v in values if k and v])


def write_entries(papers: Iterable[Paper]) -> str:
    """The BibTeX text of ``papers``: one entry each, in id order, keys from :func:`unique_keys`.

    Args:
        papers: the papers.

    Returns:
        The text ending with a newline (``""`` for no papers).

    Raises:
        ValueError: (from bibtexparser) only if two entries end up with the same key, which :func:`unique_keys`
            prevents.
    """
    ordered = sorted(papers, key=lambda p: p.id)
    library = bibtexparser.Library()
    library.add([paper_entry(p, key) for p, key in zip(ordered, unique_keys(ordered), strict=True)])
    fmt = bibtexparser.BibtexFormat()
    fmt.indent = "  "
    fmt.block_separator = "\n"
    # the library is built here and thrown away: let the writer modify it in place instead of deep-copying it
    stack = bibtexparser.middlewares.default_unparse_stack(allow_inplace_modification=True)
    text = bibtexparser.write_string(library, bibtex_format=fmt, unparse_stack=stack)
    return text if text.endswith("\n") or not text else text + "\n"


def bibtex_entry(p: Paper) -> str:
    """One paper's BibTeX entry, as the ``bibtex`` export writes it (for a "Copy BibTeX" button).

    Args:
        p: the paper.

    Returns:
        The entry text (key :func:`citation_key`), ending with a newline.
    """
    return write_entries([p])
