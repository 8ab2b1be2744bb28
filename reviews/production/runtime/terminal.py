"""Text for a person's terminal: what a dataset or a model hands in — a task id, a
path, a server's reason — is shown, never obeyed.

A task id may carry control characters: ANSI escapes that recolour or rewrite the screen, a
carriage return that overwrites the progress line, an OSC sequence that sets a link or the window
title, bidirectional overrides that reorder what is read. Every line the production tools print
goes through ``shown``: those characters become visible escapes (``\\x1b``, ``\\r``,
``\\u202e``). Markup (``<b>``, ``[red]``) is inert on a terminal and stays as written.
"""

from __future__ import annotations

import unicodedata

# Control (Cc), format (Cf: bidi overrides, zero-width characters), line and paragraph separators
# and lone surrogates: everything that is not a visible character or a plain space.
HIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs", "Co", "Cn"})


def escape_character(character: str) -> str:
    code = ord(character)
    if code < 0x100:
        return f"\\x{code:02x}"
    if code < 0x10000:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


def shown(text: str, *, keep_newlines: bool = False) -> str:
    """``text`` with every hidden character written as its escape (newlines kept when asked)."""
    return "".join(
        character
        if unicodedata.category(character) not in HIDDEN_CATEGORIES
        or (keep_newlines and character == "\n")
        else escape_character(character)
        for character in text
    )
