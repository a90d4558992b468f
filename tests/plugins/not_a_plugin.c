/* A shared library with no allocbench entry points. */
int not_a_plugin_answer(void) { return 42; }
