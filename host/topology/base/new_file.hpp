// The one way memtopo creates a file it writes (topologies, OUT.lock, .OUT.tmp.PID, journals,
// partial files, fleet.txt, pictures, pages, raw series): created new with O_EXCL and
// O_NOFOLLOW, so that a symlink or file planted at the name in a shared folder is never
// written through (docs/host.md, "Guarantees"). Not installed.
#pragma once

#include <filesystem>
#include <string>

namespace memtopo::host {

// A file this process created and holds open; closes the descriptor when it goes.
struct NewFile {
  int fd = -1;
  std::filesystem::path path;
  NewFile() = default;
  NewFile(int f, std::filesystem::path p) : fd(f), path(std::move(p)) {}
  NewFile(NewFile&& o) noexcept : fd(o.fd), path(std::move(o.path)) { o.fd = -1; }
  NewFile& operator=(NewFile&& o) noexcept;
  NewFile(const NewFile&) = delete;
  ~NewFile();
  // Closes the descriptor; throws std::runtime_error naming the file when the close fails.
  void close();
};

// Creates `path` as a new regular file, open for writing (O_CREAT|O_EXCL|O_NOFOLLOW, `mode`
// less the umask). Returns -1 with errno set (EEXIST where anything is at the name, a
// symlink included) instead of throwing.
int create_new_file(const std::filesystem::path& path, unsigned mode = 0644);

// A new file beside `target` for writing it atomically: ".NAME.tmp.PID", or ".NAME.tmp.PID.N"
// while a name is taken (never opened when it exists). Throws std::runtime_error naming the
// file it could not create, or the names taken.
NewFile create_temp_beside(const std::filesystem::path& target);

// Opens the lock file `path` for reading and writing: created new, or, where it exists, opened
// without following a symlink and only when it is a regular file. Returns the descriptor;
// throws std::runtime_error naming the file and what to do otherwise.
int open_lock_file(const std::filesystem::path& path);

// Writes `text` to `path` atomically: a new temporary file in the same folder (created with
// O_EXCL|O_NOFOLLOW, another name where one is taken), fsync, rename over `path` (a symlink
// there is replaced, not followed); an existing regular file's mode is kept (a new one gets
// 0644 less the umask).
// Throws std::runtime_error naming the file on failure (the old file, if any, is untouched).
void write_atomically(const std::filesystem::path& path, const std::string& text);

// Writes all of `text` to `fd`, retrying short writes; throws std::runtime_error naming `where`.
void write_all_to(int fd, const std::string& text, const std::string& where);

}  // namespace memtopo::host
