// The source of the targets that own a precompiled header which others reuse (tests/,
// tests/plugins/, plugins/ CMakeLists.txt): it adds nothing but the header itself.
