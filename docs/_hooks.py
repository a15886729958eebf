"""mkdocs hook: the docstrings use Sphinx cross-reference roles (:class:`Game`); the site shows
the name alone, as code, instead of the role's raw text."""

from __future__ import annotations

import re

ROLE = re.compile(r":(?:py:)?(?:class|func|meth|mod|attr|data|exc|obj|const):(?=<code>)")


def on_page_content(html: str, **kwargs: object) -> str:
    return ROLE.sub("", html)
