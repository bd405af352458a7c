"""Builds the bilingual docs site: `python -m docsgen` (see __main__.py)."""
