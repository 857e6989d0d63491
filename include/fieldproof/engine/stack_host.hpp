// The software of a vehicle, as the engine hosts it. Two hosts, one interface, and no stack has a
// privilege another lacks (nothing here knows a stack by its name):
//  - the process host starts any argv (the scenario's `command`), in its own process group, with
//    the vehicle's environment (docs/vehicle-interface.md), its output in <run dir>/logs/<v>.log;
//    the program connects to the coordinator itself and registers as stack_participant(vehicle);
//  - the plugin host dlopens a stack plugin (stacks/plugin_api.hpp, the C ABI) and drives it on a
//    thread of its own as the participant stack_participant(vehicle).
//
//   StackSpec spec;                                   // resolved at plan time (plan.cpp)
//   spec.kind = StackSpec::Kind::kProcess;
//   spec.argv = {"/usr/bin/python3", "/home/me/my_nav.py"};
//   auto host = make_stack_host(spec);
//   if (!host->start(context, &error)) ...            // started (a plugin: created, on its thread)
//   host->exited();                                   // a process that ended: why; else nullopt
//   host->stop();                                     // ends it (a process: the whole group)
//
// Resolution (plan time) reads files only: check_stack_plugin() looks at the library's ELF
// dynamic symbol table and never loads it, so `fieldproof validate` runs no code of a stack.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "fieldproof/lockstep/participant.hpp"
#include "fieldproof/time/duration.hpp"
#include "fieldproof/time/system_clock.hpp"
#include "fieldproof/util/status.hpp"
#include "fieldproof/world/occupancy_grid.hpp"

namespace fieldproof::engine {

struct StackSpec {
  enum class Kind { kNone, kProcess, kPlugin };
  Kind kind = Kind::kNone;
  std::vector<std::string> argv;  // kProcess: argv[0] an absolute path; `arguments` appended
  std::string cwd;                // kProcess: working directory (plan: the scenario's folder by
                                  // default); "" = the run directory
  std::vector<std::pair<std::string, std::string>> env;  // kProcess: added to the environment
  std::string plugin;                                    // kPlugin: the library's path
  std::string params_json = "{}";                        // the vehicle's parameters as JSON
  std::string as_written;  // command[0] or plugin as the scenario gives it (for records)

