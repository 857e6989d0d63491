/* The assertion plugin entry point exported as data, not as a function: calling it would crash the
 * host, so it is refused from the library's symbols before anything of it runs. */
__attribute__((visibility("default"))) const char fieldproof_assertions_plugin_v1[32] = "data";
