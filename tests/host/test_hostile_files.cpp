// Files in shared folders (issue 50): every file memtopo writes is created new and never written
// through a symlink planted at its name; no output replaces an input a folder stands for; a
// failing picture script leaves the good output; no two devices or hosts share a file name; a
// name from the environment lands as one file inside the folder named (docs/host.md,
// "Guarantees", "Files in shared folders").
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <set>

#include "run/launch/device_list.hpp"
#include "helpers.hpp"
#include "topology/document/document.hpp"
#include "run/output/journal.hpp"
#include "topology/base/new_file.hpp"
#include "topology/base/output_file.hpp"
#include "run_helpers.hpp"

namespace fs = std::filesystem;
using test::has;
using test::kGood;
using test::quoted;
using test::run_memtopo;

namespace {

const std::string kVictimText = "precious, not memtopo's\n";

// A file someone else owns in spirit: memtopo must never change it.
fs::path victim(const test::TempDir& dir) {
  const auto v = dir / "victim.txt";
  test::write_file(v, kVictimText);
  return v;
}

bool is_regular_not_link(const fs::path& p) {
  struct stat st {};
  return ::lstat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

fs::path small_topology(const test::TempDir& dir, const std::string& name) {
  const auto out = dir / name;
  const auto r = run_memtopo("run -q --device sim" + kGood + " --only t-basic/source -o " + quoted(out));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  return out;
}

// The pid the next process will get (Linux hands them out in order until they wrap).
long last_pid() {
  std::ifstream in("/proc/sys/kernel/ns_last_pid");
  long pid = 0;
  in >> pid;
  return pid;
}

// The toml files directly in `dir`, by name.
std::set<std::string> toml_files(const fs::path& dir) {
  std::set<std::string> names;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".toml") names.insert(e.path().filename().string());
  return names;
}

}  // namespace

TEST_CASE("shared folder: files are created new, never through a planted symlink", "[host][hostile][shared]") {
  test::TempDir dir("shared-new-file");
  const auto v = victim(dir);
  const auto link = dir / "link";
  fs::create_symlink(v, link);
  errno = 0;
  CHECK(memtopo::host::create_new_file(link) < 0);
  CHECK(errno == EEXIST);
  // A dangling link neither: its target is not created.
  fs::create_symlink(dir / "not-there", dir / "dangling");
  CHECK(memtopo::host::create_new_file(dir / "dangling") < 0);
  CHECK_FALSE(fs::exists(dir / "not-there"));
  CHECK(test::read_file(v) == kVictimText);

  // The atomic write's temporary name taken by a link: another name, the victim untouched,
  // the output a regular file.
  const auto out = dir / "out.toml";
  fs::create_symlink(v, dir / (".out.toml.tmp." + std::to_string(::getpid())));
  memtopo::host::write_atomically(out, "new\n");
  CHECK(test::read_file(v) == kVictimText);
  CHECK(is_regular_not_link(out));
  CHECK(test::read_file(out) == "new\n");

  // The journal's new file likewise.
  const auto journal = dir / "j.journal";
  fs::create_symlink(v, dir / (".j.journal.tmp." + std::to_string(::getpid())));
  {
    memtopo::host::JournalWriter w;
    w.open_new(journal, {{"memtopo_journal", 2}});
  }
  CHECK(test::read_file(v) == kVictimText);
  CHECK(is_regular_not_link(journal));
}

TEST_CASE("shared folder: export -o with links planted for the next pids", "[host][hostile][shared]") {
  test::TempDir dir("shared-next-pids");
  const auto topo = small_topology(dir, "t.toml");
  const auto v = victim(dir);
  const auto out = dir / "out.json";
  const long next = last_pid();
  for (long pid = next + 1; pid <= next + 300; ++pid)
    fs::create_symlink(v, dir / (".out.json.tmp." + std::to_string(pid)));
  const auto r = run_memtopo("export --format json -o " + quoted(out) + " " + quoted(topo));
  INFO(r.output);
  CHECK(r.exit_code == 0);
  CHECK(test::read_file(v) == kVictimText);
  CHECK(is_regular_not_link(out));
  CHECK(has(test::read_file(out), "\"meta\""));
}

