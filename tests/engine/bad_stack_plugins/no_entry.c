/* A shared library that is not a stack plugin: it exports neither symbol of plugin_api.hpp. */
int fieldproof_test_something_else(void) { return 42; }
