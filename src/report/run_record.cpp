#include "fieldproof/report/run_record.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace fieldproof::report {

using nlohmann::json;
namespace fs = std::filesystem;

namespace {

struct StatusNames {
  RunStatus status;
  std::string_view name;
  std::string_view verdict;
  int exit_code;
};

// The one table: a status, its name in run.json, its verdict and the run's exit code.
constexpr StatusNames kStatuses[] = {
    {RunStatus::kPassed, "passed", "PASS", 0},
    {RunStatus::kFailed, "failed", "FAIL", 1},
    {RunStatus::kTimeout, "timeout", "TIMEOUT", 1},
    {RunStatus::kError, "error", "ERROR", 1},
    {RunStatus::kInterrupted, "interrupted", "INTERRUPTED", 130},
    {RunStatus::kInvalid, "invalid", "INVALID", 2},
};

const StatusNames& names_of(RunStatus s) {
  for (const StatusNames& n : kStatuses) {
    if (n.status == s) return n;
  }
  return kStatuses[3];  // unreachable: every enumerator is in the table
}

// Reads fields of one object, collecting what is missing or mistyped as "path: problem".
class FieldReader {
 public:
  FieldReader(const json& j, std::string path, std::vector<std::string>* problems)
      : j_(j), path_(std::move(path)), problems_(problems) {
    if (!j_.is_object()) problem("", "not an object");
  }

  const json* get(std::string_view key, bool required = true) const {
    if (!j_.is_object()) return nullptr;
    const auto it = j_.find(key);
    if (it == j_.end() || it->is_null()) {
      if (required) problem(key, "missing");
      return nullptr;
    }
    return &*it;
  }
  void str(std::string_view key, std::string* out, bool required = true) const {
    if (const json* v = get(key, required)) {
      if (v->is_string()) {
        *out = v->get<std::string>();
      } else {
        problem(key, "not a string");
      }
    }
  }
  void num(std::string_view key, double* out) const {
    if (const json* v = get(key)) {
      if (v->is_number()) {
        *out = v->get<double>();
      } else {
        problem(key, "not a number");
      }
    }
  }
  void boolean(std::string_view key, bool* out) const {
    if (const json* v = get(key)) {
      if (v->is_boolean()) {
        *out = v->get<bool>();
      } else {
        problem(key, "not true or false");
      }
    }
  }
  // A nested value kept as JSON: of the given type, or a problem.
  void keep(std::string_view key, json::value_t type, json* out, bool required = true) const {
    if (const json* v = get(key, required)) {
      if (v->type() == type) {
        *out = *v;
      } else {
        problem(key, type == json::value_t::array ? "not an array" : "not an object");
      }
    }
  }
  std::string at(std::string_view key) const {
    return path_.empty() ? std::string(key) : path_ + "." + std::string(key);
  }
  void problem(std::string_view key, std::string_view what) const {
    problems_->push_back(
        (key.empty() ? (path_.empty() ? std::string("run.json") : path_) : at(key)) + ": " +
        std::string(what));
  }