TEST_CASE("shared folder: a symlink, FIFO or hard link at OUT.lock is refused", "[host][hostile][shared]") {
  test::TempDir dir("shared-lock");
  const auto v = victim(dir);
  const auto out = dir / "out.toml";
  fs::create_symlink(v, dir / "out.toml.lock");
  const auto r = run_memtopo("run -q --device sim" + kGood + " --only t-basic/source -o " + quoted(out));
  INFO(r.output);
  CHECK(r.exit_code == 2);
  CHECK(has(r.output, "out.toml.lock is a symlink, which memtopo never writes through; remove it"));
  CHECK(test::read_file(v) == kVictimText);
  CHECK_FALSE(fs::exists(out));

  fs::remove(dir / "out.toml.lock");
  REQUIRE(::mkfifo((dir / "out.toml.lock").c_str(), 0600) == 0);
  const auto fifo = run_memtopo("run -q --device sim" + kGood + " --only t-basic/source -o " + quoted(out), {}, 60);
  INFO(fifo.output);
  CHECK(fifo.exit_code == 2);
  CHECK(has(fifo.output, "is not a regular file of its own"));

  fs::remove(dir / "out.toml.lock");
  fs::create_hard_link(v, dir / "out.toml.lock");
  const auto hard = run_memtopo("run -q --device sim" + kGood + " --only t-basic/source -o " + quoted(out));
  CHECK(hard.exit_code == 2);
  CHECK(test::read_file(v) == kVictimText);
}

TEST_CASE("shared folder: fleet.txt and a member's file planted as links are replaced", "[host][hostile][shared]") {
  test::TempDir dir("shared-fleet-links");
  const auto v = victim(dir);
  // What rank 0 does with DIR/fleet.txt (device_runs.cpp, write_fleet_summary).
  fs::create_symlink(v, dir / "fleet.txt");
  using memtopo::host::cli::OutputNamedBy;
  const auto target = memtopo::host::cli::resolve_output((dir / "fleet.txt").string(), OutputNamedBy::Memtopo);
  memtopo::host::cli::write_output(target, "the fleet\n");
  CHECK(test::read_file(v) == kVictimText);
  CHECK(is_regular_not_link(dir / "fleet.txt"));
  CHECK(test::read_file(dir / "fleet.txt") == "the fleet\n");

  // A member of a fleet run: its DIR/HOST-DEVICE.toml is memtopo's name, never followed.
  fs::create_directories(dir / "out");
  fs::create_symlink(v, dir / "out" / "h-sim-1.toml");
  const auto r = run_memtopo(
      "run -q --device sim,sim" + kGood + " --only t-basic/source -o " + quoted(dir / "out") + "/", {}, 0,
      "MEMTOPO_TEST_HOSTNAME=h");
  INFO(r.output);
  CHECK(r.exit_code == 0);
  CHECK(test::read_file(v) == kVictimText);
  CHECK(is_regular_not_link(dir / "out" / "h-sim-1.toml"));
  CHECK(is_regular_not_link(dir / "out" / "h-sim-2.toml"));
  // The user's own symlink named by -o still has its target replaced (docs/host.md).
  const auto mine = dir / "mine.toml";
  test::write_file(mine, "old\n");
  fs::create_symlink(mine, dir / "my-link.toml");
  const auto own = memtopo::host::cli::resolve_output((dir / "my-link.toml").string());
  memtopo::host::cli::write_output(own, "new\n");
  CHECK(test::read_file(mine) == "new\n");
  CHECK(fs::is_symlink(dir / "my-link.toml"));
}

