// junit.xml against the common JUnit format's XSD (tests/report/schema/junit.xsd),
// validated by xmllint (Debian's libxml2-utils, installed by scripts/install-deps.sh).
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "shell_util.hpp"

namespace fieldproof::junit_schema {

struct Check {
  bool ran = false;  // xmllint was found
  int exit_code = -1;
  std::string out;  // xmllint's words, or why it did not run
};

inline Check validate(const std::filesystem::path& xml) {
  Check c;
  if (shell::run_shell("command -v xmllint >/dev/null 2>&1").exit_code != 0) {
    c.out = "xmllint is not installed (Debian's libxml2-utils; scripts/install-deps.sh)";
    return c;
  }
  c.ran = true;
  const shell::ShellResult r = shell::run_shell(
      "xmllint --noout --schema '" FIELDPROOF_JUNIT_XSD "' '" + xml.string() + "' 2>&1");
  c.exit_code = r.exit_code;
  c.out = r.out;
  return c;
}

}  // namespace fieldproof::junit_schema

// Validates a junit.xml file; without xmllint the test is skipped, saying why.
#define EXPECT_JUNIT_VALID(xml)                                                                 \
  do {                                                                                          \
    const ::fieldproof::junit_schema::Check check_ = ::fieldproof::junit_schema::validate(xml); \
    if (!check_.ran) GTEST_SKIP() << check_.out;                                                \
    EXPECT_EQ(check_.exit_code, 0) << (xml) << ": " << check_.out;                              \
  } while (0)
