// `memtopo export --format mt4g`: a topology in MT4G's JSON result layout, as sys-sage's MT4G
// parser reads it (docs/mt4g.md: the field map, the units, what MT4G has no place for). Values
// become MT4G's three encodings: {"value", "unit"} for properties and rates, {"size",
// "confidence", ...} for measured sizes, {"mean", "unit", ...} for latencies. A value that is a
// bound, or a group that the parser reads together (a latency without both rates), is left
// out and named in meta.leftOut: sys-sage takes absence, never null or 0, for "not known".
#include <algorithm>
#include <map>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tools/export/topology_export.hpp"
#include "tools/export/topology_reads.hpp"

namespace memtopo::host {

namespace {

using json = nlohmann::json;  // keys sorted, as MT4G writes them

// MT4G's section paths, JSON pointers into its layout (docs/mt4g.md).
const std::string& mt4g_section(const std::string& name) {
  static const std::map<std::string, std::string> sections = {
      {"dram_section", "/memory/main"},       {"l2_section", "/memory/l2"},         {"constant_section", "/memory/constant"},
      {"shared_section", "/memory/shared"},   {"l1_section", "/memory/l1"},         {"texture_section", "/memory/texture"},
      {"read_only_section", "/memory/readOnly"}};
  return sections.at(name);
}
constexpr double kGiB = double(1ull << 30);

class Mt4gWriter {
 public:
  explicit Mt4gWriter(const toml::table& doc) : t_(doc) {}

  // Sections are placed by their JSON pointers in MT4G's layout.
  json document(const std::string& source) {
    json out;
    out["general"] = general();
    out["compute"] = compute();
    out[ptr(mt4g_section("dram_section"))] = main_memory();
    out[ptr(mt4g_section("l2_section"))] = l2();
    out[ptr(mt4g_section("constant_section"))] = constant();
    out[ptr(mt4g_section("shared_section"))] = shared();
    out[ptr(mt4g_section("l1_section"))] = cache("l1_cache", "memory.l1");
    for (const auto& [role, section] : {std::pair{"texture_cache", "texture_section"}, std::pair{"readonly_cache", "read_only_section"}})
      if (auto c = path_cache(role, field_of(mt4g_section(section)))) out[ptr(mt4g_section(section))] = *c;
    share(out);
    out["meta"] = {{"exporter", "memtopo export --format mt4g"}, {"source", source}, {"leftOut", left_out_}};
    if (auto when = t_.text("meta.created_utc")) out["meta"]["timestamp"] = *when;
    return out;
  }

 private:
  // The key of a role (docs/roles.md), and the element of a cache by its subject ("l1_cache"):
  // the element of the key with its size, what a storage value names.
  const std::string& key(const char* role) const { return t_.key(role); }
  std::string element(const std::string& subject) const {
    const std::string& k = t_.cache(subject, "size_bytes");
    return k.substr(0, k.find('.'));
  }
  // An exact, finite number of `k`; nothing (and a note) where it is absent or a bound.
  std::optional<double> exact(const std::string& k, const std::string& field) {
    const auto v = t_.number(k);
    if (!v) return std::nullopt;
    if (t_.bound(k) != "exact") {
      left_out_.push_back(field + ": " + k + " is an " + t_.bound(k) + " bound");
      return std::nullopt;
    }
    return v;
  }
  std::optional<int64_t> required_integer(const std::string& k, const std::string& field) {
    if (auto v = t_.integer(k)) return v;
    throw TopologyExportError(0, "mt4g: " + field + " needs " + k + ", which the topology lacks (sys-sage requires it)");
  }
  json size_object(const std::string& k, const std::string& field) {
    const auto v = exact(k, field);
    if (!v || *v <= 0) return nullptr;
    return {{"confidence", t_.confidence(k)}, {"method", "p-chase"}, {"randomized", false}, {"size", int64_t(*v)},
            {"unit", "bytes"}};
  }
  json latency_object(const std::string& k, const std::string& field) {
    const auto v = exact(k, field);
    if (!v || *v <= 0) return nullptr;
    return {{"mean", *v}, {"method", "p-chase"}, {"unit", "cycles"}};
  }
  static json value_object(double v, const char* unit) { return {{"unit", unit}, {"value", v}}; }
  static json value_object(int64_t v, const char* unit) { return {{"unit", unit}, {"value", v}}; }
  static void put(json& j, const char* name, json v) {
    if (!v.is_null()) j[name] = std::move(v);
  }

