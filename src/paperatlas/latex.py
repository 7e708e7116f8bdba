r"""Unfolding Markdown escapes and light LaTeX markup in scraped paper listings.

Listings converted from HTML to Markdown carry two layers of markup in titles and abstracts:

* Markdown backslash escapes, sometimes applied twice (``\(coRNN\)``, ``ATLA\\_robust``, ``\\$1/n\\$``);
* LaTeX written by the authors: inline math (``$\ell_p$``), text-mode commands (``\emph{..}``, ``\url{..}``,
  ``\footnote{..}``), accents (``Poincar\'e``), quotes (````like this''``), ties (``e.g.~BERT``).

The helpers here turn such text into a readable form while keeping math spans ``$...$`` as LaTeX (so a renderer
such as KaTeX can still typeset them). Public API:

* :func:`unescape_markdown` -- undo Markdown backslash escapes only (safe for any Markdown text);
* :func:`normalize_math_delimiters` -- collapse escaped/doubled dollar signs into plain ``$``;
* :func:`split_math` -- cut text into ``(segment, is_math)`` pieces;
* :func:`unfold_links` -- Markdown links and ``<autolinks>`` to plain readable text;
* :func:`unfold_latex_text` -- text-mode LaTeX (commands, accents, quotes, ties) to plain text;
* :func:`clean_markup` -- the whole pipeline for one title or abstract paragraph (what readers call);
* :func:`render_latex` -- inline math as plain Unicode text (``$\ell_p$`` → ``ℓₚ``-style), for one-line TL;DRs.
* :func:`title_text` -- a title's inline math spans only, as plain text (``$i$-Mix`` → ``i-Mix``), for pages.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable

__all__ = [
    "MARKDOWN_ESCAPABLE",
    "clean_markup",
    "normalize_math_delimiters",
    "render_latex",
    "split_math",
    "title_text",
    "unescape_markdown",
    "unfold_latex_text",
    "unfold_links",
]

#: Characters whose backslash escape is undone by :func:`unescape_markdown`. Deliberately *not* all ASCII
#: punctuation (as CommonMark allows): ``\\{ \\} \\| \\% \\& \\' \\" \\, \\; \\! \\~ \\^ \\. \\-`` are meaningful
#: LaTeX (set braces, norms, percent, accents, spacing) and are left for :func:`unfold_latex_text` / math.
MARKDOWN_ESCAPABLE = "\\`*_[]()#+<>$"

# A run of one or more backslashes before an escapable character: the whole run goes (handles escapes that a
# converter applied twice, ``\\_`` -> ``_``).
_MD_ESCAPE_RE = re.compile(r"\\+([" + re.escape(MARKDOWN_ESCAPABLE.replace("\\", "")) + r"])")
# Two or more backslashes before a letter: a Markdown-escaped LaTeX command (``\\epsilon`` -> ``\epsilon``).
_ESCAPED_COMMAND_RE = re.compile(r"\\{2,}(?=[A-Za-z])")


def unescape_markdown(text: str) -> str:
    r"""Undo Markdown backslash escapes in ``text``.

    A run of backslashes before one of :data:`MARKDOWN_ESCAPABLE` collapses to that character
    (``\(coRNN\)`` -> ``(coRNN)``, ``ATLA\\_robust`` -> ``ATLA_robust``, ``\*`` -> ``*``, ``\$`` -> ``$``);
    two or more backslashes before a letter become one (``\\epsilon`` -> ``\epsilon``: an escaped LaTeX
    command). A single backslash before a letter or other punctuation (``\ell``, ``\{``, ``\%``) is LaTeX
    and kept. Never raises.

    Args:
        text: Any Markdown text.

    Returns:
        A new string with the escapes undone.
    """
    text = _MD_ESCAPE_RE.sub(r"\1", text)
    return _ESCAPED_COMMAND_RE.sub(r"\\", text)


# Any mix of (optionally backslash-escaped) dollar signs, e.g. ``\$``, ``\\$``, ``$\$``, ``\$$``, ``$$``.
_DOLLAR_RUN_RE = re.compile(r"(?:\\*\$)+")
# A converter wrapped a whole word holding math in another pair of dollars, escaping the inner ones:
# ``$\$k\$NN-MT$`` stands for ``$k$NN-MT``. Groups: the math (not ending in a backslash) and the word's rest.
_WRAPPED_WORD_RE = re.compile(r"\$\\+\$(?P<math>[^$]*[^$\\])\\+\$(?P<rest>[^$\s\\]+)\$(?!\$)")


def normalize_math_delimiters(text: str) -> str:
    r"""Collapse every run of escaped and/or doubled dollar signs into one ``$``.

    Scraped listings escape inline-math delimiters inconsistently: ``\$\ell\_p\$``, ``$\$L_0\$$``,
    ``\\$i\\\$``. In such listings a dollar sign always delimits math, so ``$\$L_0\$$`` -> ``$L_0$``.
    A word wrapped whole in an extra pair, ``$\$k\$NN-MT$``, becomes ``$k$NN-MT``. (Display math ``$$..$$``
    is flattened to inline math too.) Never raises.

    Args:
        text: A title or abstract from a scraped listing.

    Returns:
        The text with every run of dollar signs as one ``$``.
    """
    text = _WRAPPED_WORD_RE.sub(r"$\g<math>$\g<rest>", text)
    return _DOLLAR_RUN_RE.sub("$", text)


def split_math(text: str) -> list[tuple[str, bool]]:
    """Cut ``text`` into ``(segment, is_math)`` pieces at unescaped ``$`` signs.

    Math segments exclude their ``$`` delimiters. Dollars pair up left to right; an unpaired last ``$`` is
    kept as literal text. ``"a $x$ b"`` -> ``[("a ", False), ("x", True), (" b", False)]``.
    Concatenating text segments and ``"$" + math + "$"`` restores the input.

    Args:
        text: Text with inline math (delimiters already normalised, see :func:`normalize_math_delimiters`).

    Returns:
        The ``(segment, is_math)`` pieces in order; empty text segments are left out.
    """
    positions = [m.start() for m in re.finditer(r"(?<!\\)\$", text)]
    if len(positions) % 2:
        positions.pop()
    out: list[tuple[str, bool]] = []
    pos = 0
    for start, end in zip(positions[::2], positions[1::2], strict=True):
        if start > pos:
            out.append((text[pos:start], False))
        out.append((text[start + 1:end], True))
        pos = end + 1
    if pos < len(text):
        out.append((text[pos:], False))
    return out


def _join_math(pieces: list[tuple[str, bool]]) -> str:
    return "".join(f"${s}$" if is_math else s for s, is_math in pieces)


# --- links -----------------------------------------------------------------------------------------------

# A Markdown link ``[text](target)``: brackets not backslash-escaped; the text may hold escapes but no
# unescaped brackets; the target may be wrapped in <...> and may hold one level of balanced parentheses.
_MD_LINK_RE = re.compile(
    r"(?<!\\)\[(?P<text>(?:\\.|[^\[\]\\])*)\]"
    r"\(\s*<?(?P<url>[^()\s<>]*(?:\([^()\s]*\)[^()\s<>]*)*)>?\s*\)"
)
# A Markdown autolink ``<https://...>``.
_AUTOLINK_RE = re.compile(r"<(?P<url>https?://[^\s<>]+)>")
# A bare http(s) URL: ends at whitespace, quotes, braces, brackets or backticks; may hold balanced (...).
_BARE_URL_RE = re.compile(r"https?://[^\s<>\"'`{}\[\]()]+(?:\([^\s()]*\)[^\s<>\"'`{}\[\]()]*)*")
_URL_TRAILING = ".,;:!?*"


def _looks_like_url(s: str) -> bool:
    return re.fullmatch(r"(?:https?://|www\.)\S+", s) is not None


def unfold_links(text: str, keep_url: Callable[[str], str] | None = None) -> str:
    r"""Replace Markdown links and autolinks in ``text`` by readable plain text.

    * ``<https://x.org/a>`` -> ``https://x.org/a``;
    * ``[https://x.org/a\\_b](https://x.org/a_b)`` (the text is itself a URL) -> the target URL;
    * ``[text](#)`` / ``[text]()`` (no real target) -> ``text``;
    * ``[text](url)`` where the text already shows the URL -> ``text``; otherwise ``text (url)``.

    The link text is left otherwise untouched (escapes are undone later by the caller). ``keep_url`` is
    applied to every emitted target URL (the pipeline uses it to protect URLs from later rewriting); by
    default the URL is emitted as is. Never raises.

    Args:
        text: Markdown text.
        keep_url: Maps each emitted target URL to the text emitted for it; identity when ``None``.

    Returns:
        The text with its links unfolded.
    """
    keep = keep_url or (lambda u: u)

    def link(m: re.Match[str]) -> str:
        raw, url = m.group("text"), m.group("url").strip()
        shown = unescape_markdown(raw).strip()
        if not url or url.startswith("#"):
            return raw
        if _looks_like_url(shown):
            return keep(url)
        if url in shown:
            return raw
        return f"{raw} ({keep(url)})"

    text = _MD_LINK_RE.sub(link, text)
    return _AUTOLINK_RE.sub(lambda m: keep(m.group("url")), text)


# --- text-mode LaTeX ---------------------------------------------------------------------------------------

# Commands whose braced argument is simply shown: ``\emph{x}`` -> ``x``. Innermost first (no nested braces).
_UNWRAP_RE = re.compile(
    r"\\(?:url|emph|textit|textbf|texttt|textsc|textrm|textsf|textnormal|text|mbox|underline|mathrm)"
    r"\{([^{}]*)\}")
# Old-style font switches ``{\em x}``/``{\bf x}``; the backslash is sometimes lost (``{it any}``) -> ``x``.
_FONT_SWITCH_RE = re.compile(r"\{\\?(?:em|it|bf|sc|tt|sl|rm|sf)\s+([^{}]*)\}")
# Footnotes (the backslash is sometimes lost in scraping: ``AdaGCN~footnote{...}``) -> `` (...)``.
_FOOTNOTE_RE = re.compile(r"\s*~?\\?footnote\{([^{}]*)\}")
# Citations, backslash optional: ``\citep{osband2014near}`` -> ``[osband2014near]``.
_CITE_RE = re.compile(r"\\?\b(?:cite|citep|citet|citealp|citeauthor)\{([^{}]*)\}")
# Named symbols shown as words.
_NAMED = {r"\LaTeX": "LaTeX", r"\TeX": "TeX", r"\ldots": "...", r"\dots": "...", r"\textasciitilde": "~"}
_NAMED_RE = re.compile("|".join(re.escape(k) for k in _NAMED) + r"(?![A-Za-z])(?:\{\})?")
# Accents: ``\'e``, ``\'{e}``, ``\"{o}``, ``\^o``, ``\~n``, ``\=a``, ``\.z`` and lettered ``\c{c}``, ``\v{s}``...
_ACCENTS = {"'": "\u0301", '"': "\u0308", "^": "\u0302", "~": "\u0303", "=": "\u0304", ".": "\u0307",
            "u": "\u0306", "v": "\u030c", "H": "\u030b", "c": "\u0327", "k": "\u0328", "r": "\u030a"}
_SYMBOL_ACCENT_RE = re.compile(r"""\\(['"^~=.])(?:\{([A-Za-z])\}|([A-Za-z]))""")
_LETTER_ACCENT_RE = re.compile(r"\\([uvHckr])\{([A-Za-z])\}")
# Escaped specials that mean the bare character in running text.
_TEXT_SPECIALS_RE = re.compile(r"\\([%&#{}|])")
# A LaTeX tie between a word (or e.g./vs.) and the next word, reference or bracket: ``e.g.~BERT``.
_TIE_RE = re.compile(r"(?<=[\w.)\]])~(?=[\w\[(\\])")
# LaTeX double quotes ``...'' -> "..." (single ``'' or `` alone too).
_DQUOTE_OPEN_RE = re.compile(r"``")
_DQUOTE_CLOSE_RE = re.compile(r"''")
# Markdown code span without apostrophes inside: `Noise2Void` -> Noise2Void.
_CODE_SPAN_RE = re.compile(r"`([^`'\s](?:[^`']*[^`'\s])?)`")
# LaTeX single quotes `like this' -> 'like this'.
_SQUOTE_RE = re.compile(r"`([^`'\n]+)'")
# Markdown emphasis *x* / **x** (not inside words, not around spaces).
_EMPHASIS_RE = re.compile(r"(?<![\w*\\])(\*{1,2})(?=\S)([^*\n]+?)(?<=\S)\1(?![\w*])")
# HTML super/subscripts and line breaks.
_SUP_RE = re.compile(r"<sup>(.*?)</sup>", re.IGNORECASE)
_SUB_RE = re.compile(r"<sub>(.*?)</sub>", re.IGNORECASE)
_BR_RE = re.compile(r"<br\s*/?>", re.IGNORECASE)


def _accent(base: str, mark: str) -> str:
    return unicodedata.normalize("NFC", base + _ACCENTS[mark])


def _script(prefix: str, body: str) -> str:
    return prefix + (body if len(body) == 1 else "{" + body + "}")


def _repeat_sub(pattern: re.Pattern[str], repl, text: str) -> str:
    """Apply ``pattern.sub`` until nothing changes (unwraps nested commands innermost-first)."""
    while True:
        new = pattern.sub(repl, text)
        if new == text:
            return new
        text = new


def unfold_latex_text(text: str) -> str:
    r"""Rewrite text-mode LaTeX and leftover Markdown/HTML inline markup in ``text`` as plain text.

    Meant for text *outside* math (see :func:`split_math`); assumes Markdown escapes are already undone.
    ``\emph{x}``/``\textbf{x}``/``\texttt{x}``/``\url{x}``/``{\em x}`` -> ``x``; ``\footnote{x}`` -> `` (x)``;
    ``\cite{k}`` -> ``[k]``; ``\LaTeX`` -> ``LaTeX``; ``Poincar\'e`` -> ``Poincaré``;
    ``\%``/``\&``/``\#`` -> the character; ``e.g.~BERT`` -> ``e.g. BERT``; ````x''`` -> ``"x"``;
    ```x'`` -> ``'x'``; ```code``` and ``*emphasis*`` lose their markers; ``1024<sup>2</sup>`` -> ``1024^2``.
    Unknown commands are left as they are. Never raises.

    Args:
        text: Text outside math, Markdown escapes undone.

    Returns:
        The plain text.
    """
    text = _repeat_sub(_UNWRAP_RE, r"\1", text)
    text = _FONT_SWITCH_RE.sub(r"\1", text)
    text = _FOOTNOTE_RE.sub(r" (\1)", text)
    text = _CITE_RE.sub(r"[\1]", text)
    text = _NAMED_RE.sub(lambda m: _NAMED[m.group(0).removesuffix("{}")], text)
    text = _SYMBOL_ACCENT_RE.sub(lambda m: _accent(m.group(2) or m.group(3), m.group(1)), text)
    text = _LETTER_ACCENT_RE.sub(lambda m: _accent(m.group(2), m.group(1)), text)
    text = _TEXT_SPECIALS_RE.sub(r"\1", text)
    text = _TIE_RE.sub(" ", text)
    text = _DQUOTE_OPEN_RE.sub('"', text)
    text = _DQUOTE_CLOSE_RE.sub('"', text)
    text = _CODE_SPAN_RE.sub(r"\1", text)
    text = _SQUOTE_RE.sub(r"'\1'", text)
    text = _EMPHASIS_RE.sub(r"\2", text)
    text = _SUP_RE.sub(lambda m: _script("^", m.group(1)), text)
    text = _SUB_RE.sub(lambda m: _script("_", m.group(1)), text)
    return _BR_RE.sub(" ", text)


# --- the pipeline ------------------------------------------------------------------------------------------

# Placeholders for protected URLs: private-use characters no markup rule touches.
_PH_OPEN, _PH_CLOSE = "\ue000", "\ue001"
_PLACEHOLDER_RE = re.compile(_PH_OPEN + r"(\d+)" + _PH_CLOSE)
# A math span holding nothing but a (protected) URL, possibly inside \text{...}/\texttt{...}.
_MATH_URL_RE = re.compile(r"\s*(?:\\(?:text|texttt|mathrm|url)\{)*\s*(" + _PLACEHOLDER_RE.pattern + r")\s*\}*\s*")
# Inside math only \url{...} is unwrapped (so that a URL is never typeset as math).
_MATH_URL_CMD_RE = re.compile(r"\\url\{([^{}]*)\}")
# Whitespace a converter left between closing math and a hyphen, "'s" or closing punctuation.
_AFTER_MATH_SPACE_RE = re.compile(r"^\s+(?=-\w|'s\b|[,.;:!?)\]])")
# Whitespace between an opening bracket and the math that follows it.
_BEFORE_MATH_SPACE_RE = re.compile(r"(?<=[(\[])\s+$")


def clean_markup(text: str, *, keep_newlines: bool = False) -> str:
    r"""Turn one title or abstract paragraph from a scraped Markdown listing into readable text.

    Steps: escaped/doubled dollars -> ``$`` (:func:`normalize_math_delimiters`); Markdown links and autolinks
    -> plain text (:func:`unfold_links`); Markdown escapes undone (:func:`unescape_markdown`); text-mode LaTeX
    outside math unfolded (:func:`unfold_latex_text`); a math span holding only a URL
    (``$\text{\url{..}}$``) becomes the URL; whitespace collapsed to single spaces, and the padding a converter
    puts around math removed (``$\ell_p$ -Norm`` -> ``$\ell_p$-Norm``; ``( $x$ ) ,`` -> ``($x$),``; ``$g$ 's``).
    URLs are protected during rewriting, so ``_``, ``~`` or ``*`` inside them survive. Math content keeps its
    LaTeX (``$\|x\|_2$``, ``$90\%$``). With ``keep_newlines`` blank-line paragraph breaks are kept as
    ``"\n\n"``; otherwise the result is a single line. Never raises.

    Example: ``Under \$\ell\_p\$ -Norm \(coRNN\)`` -> ``Under $\ell_p$-Norm (coRNN)``.

    Args:
        text: One title or abstract paragraph (or a whole abstract, with ``keep_newlines``).
        keep_newlines: Keep blank-line paragraph breaks (each paragraph cleaned on its own, empty ones dropped).

    Returns:
        The readable text.
    """
    if keep_newlines:
        paras = [p for p in re.split(r"\n\s*\n", text) if p.strip()]
        return "\n\n".join(clean_markup(p) for p in paras)

    urls: list[str] = []

    def protect(url: str) -> str:
        urls.append(url)
        return f"{_PH_OPEN}{len(urls) - 1}{_PH_CLOSE}"

    def protect_bare(m: re.Match[str]) -> str:
        url = m.group(0)
        core = url.rstrip(_URL_TRAILING)
        return protect(core) + url[len(core):]

    text = text.replace(_PH_OPEN, "").replace(_PH_CLOSE, "")
    text = normalize_math_delimiters(text)
    text = unfold_links(text, keep_url=protect)
    text = unescape_markdown(text)
    text = _BARE_URL_RE.sub(protect_bare, text)

    pieces: list[tuple[str, bool]] = []
    for seg, is_math in split_math(text):
        if is_math:
            seg = _repeat_sub(_MATH_URL_CMD_RE, r"\1", seg)
            m = _MATH_URL_RE.fullmatch(seg)
            if m:  # $\text{\url{https://...}}$ -> the bare URL, as text
                pieces.append((m.group(1), False))
                continue
            pieces.append((re.sub(r"\s+", " ", seg), True))
        else:
            pieces.append((unfold_latex_text(seg), False))
    # Undo the padding converters put around math: "( $x$ )" -> "($x$)", "$x$ -optimal" -> "$x$-optimal",
    # "$g$ 's" -> "$g$'s", "$x$ , where" -> "$x$, where".
    for i, (seg, is_math) in enumerate(pieces):
        if is_math:
            continue
        if i > 0 and pieces[i - 1][1]:
            seg = _AFTER_MATH_SPACE_RE.sub("", seg)
        if i + 1 < len(pieces) and pieces[i + 1][1]:
            seg = _BEFORE_MATH_SPACE_RE.sub("", seg)
        pieces[i] = (seg, False)
    text = " ".join(_join_math(pieces).split())
    return _PLACEHOLDER_RE.sub(lambda m: urls[int(m.group(1))], text)


# ------------------------------------------------------------- inline math as plain Unicode text (TL;DRs)

_SYMBOLS = {
    "alpha": "α", "beta": "β", "gamma": "γ", "delta": "δ", "epsilon": "ε", "varepsilon": "ε", "zeta": "ζ",
    "eta": "η", "theta": "θ", "vartheta": "θ", "iota": "ι", "kappa": "κ", "lambda": "λ", "mu": "μ", "nu": "ν",
    "xi": "ξ", "pi": "π", "rho": "ρ", "sigma": "σ", "tau": "τ", "upsilon": "υ", "phi": "φ", "varphi": "φ",
    "chi": "χ", "psi": "ψ", "omega": "ω", "Gamma": "Γ", "Delta": "Δ", "Theta": "Θ", "Lambda": "Λ", "Xi": "Ξ",
    "Pi": "Π", "Sigma": "Σ", "Phi": "Φ", "Psi": "Ψ", "Omega": "Ω", "ell": "ℓ", "infty": "∞", "le": "≤",
    "leq": "≤", "ge": "≥", "geq": "≥", "neq": "≠", "ne": "≠", "approx": "≈", "sim": "~", "propto": "∝",
    "times": "×", "cdot": "·", "cdots": "…", "ldots": "…", "dots": "…", "pm": "±", "in": "∈", "notin": "∉",
    "subset": "⊂", "subseteq": "⊆", "cup": "∪", "cap": "∩", "to": "→", "rightarrow": "→", "leftarrow": "←",
    "mapsto": "↦", "Rightarrow": "⇒", "forall": "∀", "exists": "∃", "partial": "∂", "nabla": "∇", "sum": "∑",
    "prod": "∏", "int": "∫", "sqrt": "√", "log": "log", "exp": "exp", "max": "max", "min": "min", "sup": "sup",
    "inf": "inf", "lim": "lim", "det": "det", "top": "⊤", "star": "*", "ast": "*", "circ": "∘", "oplus": "⊕",
    "otimes": "⊗", "mid": "|", "vert": "|", "Vert": "‖", "|": "‖", "lVert": "‖", "rVert": "‖", "langle": "⟨",
    "rangle": "⟩", "lfloor": "⌊", "rfloor": "⌋", "lceil": "⌈", "rceil": "⌉", "%": "%", "{": "{", "}": "}",
    "emptyset": "∅", "ll": "≪", "gg": "≫", "equiv": "≡", "neg": "¬", "wedge": "∧", "vee": "∨",
    "mathbb{R}": "ℝ", "mathbb{N}": "ℕ", "mathbb{Z}": "ℤ", "mathbb{E}": "𝔼", "mathbb{P}": "ℙ",
}
_SUP = str.maketrans("0123456789+-=()nik", "⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻⁼⁽⁾ⁿⁱᵏ")
_CMD_RE = re.compile(r"\\(mathbb\{[A-Z]\}|[A-Za-z]+|[|%{}])")
# commands whose braced argument is kept as plain text
_WRAP_RE = re.compile(r"\\(?:mathcal|mathbf|mathrm|mathit|mathsf|mathtt|boldsymbol|bm|text|textbf|textit|emph|"
                      r"operatorname|hat|bar|tilde|widetilde|widehat|vec|overline|underline|dot)\s*\{([^{}]*)\}")
_FRAC_RE = re.compile(r"\\[dt]?frac\s*\{([^{}]*)\}\s*\{([^{}]*)\}")
_SIZE_RE = re.compile(r"\\(?:left|right|big|Big|bigg|Bigg)(?![A-Za-z])|\\[,;:! ]")


def _math_to_text(m: str) -> str:
    """A LaTeX math span as readable text: Greek and operators to Unicode, ``^2`` to ``²``, braces dropped."""
    m = _SIZE_RE.sub("", m)
    for _ in range(3):
        m = _WRAP_RE.sub(r"\1", m)
        m = _FRAC_RE.sub(r"\1/\2", m)

    def sup(mt: re.Match[str]) -> str:
        body = mt.group(1) or mt.group(2)
        t = body.translate(_SUP)
        return t if all(c not in t for c in body if c.isalnum()) or t != body else "^" + body

    m = re.sub(r"\^\{([0-9+\-=()nik]+)\}|\^([0-9nik])", sup, m)
    m = _CMD_RE.sub(lambda mt: _SYMBOLS.get(mt.group(1), mt.group(1).removeprefix("mathbb{")[:1]
                                            if mt.group(1).startswith("mathbb") else mt.group(1)), m)
    m = re.sub(r"_\{([^{}]*)\}", r"\1", m)
    m = m.replace("_", "").replace("{", "").replace("}", "").replace("\\", "")
    return " ".join(m.split())


def render_latex(text: str) -> str:
    """Inline math ``$...$`` and stray text-mode LaTeX commands rendered as readable plain text.

    Greek letters and operators become Unicode, ``^2`` becomes ``²``, braces are dropped; ``$$...$$`` is
    treated like ``$...$``; LaTeX double quotes become ``"``.

    Args:
        text: One line of text, e.g. a TL;DR.

    Returns:
        The text without LaTeX markup.
    """
    text = re.sub(r"\$\$?([^$]+)\$?\$", lambda mt: _math_to_text(mt.group(1)), text)
    text = re.sub(r"\\(?:emph|textbf|textit|texttt|text|textsc)\{([^{}]*)\}", r"\1", text)
    text = re.sub(r"\{\\(?:em|it|bf|sc|tt)\s+([^{}]*)\}", r"\1", text)
    text = text.replace("``", '"').replace("''", '"')
    if "\\" in text:
        text = _math_to_text(text) if re.search(r"\\[A-Za-z]", text) else text.replace("\\", "")
    return text


def title_text(title: str) -> str:
    r"""A title with its inline math ``$...$`` written as plain text, for pages that show it as text.

    Only the math spans change (as :func:`render_latex` renders them: ``$i$-Mix`` → ``i-Mix``,
    ``$\ell_p$-Norm`` → ``ℓp-Norm``, ``$1/n$`` → ``1/n``); text outside them is kept as it is, and a lone ``$``
    (``$5 budget``) is not math. The stored title keeps its LaTeX (search, export and BibTeX read it).

    Args:
        title: One paper title as stored (math spans kept as LaTeX by :func:`clean_markup`).

    Returns:
        The title without ``$`` math delimiters; unchanged when it has no math span.
    """
    if "$" not in title:
        return title
    return "".join(_math_to_text(s) if is_math else s for s, is_math in split_math(title))
