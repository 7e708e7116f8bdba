"""The local web app (Flask, served by waitress): search with filters, paper pages, topic pages and a 2-D map.

Everything is rendered server-side with Jinja2 autoescaping (every listing field is HTML-escaped); no asset
comes from a CDN.
"""

from .app import create_app

__all__ = ["create_app"]
