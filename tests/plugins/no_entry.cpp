// t-no-entry: a shared library without memtopo_plugin_entry.
extern "C" __attribute__((visibility("default"))) int some_other_function() { return 7; }
