// memtopo: the command line. Everything lives in libraries (host/CMakeLists.txt) so tests drive it.
#include "cli/cli.hpp"

int main(int argc, char** argv) { return memtopo::host::run_cli(argc, argv); }
