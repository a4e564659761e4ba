// Where `run -o` writes and how (docs/host.md, "Output file"): a regular file is replaced
// atomically, anything else (stdout, a device, a FIFO) is written through; when the output
// cannot be written, the text goes to a fallback instead of being dropped. Not installed.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace memtopo::host::cli {

enum class OutputKind {
  File,     // a regular file or a new one: replaced atomically, has a lock, journal and partial file
  Stdout,   // -o -
  Through,  // an existing non-regular file (character device, FIFO, socket): opened and written
};

struct OutputTarget {
  OutputKind kind = OutputKind::File;
  std::filesystem::path path;  // File: symlinks resolved; Through: as given; Stdout: empty
  // "stdout" or the path, for messages.
  std::string shown() const;
};

// Whose name the output is. The user's own (-o): a symlink there is followed and its target
// replaced atomically, a device or FIFO written through. One memtopo chose inside a folder
// (a fleet member's DIR/HOST-DEVICE.toml, DIR/fleet.txt): whatever is at the name, a symlink
// planted there included, is replaced by a new file and never written through.
enum class OutputNamedBy { User, Memtopo };

// Checks -o before anything runs; throws UsageError for "", a folder, or a missing folder.
OutputTarget resolve_output(const std::string& arg, OutputNamedBy named_by = OutputNamedBy::User);

// The extension of `path` in lower case (".pdf" for "GPU.PDF"), "" for none: the format an
// output's name says (docs/host.md, "Output names").
std::string lowercase_extension(const std::string& path);

// The format a file output writes: the one its name says (`by_name`: extension -> format),
// `asked` (--format) or `fallback` for standard output, a device or a name without an
// extension. Throws UsageError for a name that says another format than `asked`, or one that
// says no format `command` writes.
std::string format_for_output(const std::string& command, const std::string& output, const OutputTarget& target,
                              const std::string& asked, const std::map<std::string, std::string>& by_name,
                              const std::string& fallback);

// An input of a command, for the check below: what names it ("--config", "the topology") and
// its path.
struct NamedInput {
  std::string what;
  std::string path;
};

// Refuses (UsageError, before anything runs) an output that is one of the command's inputs:
// the same file after links (device and inode), or, where either does not exist yet, the same
// path once resolved. An input that is a folder stands for itself and every regular file under
// it (a fleet's folder, report's --raw-dir). `option` names the output ("-o", "--raw-dir").
void refuse_output_over_inputs(const std::string& option, const std::string& output,
                               const std::vector<NamedInput>& inputs);

// Whether the topology goes to this process's stdout (-o -, /dev/stdout, the same FIFO):
// then the summary goes to stderr.
bool writes_to_stdout(const OutputTarget& target);

// Writes the whole text to the target (File: write_atomically, keeping an existing file's
// mode). Throws std::runtime_error naming the path and the system's reason.
void write_output(const OutputTarget& target, const std::string& text);

// out.toml -> out.partial.toml; out -> out.partial.toml.
std::filesystem::path partial_path_for(const std::filesystem::path& output);

// Writes `text` to the first place that takes it: NAME.partial.toml beside a File target
// (with `beside`), then $TMPDIR (or /tmp), then stdout unless stdout is the target. Returns
// where it went (empty when nowhere); each place that failed is added to *failures.
std::string write_fallback(const OutputTarget& target, bool beside, const std::string& text,
                           std::vector<std::string>* failures);

}  // namespace memtopo::host::cli
