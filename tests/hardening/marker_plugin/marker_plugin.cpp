// An assertion plugin whose code announces itself: a constructor that runs at
// load time writes $FIELDPROOF_TEST_MARKER and then, if $FIELDPROOF_TEST_ABORT is set, aborts.
// `fieldproof validate` must do neither (it reads the plugin's tables, never loads it); `run`
// loads it. Its one type, hardening.marker, has a required number `level` >= 0.
#include <cstdio>
#include <cstdlib>

#include "fieldproof/assertions/plugin.hpp"

namespace {

using fieldproof::assertions::AssertionType;
using fieldproof::assertions::Checker;
using fieldproof::assertions::PlanContext;
using fieldproof::assertions::PlannedAssertion;
using fieldproof::assertions::Verdict;
using fieldproof::scenario::ParamKind;
using fieldproof::scenario::ParamSpec;
using fieldproof::scenario::TypeSpec;

__attribute__((constructor)) void announce_loading() {
  if (const char* marker = std::getenv("FIELDPROOF_TEST_MARKER")) {
    if (FILE* f = std::fopen(marker, "w")) {
      std::fputs("the plugin's constructor ran\n", f);
      std::fclose(f);
    }
  }
  if (std::getenv("FIELDPROOF_TEST_ABORT") != nullptr) std::abort();
}

class PassAtFinish : public Checker {
 public:
  using Checker::Checker;
  void on_finish(fieldproof::SimTime t) override {
    resolve(Verdict::kPassed, "the marker plugin's checker ran", t, {}, {});
  }
};

class MarkerType : public AssertionType {
 public:
  std::string_view name() const override { return "hardening.marker"; }
  PlannedAssertion plan(const fieldproof::scenario::AssertionSpec& spec,
                        const PlanContext&) const override {
    return {spec, "", nlohmann::json{{"planned_by", "marker plugin"}}, {}};
  }
  std::unique_ptr<Checker> checker(const PlannedAssertion& p) const override {
    return std::make_unique<PassAtFinish>(p);
  }
};

TypeSpec marker_spec() {
  TypeSpec t;
  t.type = "hardening.marker";
  t.summary = "passes at the end; its library's constructor writes a marker file";
  ParamSpec level;
  level.name = "level";
  level.kind = ParamKind::kNumber;
  level.required = true;
  level.minimum = 0;
  level.description = "any number >= 0";
  t.params.push_back(level);
  return t;
}

}  // namespace

FIELDPROOF_ASSERTIONS_PLUGIN(registrar) {
  registrar.add(marker_spec(), std::make_unique<MarkerType>());
}
