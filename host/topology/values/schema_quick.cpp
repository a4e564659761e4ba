// The quick judge: the schema compiled once into nodes, walked beside the document. Every answer
// is conservative: true only where the full validator (valijson with strong types, as schema.cpp
// runs it) accepts the same document; tests/host/test_schema_quick.cpp holds it to that.
#include "topology/values/schema_quick.hpp"

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <regex>
#include <string>
#include <unordered_map>
#include <vector>

namespace memtopo::host {
namespace {

using json = nlohmann::json;

// A pattern compiled once; std::regex_search as the full validator runs it, each text once
// per thread: a fleet's files repeat the same few hundred key names.
class Pattern {
 public:
  explicit Pattern(const std::string& source) : regex_(source) {}
  bool found_in(const std::string& text) const {
    thread_local std::unordered_map<const Pattern*, std::unordered_map<std::string, bool>> seen;
    auto& answers = seen[this];
    if (const auto a = answers.find(text); a != answers.end()) return a->second;
    if (answers.size() > 100000) answers.clear();  // texts that do not repeat (dates)
    const bool found = std::regex_search(text, regex_);
    answers.emplace(text, found);
    return found;
  }

 private:
  std::regex regex_;
};

enum TypeBit : unsigned {
  kObject = 1, kArray = 2, kString = 4, kInteger = 8, kNumber = 16, kBoolean = 32, kNull = 64, kUnknownType = 128
};

unsigned type_bit(const json& name) {
  static const std::map<std::string, unsigned> bits = {{"object", kObject},   {"array", kArray},   {"string", kString},
                                                       {"integer", kInteger}, {"number", kNumber}, {"boolean", kBoolean},
                                                       {"null", kNull}};
  const auto it = name.is_string() ? bits.find(name.get<std::string>()) : bits.end();
  return it != bits.end() ? it->second : kUnknownType;
}

bool has_type(const json& v, unsigned types) {
  return ((types & kObject) && v.is_object()) || ((types & kArray) && v.is_array()) ||
         ((types & kString) && v.is_string()) || ((types & kInteger) && v.is_number_integer()) ||
         ((types & kNumber) && v.is_number()) || ((types & kBoolean) && v.is_boolean()) || ((types & kNull) && v.is_null());
}

// One schema, its keywords read once.
struct Node {
  bool never = false;  // a false schema, or one with a keyword the judge does not know
  const Node* ref = nullptr;
  std::optional<unsigned> types;
  const json* enumeration = nullptr;
  std::vector<const Node*> any_of;
  bool member_schemas = false;  // properties, patternProperties or additionalProperties
  std::map<std::string, const Node*, std::less<>> properties;
  std::vector<std::pair<std::unique_ptr<Pattern>, const Node*>> pattern_properties;
  const Node* additional = nullptr;
  std::vector<std::string> required;
  const Node* property_names = nullptr;
  const Node* items = nullptr;
  std::optional<double> minimum, maximum;
  std::optional<int64_t> min_length, max_length;
  std::unique_ptr<Pattern> pattern;
};

bool is_annotation(const std::string& keyword) {
  return keyword == "$schema" || keyword == "$id" || keyword == "title" || keyword == "description" ||
         keyword == "$comment" || keyword == "definitions" || keyword == "default" || keyword == "examples";
}

class CompiledSchema {
 public:
  explicit CompiledSchema(json source) : root_json_(std::move(source)) { root_ = compile(root_json_); }
  const Node& root() const { return *root_; }

 private:
  json root_json_;
  std::deque<Node> nodes_;
  std::map<const json*, const Node*> compiled_;  // by address: a $ref's target compiles once
  const Node* root_ = nullptr;

  const Node* compile(const json& s) {
    if (const auto it = compiled_.find(&s); it != compiled_.end()) return it->second;
    Node& n = nodes_.emplace_back();
    compiled_[&s] = &n;
    if (s.is_boolean()) {
      n.never = !s.get<bool>();
      return &n;
    }
    if (!s.is_object()) {
      n.never = true;
      return &n;
    }
    if (const auto ref = s.find("$ref"); ref != s.end()) {
      compile_ref(n, s, *ref);
      return &n;
    }
    for (auto k = s.begin(); k != s.end(); ++k)
      if (!is_annotation(k.key()) && !compile_keyword(n, k.key(), k.value())) n.never = true;
    return &n;
  }

  // draft-07: beside "$ref" only annotations count.
  void compile_ref(Node& n, const json& s, const json& ref) {
    for (auto k = s.begin(); k != s.end(); ++k)
      if (k.key() != "$ref" && !is_annotation(k.key())) n.never = true;
    if (!ref.is_string() || ref.get_ref<const std::string&>().rfind("#/", 0) != 0) {
      n.never = true;
      return;
    }
    const json::json_pointer pointer(ref.get<std::string>().substr(1));
    if (!root_json_.contains(pointer)) {
      n.never = true;
      return;
    }
    n.ref = compile(root_json_.at(pointer));
  }

