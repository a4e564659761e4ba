// Where `run -o` writes (issue 18, cases 1 to 4): through non-regular files, atomically over
// regular ones keeping their mode, never "" or a file named "-", never over a complete file
// when interrupted; and device names that stay valid UTF-8.
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <thread>

#include <toml++/toml.h>

#include "helpers.hpp"
#include "run_helpers.hpp"

namespace fs = std::filesystem;
using test::quoted;
using test::run_memtopo;

namespace {
const std::string kDeviceInfo = "run --device sim --only device-info -o ";
}  // namespace

TEST_CASE("output: -o /dev/null is written through, the device node stays", "[host][output]") {
  // As root, a regression would replace the node: use a private null device where one can be made.
  test::TempDir dir("out-null");
  fs::path null_device = dir / "null";
  if (::mknod(null_device.c_str(), S_IFCHR | 0666, makedev(1, 3)) != 0) null_device = "/dev/null";
  const auto r = run_memtopo(kDeviceInfo + quoted(null_device));
  INFO(r.output);
  CHECK(r.exit_code == 0);
  struct stat st {};
  REQUIRE(::stat(null_device.c_str(), &st) == 0);
  CHECK(S_ISCHR(st.st_mode));
  CHECK_FALSE(fs::exists(null_device.string() + ".journal"));
  CHECK_FALSE(fs::exists(null_device.string() + ".lock"));
}

TEST_CASE("output: a symlink is followed and its target replaced", "[host][output]") {
  test::TempDir dir("out-link");
  fs::create_directories(dir / "real");
  test::write_file(dir / "real" / "t.toml", "old\n");
  fs::create_symlink("real/t.toml", dir / "link.toml");
  const auto r = run_memtopo(kDeviceInfo + quoted(dir / "link.toml"));
  INFO(r.output);
  CHECK(r.exit_code == 0);
  CHECK(fs::is_symlink(dir / "link.toml"));
  CHECK(test::read_file(dir / "real" / "t.toml").rfind("[meta]", 0) == 0);
  CHECK_FALSE(fs::exists(dir / "real" / "t.toml.journal"));
  CHECK_FALSE(fs::exists(dir / "real" / "t.toml.lock"));
}

TEST_CASE("output: a FIFO is written through, not replaced", "[host][output]") {
  test::TempDir dir("out-fifo");
  const auto fifo = dir / "pipe";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  // A second name for the FIFO: should the run replace the path, opening this unblocks the reader.
  fs::create_hard_link(fifo, dir / "pipe.keep");
  std::string received;
  std::thread reader([&] { received = test::read_file(fifo); });
  const auto r = run_memtopo(kDeviceInfo + quoted(fifo));
  const int unblock = ::open((dir / "pipe.keep").c_str(), O_WRONLY | O_NONBLOCK);
  if (unblock >= 0) ::close(unblock);
  reader.join();
  INFO(r.output);
  CHECK(r.exit_code == 0);
  CHECK(fs::is_fifo(fifo));
  CHECK(received.rfind("[meta]", 0) == 0);
  CHECK(received.find("[device]") != std::string::npos);
}

TEST_CASE("output: replacing a regular file keeps its mode", "[host][output]") {
  test::TempDir dir("out-mode");
  const auto out = dir / "t.toml";
  test::write_file(out, "old\n");
  fs::permissions(out, fs::perms::owner_read | fs::perms::owner_write);
  const auto r = run_memtopo(kDeviceInfo + quoted(out));
  INFO(r.output);
  CHECK(r.exit_code == 0);
  CHECK(fs::status(out).permissions() == (fs::perms::owner_read | fs::perms::owner_write));
  CHECK(test::read_file(out).rfind("[meta]", 0) == 0);
}

TEST_CASE("output: -o \"\" is refused before anything is measured", "[host][output]") {
  test::TempDir dir("out-empty");
  const auto r = run_memtopo(kDeviceInfo + "''", dir.path);
  INFO(r.output);
  CHECK(r.exit_code == 2);
  CHECK(r.output.find("-o: the file name is empty") != std::string::npos);
  CHECK(r.output.find("device-info") == std::string::npos);  // nothing ran
  CHECK(fs::is_empty(dir.path));
}

TEST_CASE("output: -o - (and /dev/stdout) writes the topology to stdout, the summary to stderr", "[host][output]") {
  test::TempDir dir("out-stdout");
  const auto r = test::run_shell_stdout("cd " + dir.path.string() + " && \"$EXE\" run --device sim --only device-info -o - 2>err.txt");
  INFO(r.output);
  CHECK(r.exit_code == 0);
  CHECK(r.output.rfind("[meta]", 0) == 0);
  CHECK_NOTHROW(toml::parse(r.output));
  CHECK(r.output.find("device     memtopo simulated") == std::string::npos);
  const std::string err = test::read_file(dir / "err.txt");
  CHECK(err.find("device     memtopo simulated Hopper-like GPU") != std::string::npos);
  CHECK(err.find("wrote stdout") != std::string::npos);
  CHECK_FALSE(fs::exists(dir / "-"));
  CHECK_FALSE(fs::exists(dir / "-.journal"));
  const auto dev_stdout = test::run_shell_stdout("\"$EXE\" run --device sim --only device-info -o /dev/stdout 2>/dev/null");
  CHECK(dev_stdout.exit_code == 0);
  CHECK(dev_stdout.output.rfind("[meta]", 0) == 0);
  CHECK(dev_stdout.output.find("device     memtopo simulated") == std::string::npos);  // the summary went to stderr
  const auto resume = run_memtopo("run --resume --device sim --only device-info -o -", dir.path);
  CHECK(resume.exit_code == 2);
  CHECK(resume.output.find("--resume: -o - is not a regular file") != std::string::npos);
}

TEST_CASE("output: a device name of 300 two-byte characters is cut at a character boundary", "[host][output][utf8]") {
  test::TempDir dir("out-utf8");
  std::string text = test::read_file(fs::path(MEMTOPO_SOURCE_DIR) / "examples/devices/hopper-like.toml");
  std::string name;
  for (int i = 0; i < 300; ++i) name += "\xc3\xa9";  // é
  const std::string old_name = "name = \"memtopo simulated Hopper-like GPU\"";
  REQUIRE(text.find(old_name) != std::string::npos);
  text.replace(text.find(old_name), old_name.size(), "name = \"" + name + "\"");
  test::write_file(dir / "long.toml", text);
  const auto out = dir / "t.toml";
  const auto r = run_memtopo("run --device sim:" + quoted(dir / "long.toml") + " --only device-info -o " + quoted(out));
  INFO(r.output);
  CHECK(r.exit_code == 0);
  const auto v = run_memtopo("validate " + quoted(out));
  INFO(v.output);
  CHECK(v.exit_code == 0);
  const auto doc = toml::parse_file(out.string());
  const std::string written = doc["device"]["name"].value_or(std::string());
  CHECK(written == name.substr(0, 254));  // 127 characters: 255 bytes would split the 128th
}
