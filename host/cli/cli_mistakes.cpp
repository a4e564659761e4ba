// Command lines a user got wrong, said in memtopo's words before CLI11 says something less
// helpful: an unknown command or option with the name most likely meant ("--ouput" is reported
// as unknown, not as "--output is required"), and a missing file named with what it is for.
#include <CLI/CLI.hpp>

#include "cli/cli_internal.hpp"
#include "topology/base/suggest.hpp"

namespace memtopo::host::cli {
namespace {

const CLI::App* subcommand_named(const CLI::App& app, const std::string& name) {
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; }))
    if (sub->get_name() == name) return sub;
  return nullptr;
}

std::vector<std::string> long_options(const CLI::App& app) {
  std::vector<std::string> out;
  for (const CLI::Option* o : app.get_options())
    for (const auto& n : o->get_lnames()) out.push_back("--" + n);
  return out;
}

}  // namespace

std::string unknown_command_error(const CLI::App& app, const std::vector<std::string>& args) {
  if (args.empty() || args[0].empty() || args[0][0] == '-' || subcommand_named(app, args[0])) return "";
  std::vector<std::string> names;
  std::string list;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    names.push_back(sub->get_name());
    list += (list.empty() ? "" : ", ") + sub->get_name();
  }
  const std::string suggestion = did_you_mean(args[0], names);
  return "unknown command '" + args[0] + "'" + (suggestion.empty() ? "; the" : suggestion + " The") + " commands are " +
         list + " (memtopo --help describes them)";
}

std::string unknown_option_error(const CLI::App& app, const std::vector<std::string>& args) {
  const CLI::App* sub = args.empty() ? nullptr : subcommand_named(app, args[0]);
  const CLI::App& scope = sub ? *sub : app;
  std::vector<std::string> known = long_options(scope);
  if (sub)
    for (const auto& name : long_options(app)) known.push_back(name);
  for (size_t i = sub ? 1 : 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--") break;  // what follows is no option
    if (a.size() < 3 || a.compare(0, 2, "--") != 0) continue;
    const std::string name = a.substr(0, a.find('='));
    if (std::find(known.begin(), known.end(), name) != known.end()) continue;
    const std::string where = sub ? sub->get_name() + ": " : "";
    return where + "unknown option '" + name + "'" + did_you_mean(name, known) + " (memtopo " +
           (sub ? sub->get_name() + " " : "") + "--help lists the options)";
  }
  return "";
}

std::string missing_argument_error(const CLI::App& app, const CLI::ParseError& e) {
  if (!dynamic_cast<const CLI::RequiredError*>(&e)) return "";
  for (const CLI::App* sub : app.get_subcommands()) {
    std::string usage;
    const CLI::Option* missing = nullptr;
    for (const CLI::Option* o : sub->get_options()) {
      if (!o->get_positional()) continue;
      usage += " " + o->get_name();
      if (std::string(e.what()) == o->get_name() + " is required") missing = o;
    }
    if (missing)
      return sub->get_name() + ": " + missing->get_name() + " is missing: " + missing->get_description() +
             " (usage: memtopo " + sub->get_name() + " [options]" + usage + ")";
  }
  return "";
}

}  // namespace memtopo::host::cli
