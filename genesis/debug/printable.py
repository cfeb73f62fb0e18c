"""`printable`: any string a user can put into a name, as text every output can show.

Names of modules and parameters, and script paths, may hold anything: control
characters (NUL, ESC, newlines, tabs), code points no XML document may hold
(U+FFFE, U+FFFF), or lone surrogates (Python's stand-ins for a file name's
undecodable bytes). Pictures (DOT and SVG), the HTML page's title and the console
show `printable(name)`: each control character as a visible escape (`\\n`, `\\t`,
`\\x1b`), each XML-forbidden character as `\\ufffe`, each lone surrogate as U+FFFD
(as trace.json writes it, `genesis.debug.json_values`). Everything else, backslashes
included, is kept as it is.

>>> printable("fc\\x00\\x1b[31m\\nname\\t\\udcff")
'fc\\\\x00\\\\x1b[31m\\\\nname\\\\t\\ufffd'
>>> printable("encoder.layers.0 → ü")
'encoder.layers.0 → ü'
"""
from __future__ import annotations

import re

__all__ = ["printable"]

_UNPRINTABLE = re.compile("[\x00-\x1f\x7f-\x9f\ufffe\uffff\ud800-\udfff]")
_NAMED = {"\n": "\\n", "\t": "\\t", "\r": "\\r"}


def printable(text) -> str:
    """`str(text)` with control characters escaped and lone surrogates replaced (see above)."""
    text = str(text)
    if _UNPRINTABLE.search(text) is None:
        return text
    return _UNPRINTABLE.sub(_replacement, text)


def _replacement(match) -> str:
    character = match.group()
    code = ord(character)
    if 0xD800 <= code <= 0xDFFF:
        return "\ufffd"
    if character in _NAMED:
        return _NAMED[character]
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"
