// Discovery and every loading error of the plugin loader.
#include <algorithm>
#include <cstring>
#include <memory>

#include <memtopo/probe.hpp>

#include "helpers.hpp"
#include "topology/plugins/registry.hpp"

using memtopo::host::Registry;
using memtopo::host::SearchPaths;

namespace {

// The one error line that mentions `needle`, or "" when none does.
std::string error_about(const Registry& r, const std::string& needle) {
  for (const auto& e : r.errors())
    if (e.find(needle) != std::string::npos) return e;
  return "";
}

}  // namespace

TEST_CASE("good plugins load and their probes are sorted by name", "[host][loader]") {
  Registry r;
  r.load_directory(test::plugin_set("good"));
  CHECK(r.errors().empty());
  std::vector<std::string> names;
  for (const auto& p : r.probes()) names.push_back(p.name);
  CHECK(names == std::vector<std::string>{"t-basic/consumer", "t-basic/rogue", "t-basic/source", "t-fails/broken",
                                          "t-fails/dependent", "t-skips/unsupported", "t-throws/escape"});
  const auto* consumer = r.find("t-basic/consumer");
  REQUIRE(consumer);
  CHECK(consumer->plugin == "t-basic");
  CHECK(consumer->plugin_version == "1.2.3");
  CHECK(consumer->required == std::vector<std::string>{"t.value_bytes"});
  CHECK(consumer->used == std::vector<std::string>{"t.optional_bytes"});
  REQUIRE(consumer->option("factor"));
  CHECK(consumer->option("factor")->default_value.f == 2.0);
  CHECK(consumer->file.find("t-basic.so") != std::string::npos);
  CHECK(r.has_plugin("t-skips"));
}

TEST_CASE("every broken library is refused with a message naming the file", "[host][loader]") {
  Registry r;
  r.load_directory(test::plugin_set("bad"));
  CHECK(r.probes().empty());
  CHECK(r.errors().size() == 6);

  const std::string major = error_about(r, "t-abi-major.so");
  const std::string host_abi = std::to_string(MEMTOPO_ABI_MAJOR) + "." + std::to_string(MEMTOPO_ABI_MINOR);
  CHECK(major.find("built for ABI " + std::to_string(MEMTOPO_ABI_MAJOR + 1) + "." + std::to_string(MEMTOPO_ABI_MINOR) + ", host supports " + host_abi) != std::string::npos);
  CHECK(major.find("major") != std::string::npos);

  const std::string minor = error_about(r, "t-abi-minor.so");
  CHECK(minor.find("built for ABI " + std::to_string(MEMTOPO_ABI_MAJOR) + "." + std::to_string(MEMTOPO_ABI_MINOR + 1) + ", host supports " + host_abi) !=
        std::string::npos);

  CHECK(error_about(r, "t-small-struct.so").find("too small") != std::string::npos);
  CHECK(error_about(r, "t-wrong-name.so").find("plugin name 'not-the-file-stem' differs from the file name") !=
        std::string::npos);
  CHECK(error_about(r, "t-bad-probe-name.so").find("must be 't-bad-probe-name/<probe>'") != std::string::npos);
  CHECK(error_about(r, "t-no-entry.so").find("not a memtopo probe (no memtopo_plugin_entry)") != std::string::npos);
}

TEST_CASE("a junk file named .so is reported and the others still load", "[host][loader]") {
  test::TempDir dir("junk");
  test::write_file(dir / "junk.so", "this is plain text, not an ELF file\n");
  test::write_file(dir / "readme.txt", "not a candidate");
  Registry r;
  r.load_directory(dir.path);
  r.load_directory(test::plugin_set("good"));
  REQUIRE(r.errors().size() == 1);
  CHECK(r.errors()[0].find("junk.so: not a shared library: ") != std::string::npos);
  CHECK(r.errors()[0].find("readme") == std::string::npos);
  CHECK(r.find("t-basic/source"));
}

TEST_CASE("a duplicate plugin name names both files and the first one wins", "[host][loader]") {
  Registry r;
  SearchPaths sp;
  sp.plugin_path_args = {test::plugin_set("dup-a"), test::plugin_set("dup-b")};
  sp.use_environment = false;
  sp.use_install_prefix = false;
  r.load_all(sp);
  REQUIRE(r.find("dup/probe"));
  CHECK(r.find("dup/probe")->plugin_version == "1.0.0");
  REQUIRE(r.errors().size() == 1);
  const std::string& e = r.errors()[0];
  CHECK(e.find("dup-b/dup.so") != std::string::npos);
  CHECK(e.find("dup-a/dup.so") != std::string::npos);
  CHECK(e.find("first one found wins") != std::string::npos);
}

