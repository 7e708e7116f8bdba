"""Citing and reaching a paper: its links out (:mod:`.links`) and its BibTeX entry (:mod:`.bibtex`).

Below the faces (web app, static site, exports) so each of them links out and cites a paper the same way.
"""

from .bibtex import bibtex_entry
from .links import OutLink, doi_of, out_links

__all__ = ["OutLink", "bibtex_entry", "doi_of", "out_links"]