TEST_CASE("shared folder: fleet -o over its reference or a file of its folder is refused",
          "[host][hostile][shared]") {
  test::TempDir dir("shared-fleet-over-input");
  fs::create_directories(dir / "members");
  test::TempDir src("shared-fleet-over-input-src");
  const auto a = small_topology(src, "a.toml");
  fs::copy_file(a, dir / "members" / "a.toml");
  fs::copy_file(a, dir / "members" / "b.toml");
  fs::copy_file(a, dir / "ref.toml");
  const std::string ref = test::read_file(dir / "ref.toml");
  auto refused = [&](const std::string& args, const fs::path& kept, const std::string& what) {
    const std::string before = test::read_file(kept);
    const auto r = run_memtopo(args);
    INFO(args << "\n" << r.output);
    CHECK(r.exit_code == 2);
    CHECK(has(r.output, "is the same file as " + what));
    CHECK(test::read_file(kept) == before);
  };
  const std::string folder = quoted(dir / "members");
  refused("fleet --reference " + quoted(dir / "ref.toml") + " " + folder + " -o " + quoted(dir / "ref.toml"),
          dir / "ref.toml", "--reference");
  refused("fleet " + folder + " -o " + quoted(dir / "members" / "b.toml"), dir / "members" / "b.toml",
          "a file in an input " + (dir / "members").string());
  refused("fleet " + folder + " --format json -o " + quoted(dir / "members" / "a.toml"), dir / "members" / "a.toml",
          "a file in an input");
  CHECK(test::read_file(dir / "ref.toml") == ref);
  // A new file in the folder is no input.
  const auto fresh = run_memtopo("fleet " + folder + " -o " + quoted(dir / "members" / "table.txt"));
  INFO(fresh.output);
  CHECK(fresh.exit_code == 0);
  CHECK(fs::exists(dir / "members" / "table.txt"));
}

TEST_CASE("shared folder: equal device names get files of their own, also per local rank", "[host][hostile][shared]") {
  test::TempDir dir("shared-names");
  const fs::path example = fs::path(MEMTOPO_SOURCE_DIR) / "examples" / "devices" / "hopper-like.toml";
  fs::create_directories(dir / "da");
  fs::create_directories(dir / "db");
  for (const auto& f : {dir / "da" / "x.toml", dir / "db" / "x.toml", dir / "x-1.toml"}) fs::copy_file(example, f);
  const std::string list = "sim:" + (dir / "da" / "x.toml").string() + ",sim:" + (dir / "db" / "x.toml").string() +
                           ",sim:" + (dir / "x-1.toml").string();
  const auto devices = memtopo::host::cli::expand_devices(memtopo::host::resolve_device(list, {}), "h");
  REQUIRE(devices.size() == 3);
  CHECK(devices[0].stem == "h-sim-x-2");
  CHECK(devices[1].stem == "h-sim-x-3");
  CHECK(devices[2].stem == "h-sim-x-1");
  CHECK(devices[0].label == "sim-x-2");
  // The same list twice still gives three names of its own each.
  const auto twice = memtopo::host::cli::expand_devices(memtopo::host::resolve_device(list + "," + list, {}), "h");
  std::set<std::string> stems;
  for (const auto& d : twice) stems.insert(d.stem);
  CHECK(stems.size() == 6);

  const auto r = run_memtopo("run --device " + list + " --only device-info -o " + quoted(dir / "out") + "/", {}, 0,
                             "MEMTOPO_TEST_HOSTNAME=h");
  INFO(r.output);
  CHECK(r.exit_code == 0);
  CHECK(toml_files(dir / "out") == std::set<std::string>{"h-sim-x-1.toml", "h-sim-x-2.toml", "h-sim-x-3.toml"});
  for (const char* label : {"sim-x-1", "sim-x-2", "sim-x-3"}) CHECK(has(r.output, label));
  CHECK(has(r.output, "3 GPU(s)"));

  // Local ranks 0 and 2 of one node, given that list, write two files.
  for (int rank : {0, 2}) {
    const auto t = run_memtopo("run -q --only device-info --device " + list + " -o " + quoted(dir / "ranks") + "/", {},
                               0,
                               "MEMTOPO_TEST_HOSTNAME=h SLURM_STEP_ID=0 SLURM_NODEID=0 SLURM_STEP_TASKS_PER_NODE=3 "
                               "SLURM_LOCALID=" + std::to_string(rank) + " SLURM_PROCID=" + std::to_string(rank));
    INFO(t.output);
    CHECK(t.exit_code == 0);
  }
  CHECK(toml_files(dir / "ranks") == std::set<std::string>{"h-sim-x-2.toml", "h-sim-x-1.toml"});
}

