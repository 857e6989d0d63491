// Small plugins that are wrong in one way each (BAD_KIND), for plugin_test.cpp: each must be
// reported with its library's path and why, and none of its types added.
#include <stdexcept>

#include "fieldproof/assertions/plugin.hpp"

namespace {

using fieldproof::assertions::AssertionType;
using fieldproof::assertions::Checker;
using fieldproof::assertions::PlanContext;
using fieldproof::assertions::PlannedAssertion;
using fieldproof::scenario::ParamKind;
using fieldproof::scenario::ParamSpec;
using fieldproof::scenario::TypeSpec;

class NeverChecker : public Checker {
 public:
  using Checker::Checker;
  void on_finish(fieldproof::SimTime) override {}
};

class Named : public AssertionType {
 public:
  explicit Named(std::string name) : name_(std::move(name)) {}
  std::string_view name() const override { return name_; }
  PlannedAssertion plan(const fieldproof::scenario::AssertionSpec& spec,
                        const PlanContext&) const override {
    return {spec, "", nlohmann::json::object(), {}};
  }
  std::unique_ptr<Checker> checker(const PlannedAssertion& p) const override {
    return std::make_unique<NeverChecker>(p);
  }

 private:
  std::string name_;
};

[[maybe_unused]] TypeSpec spec(const std::string& type) {
  TypeSpec t;
  t.type = type;
  t.summary = "a type of a bad plugin";
  return t;
}

}  // namespace

#if BAD_KIND == 1  // no entry point at all
extern "C" __attribute__((visibility("default"))) int not_an_assertion_plugin() { return 1; }
#elif BAD_KIND == 2   // an entry point that registers nothing
FIELDPROOF_ASSERTIONS_PLUGIN(registrar) { (void)registrar; }
#elif BAD_KIND == 3   // a built-in's type
FIELDPROOF_ASSERTIONS_PLUGIN(registrar) {
  registrar.add(spec("reach_pose"), std::make_unique<Named>("reach_pose"));
}
#elif BAD_KIND == 4   // the example plugin's type (loaded after it: taken)
FIELDPROOF_ASSERTIONS_PLUGIN(registrar) {
  registrar.add(spec("example.visits_waypoints"),
                std::make_unique<Named>("example.visits_waypoints"));
}
#elif BAD_KIND == 5   // a spec that does not validate: an enum without choices
FIELDPROOF_ASSERTIONS_PLUGIN(registrar) {
  TypeSpec t = spec("bad.malformed");
  ParamSpec mode;
  mode.name = "mode";
  mode.kind = ParamKind::kEnum;  // and no choices
  t.params.push_back(mode);
  registrar.add(t, std::make_unique<Named>("bad.malformed"));
}
#elif BAD_KIND == 6   // registration throws
FIELDPROOF_ASSERTIONS_PLUGIN(registrar) {
  (void)registrar;
  throw std::runtime_error("no licence for this host");
}
#elif BAD_KIND == 7   // built against other headers: another ABI key
extern "C" __attribute__((visibility("default"))) const FieldproofAssertionsPluginV1*
fieldproof_assertions_plugin_v1() {
  static const FieldproofAssertionsPluginV1 d{fieldproof::assertions::kPluginApiVersion,
                                              fieldproof::assertions::plugin_abi_key() + 1,
                                              nullptr};
  return &d;
}
#elif BAD_KIND == 8   // built for another API version
extern "C" __attribute__((visibility("default"))) int fieldproof_assertions_plugin_v2() {
  return 2;
}
#elif BAD_KIND == 12  // built for plugin API v1 (its Checker took times as double seconds)
extern "C" __attribute__((visibility("default"))) const FieldproofAssertionsPluginV1*
fieldproof_assertions_plugin_v1() {
  static const FieldproofAssertionsPluginV1 d{1, fieldproof::assertions::plugin_abi_key(), nullptr};
  return &d;
}
#elif BAD_KIND == 9   // a type without a namespace
FIELDPROOF_ASSERTIONS_PLUGIN(registrar) {
  registrar.add(spec("visits"), std::make_unique<Named>("visits"));
}
#elif BAD_KIND == 10  // the TypeSpec and the AssertionType disagree on the name
FIELDPROOF_ASSERTIONS_PLUGIN(registrar) {
  registrar.add(spec("bad.one"), std::make_unique<Named>("bad.two"));
}
#elif BAD_KIND == 11  // one good type, one malformed: neither is added
FIELDPROOF_ASSERTIONS_PLUGIN(registrar) {
  registrar.add(spec("bad.fine"), std::make_unique<Named>("bad.fine"));
  TypeSpec t = spec("bad.listless");
  ParamSpec items;
  items.name = "items";
  items.kind = ParamKind::kList;  // and no element spec
  t.params.push_back(items);
  registrar.add(t, std::make_unique<Named>("bad.listless"));
}
#else
#error "BAD_KIND must be 1 to 11"
#endif
