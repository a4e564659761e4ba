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

#include "fleet/device_list.hpp"
#include "helpers.hpp"
#include "memtopo_host/document.hpp"
#include "memtopo_host/journal.hpp"
#include "output/output_file.hpp"
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

TEST_CASE("shared folder: equal device names get files of their own, also per local rank", "[host][hostile][shared]") {
  test::TempDir dir("shared-names");
  const fs::path example = fs::path(MEMTOPO_SOURCE_DIR) / "examples" / "devices" / "hopper-like.toml";
  fs::create_directories(dir / "da");
  fs::create_directories(dir / "db");
  for (const auto& f : {dir / "da" / "x.toml", dir / "db" / "x.toml", dir / "x-1.toml"}) fs::copy_file(example, f);
  const std::string list = "sim:" + (dir / "da" / "x.toml").string() + ",sim:" + (dir / "db" / "x.toml").string() +
                           ",sim:" + (dir / "x-1.toml").string();
  const auto devices = memtopo::host::cli::expand_devices(list, "h");
  REQUIRE(devices.size() == 3);
  CHECK(devices[0].stem == "h-sim-x-2");
  CHECK(devices[1].stem == "h-sim-x-3");
  CHECK(devices[2].stem == "h-sim-x-1");
  CHECK(devices[0].label == "sim-x-2");
  // The same list twice still gives three names of its own each.
  const auto twice = memtopo::host::cli::expand_devices(list + "," + list, "h");
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