TEST_CASE("shared folder: host names are whole and sanitised into one file in the folder", "[host][hostile][shared]") {
  using memtopo::host::cli::file_name_part;
  CHECK(file_name_part("node01.clusterA") == "node01.clusterA");
  CHECK(file_name_part("node01.clusterA") != file_name_part("node01.clusterB"));
  CHECK(file_name_part("/abs/path") == "_abs_path");
  CHECK(file_name_part("sub/x") == "sub_x");
  CHECK(file_name_part(".hidden") == "_hidden");
  CHECK(file_name_part("-x") == "_x");
  CHECK(file_name_part("a\nb") == "a_b");
  CHECK(file_name_part("\x1b[31m") == "__31m");
  CHECK(file_name_part("") == "_");
  CHECK(file_name_part(std::string(300, 'n')).size() == 64);
  {
    test::ScopedEnv host("MEMTOPO_TEST_HOSTNAME", "a\nb/..");
    CHECK(memtopo::host::cli::host_file_name() == "a_b_..");
  }
  // The machine's own name, whole (test::host_name() mirrors the rule for the other tests).
  CHECK(memtopo::host::cli::host_file_name() == test::host_name());

  test::TempDir dir("shared-host-names");
  for (const std::string& name : {std::string("/abs/path"), std::string("sub/x"), std::string(".hidden"),
                                  std::string("a\nb"), std::string("\x1b[31m"), std::string("node01.clusterA"),
                                  std::string("node01.clusterB")}) {
    test::ScopedEnv host("MEMTOPO_TEST_HOSTNAME", name);
    const auto r =
        run_memtopo("run -q --device sim" + kGood + " --only t-basic/source -o " + quoted(dir / "out") + "/");
    INFO(name << "\n" << r.output);
    CHECK(r.exit_code == 0);
  }
  CHECK(toml_files(dir / "out") ==
        std::set<std::string>{"_abs_path-sim.toml", "sub_x-sim.toml", "_hidden-sim.toml", "a_b-sim.toml",
                              "__31m-sim.toml", "node01.clusterA-sim.toml", "node01.clusterB-sim.toml"});
  for (const auto& e : fs::recursive_directory_iterator(dir.path))
    CHECK((e.is_directory() ? e.path() == dir / "out" : e.path().parent_path() == dir / "out"));
}

namespace {

// A "Python" for draw and report: has matplotlib (it says so); writes `body` to -o and exits
// with `code`, as a script that fails mid-write or writes a torn file would.
fs::path stub_python(const test::TempDir& dir, const std::string& name, const std::string& body, int code) {
  const auto path = dir / name;
  test::write_file(path, "#!/bin/sh\n[ \"$1\" = -c ] && exit 0\nshift\n"
                         "while [ $# -gt 0 ]; do [ \"$1\" = -o ] && out=$2; shift; done\nprintf '" +
                             body + "' > \"$out\"\nexit " + std::to_string(code) + "\n");
  fs::permissions(path, fs::perms::owner_all);
  return path;
}

}  // namespace

