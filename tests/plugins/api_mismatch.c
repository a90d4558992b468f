/* What a plugin built against a future (or past) scenario API looks like to allocbench-run. */
int allocbench_plugin_api_version(void) { return 999; }
const void* allocbench_plugin_describe(void) { return 0; }