TEST_CASE("the same file found twice is loaded once, silently", "[host][loader]") {
  Registry r;
  r.load_directory(test::plugin_set("good"));
  r.load_directory(test::plugin_set("good"));
  CHECK(r.errors().empty());
  CHECK(r.probes().size() == 7);
}

TEST_CASE("search order: --plugin-path, then MEMTOPO_PLUGIN_PATH, then beside the executable", "[host][loader]") {
  test::TempDir exe("exe");
  std::filesystem::create_directories(exe.path / "bin");
  std::filesystem::create_directories(exe.path / "plugins-beside");
  std::filesystem::create_directories(exe.path / "bin" / "plugins");
  ::setenv("MEMTOPO_PLUGIN_PATH", (test::plugin_set("dup-b").string() + ":/nonexistent").c_str(), 1);
  SearchPaths sp;
  sp.plugin_path_args = {test::plugin_set("dup-a")};
  sp.exe_dir = exe.path / "bin";
  sp.use_install_prefix = false;
  const auto dirs = memtopo::host::plugin_search_dirs(sp);
  ::unsetenv("MEMTOPO_PLUGIN_PATH");
  REQUIRE(dirs.size() == 3);
  CHECK(dirs[0] == std::filesystem::canonical(test::plugin_set("dup-a")));
  CHECK(dirs[1] == std::filesystem::canonical(test::plugin_set("dup-b")));
  CHECK(dirs[2] == std::filesystem::canonical(exe.path / "bin" / "plugins"));
}

namespace {
memtopo::Probe static_probe() {
  return memtopo::Probe("static-one/hello").provides({"static.answer"}).run([](memtopo::Context& ctx) {
    ctx.result("static.answer", 42);
  });
}
}  // namespace

TEST_CASE("a statically linked plugin registers like a loaded one", "[host][loader]") {
  static const memtopo::detail::PluginHolder holder("static-one", "0.1.0", {static_probe()});
  Registry r;
  CHECK(r.add_static(holder.desc(), "test"));
  REQUIRE(r.find("static-one/hello"));
  CHECK(r.find("static-one/hello")->file == "static:test");
  // The same name again is refused, naming the first.
  CHECK_FALSE(r.add_static(holder.desc(), "again"));
  CHECK(r.errors().at(0).find("already taken by static:test") != std::string::npos);
}

TEST_CASE("the real plugin folder holds only real plugins, all loadable", "[host][loader]") {
  Registry r;
  r.load_directory(MEMTOPO_REAL_PLUGIN_DIR);
  INFO(r.errors().size() << " loading errors; first: " << (r.errors().empty() ? "" : r.errors()[0]));
  CHECK(r.errors().empty());
  CHECK(r.has_plugin("device-info"));
  for (const auto& entry : std::filesystem::directory_iterator(MEMTOPO_REAL_PLUGIN_DIR)) {
    const std::string stem = entry.path().stem().string();
    INFO(entry.path());
    CHECK(stem.rfind("t-", 0) != 0);
    CHECK(stem != "dup");
  }
}

namespace {
// An ABI 1.0 probe descriptor: the fields up to `user`, nothing of the needs or key
// descriptions appended since.
struct ProbeDesc10 {
  uint32_t struct_size;
  const char* name;
  const char* summary;
  const char* const* provided_keys;
  const char* const* required_keys;
  const char* const* used_keys;
  const mt_option_desc* options;
  size_t option_count;
  mt_probe_run_fn run;
  void* user;
};
int run_nothing(const mt_context*, void*, char*, size_t) { return MT_STATUS_OK; }
const char* const kNone[] = {nullptr};
}  // namespace