  json general() {
    const std::string cc = t_.text(key("gpu.compute_capability")).value_or("");
    const auto dot = cc.find('.');
    if (dot == std::string::npos) throw TopologyExportError(0, "mt4g: general.computeCapability needs " + key("gpu.compute_capability"));
    major_ = std::atoi(cc.substr(0, dot).c_str());
    minor_ = std::atoi(cc.substr(dot + 1).c_str());
    const std::string backend = t_.text("meta.backend").value_or("");
    return {{"name", t_.text(key("gpu.name")).value_or("unknown GPU")},
            {"vendor", backend == "sim" ? "memtopo simulated" : "NVIDIA"},
            {"computeCapability", {{"major", major_}, {"minor", minor_}}},
            {"clockRate", value_object(*required_integer(key("gpu.sm_clock_khz"), "general.clockRate"), "kHz")}};
  }

  // CUDA cores (FP32 lanes) per SM by compute capability: the one value sys-sage needs that
  // memtopo does not measure (docs/mt4g.md).
  int cores_per_sm() const {
    if (major_ == 8 && minor_ == 0) return 64;
    if (major_ >= 8) return 128;
    if (major_ == 7) return 64;
    if (major_ == 6 && minor_ == 0) return 64;
    return 128;
  }

  json compute() {
    json c;
    c["multiProcessorCount"] = *required_integer(key("gpu.sm_count"), "compute.multiProcessorCount");
    c["numberOfCoresPerMultiProcessor"] = cores_per_sm();
    c["warpSize"] = *required_integer(key("gpu.warp_size"), "compute.warpSize");
    c["maxThreadsPerBlock"] = *required_integer(key("gpu.max_threads_per_block"), "compute.maxThreadsPerBlock");
    c["maxThreadsPerMultiProcessor"] = *required_integer(key("gpu.max_threads_per_sm"), "compute.maxThreadsPerMultiProcessor");
    c["maxBlocksPerMultiProcessor"] = *required_integer(key("gpu.max_blocks_per_sm"), "compute.maxBlocksPerMultiProcessor");
    if (auto v = t_.integer(key("gpu.registers_per_block"))) c["regsPerBlock"] = *v;
    if (auto v = t_.integer(key("gpu.registers_per_sm"))) c["regsPerMultiProcessor"] = *v;
    return c;
  }

  // sys-sage reads a level's latency together with both rates: all three, or none.
  void rates(json& j, const std::string& latency, const std::string& read, const std::string& write,
             const std::string& field) {
    json lat = latency_object(latency, field + ".latency");
    const auto r = exact(read, field + ".readBandwidth"), w = exact(write, field + ".writeBandwidth");
    if (lat.is_null() || !r || !w) {
      if (!lat.is_null() || r || w)
        left_out_.push_back(field + ".latency and rates: sys-sage reads them together, and " +
                            (lat.is_null() ? latency : !r ? read : write) + " is not known");
      return;
    }
    j["latency"] = lat;
    j["readBandwidth"] = value_object(*r / kGiB, "GiB/s");
    j["writeBandwidth"] = value_object(*w / kGiB, "GiB/s");
  }

  json main_memory() {
    json m;
    m["totalGlobalMem"] = value_object(*required_integer(key("gpu.global_memory_bytes"), "memory.main.totalGlobalMem"), "bytes");
    m["memoryClockRate"] = value_object(*required_integer(key("gpu.memory_clock_khz"), "memory.main.memoryClockRate"), "kHz");
    m["memoryBusWidth"] = value_object(*required_integer(key("gpu.memory_bus_width_bits"), "memory.main.memoryBusWidth"), "bit");
    rates(m, key("memory.latency_cycles@main"), key("memory.read_bytes_per_second@main"), key("memory.write_bytes_per_second@main"), "memory.main");
    return m;
  }

  json l2() {
    const auto k = [&](const char* quantity) { return t_.cache("l2_cache", quantity); };
    json j;
    const auto size = t_.integer(key("gpu.l2_bytes"));
    const auto measured = exact(k("size_bytes"), "memory.l2.size");
    if (!size && !measured) throw TopologyExportError(0, "mt4g: memory.l2.size needs " + key("gpu.l2_bytes"));
    j["size"] = value_object(size ? *size : int64_t(*measured), "bytes");
    put(j, "lineSize", size_object(k("line_bytes"), "memory.l2.lineSize"));
    put(j, "fetchGranularity", size_object(k("fetch_granularity_bytes"), "memory.l2.fetchGranularity"));
    rates(j, k("latency_cycles"), key("cache.read_bytes_per_second@l2_cache"), key("cache.write_bytes_per_second@l2_cache"), "memory.l2");
    if (j.contains("latency"))
      if (auto p = exact(k("miss_penalty_cycles"), "memory.l2.missPenalty")) j["missPenalty"] = value_object(*p, "cycles");
    return j;
  }

