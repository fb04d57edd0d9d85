// A loadable library that registers no pass: `dpl-opt --load` must reject it with a clear error.
extern "C" int dpl_test_plugin_without_passes_marker() { return 0; }