 private:
  const json& j_;
  std::string path_;
  std::vector<std::string>* problems_;
};

void read_world(const FieldReader& top, RunRecord* r, std::vector<std::string>* problems) {
  const json* w = top.get("world");
  if (!w) return;
  const FieldReader f(*w, "world", problems);
  RunRecord::World world;
  f.str("file", &world.file);
  f.str("name", &world.name);
  f.keep("obstacles", json::value_t::array, &world.obstacles);
  r->world = std::move(world);
}

void read_lists(const FieldReader& top, RunRecord* r, std::vector<std::string>* problems) {
  if (const json* a = top.get("artefacts")) {
    if (!a->is_array()) {
      top.problem("artefacts", "not an array");
    } else {
      for (size_t i = 0; i < a->size(); ++i) {
        const FieldReader f((*a)[i], "artefacts[" + std::to_string(i) + "]", problems);
        RunRecord::Artefact art;
        f.str("path", &art.path);
        f.str("kind", &art.kind, /*required=*/false);
        r->artefacts.push_back(std::move(art));
      }
    }
  }
  if (const json* v = top.get("vehicles")) {
    if (!v->is_array()) {
      top.problem("vehicles", "not an array");
    } else {
      for (size_t i = 0; i < v->size(); ++i) {
        const FieldReader f((*v)[i], "vehicles[" + std::to_string(i) + "]", problems);
        RunRecord::Vehicle veh;
        f.str("name", &veh.name);
        f.str("spawn", &veh.spawn);
        f.str("stack", &veh.stack);
        r->vehicles.push_back(std::move(veh));
      }
    }
  }
  if (const json* rec = top.get("recording", /*required=*/false)) {
    const FieldReader f(*rec, "recording", problems);
    RunRecord::Recording out;
    f.str("path", &out.path);
    if (const json* m = f.get("messages")) {
      if (m->is_number_unsigned() || (m->is_number_integer() && m->get<int64_t>() >= 0)) {
        out.messages = m->get<uint64_t>();
      } else {
        f.problem("messages", "not a count");
      }
    }
    if (const json* t = f.get("topics")) {
      if (t->is_array()) {
        for (const json& topic : *t) {
          if (topic.is_string()) out.topics.push_back(topic.get<std::string>());
        }
      } else {
        f.problem("topics", "not an array");
      }
    }
    r->recording = std::move(out);
  }
}

// The JSON Schema pieces.
json type_of(std::string_view t) { return {{"type", t}}; }
json object_of(json properties, std::vector<std::string> required, bool more = true) {
  json o = {{"type", "object"}, {"properties", std::move(properties)}, {"required", required}};
  if (!more) o["additionalProperties"] = false;
  return o;
}
json array_of(json items) { return {{"type", "array"}, {"items", std::move(items)}}; }

}  // namespace

std::string_view to_string(RunStatus s) { return names_of(s).name; }
std::string_view verdict_of(RunStatus s) { return names_of(s).verdict; }
int exit_code_of(RunStatus s) { return names_of(s).exit_code; }
bool is_judged(RunStatus s) { return s == RunStatus::kPassed || s == RunStatus::kFailed; }

std::optional<RunStatus> parse_run_status(std::string_view text) {
  for (const StatusNames& n : kStatuses) {
    if (n.name == text) return n.status;
  }
  return std::nullopt;
}

json to_json(const RunRecord& r) {
  json j;
  j["run_id"] = r.run_id;
  j["scenario"] = {{"name", r.scenario.name}, {"file", r.scenario.file}};
  if (!r.scenario.digest.empty()) j["scenario"]["digest"] = r.scenario.digest;
  for (const auto& [path, value] : r.scenario.overrides) j["scenario"]["overrides"][path] = value;
  if (r.world) {
    j["world"] = {
        {"file", r.world->file}, {"name", r.world->name}, {"obstacles", r.world->obstacles}};
  }
  j["engine_version"] = r.engine_version;
  j["status"] = to_string(r.status);
  j["verdict"] = r.verdict();
  j["reason"] = r.reason;
  j["exit_code"] = r.exit_code();
  if (r.seed) j["seed"] = *r.seed;
  j["seed_given"] = r.seed_given;
  if (!r.clock.is_null()) j["clock"] = r.clock;
  j["timeline"] = r.timeline;
  if (!r.started_utc.empty()) j["started_utc"] = r.started_utc;
  if (!r.ended_utc.empty()) j["ended_utc"] = r.ended_utc;
  if (r.durations) {
    j["durations"] = {{"wall_s", r.durations->wall_s},
                      {"timeline_s", r.durations->timeline_s},
                      {"sim_s", r.durations->sim_s}};
  }
  if (r.recording) {
    j["recording"] = {{"path", r.recording->path},
                      {"messages", r.recording->messages},
                      {"topics", r.recording->topics}};
  }
  j["artefacts"] = json::array();
  for (const RunRecord::Artefact& a : r.artefacts) {
    json art = {{"path", a.path}};
    if (!a.kind.empty()) art["kind"] = a.kind;
    j["artefacts"].push_back(std::move(art));
  }
  j["assertions"] = r.assertions;
  j["kpis"] = r.kpis;
  j["kpi_collectors"] = r.kpi_collectors;
  if (!r.resources.is_null()) j["resources"] = r.resources;
  if (!r.network.is_null()) j["network"] = r.network;
  j["vehicles"] = json::array();
  for (const RunRecord::Vehicle& v : r.vehicles) {
    j["vehicles"].push_back({{"name", v.name}, {"spawn", v.spawn}, {"stack", v.stack}});
  }
  return j;
}

