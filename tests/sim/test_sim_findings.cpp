// Descriptions the fuzzers (tests/fuzz) found the reader mishandling: each is now refused
// with FILE:LINE and the key, never undefined behaviour. Their seeds are in
// tests/fuzz/corpus/sim_description/.
#include <catch2/catch.hpp>

#include <string>

#include "memtopo/errors.hpp"
#include "sim_helpers.hpp"

using namespace simtest;

TEST_CASE("sim: a set_hash of 64 entries or more is refused, not shifted past 64 bits", "[sim][description][fuzz]") {
  std::string bits;
  for (int i = 0; i < 64; ++i) bits += (i ? ", " : "") + std::to_string(i);
  const std::string path = write_temp("hash64", "[device]\nsm_count = 4\n[l1d]\nsize_bytes = 4096\nsets = 8\n"
                                                "[sim.l1d]\nset_hash = [" + bits + "]\n");
  CHECK_THROWS_WITH(memtopo::engine::open_sim(path),
                    Catch::StartsWith(path + ":") && Catch::Contains("sim.l1d.set_hash: 64 index bits cannot address 8 sets"));
}
