#include "run/planning/run_choice.hpp"

#include "topology/base/usage_error.hpp"

namespace memtopo::host {

namespace {

DeviceSpec parsed_device(const std::string& entry) {
  const auto spec = parse_device_spec(entry);
  if (!spec) throw UsageError("--device " + entry + ": " + device_spec_error(entry));
  if (spec->kind == DeviceSpec::Kind::Cuda && spec->ordinal < 0)
    throw UsageError("--device " + entry + ": there is no GPU " + entry.substr(5) +
                     "; GPU numbers are small (cuda:0 is the first GPU; nvidia-smi -L lists them)");
  return *spec;
}

}  // namespace

std::vector<std::string> split_lists(const std::vector<std::string>& values) {
  std::vector<std::string> out;
  for (const auto& v : values) {
    size_t begin = 0;
    for (size_t comma; (comma = v.find(',', begin)) != std::string::npos; begin = comma + 1)
      out.push_back(v.substr(begin, comma - begin));
    out.push_back(v.substr(begin));
  }
  return out;
}

const DeviceSpec& DeviceChoice::one(const std::string& command_note) const {
  if (several() || specs.empty())
    throw UsageError("--device " + text + ": names several devices; this command takes one" +
                     (command_note.empty() ? "" : " (" + command_note + ")"));
  return specs.front();
}

DeviceChoice resolve_device(const std::string& command_line, const Config& cfg) {
  DeviceChoice d;
  d.text = !command_line.empty() ? command_line : cfg.device.value_or("auto");
  if (const std::string problem = device_arg_error(d.text); !problem.empty())
    throw UsageError("--device " + d.text + ": " + problem);
  if (d.text == "all") {
    d.all = true;
    return d;
  }
  for (size_t start = 0; start <= d.text.size();) {
    const size_t end = std::min(d.text.find(',', start), d.text.size());
    d.specs.push_back(parsed_device(d.text.substr(start, end - start)));
    start = end + 1;
  }
  return d;
}

RunChoice resolve_selection(const SelectionRequest& a, const Config& cfg) {
  RunChoice r;
  r.device = resolve_device(a.device, cfg);
  r.selection.only = a.only.empty() ? cfg.probes : split_lists(a.only);
  r.selection.skip = a.skip.empty() ? cfg.skip : split_lists(a.skip);
  return r;
}

RunChoice resolve_run(const RunRequest& a, const Config& cfg) {
  RunChoice r = resolve_selection(a, cfg);
  if (!a.raw_dir.empty()) {
    r.raw_dir = a.raw_dir;
    r.raw_dir_named = "--raw-dir " + a.raw_dir;
  } else if (cfg.raw_dir) {
    r.raw_dir = *cfg.raw_dir;
    r.raw_dir_named = cfg.file.string() + ": [run] raw_dir " + *cfg.raw_dir;
  }
  r.isolated = !a.no_isolation && cfg.isolation.value_or(true);
  r.verify = a.verify || cfg.verify.value_or(false);
  r.jobs_from_command_line = a.jobs > 0;
  r.jobs = a.jobs > 0 ? a.jobs : cfg.jobs.value_or(0);
  r.jobs_named = a.jobs > 0 ? "--jobs " + std::to_string(a.jobs) : "[run] jobs = " + std::to_string(r.jobs);
  return r;
}

}  // namespace memtopo::host
