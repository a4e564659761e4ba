// The source that owns the test binaries' precompiled header (tests/CMakeLists.txt): it adds
// nothing but the header itself.
