// TOML++'s parser, compiled once for the sanitized build (cmake/MemtopoHardening.cmake):
// instrumented like our code, where Debian's libtomlplusplus.so is not.
#define TOML_IMPLEMENTATION
#include <toml++/toml.h>