  // "python3 (process)", "libmy_nav.so (plugin)", "none": as written, else the resolved path.
  std::string describe() const;
};

// The participant name a vehicle's stack registers as (and the engine waits for):
// "<vehicle>_nav". A process learns it from FIELDPROOF_PARTICIPANT.
std::string stack_participant(const std::string& vehicle);

// The directories searched for a bare stack plugin name, in order: FIELDPROOF_PLUGIN_PATH (':'
// separated), <tool_dir>/../lib/fieldproof/stacks (the installed folder), <tool_dir>/../lib (the
// build tree). tool_dir is the folder of the fieldproof executable; empty: that of this process.
std::vector<std::filesystem::path> stack_plugin_dirs(const std::filesystem::path& tool_dir = {});
// The folder of the running executable (/proc/self/exe), empty when unknown.
std::filesystem::path executable_dir();

struct Resolved {
  std::string path;   // absolute, when found
  std::string error;  // why not, when not
  explicit operator bool() const { return error.empty(); }
};

// A program as a scenario's command names it: with a '/' against base_dir; a bare name in
// base_dir, then on PATH, then in extra_dirs. It must be an executable regular file.
Resolved find_program(const std::string& program, const std::filesystem::path& base_dir,
                      const std::vector<std::filesystem::path>& extra_dirs);
// A stack plugin: with a '/' against base_dir; a bare name N as N, libN.so or N.so in base_dir,
// then in each of dirs. Found means the file exists; check_stack_plugin says whether it is one.
Resolved find_stack_plugin(const std::string& plugin, const std::filesystem::path& base_dir,
                           const std::vector<std::filesystem::path>& dirs);
// Reads the library's ELF dynamic symbols (nothing is loaded or run): OK when it exports
// fieldproof_stack_create as a function and fieldproof_stack_abi_version equal to this engine's
// FIELDPROOF_STACK_ABI_VERSION; otherwise kInvalidArgument saying what is wrong ("not an ELF
// shared library", "does not
// export fieldproof_stack_create", "exports fieldproof_stack_create as data, not a function",
// "built for stack ABI version 2; this engine loads version 1", ...).
[[nodiscard]] Status check_stack_plugin(const std::string& path);

// A stack named on a command line (`fieldproof world --stack/--stack-command`), found as a
// scenario's would be against base_dir: with `command` given, its argv (split at spaces) with the
// program found by find_program (base_dir, PATH, then beside fieldproof); otherwise `plugin`
// found by find_stack_plugin (base_dir, FIELDPROOF_PLUGIN_PATH, the installed stack folder) and
// checked by its ELF symbols. kNotFound when the program or plugin is not there,
// kInvalidArgument when the command is empty or the file is not a stack plugin.
Result<StackSpec> resolve_stack(const std::string& plugin, const std::string& command,
                                const std::filesystem::path& base_dir);

// What a host needs to start a vehicle's stack.
struct StackContext {
  std::string vehicle;
  lockstep::Role role = lockstep::Role::kRegulating;
  uint64_t seed = 0;
  std::string world_file;  // absolute
  std::string world_name;
  std::string model_file;   // FIELDPROOF_MODEL_FILE: the vehicle's robot model; may be empty
  std::string run_dir;      // FIELDPROOF_RUN_DIR; may be empty
  std::string params_file;  // FIELDPROOF_PARAMS_FILE (the process host); may be empty
  std::string log_file;     // the process's stdout and stderr; empty: inherited
  std::string endpoint;     // the coordinator (processes)
  // The plugin host's participant (in-process or over the session's endpoint).
  std::function<std::unique_ptr<lockstep::Participant>(const std::string& name, lockstep::Role)>
      participant;
  const world::OccupancyGrid* map = nullptr;  // the plugin's static map
  // Bounds from which World::occupancy_grid at map->resolution makes `map` again: a process
  // gets them as FIELDPROOF_MAP_BOUNDS ("x_min,y_min,x_max,y_max", metres) and the resolution as
  // FIELDPROOF_MAP_RESOLUTION.
  world::MapBounds map_bounds;
  WallNow wall_now;                                    // the plugin's wall clock
  std::function<void(const std::string&)> on_problem;  // a plugin's refused input, one line each
};

class StackHost {
 public:
  virtual ~StackHost() = default;
  // Starts the stack: a process is spawned; a plugin is loaded, created and run on its thread.
  // An unavailable Status naming the vehicle and what happened when it could not.
  virtual Status start(const StackContext& context) = 0;
  // True for processes: the engine waits for their registration over the endpoint.
  virtual bool is_process() const = 0;
  // Why the stack ended by itself ("exited with code 3", "killed by signal 9", "the plugin's tick
  // failed: ..."), nullopt while it runs or once stop() was asked.
  virtual std::optional<std::string> exited() = 0;
  // Ends the stack: a plugin is shut down (its goal aborted, lifecycle inactive) and unloaded; a
  // process group gets SIGTERM, then SIGKILL after kStopGrace. Idempotent.
  virtual void stop() = 0;
  // The process's pid while it runs; 0 for a plugin; -1 for a process that has ended.
  virtual int pid() const = 0;
  // fault.kill_stack (docs/network.md): SIGKILL to the process group, the leader reaped; exited()
  // says nothing of it afterwards (the engine asked for it). What was killed ("pid 4242, killed
  // by signal 9"), or a failed_precondition Status saying why nothing was (a plugin, a process
  // that had ended).
  virtual Result<std::string> kill() {
    return Status(StatusCode::kFailedPrecondition, "only a process stack can be killed");
  }
  // Starts the stack again after kill(), with the context of its first start; its Status when it
  // could not start.
  virtual Status restart() {
    return Status(StatusCode::kFailedPrecondition, "only a process stack can be restarted");
  }
};

// How long a process stack has after SIGTERM before its group is killed.
inline constexpr Duration kStopGrace = seconds(3);

std::unique_ptr<StackHost> make_stack_host(const StackSpec& spec);

}  // namespace fieldproof::engine
