// The plugin's entry point: the one symbol the engine looks for (fieldproof_assertions_plugin_v1).
#include "fieldproof/assertions/plugin.hpp"
#include "visits_waypoints.hpp"

FIELDPROOF_ASSERTIONS_PLUGIN(registrar) {
  registrar.add(fieldproof_example::visits_waypoints_spec(),
                fieldproof_example::make_visits_waypoints_type());
}
