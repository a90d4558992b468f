/* Plugins that speak the scenario API's version but are broken in another way; compiled once
 * per BROKEN_* kind. The structs mirror internal::PluginDesc and ScenarioDesc of scenario.h. */
#include <signal.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
  const char* name;
  void (*function)(void*);
  const int64_t* args;
  int32_t num_arg_sets;
  int32_t num_args;
  const char* const* arg_names;
  const int32_t* threads;
  int32_t num_threads;
  int64_t count_warmup;
  int64_t count_ops;
} ScenarioDesc;

typedef struct {
  const ScenarioDesc* scenarios;
  int32_t num_scenarios;
  const char* compiler;
  const char* build_flags;
  const char* error;
} PluginDesc;

static void Body(void* state) { (void)state; }

static const ScenarioDesc kScenarios[] = {{NULL, Body, NULL, 0, 0, NULL, NULL, 0, 0, 0}};
static const PluginDesc kDesc = {kScenarios, 1, "cc", "", NULL};

int allocbench_plugin_api_version(void) { return 1; }

const void* allocbench_plugin_describe(void) {
#if defined(BROKEN_NULL_DESCRIBE)
  return NULL;
#else
  return &kDesc;
#endif
}

#if defined(BROKEN_CRASH_AT_LOAD)
__attribute__((constructor)) static void CrashWhileLoading(void) { raise(SIGSEGV); }
#endif
