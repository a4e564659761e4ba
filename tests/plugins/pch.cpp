// The source that owns the test plugins' precompiled header (tests/plugins/CMakeLists.txt):
// it adds nothing but the header itself.
