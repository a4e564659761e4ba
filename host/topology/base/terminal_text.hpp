// Text from a device, a plugin or a file on its way to a terminal: control characters are
// shown as escapes, so a device name or a note cannot move the cursor, clear the screen or
// forge a line (docs/host.md, "Guarantees").
#pragma once

#include <string>

namespace memtopo::host {

// `text` with every C0 control character (line breaks and tabs included), DEL, every C1
// control (U+0080..U+009F), every character that reorders text (U+202E and the other
// bidirectional controls, U+2028, U+2029) replaced by \xNN or \uNNNN, and each byte that
// starts no UTF-8 sequence by \xNN: one line, as printed in a table.
std::string terminal_text(const std::string& text);
// The same, but line breaks stay: for a message or a block of lines.
std::string terminal_lines(const std::string& text);
// One cell of a Markdown (CommonMark, GitHub) table: terminal_text, then | \ * ` [ ] and a
// word-edge _ escaped with a backslash, < > & as entities, so that a name is text, never a
// column break, emphasis, a link or HTML.
std::string markdown_cell(const std::string& text);

}  // namespace memtopo::host
