// The scenario the assertion tests plan against: two vehicles and two timeline entries ("drive" at
// 1 s, then "back"), followed by the assertions under test. `back_trigger` is the second entry's
// trigger line ("after: drive" or "at: 20s").
#pragma once

#include <string>
#include <string_view>

namespace fieldproof::assertions::testing_scenario {

inline std::string synthetic_scenario(std::string_view back_trigger) {
  return std::string(R"(name: synthetic
world: examples/worlds/depot.sdf
vehicles:
  - name: ugv1
    spawn: {x: 0, y: 0}
  - name: ugv2
    spawn: {x: 5, y: 0}
timeline:
  - action: navigate_to_pose
    name: drive
    vehicle: ugv1
    at: 1s
    goal: {x: 10, y: 0}
  - action: navigate_to_pose
    name: back
    vehicle: ugv1
    )") + std::string(back_trigger) +
         R"(
    goal: {x: 0, y: 0}
)";
}

}  // namespace fieldproof::assertions::testing_scenario