TEST_CASE("probe descriptors smaller than ABI 3.0's are refused, larger ones strided by their struct_size", "[host][loader]") {
  static ProbeDesc10 old_probes[2] = {
      {sizeof(ProbeDesc10), "old/one", "", kNone, kNone, kNone, nullptr, 0, &run_nothing, nullptr},
      {sizeof(ProbeDesc10), "old/two", "", kNone, kNone, kNone, nullptr, 0, &run_nothing, nullptr}};
  static mt_plugin_desc old_desc = {sizeof(mt_plugin_desc), MEMTOPO_ABI_MAJOR, 0, "old",
                                    "1.0.0", reinterpret_cast<const mt_probe_desc*>(old_probes), 2};
  Registry old;
  CHECK_FALSE(old.add_static(&old_desc, "old"));
  REQUIRE(old.errors().size() == 1);
  CHECK_THAT(old.errors()[0], Catch::Contains("probe #0 descriptor too small"));
  // A later minor's descriptor: a field appended, which this host skips.
  struct Later {
    mt_probe_desc d;
    uint64_t appended;
  };
  static Later later[2] = {};
  for (int i = 0; i < 2; ++i) {
    later[i].d.struct_size = sizeof(Later);
    later[i].d.name = i ? "later/two" : "later/one";
    later[i].d.summary = "";
    later[i].d.provided_keys = later[i].d.required_keys = later[i].d.used_keys = kNone;
    later[i].d.run = &run_nothing;
    later[i].appended = ~0ull;
  }
  static mt_plugin_desc later_desc = {sizeof(mt_plugin_desc), MEMTOPO_ABI_MAJOR, MEMTOPO_ABI_MINOR, "later",
                                      "1.0.0", &later[0].d, 2};
  Registry r;
  REQUIRE(r.add_static(&later_desc, "later"));
  for (const auto* name : {"later/one", "later/two"}) {
    const auto* p = r.find(name);
    REQUIRE(p);
    CHECK(p->backends == 0);
    CHECK(p->keys.empty());
  }
}

TEST_CASE("needs a descriptor cannot hold are refused", "[host][loader]") {
  static const memtopo::detail::PluginHolder bad_bits(
      "odd-backend", "1.0.0",
      {memtopo::Probe("odd-backend/p").provides({"odd.x"}).backends(8, "").run([](memtopo::Context&) {})});
  Registry r;
  CHECK_FALSE(r.add_static(bad_bits.desc(), "odd"));
  REQUIRE(r.errors().size() == 1);
  CHECK(r.errors()[0] ==
        "static:odd: probe odd-backend/p: backends holds unknown bits (8); use MT_BACKEND_CUDA, MT_BACKEND_SIM or 0 "
        "for all");
}

TEST_CASE("key descriptions are read, list -v shows them", "[host][loader][keys]") {
  Registry r;
  r.load_directory(test::plugin_set("keys"));
  REQUIRE(r.errors().empty());
  const auto* tma = r.find("t-keys/tma");
  REQUIRE(tma);
  REQUIRE(tma->keys.size() == 3);
  const auto* lat = tma->key_spec("tma.latency_cycles");
  REQUIRE(lat);
  CHECK(lat->type == MT_VALUE_FLOAT);
  CHECK(lat->unit == "cycles");
  CHECK(lat->meaning == "latency of one bulk copy");
  CHECK_FALSE(tma->key_spec("tma.undescribed"));

  const auto l = test::run_memtopo("list -v --plugin-path '" + test::plugin_set("keys").string() + "'");
  INFO(l.output);
  CHECK(l.output.find("    key tma.latency_cycles (float, cycles): latency of one bulk copy\n") != std::string::npos);
  CHECK(l.output.find("    key tma.mode (string): the copy mode measured\n") != std::string::npos);
}

TEST_CASE("a declared unit its key name does not carry refuses the plugin, naming file and key", "[host][loader][keys]") {
  Registry r;
  r.load_directory(test::plugin_set("bad-keys"));
  CHECK(r.probes().empty());
  REQUIRE(r.errors().size() == 1);
  const std::string& e = r.errors()[0];
  CHECK(e.find("t-bad-unit.so: probe t-bad-unit/latency: key tma.latency: declares unit 'cycles', but units are in "
               "key names (docs/format.md): name the key with one of _bytes, _bits, _khz, _cycles, _gbps or _s, or "
               "declare no unit") != std::string::npos);
}

