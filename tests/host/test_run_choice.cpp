// The run request resolved once: the command line over the config, devices parsed to specs.
#include <catch2/catch.hpp>

#include "topology/base/usage_error.hpp"
#include "run/planning/run_choice.hpp"

using namespace memtopo::host;

TEST_CASE("run choice: --device names the devices, parsed once", "[host][run_choice]") {
  const DeviceChoice one = resolve_device("cuda:3", {});
  REQUIRE(one.specs.size() == 1);
  CHECK(one.specs[0].kind == DeviceSpec::Kind::Cuda);
  CHECK(one.specs[0].ordinal == 3);
  CHECK_FALSE(one.several());
  CHECK(&one.one("") == &one.specs[0]);

  const DeviceChoice list = resolve_device("sim:a.toml,cuda:0,sim", {});
  REQUIRE(list.specs.size() == 3);
  CHECK(list.specs[0].file == "a.toml");
  CHECK(list.specs[2].kind == DeviceSpec::Kind::Sim);
  CHECK(list.specs[2].file.empty());
  CHECK(list.several());
  CHECK_THROWS_WITH(list.one("memtopo run measures several at once"),
                    Catch::Contains("names several devices; this command takes one (memtopo run measures several"));

  const DeviceChoice all = resolve_device("all", {});
  CHECK(all.all);
  CHECK(all.several());
  CHECK(all.specs.empty());
}

TEST_CASE("run choice: the config's device where the command line names none", "[host][run_choice]") {
  Config cfg;
  CHECK(resolve_device("", cfg).specs.at(0).kind == DeviceSpec::Kind::Auto);
  CHECK(resolve_device("", cfg).text == "auto");
  cfg.device = "sim:b.toml";
  CHECK(resolve_device("", cfg).specs.at(0).file == "b.toml");
  CHECK(resolve_device("cuda:1", cfg).specs.at(0).ordinal == 1);  // the command line wins
}

TEST_CASE("run choice: a device no command takes is refused with what to write", "[host][run_choice]") {
  CHECK_THROWS_AS(resolve_device("gpu0", {}), UsageError);
  CHECK_THROWS_WITH(resolve_device("gpu0", {}), Catch::Contains("use auto, cuda, cuda:N"));
  CHECK_THROWS_WITH(resolve_device("cuda:99999999999999999999", {}),
                    Catch::Contains("there is no GPU 99999999999999999999"));
  CHECK_THROWS_WITH(resolve_device("cuda:0,,cuda:1", {}), Catch::Contains("empty entry"));
}

TEST_CASE("run choice: raw folder, isolation, jobs and verify, each from one side", "[host][run_choice]") {
  Config cfg;
  cfg.file = "c.toml";
  cfg.raw_dir = "raw-from-config";
  cfg.jobs = 3;
  cfg.isolation = false;
  cfg.verify = true;
  cfg.probes = {"a", "b"};
  RunRequest a;
  RunChoice r = resolve_run(a, cfg);
  CHECK(r.raw_dir == "raw-from-config");
  CHECK(r.raw_dir_named == "c.toml: [run] raw_dir raw-from-config");
  CHECK(r.jobs == 3);
  CHECK_FALSE(r.jobs_from_command_line);
  CHECK(r.jobs_named == "[run] jobs = 3");
  CHECK_FALSE(r.isolated);
  CHECK(r.verify);
  CHECK(r.selection.only == std::vector<std::string>{"a", "b"});

  a.raw_dir = "raw";
  a.jobs = 2;
  a.only = {"x,y", "z"};
  r = resolve_run(a, cfg);
  CHECK(r.raw_dir == "raw");
  CHECK(r.raw_dir_named == "--raw-dir raw");
  CHECK(r.jobs == 2);
  CHECK(r.jobs_named == "--jobs 2");
  CHECK(r.selection.only == std::vector<std::string>{"x", "y", "z"});

  a.no_isolation = true;
  cfg.isolation = true;
  CHECK_FALSE(resolve_run(a, cfg).isolated);
}
