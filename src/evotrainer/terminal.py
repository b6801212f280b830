"""Text from a run on a terminal: meeting ids, prompts, model answers, file names and messages
come from data that anyone may have written, so the characters a terminal acts on are shown,
never obeyed.

ESC starts colour, cursor, screen-clearing, window-title and hyperlink sequences (CSI, OSC);
0x9b is CSI on its own in 8-bit terminals; bidirectional overrides reorder what is shown (a
policy could read differently from what it is). ``printable`` writes each of them out as an
escape (``\\x1b``, ``\\u202e``) and a lone surrogate, which no terminal encoding can write, as
U+FFFD; newlines and tabs stay. ``SafeConsole`` is a rich Console that does this to every string
it prints (rich itself drops only BEL, backspace, CR and the like, and passes ESC through).
"""

from __future__ import annotations

import re
from typing import Any

from rich.console import Console

_ACTIVE = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069"
    "\ud800-\udfff]"
)


def printable(text: str) -> str:
    """``text`` with every control, bidirectional-override or lone-surrogate character written
    out (see the module docstring); newlines and tabs are kept."""
    return _ACTIVE.sub(_written_out, text)


def _written_out(match: re.Match[str]) -> str:
    code = ord(match.group(0))
    if 0xD800 <= code <= 0xDFFF:
        return "\ufffd"
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


class SafeConsole(Console):
    """A rich Console whose ``print`` passes every string through ``printable`` first (markup
    tags have no control characters, so markup still works). Tables and Text objects are built
    from ``printable`` text where they are made."""

    def print(self, *objects: Any, **kwargs: Any) -> None:  # noqa: A003 - rich's name
        super().print(*(printable(o) if isinstance(o, str) else o for o in objects), **kwargs)
