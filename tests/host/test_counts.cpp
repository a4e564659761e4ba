// Values checked against the hardware counters, on the simulated GPU whose model counts the same
// events: a read that moves what it believes carries verified = "counters" with the counted
// bytes; one that believes twice its bytes is caught, not reported, and warned about with both
// numbers (docs/measurement.md, "Counters").
#include <toml++/toml.h>

#include "helpers.hpp"

using test::run_memtopo;
using test::TempDir;

TEST_CASE("counters: a rate whose bytes the counters confirm is verified, a wrong byte count is caught",
          "[host][counters]") {
  TempDir dir("counts");
  const auto r = run_memtopo("run --device sim --plugin-path " + test::q(test::plugin_set("counts")) +
                                 " --only t-counts -o out.toml",
                             dir.path);
  INFO(r.output);
  REQUIRE(std::filesystem::exists(dir / "out.toml"));
  const auto out = toml::parse_file((dir / "out.toml").string());
  CHECK(out["t_counts"]["right_bytes_per_second"].value<double>().has_value());
  const auto prov = out["provenance"]["t_counts"]["right_bytes_per_second"];
  CHECK(prov["verified"].value_or(std::string()) == "counters");
  // One MiB read through .cg: the model counts 32768 sectors of 32 bytes at the L2.
  CHECK(prov["counted_bytes"].value_or(0.0) == Approx(double(1 << 20)).epsilon(0.001));
  CHECK_THAT(prov["verify_note"].value_or(std::string()), Catch::Contains("L2 reads"));
  // The wrong count: no value, and a warning that names both numbers.
  CHECK_FALSE(out["t_counts"]["wrong_bytes_per_second"]);
  CHECK_THAT(r.output, Catch::Contains("t_counts.wrong_bytes_per_second not reported"));
  CHECK_THAT(r.output, Catch::Contains("0.001049 GB counted, 0.002097 GB believed"));
}
