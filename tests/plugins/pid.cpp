// t-pid: four probes in a chain, each reporting the process it ran in; `own` asks for a process
// of its own (MT_PROBE_OWN_PROCESS), so a worker ends before it and after it.
#include <unistd.h>

#include <memtopo/probe.hpp>

static memtopo::Probe pid_probe(const char* name, const char* key, const char* after) {
  memtopo::Probe p(std::string("t-pid/") + name);
  p.summary("reports its process id").provides({key});
  if (after) p.requires_keys({after});
  const std::string k = key;
  p.run([k](memtopo::Context& ctx) { ctx.result(k, int64_t(::getpid())); });
  return p;
}

MEMTOPO_PLUGIN("t-pid", "1.0.0", pid_probe("a", "pid.a", nullptr), pid_probe("b", "pid.b", "pid.a").own_process(),
               pid_probe("c", "pid.c", "pid.b"), pid_probe("d", "pid.d", "pid.c"))