  // One per-SM cache; `{}` where nothing of it is known (sys-sage's l1 may be empty).
  json cache(const std::string& subject, const std::string& field) {
    const auto k = [&](const char* quantity) { return t_.cache(subject, quantity); };
    json j = json::object();
    put(j, "size", size_object(k("size_bytes"), field + ".size"));
    put(j, "lineSize", size_object(k("line_bytes"), field + ".lineSize"));
    put(j, "fetchGranularity", size_object(k("fetch_granularity_bytes"), field + ".fetchGranularity"));
    put(j, "latency", latency_object(k("latency_cycles"), field + ".latency"));
    if (!j.empty()) j["amountPerMultiprocessor"] = 1;
    if (j.contains("latency"))
      if (auto p = exact(k("miss_penalty_cycles"), field + ".missPenalty")) j["missPenalty"] = value_object(*p, "cycles");
    return j;
  }
  // Texture and read-only: sys-sage requires size, fetch granularity and latency.
  std::optional<json> path_cache(const std::string& subject, const std::string& field) {
    json j = cache(subject, field);
    if (j.contains("size") && j.contains("fetchGranularity") && j.contains("latency")) return j;
    if (!j.empty()) left_out_.push_back(field + ": sys-sage needs its size, fetch granularity and latency together");
    return std::nullopt;
  }

  json constant() {
    json c;
    c["totalConstMem"] = value_object(*required_integer(key("gpu.constant_memory_bytes"), "memory.constant.totalConstMem"), "bytes");
    json l15 = cache("constant_cache_l15", "memory.constant.l1.5");
    json l1 = cache("constant_cache", "memory.constant.l1");
    l15.erase("amountPerMultiprocessor");
    const bool l1_own = t_.text(key("cache.storage@constant_cache")).value_or("own") == "own";
    if (!l1_own) l1 = {{"sharedWith", {"L1"}}};
    const bool l15_ok = l15.contains("size") && l15.contains("fetchGranularity");
    const bool l1_ok = !l1_own || (l1.contains("size") && l1.contains("fetchGranularity") && l1.contains("latency"));
    if (l15_ok && l1_ok) {
      c["l1.5"] = l15;
      c["l1"] = l1;
    } else if (!l15.empty() || !l1.empty()) {
      left_out_.push_back("memory.constant.l1 and l1.5: sys-sage reads both or neither, and the size, fetch granularity "
                          "or latency of one is not known");
    }
    return c;
  }

  json shared() {
    json s;
    s["sharedMemPerBlock"] = value_object(*required_integer(key("gpu.shared_per_block_bytes"), "memory.shared.sharedMemPerBlock"), "bytes");
    s["sharedMemPerMultiProcessor"] =
        value_object(*required_integer(key("gpu.shared_per_sm_bytes"), "memory.shared.sharedMemPerMultiProcessor"), "bytes");
    put(s, "latency", latency_object(key("memory.latency_cycles@shared"), "memory.shared.latency"));
    return s;
  }

  static json::json_pointer ptr(const std::string& at) { return json::json_pointer(at); }
  // "/memory/texture" as the notes name it: "memory.texture".
  static std::string field_of(std::string at) {
    std::replace(at.begin(), at.end(), '/', '.');
    return at.substr(1);
  }

  // Paths that use the L1's storage ("l1d") name each other in sharedWith, as MT4G does.
  void share(json& out) {
    const std::string l1 = element("l1_cache");
    const bool tex = t_.text(key("cache.storage@texture_cache")).value_or("") == l1;
    const bool ro = t_.text(key("cache.storage@readonly_cache")).value_or("") == l1;
    const bool con = t_.text(key("cache.storage@constant_cache")).value_or("") == l1;
    json with = json::array();
    if (con) with.push_back("Constant L1");
    if (ro) with.push_back("Read Only");
    if (tex) with.push_back("Texture");
    const auto with_at = [](const char* section) { return ptr(mt4g_section(section) + "/sharedWith"); };
    if (!with.empty()) out[with_at("l1_section")] = with;
    if (tex && out.contains(ptr(mt4g_section("texture_section"))))
      out[with_at("texture_section")] = ro ? json{"L1", "Read Only"} : json{"L1"};
    if (ro && out.contains(ptr(mt4g_section("read_only_section"))))
      out[with_at("read_only_section")] = tex ? json{"L1", "Texture"} : json{"L1"};
  }

  TopologyReads t_;
  int major_ = 0, minor_ = 0;
  std::vector<std::string> left_out_;
};

}  // namespace

std::string mt4g_json_text(const toml::table& doc, const std::string& source) {
  return Mt4gWriter(doc).document(source).dump(4) + "\n";
}

}  // namespace memtopo::host
