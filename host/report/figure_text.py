"""Text from the data (device, host and series names, keys, units, notes, driver strings) as a
figure or a page shows it. A name is data, never markup or a command: control characters (ESC,
BEL, a line break in a name), C1 controls and the characters that reorder text (U+202E) are
shown as escapes, as `memtopo` shows them on a terminal (terminal_text.cpp); they would end an
SVG's XML or rewrite a terminal. matplotlib also reads a string with two unescaped `$` as math:
"A $100 GPU costs $5" loses its dollars to italics and `GPU $\\frac{a}$` ends the script with a
parse error. Every string a script puts on a figure from the data goes through `plain`, every
one it puts on a page through `page_text` (docs/report.md)."""

import html

_REORDERING = {0x061C, 0x200E, 0x200F, *range(0x2028, 0x202F), *range(0x2066, 0x206A)}


def visible(text) -> str:
    """`text` with each control character and each character that reorders text as \\xNN or
    \\uNNNN."""
    out = []
    for ch in str(text):
        c = ord(ch)
        if c < 0x20 or c == 0x7F:
            out.append(f"\\x{c:02x}")
        elif 0x80 <= c <= 0x9F or c in _REORDERING or 0xD800 <= c <= 0xDFFF:
            out.append(f"\\u{c:04x}")
        else:
            out.append(ch)
    return "".join(out)


def plain(text) -> str:
    """`text` for a figure: visible, with each `$` escaped (matplotlib then finds no math in it
    and draws the `$`)."""
    return visible(text).replace("$", "\\$")


def page_text(text) -> str:
    """`text` for an HTML page: visible, then & < > " ' as entities."""
    return html.escape(visible(text))
