// `fieldproof compare RUN_A RUN_B`: how far the second run's ground-truth trajectories stray from
// the first's (docs/runs.md, comparing two runs).
//
//   Result<Trajectories> a = load_trajectories("runs/lockstep-a");
//   Result<Trajectories> b = load_trajectories("runs/lockstep-b");
//   if (!a.ok() || !b.ok()) return 2;                        // the Status names the file
//   CompareResult r = compare_trajectories(*a, *b, 0.25);
//   std::cout << r.to_text();                                // or r.to_json().dump(2)
//   return r.within ? 0 : 1;
//
// Times are timeline seconds: a pose sample's simulated time minus the run's clock.origin_sim_s
// (run.json; 0 when absent). Each vehicle of the first run is compared over the span both runs
// cover: the second run's trajectory is interpolated linearly at the first run's sample times
// there. A vehicle missing from the second run, or without a common span, is not within; nor is
// one whose runs cover different spans (a run that ended early against a full one): the start or
// end differs by more than span_tolerance_s (default: 1.5 sample periods), and the text says by
// how much. Only the run's vehicles (run.json vehicles) are compared, not the static models
// whose poses were watched.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "fieldproof/util/status.hpp"

namespace fieldproof::engine {

struct TrajectoryPoint {
  double t = 0.0;  // timeline seconds
  double x = 0.0;
  double y = 0.0;
};

// Per vehicle, sorted by t.
using Trajectories = std::map<std::string, std::vector<TrajectoryPoint>>;

// The pose samples of a run directory's samples.jsonl, of the vehicles run.json lists (every
// pose when run.json or its vehicles are absent). An error naming the file when the directory or
// samples.jsonl is missing (kNotFound) or cannot be read, when run.json is there but is not a run
// record (a JSON object with a string run_id and status), or when there is no pose sample
// (kInvalidArgument). Lines that
// are not JSON (or longer than 16 MiB) are skipped; with `warnings`, one line says how many and
// where the first was ("runs/a/samples.jsonl:17: 3 lines that are not JSON skipped").
Result<Trajectories> load_trajectories(const std::filesystem::path& run_dir,
                                       std::vector<std::string>* warnings = nullptr);

struct VehicleDeviation {
  std::string vehicle;
  size_t compared = 0;   // samples of the first run inside the common span
  double max_m = 0.0;    // the largest deviation
  double max_t_s = 0.0;  // and when (timeline seconds)
  double mean_m = 0.0;
  double final_m = 0.0;  // at the last compared sample
  double final_t_s = 0.0;
  std::pair<double, double> span_a{0.0, 0.0};  // the first run's first and last sample times
  std::pair<double, double> span_b{0.0, 0.0};
  double span_diff_s = 0.0;       // the larger of the start and end differences
  double span_tolerance_s = 0.0;  // what was allowed
  bool span_ok = true;
  bool within = false;
  std::string note;  // why not compared ("" when compared)
};

struct CompareResult {
  double tolerance_m = 0.0;
  std::vector<VehicleDeviation> vehicles;  // the first run's vehicles, by name
  bool within = false;                     // every vehicle compared and max_m <= tolerance

  nlohmann::json to_json() const;
  std::string to_text() const;
};

// The second trajectory's position at t by linear interpolation; t must lie in its span and
// the trajectory must not be empty.
TrajectoryPoint interpolate(const std::vector<TrajectoryPoint>& trajectory, double t);

// span_tolerance_s < 0: 1.5 times the larger mean sample period of the two trajectories.
CompareResult compare_trajectories(const Trajectories& a, const Trajectories& b, double tolerance_m,
                                   double span_tolerance_s = -1.0);

}  // namespace fieldproof::engine