Result<RunRecord> run_record_from_json(const json& j) {
  std::vector<std::string> problems;
  RunRecord r;
  const FieldReader top(j, "", &problems);
  top.str("run_id", &r.run_id);
  if (const json* s = top.get("scenario")) {
    const FieldReader f(*s, "scenario", &problems);
    f.str("name", &r.scenario.name);
    f.str("file", &r.scenario.file);
    f.str("digest", &r.scenario.digest, /*required=*/false);
    if (const json* ov = f.get("overrides", /*required=*/false); ov && ov->is_object()) {
      for (const auto& [path, value] : ov->items()) {
        r.scenario.overrides[path] = value.is_string() ? value.get<std::string>() : value.dump();
      }
    }
  }
  read_world(top, &r, &problems);
  top.str("engine_version", &r.engine_version);
  std::string status;
  top.str("status", &status);
  if (!status.empty()) {
    if (const auto st = parse_run_status(status)) {
      r.status = *st;
      std::string verdict;
      top.str("verdict", &verdict);
      if (!verdict.empty() && verdict != verdict_of(*st)) {
        top.problem("verdict", "'" + verdict + "' does not match status '" + status + "'");
      }
      if (const json* code = top.get("exit_code")) {
        if (!code->is_number_integer() || code->get<int>() != exit_code_of(*st)) {
          top.problem("exit_code", "does not match status '" + status + "'");
        }
      }
    } else {
      top.problem("status", "unknown status '" + status + "'");
    }
  }
  top.str("reason", &r.reason);
  if (const json* seed = top.get("seed")) {
    if (seed->is_number_integer()) {
      r.seed = seed->get<int64_t>();
    } else {
      top.problem("seed", "not an integer");
    }
  }
  top.boolean("seed_given", &r.seed_given);
  top.keep("clock", json::value_t::object, &r.clock);
  top.keep("timeline", json::value_t::array, &r.timeline);
  top.str("started_utc", &r.started_utc);
  top.str("ended_utc", &r.ended_utc);
  if (const json* d = top.get("durations")) {
    const FieldReader f(*d, "durations", &problems);
    RunRecord::Durations out;
    f.num("wall_s", &out.wall_s);
    f.num("timeline_s", &out.timeline_s);
    f.num("sim_s", &out.sim_s);
    r.durations = out;
  }
  read_lists(top, &r, &problems);
  top.keep("assertions", json::value_t::array, &r.assertions);
  top.keep("kpis", json::value_t::object, &r.kpis);
  top.keep("kpi_collectors", json::value_t::array, &r.kpi_collectors);
  top.keep("resources", json::value_t::object, &r.resources);
  top.keep("network", json::value_t::object, &r.network, /*required=*/false);
  if (!problems.empty()) {
    std::string message = "not a complete run record: ";
    for (size_t i = 0; i < problems.size(); ++i) message += (i ? "; " : "") + problems[i];
    return Status(StatusCode::kCorrupt, message);
  }
  return r;
}

Result<RunRecord> read_run_record(std::string_view text) {
  const json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return Status(StatusCode::kCorrupt, "run.json is not JSON");
  return run_record_from_json(j);
}

Status write_file_atomically(const fs::path& file, std::string_view text) {
  const fs::path tmp = file.string() + ".tmp";
  const auto fail = [&](const fs::path& p, const char* what) {
    const int err = errno;
    return Status(StatusCode::kIoError, p.string() + ": " + what + ": " + std::strerror(err));
  };
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return fail(tmp, "cannot create");
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const Status s = fail(tmp, "cannot write");
      ::close(fd);
      ::unlink(tmp.c_str());
      return s;
    }
    done += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0) {
    const Status s = fail(tmp, "cannot flush to disk");
    ::close(fd);
    ::unlink(tmp.c_str());
    return s;
  }
  if (::close(fd) != 0) {
    const Status s = fail(tmp, "cannot close");
    ::unlink(tmp.c_str());
    return s;
  }
  if (::rename(tmp.c_str(), file.c_str()) != 0) {
    const Status s = fail(file, "cannot replace");
    ::unlink(tmp.c_str());
    return s;
  }
  // The rename itself is on disk once the directory is.
  const fs::path parent = file.has_parent_path() ? file.parent_path() : fs::path(".");
  if (const int dfd = ::open(parent.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC); dfd >= 0) {
    (void)::fsync(dfd);
    ::close(dfd);
  }
  return Status();
}

