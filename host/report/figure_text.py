"""Text from the data (device, host and series names, keys, units, notes) as matplotlib draws
it verbatim. matplotlib reads a string with two unescaped `$` as math: "A $100 GPU costs $5"
loses its dollars to italics and `GPU $\\frac{a}$` ends the script with a parse error. Every
string a script puts on a figure from the data goes through `plain` (docs/report.md)."""


def plain(text) -> str:
    """`text` with each `$` escaped: matplotlib then finds no math in it and draws the `$`."""
    return str(text).replace("$", "\\$")