TEST_CASE("draw and report: a failing script leaves the good output untouched", "[host][hostile][shared]") {
  test::TempDir dir("shared-draw-keep");
  const auto good = dir / "good.toml";
  fs::copy_file(fs::path(MEMTOPO_SOURCE_DIR) / "tests" / "sim" / "measured" / "hopper-like-sim.toml", good);
  const auto keep = dir / "keep.svg";
  {
    test::ScopedEnv python("MEMTOPO_PYTHON", stub_python(dir, "ok-python", "<svg>good</svg>\\n", 0).string());
    const auto r = run_memtopo("draw " + quoted(good) + " -o " + quoted(keep));
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
  }
  const std::string kept = test::read_file(keep);
  REQUIRE(kept == "<svg>good</svg>\n");
  // The device name of issue 50, and a script forced to fail mid-write or to write a torn file.
  const auto odd = dir / "odd.toml";
  std::string text = test::read_file(good);
  const std::string name = "name = \"memtopo simulated Hopper-like GPU\"";
  REQUIRE(text.find(name) != std::string::npos);
  text.replace(text.find(name), name.size(), "name = \"GPU $\\\\frac{a}$ x\"");
  test::write_file(odd, text);
  for (const auto& [stub, code] : {std::pair{stub_python(dir, "dies", "<svg><g id=", 1), 1},
                                   std::pair{stub_python(dir, "torn", "<svg><g id=", 0), 1},
                                   std::pair{stub_python(dir, "crash", "<svg", 3), 1}}) {
    test::ScopedEnv python("MEMTOPO_PYTHON", stub.string());
    const auto r = run_memtopo("draw " + quoted(odd) + " -o " + quoted(keep));
    INFO(stub << "\n" << r.output);
    CHECK(r.exit_code == code);
    CHECK(test::read_file(keep) == kept);
    const auto page = dir / "page.html";
    test::write_file(page, "<html>good</html>\n");
    const auto rep = run_memtopo("report " + quoted(odd) + " -o " + quoted(page));
    CHECK(rep.exit_code == code);
    CHECK(test::read_file(page) == "<html>good</html>\n");
  }
  // The real script, where this machine has matplotlib: the name draws, or the file stays.
  if (run_memtopo("draw " + quoted(odd) + " -o " + quoted(dir / "probe.svg")).exit_code == 0) {
    const auto r = run_memtopo("draw " + quoted(odd) + " -o " + quoted(keep));
    const std::string now = test::read_file(keep);
    CHECK((now == kept || now.rfind("</svg>") != std::string::npos));
  }
}

TEST_CASE("export --base of a folder, /dev/zero or a FIFO says what it is", "[host][hostile][shared]") {
  test::TempDir dir("shared-export-base");
  const auto topo = small_topology(dir, "t.toml");
  REQUIRE(::mkfifo((dir / "fifo").c_str(), 0600) == 0);
  for (const auto& [base, what] : {std::pair{dir.path.string(), "is a folder, not a regular file"},
                                   std::pair{std::string("/dev/zero"), "is a character device, not a regular file"},
                                   std::pair{(dir / "fifo").string(), "is a FIFO, not a regular file"},
                                   std::pair{(dir / "none").string(), "no such file"}}) {
    const auto r = run_memtopo("export --accel-sim --base " + quoted(fs::path(base)) + " " + quoted(topo), {}, 60);
    INFO(r.output);
    CHECK(r.exit_code == 2);
    CHECK(has(r.output, "export --base " + base + ": " + what + "; name a complete gpgpusim.config"));
  }
}

TEST_CASE("shared folder: an output name leaves room for the journal's new file", "[host][hostile][shared]") {
  test::TempDir dir("shared-name-room");
  const auto too_long = run_memtopo("run -q --device sim" + kGood + " --only t-basic/source -o " +
                                    quoted(dir / std::string(232, 'a')));
  INFO(too_long.output);
  CHECK(too_long.exit_code == 2);
  CHECK(has(too_long.output, "use a name of at most 231 bytes"));
  const auto fits = run_memtopo("run -q --device sim" + kGood + " --only t-basic/source -o " +
                                quoted(dir / std::string(231, 'a')));
  INFO(fits.output);
  CHECK(fits.exit_code == 0);
  CHECK(is_regular_not_link(dir / std::string(231, 'a')));
}