TEST_CASE("key descriptions that contradict the key or the probe are refused", "[host][loader][keys]") {
  auto refusal = [](memtopo::Probe p) {
    const auto holder = std::make_unique<memtopo::detail::PluginHolder>("kd", "1.0.0", std::vector<memtopo::Probe>{p});
    Registry r;
    CHECK_FALSE(r.add_static(holder->desc(), "kd"));
    return r.errors().empty() ? std::string() : r.errors()[0];
  };
  auto base = [] { return memtopo::Probe("kd/p").provides({"kd.size_bytes", "kd.mode"}).run([](memtopo::Context&) {}); };
  CHECK(refusal(base().key("kd.other", MT_VALUE_INT, "", "x")) ==
        "static:kd: probe kd/p: key kd.other: described, but not one of the keys it provides");
  CHECK(refusal(base().key("kd.mode", MT_VALUE_STRING, "", "x").key("kd.mode", MT_VALUE_STRING, "", "y")) ==
        "static:kd: probe kd/p: key kd.mode: described twice");
  CHECK(refusal(base().key("kd.size_bytes", MT_VALUE_INT, "cycles", "x")) ==
        "static:kd: probe kd/p: key kd.size_bytes: declares unit 'cycles', but its name ends in _bytes: declare unit "
        "'bytes'");
  CHECK(refusal(base().key("kd.size_bytes", MT_VALUE_INT, "", "x")) ==
        "static:kd: probe kd/p: key kd.size_bytes: declares no unit, but its name ends in _bytes: declare unit 'bytes'");
  CHECK(refusal(base().key("kd.size_bytes", MT_VALUE_FLOAT, "bytes", "x")) ==
        "static:kd: probe kd/p: key kd.size_bytes: declares type float, but keys ending in _bytes hold integers or "
        "integer arrays");
  {
    // A C plugin can store any int in the type field; C++ cannot name 42 as an mt_value_type
    // without undefined behaviour, so the descriptor's bits are patched.
    const memtopo::detail::PluginHolder holder("kd", "1.0.0", {base().key("kd.mode", MT_VALUE_STRING, "", "x")});
    const int bad = 42;
    std::memcpy(const_cast<mt_value_type*>(&holder.desc()->probes[0].keys[0].type), &bad, sizeof bad);
    Registry r;
    CHECK_FALSE(r.add_static(holder.desc(), "kd"));
    REQUIRE(r.errors().size() == 1);
    CHECK(r.errors()[0] == "static:kd: probe kd/p: key kd.mode: declares unknown type 42");
  }
  // A good description: accepted.
  const memtopo::detail::PluginHolder good("kd", "1.0.0", {base().key("kd.size_bytes", MT_VALUE_INT_ARRAY, "bytes", "x")});
  Registry r;
  CHECK(r.add_static(good.desc(), "kd"));
}

TEST_CASE("key roles are read from the probe's extension, malformed ones refuse the plugin", "[host][loader][roles]") {
  auto base = [] { return memtopo::Probe("kr/p").provides({"kr.size_bytes", "kr.mode"}).run([](memtopo::Context&) {}); };
  {
    const memtopo::detail::PluginHolder good(
        "kr", "1.0.0",
        {base().role("kr.size_bytes", "cache.size_bytes@l1_cache").roles({{"kr.mode", "gpu.mode"}})});
    REQUIRE(good.desc()->probes[0].extension_count == 1);
    CHECK(std::strcmp(good.desc()->probes[0].extensions[0].name, MT_EXTENSION_KEY_ROLES) == 0);
    Registry r;
    REQUIRE(r.add_static(good.desc(), "kr"));
    const auto* p = r.find("kr/p");
    REQUIRE(p);
    CHECK(p->roles == std::map<std::string, std::string>{{"kr.size_bytes", "cache.size_bytes@l1_cache"},
                                                        {"kr.mode", "gpu.mode"}});
  }
  auto refusal = [](memtopo::Probe p) {
    const auto holder = std::make_unique<memtopo::detail::PluginHolder>("kr", "1.0.0", std::vector<memtopo::Probe>{p});
    Registry r;
    CHECK_FALSE(r.add_static(holder->desc(), "kr"));
    return r.errors().empty() ? std::string() : r.errors()[0];
  };
  CHECK(refusal(base().role("kr.other", "gpu.other")) ==
        "static:kr: probe kr/p: memtopo.key_roles: role #0 (kr.other): the probe does not provide kr.other");
  CHECK(refusal(base().role("kr.mode", "Cache.size")).find("each of class, quantity and subject is lowercase") !=
        std::string::npos);
  CHECK(refusal(base().role("kr.mode", "cache")).find("is not <class>.<quantity>[@<subject>]") != std::string::npos);
  CHECK(refusal(base().role("kr.mode", "cache.size@")).find("each of class") != std::string::npos);
  // An extension this host does not know is passed over.
  const memtopo::detail::PluginHolder other("kr", "1.0.0", {base().role("kr.mode", "gpu.mode")});
  auto* ext = const_cast<mt_extension_desc*>(other.desc()->probes[0].extensions);
  ext->name = "vendor.something";
  Registry r;
  REQUIRE(r.add_static(other.desc(), "kr"));
  CHECK(r.find("kr/p")->roles.empty());
}