  bool compile_keyword(Node& n, const std::string& keyword, const json& a) {
    if (keyword == "type") {
      unsigned bits = 0;
      if (a.is_array())
        for (const auto& t : a) bits |= type_bit(t);
      else
        bits = type_bit(a);
      n.types = bits;
      return !(bits & kUnknownType);
    }
    if (keyword == "enum") return a.is_array() && (n.enumeration = &a);
    if (keyword == "anyOf") {
      if (!a.is_array()) return false;
      for (const auto& option : a) n.any_of.push_back(compile(option));
      return true;
    }
    if (keyword == "properties" || keyword == "patternProperties") {
      if (!a.is_object()) return false;
      n.member_schemas = true;
      for (auto p = a.begin(); p != a.end(); ++p) {
        if (keyword == "properties") n.properties.emplace(p.key(), compile(p.value()));
        else n.pattern_properties.emplace_back(std::make_unique<Pattern>(p.key()), compile(p.value()));
      }
      return true;
    }
    if (keyword == "additionalProperties") {
      n.member_schemas = true;
      n.additional = compile(a);
      return true;
    }
    if (keyword == "required") {
      if (!a.is_array()) return false;
      for (const auto& name : a) {
        if (!name.is_string()) return false;
        n.required.push_back(name.get<std::string>());
      }
      return true;
    }
    if (keyword == "propertyNames") return (n.property_names = compile(a));
    if (keyword == "items") return (a.is_object() || a.is_boolean()) && (n.items = compile(a));  // no tuple form
    if (keyword == "minimum" || keyword == "maximum") {
      if (!a.is_number()) return false;
      (keyword == "minimum" ? n.minimum : n.maximum) = a.get<double>();
      return true;
    }
    if (keyword == "minLength" || keyword == "maxLength") {
      if (!a.is_number_integer() || a.get<int64_t>() < 0) return false;
      (keyword == "minLength" ? n.min_length : n.max_length) = a.get<int64_t>();
      return true;
    }
    if (keyword == "pattern") {
      if (!a.is_string()) return false;
      n.pattern = std::make_unique<Pattern>(a.get<std::string>());
      return true;
    }
    return false;  // a keyword this judge does not know
  }
};

bool meets(const Node& n, const json& v, int depth);

// The checks that apply to a text: a member's name under propertyNames, or a string value.
bool text_meets(const Node& n, const std::string& text) {
  if (n.enumeration) {
    bool listed = false;
    for (const auto& allowed : *n.enumeration) listed = listed || (allowed.is_string() && allowed.get_ref<const std::string&>() == text);
    if (!listed) return false;
  }
  // The full validator counts code points up to the first NUL: the judge counts only ASCII.
  if (n.max_length && int64_t(text.size()) > *n.max_length) return false;  // code points never outnumber bytes
  if (n.min_length) {
    for (const char c : text)
      if (c == '\0' || static_cast<unsigned char>(c) >= 0x80) return false;
    if (int64_t(text.size()) < *n.min_length) return false;
  }
  return !n.pattern || n.pattern->found_in(text);
}

bool name_meets(const Node& n, const std::string& name, int depth) {
  if (n.never || depth > 32) return false;
  if (n.ref) return name_meets(*n.ref, name, depth + 1);
  if (n.types && !(*n.types & kString)) return false;
  if (!n.any_of.empty()) {
    bool any = false;
    for (const Node* option : n.any_of) any = any || name_meets(*option, name, depth + 1);
    if (!any) return false;
  }
  return text_meets(n, name);
}

bool members_meet(const Node& n, const json& v, int depth) {
  for (const auto& name : n.required)
    if (!v.contains(name)) return false;
  for (auto m = v.begin(); m != v.end(); ++m) {
    const std::string& name = m.key();
    if (n.property_names && !name_meets(*n.property_names, name, depth + 1)) return false;
    if (!n.member_schemas) continue;
    bool matched = false;
    if (const auto own = n.properties.find(name); own != n.properties.end()) {
      matched = true;
      if (!meets(*own->second, m.value(), depth + 1)) return false;
    }
    for (const auto& [pattern, sub] : n.pattern_properties) {
      if (!pattern->found_in(name)) continue;
      matched = true;
      if (!meets(*sub, m.value(), depth + 1)) return false;
    }
    // No additionalProperties: any member is allowed.
    if (!matched && n.additional && !meets(*n.additional, m.value(), depth + 1)) return false;
  }
  return true;
}

bool meets(const Node& n, const json& v, int depth) {
  if (n.never || depth > 32) return false;
  // The full validator reads integers past int64 as negative numbers: no verdict of ours.
  if (v.is_number_unsigned() && v.get<uint64_t>() > uint64_t(INT64_MAX)) return false;
  if (n.ref) return meets(*n.ref, v, depth + 1);
  if (n.types && !has_type(v, *n.types)) return false;
  if (n.enumeration && !(v.is_string() || v.is_boolean())) return false;  // other equalities: not judged here
  if (n.enumeration && v.is_boolean()) {
    bool listed = false;
    for (const auto& allowed : *n.enumeration) listed = listed || allowed == v;
    if (!listed) return false;
  }
  if (!n.any_of.empty()) {
    bool any = false;
    for (const Node* option : n.any_of) any = any || meets(*option, v, depth + 1);
    if (!any) return false;
  }
  if (v.is_string()) return text_meets(n, v.get_ref<const std::string&>());
  if (v.is_number()) {
    const double x = v.get<double>();
    return (!n.minimum || x >= *n.minimum) && (!n.maximum || x <= *n.maximum);
  }
  if (v.is_array()) {
    if (n.items)
      for (const auto& item : v)
        if (!meets(*n.items, item, depth + 1)) return false;
    return true;
  }
  if (v.is_object()) return members_meet(n, v, depth);
  return true;
}

}  // namespace

bool surely_meets_schema(std::string_view schema_text, const nlohmann::json& doc) {
  // Compiled once per schema; fleet judges its files from several threads.
  static std::mutex guard;
  static std::map<const char*, std::shared_ptr<const CompiledSchema>> cache;
  std::shared_ptr<const CompiledSchema> schema;
  {
    const std::lock_guard<std::mutex> lock(guard);
    auto& cached = cache[schema_text.data()];
    if (!cached) cached = std::make_shared<const CompiledSchema>(json::parse(schema_text));
    schema = cached;
  }
  return meets(schema->root(), doc, 0);
}

}  // namespace memtopo::host
