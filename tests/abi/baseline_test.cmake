# A plugin built against the headers of a release of the ABI (baseline-X.Y/) is listed without
# loading errors and runs on the simulated GPU with this host: inputs, options, key flags, a raw
# series and a timed chase all cross the boundary as a binary of that release sends them. Run by
# ctest (cmake -P). Inputs: MEMTOPO (the executable), PLUGIN_DIR (holds abi-baseline.so),
# WORK_DIR, ABI_VERSION (the release: 3.4 to 3.9).
include(${CMAKE_CURRENT_LIST_DIR}/../cmake/out_of_tree_steps.cmake)
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})

step(env -u MEMTOPO_PLUGIN_PATH ${MEMTOPO} list -v --plugin-path ${PLUGIN_DIR})
if(step_output MATCHES "loading errors" OR NOT step_output MATCHES "abi-baseline/chase")
  message(FATAL_ERROR "the ABI ${ABI_VERSION} plugin is not listed, or is refused:\n${step_output}")
endif()

step(env -u MEMTOPO_PLUGIN_PATH ${MEMTOPO} run -q --device sim --plugin-path ${PLUGIN_DIR}
     --only abi-baseline --raw-dir ${WORK_DIR}/raw -o ${WORK_DIR}/baseline.toml)
file(READ ${WORK_DIR}/baseline.toml topo)
# The built-in device (examples/devices/hopper-like.toml) has 8 SMs; the option's default is 2.
if(NOT topo MATCHES "\\[abi_baseline\\]\nchase_cycles = [0-9.]+\ntwice_sm_count = 16\n")
  message(FATAL_ERROR "the ABI ${ABI_VERSION} plugin's results are missing or wrong:\n${topo}")
endif()
if(NOT topo MATCHES "chase_cycles = { probe = \"abi-baseline/chase\"[^}]*headline = true")
  message(FATAL_ERROR "the ${ABI_VERSION} plugin's headline flag is not in the provenance:\n${topo}")
endif()
if(NOT topo MATCHES "twice_sm_count = { probe = \"abi-baseline/sm-count\"[^}]*class = \"configuration\"")
  message(FATAL_ERROR "the ${ABI_VERSION} plugin's configuration flag is not in the provenance:\n${topo}")
endif()
# 3.5's flags: how the fleet judges a key.
if(ABI_VERSION VERSION_GREATER_EQUAL 3.5)
  if(NOT topo MATCHES "chase_cycles = { probe = \"abi-baseline/chase\"[^}]*rated = true" OR
     NOT topo MATCHES "twice_sm_count = { probe = \"abi-baseline/sm-count\"[^}]*structure = true, always = true")
    message(FATAL_ERROR "the ${ABI_VERSION} plugin's rated, structure and always flags are not in the provenance:\n${topo}")
  endif()
endif()
# 3.6: a key without a value, recorded with its reason.
if(ABI_VERSION VERSION_GREATER_EQUAL 3.6)
  if(NOT topo MATCHES "\\[probes.\"abi-baseline/chase\".absent\\]\n\"abi_baseline.far_chase_cycles\" = \"no far chase in this plugin\"")
    message(FATAL_ERROR "the ${ABI_VERSION} plugin's absent key is not in the file:\n${topo}")
  endif()
endif()
# 3.7: an opt-in probe is left out of a run of its plugin, and runs when named.
if(ABI_VERSION VERSION_GREATER_EQUAL 3.7)
  if(topo MATCHES "costly_sm_count")
    message(FATAL_ERROR "the ${ABI_VERSION} plugin's opt-in probe ran though only its plugin was named:\n${topo}")
  endif()
  step(env -u MEMTOPO_PLUGIN_PATH ${MEMTOPO} run -q --device sim --plugin-path ${PLUGIN_DIR}
       --only abi-baseline/costly -o ${WORK_DIR}/costly.toml)
  file(READ ${WORK_DIR}/costly.toml costly)
  if(NOT costly MATCHES "costly_sm_count = 8\n")
    message(FATAL_ERROR "the ${ABI_VERSION} plugin's opt-in probe did not run when named:\n${costly}")
  endif()
endif()
# 3.8: the attachment and a timed copy cross the boundary; a health key is recorded as one.
if(ABI_VERSION VERSION_GREATER_EQUAL 3.8)
  if(NOT topo MATCHES "\\[abi_link\\]\ncopy_ns = [0-9.e+-]+\npcie = \"ok\"\n" OR
     NOT topo MATCHES "pcie = { probe = \"abi-baseline/link\"[^}]*health = true")
    message(FATAL_ERROR "the ${ABI_VERSION} plugin's link keys or health flag are not in the file:\n${topo}")
  endif()
endif()
# 3.9: a key's role (the "memtopo.key_roles" extension) in its provenance entry.
if(ABI_VERSION VERSION_GREATER_EQUAL 3.9)
  if(NOT topo MATCHES "twice_sm_count = { probe = \"abi-baseline/sm-count\"[^}]*role = \"gpu.twice_sm_count\"")
    message(FATAL_ERROR "the ${ABI_VERSION} plugin's key role is not in the provenance:\n${topo}")
  endif()
endif()
file(GLOB raw ${WORK_DIR}/raw/*chase*)
if(NOT raw)
  message(FATAL_ERROR "the ${ABI_VERSION} plugin's raw series was not written to ${WORK_DIR}/raw")
endif()
file(REMOVE_RECURSE ${WORK_DIR})
message(STATUS "ABI ${ABI_VERSION} plugin: listed and run on the simulated GPU by this host")
