// A probe's outcome as JSON: what a worker sends the host and what the journal holds.
#include "run/running/outcome_json.hpp"

#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "topology/plugins/registry.hpp"

namespace memtopo::host {

namespace {

const char* bound_text(mt_bound b) {
  return b == MT_BOUND_AT_LEAST ? "at_least" : b == MT_BOUND_AT_MOST ? "at_most" : "exact";
}

mt_bound bound_from_text(const std::string& s) {
  if (s == "at_least") return MT_BOUND_AT_LEAST;
  if (s == "at_most") return MT_BOUND_AT_MOST;
  if (s == "exact") return MT_BOUND_EXACT;
  throw std::runtime_error("unknown bound '" + s + "'");
}

Status status_from_text(const std::string& s) {
  if (s == "ok") return Status::Ok;
  if (s == "failed") return Status::Failed;
  if (s == "skipped") return Status::Skipped;
  if (s == "not_determinable") return Status::NotDeterminable;
  throw std::runtime_error("unknown status '" + s + "'");
}

}  // namespace

nlohmann::json outcome_to_json(const ProbeOutcome& o) {
  nlohmann::json j;
  j["probe"] = o.probe;
  j["version"] = o.version;
  j["status"] = status_name(o.status);
  j["reason"] = o.reason;
  j["duration_s"] = o.duration_s;
  // Travels from a worker to the host, where it decides the exit status (docs/host.md).
  if (!o.raw_write_errors.empty()) j["raw_write_errors"] = o.raw_write_errors;
  if (!o.absent_keys.empty()) j["absent_keys"] = o.absent_keys;
  for (const auto& [name, v] : o.options)
    j["options"][name] = {{"type", static_cast<int>(v.type)}, {"value", to_json(v)}};
  j["results"] = nlohmann::json::array();
  for (const auto& r : o.results) {
    // The type travels with the value: 2.0 must come back as a float, not an integer.
    nlohmann::json rec = {{"key", r.key},
                          {"type", static_cast<int>(r.value.type)},
                          {"value", to_json(r.value)},
                          {"confidence", r.confidence},
                          {"bound", bound_text(r.bound)},
                          {"note", r.note}};
    if (r.key_flags) rec["key_flags"] = r.key_flags;
    if (!r.role.empty()) rec["role"] = r.role;
    if (!r.verified.empty()) {
      rec["verified"] = r.verified;
      rec["counted_bytes"] = r.counted_bytes;
      rec["verify_note"] = r.verify_note;
    }
    j["results"].push_back(std::move(rec));
  }
  return j;
}

ProbeOutcome outcome_from_json(const nlohmann::json& j) {
  try {
    ProbeOutcome o;
    o.probe = j.at("probe").get<std::string>();
    o.version = j.at("version").get<std::string>();
    o.status = status_from_text(j.at("status").get<std::string>());
    o.reason = j.at("reason").get<std::string>();
    o.duration_s = j.at("duration_s").get<double>();
    if (j.contains("raw_write_errors")) o.raw_write_errors = j.at("raw_write_errors").get<std::vector<std::string>>();
    if (j.contains("absent_keys")) o.absent_keys = j.at("absent_keys").get<std::map<std::string, std::string>>();
    if (j.contains("options"))
      for (const auto& [name, opt] : j.at("options").items()) {
        const nlohmann::json& tag = opt.at("type");
        if (!tag.is_number_integer() || !is_value_type(static_cast<mt_value_type>(tag.get<int>())))
          throw std::runtime_error("type of option " + name + " is not a value type: " + tag.dump());
        auto v = from_json(opt.at("value"), static_cast<mt_value_type>(tag.get<int>()));
        if (!v) throw std::runtime_error("value of option " + name + " does not match its type");
        o.options[name] = *v;
      }
    for (const auto& r : j.at("results")) {
      ResultRecord rec;
      rec.key = r.at("key").get<std::string>();
      // Checked before the cast: a float or an unknown tag would be undefined behaviour.
      const nlohmann::json& tag = r.at("type");
      if (!tag.is_number_integer() || tag.get<int64_t>() < MT_VALUE_INT || tag.get<int64_t>() > MT_VALUE_STRING_ARRAY)
        throw std::runtime_error("type of " + rec.key + " is not a value type (1..7): " + tag.dump());
      const auto type = static_cast<mt_value_type>(tag.get<int>());
      if (r.at("value").is_null())
        throw std::runtime_error(o.probe + ": the value of " + rec.key +
                                 " is null (a NaN or infinity, which results may not hold); the probe is measured again");
      auto v = from_json(r.at("value"), type);
      if (!v) throw std::runtime_error("value of " + rec.key + " does not match its type");
      rec.value = *v;
      rec.confidence = r.at("confidence").get<double>();
      rec.bound = bound_from_text(r.at("bound").get<std::string>());
      rec.note = r.at("note").get<std::string>();
      // Set again from the plugin's declaration where a record is checked (result_check.cpp).
      if (r.contains("key_flags") && r.at("key_flags").is_number_unsigned())
        rec.key_flags = r.at("key_flags").get<uint32_t>() & kKnownKeyFlags;
      if (r.contains("role") && r.at("role").is_string() && role_form_error(r.at("role").get<std::string>()).empty())
        rec.role = r.at("role").get<std::string>();
      if (r.contains("verified")) {
        rec.verified = r.at("verified").get<std::string>();
        rec.counted_bytes = r.at("counted_bytes").get<double>();
        rec.verify_note = r.at("verify_note").get<std::string>();
      }
      rec.probe = o.probe;
      o.results.push_back(std::move(rec));
    }
    return o;
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(e.what());
  }
}

}  // namespace memtopo::host
