"""Name normalisation for entity resolution (the resolution key of an entity).

``normalise_name`` comes from :mod:`kenning.graph.resolve` when that module is
present (the extraction work); until then this local stand-in applies:
Unicode NFKC, case folding, collapsed whitespace, a trailing possessive
("Caroline's", "James'") stripped and surrounding punctuation removed, so
"Caroline", "caroline's" and "CAROLINE" resolve to one node.
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["normalise_name", "local_normalise_name"]

_POSSESSIVE = re.compile(r"(?:'s|’s|'|’)$")
_EDGE_PUNCT = re.compile(r"^[\W_]+|[\W_]+$")


def local_normalise_name(name: str) -> str:
    """NFKC + casefold + whitespace collapse + possessive and edge-punctuation strip."""
    text = unicodedata.normalize("NFKC", name).strip()
    text = " ".join(text.split())
    text = _POSSESSIVE.sub("", text)
    text = _EDGE_PUNCT.sub("", text)
    return text.casefold()


from .resolve import normalise_name  # noqa: E402  (the resolver's rules are the key)
