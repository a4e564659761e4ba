// memtopo: the command line. Everything lives in memtopo_host (host/src) so tests drive it.
#include "memtopo_host/cli.hpp"

int main(int argc, char** argv) { return memtopo::host::run_cli(argc, argv); }
