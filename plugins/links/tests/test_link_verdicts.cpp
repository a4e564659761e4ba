// The links probes' verdicts and rates, without a GPU.
#include <catch2/catch.hpp>

#include "links/link_verdicts.hpp"

TEST_CASE("a PCIe link at its maximum is ok, below it the verdict names what is lower", "[links]") {
  CHECK(links::pcie_verdict(5, 5, 16, 16) == "ok");
  const std::string narrow = links::pcie_verdict(5, 5, 8, 16);
  CHECK(narrow.find("PCIe Gen5 x8, below its maximum Gen5 x16") == 0);
  CHECK(narrow.find("8 of 16 lanes") != std::string::npos);
  const std::string slow = links::pcie_verdict(3, 5, 16, 16);
  CHECK(slow.find("generation 3 of 5") != std::string::npos);
  CHECK(slow.find("lanes") == std::string::npos);
  CHECK(links::pcie_verdict(-1, 5, 16, 16) == "unknown");
  CHECK_FALSE(links::pcie_known(5, 5, 0, 16));
}

TEST_CASE("NVLinks: ok when every link is up, else how many are down", "[links]") {
  CHECK(links::nvlink_verdict(18, 18) == "ok");
  CHECK(links::nvlink_verdict(0, 0) == "ok");
  CHECK(links::nvlink_verdict(18, 16) == "2 of 18 NVLinks down");
}

TEST_CASE("a copy's rate is its bytes over the median time, with the spread", "[links]") {
  const links::CopyRate r = links::copy_rate(1000, {4, 1, 3, 2, 5});
  CHECK(r.median_ns == Approx(3));
  CHECK(r.bytes_per_second == Approx(1000 / 3e-9));
  CHECK(r.p10_ns == Approx(1.4));
  CHECK(r.p90_ns == Approx(4.6));
  CHECK(links::copy_rate(1000, {}).bytes_per_second == 0);
}