Status write_run_record(const fs::path& dir, const RunRecord& r) {
  const std::string text = to_json(r).dump(2, ' ', false, json::error_handler_t::replace) + "\n";
  return write_file_atomically(dir / "run.json", text);
}

std::string run_record_schema() {
  const json str = type_of("string");
  const json num = type_of("number");
  const json obj = type_of("object");
  const json status_names = [] {
    json a = json::array();
    for (const StatusNames& n : kStatuses) a.push_back(n.name);
    return a;
  }();
  const json verdict_names = [] {
    json a = json::array();
    for (const StatusNames& n : kStatuses) a.push_back(n.verdict);
    return a;
  }();
  json assertion = object_of(
      {{"name", str},
       {"type", str},
       {"status", {{"type", "string"}, {"enum", {"passed", "failed", "skipped", "pending"}}}},
       {"reason", str}},
      {"name", "type", "status", "reason"});
  json entry = object_of({{"label", str}, {"action", str}, {"status", str}}, {"status"});
  json doc = object_of(
      {{"run_id", str},
       {"scenario",
        object_of({{"name", str},
                   {"file", str},
                   {"digest", {{"type", "string"}, {"pattern", "^sha256:[0-9a-f]{64}$"}}},
                   {"overrides", {{"type", "object"}, {"additionalProperties", str}}}},
                  {"name", "file"})},
       {"world", object_of({{"file", str}, {"name", str}, {"obstacles", array_of(obj)}},
                           {"file", "name", "obstacles"})},
       {"engine_version", str},
       {"status", {{"type", "string"}, {"enum", status_names}}},
       {"verdict", {{"type", "string"}, {"enum", verdict_names}}},
       {"reason", str},
       {"exit_code", {{"type", "integer"}, {"enum", {0, 1, 2, 130}}}},
       {"seed", type_of("integer")},
       {"seed_given", type_of("boolean")},
       {"clock", object_of({{"mode", str}}, {"mode"})},
       {"timeline", array_of(entry)},
       {"started_utc", str},
       {"ended_utc", str},
       {"durations", object_of({{"wall_s", num}, {"timeline_s", num}, {"sim_s", num}},
                               {"wall_s", "timeline_s", "sim_s"}, /*more=*/false)},
       {"recording", object_of({{"path", str},
                                {"messages", {{"type", "integer"}, {"minimum", 0}}},
                                {"topics", array_of(str)}},
                               {"path", "messages", "topics"})},
       {"artefacts", array_of(object_of({{"path", str}, {"kind", str}}, {"path"}, false))},
       {"assertions", array_of(assertion)},
       {"kpis",
        {{"type", "object"},
         {"additionalProperties", object_of({{"unit", str}, {"source", str}}, {"value"})}}},
       {"kpi_collectors", array_of(object_of({{"name", str}, {"type", str}}, {"name", "type"}))},
       {"resources", obj},
       {"network", obj},
       {"vehicles", array_of(object_of({{"name", str}, {"spawn", str}, {"stack", str}},
                                       {"name", "spawn", "stack"}, false))}},
      {"run_id",         "scenario",  "world",     "engine_version", "status",     "verdict",
       "reason",         "exit_code", "seed",      "seed_given",     "clock",      "timeline",
       "started_utc",    "ended_utc", "durations", "artefacts",      "assertions", "kpis",
       "kpi_collectors", "resources", "vehicles"});
  doc["$schema"] = "https://json-schema.org/draft/2020-12/schema";
  doc["$id"] = "https://fieldproof.dev/schemas/run.json";
  doc["title"] = "fieldproof run record (run.json)";
  doc["description"] =
      "What one finished `fieldproof run` writes to run.json (docs/runs.md). A run cut short by a "
      "crash may hold only run_id, scenario.file, engine_version, status, verdict, reason and "
      "exit_code.";
  return doc.dump(2) + "\n";
}

}  // namespace fieldproof::report
