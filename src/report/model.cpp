// The Report model: run.json read tolerantly (any field may be missing or of another type), the
// run directory's samples and clock for the plots, its files for the artefacts.
#include <algorithm>
#include <cmath>
#include <exception>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>

#include "fieldproof/report/run_record.hpp"
#include "fieldproof/util/input_file.hpp"
#include "report/internal.hpp"

namespace fieldproof::report {
namespace fs = std::filesystem;

namespace {

constexpr size_t kMaxPathPoints = 4000;  // per vehicle, for the plot
constexpr size_t kMaxClockPoints = 4000;

std::string verdict_of_status(const std::string& s) {
  const auto st = parse_run_status(s);
  return st ? std::string(verdict_of(*st)) : std::string();
}

int exit_of_status(const std::string& s) {
  const auto st = parse_run_status(s);
  return st ? exit_code_of(*st) : 1;
}

// An object field as an object: a string becomes {name: s}; anything else null.
json as_named_object(const json* v) {
  if (!v) return nullptr;
  if (v->is_object()) return *v;
  if (v->is_string()) return {{"name", *v}};
  return nullptr;
}

json or_null(const json* v) { return v ? *v : json(nullptr); }

// An object with a string run_id and status: what a run writes, as opposed to the other
// documents a report is made of.
bool looks_like_run_record(const json& run) {
  const json* id = field(run, "run_id");
  const json* status = field(run, "status");
  return id && id->is_string() && status && status->is_string();
}

// Every line that parses as a JSON object (a run cut short may end mid-line). A file that is not
// regular (a FIFO, a device) is not read; lines that are not JSON are counted in a warning.
template <typename F>
void for_each_json_line(const Report::Data& d, const fs::path& p, F&& f) {
  std::error_code ec;
  if (!fs::exists(p, ec)) return;
  util::CheckedFile in(p, util::kNoSizeLimit, p.filename().string());
  if (!in.status().ok()) {
    d.warnings.push_back(in.status().message());
    return;
  }
  util::LineReader lines(in.fd());
  size_t garbage = 0;
  int first = 0;
  while (const std::optional<util::LineReader::Line> line = lines.next()) {
    if (line->text.empty() && !line->too_long) continue;
    json j =
        line->too_long ? json(json::value_t::discarded) : json::parse(line->text, nullptr, false);
    if (j.is_discarded()) {
      if (garbage++ == 0) first = lines.line_number();
      continue;
    }
    if (j.is_object()) f(j);
  }
  if (garbage > 0) {
    d.warnings.push_back(p.string() + ":" + std::to_string(first) + ": " +
                         std::to_string(garbage) + (garbage == 1 ? " line that is" : " lines that are") +
                         " not JSON skipped (the first here)");
  }
}

template <typename T>
std::vector<T> decimate(const std::vector<T>& v, size_t max) {
  if (v.size() <= max) return v;
  std::vector<T> out;
  const double step = static_cast<double>(v.size() - 1) / static_cast<double>(max - 1);
  for (size_t i = 0; i < max; ++i) out.push_back(v[static_cast<size_t>(std::lround(i * step))]);
  return out;
}

// The topics the failed assertions watch, and whether one of them reads resources.jsonl.
std::set<std::string> failed_topics(const json* as, bool* resources) {
  std::set<std::string> out;
  *resources = false;
  if (!as || !as->is_array()) return out;
  for (const auto& a : *as) {
    if (get_str(a, "status") != "failed") continue;
    if (get_str(a, "type") == "resource_usage") *resources = true;
    if (const json* r = field(a, "resolved")) {
      if (auto t = get_str(*r, "topic")) out.insert(*t);
    }
  }
  return out;
}

void read_samples(Report::Data& d) {
  if (d.dir.empty()) return;
  bool want_resources = false;
  const std::set<std::string> topics =
      failed_topics(d.record ? &d.record->assertions : field(d.run, "assertions"), &want_resources);
  std::vector<std::pair<double, double>> sim_wall;  // from clock samples
  std::vector<ClockPoint> clock;
  const auto add_clock = [&](const json& j) {
    const auto sim = get_num(j, "sim");
    if (!sim) return;
    ClockPoint c;
    c.t = *sim;
    c.rtf = get_num(j, "rtf").value_or(std::nan(""));
    c.drift = get_num(j, "drift_s").value_or(std::nan(""));
    if (auto w = get_num(j, "wall")) sim_wall.emplace_back(*sim, *w);
    clock.push_back(c);
  };
  for_each_json_line(d, d.dir / "samples.jsonl", [&](const json& j) {
    const auto kind = get_str(j, "kind");
    if (kind == "pose") {
      auto model = get_str(j, "model");
      if (!model) model = get_str(j, "vehicle");
      const auto x = get_num(j, "x");
      const auto y = get_num(j, "y");
      if (model && x && y && std::isfinite(*x) && std::isfinite(*y)) {
        d.paths[*model].push_back({*x, *y});
        d.poses[*model].push_back({get_num(j, "sim").value_or(0.0), *x, *y});
      }
    } else if (kind == "clock") {
      add_clock(j);
    } else if (!topics.empty() && (kind == "rate" || kind == "latency" || kind == "value")) {
      if (auto t = get_str(j, "topic"); t && topics.count(*t)) d.topic_lines[*t].push_back(j);
    }
  });
  if (want_resources) {
    for_each_json_line(d, d.dir / "resources.jsonl",
                       [&](const json& j) { d.resources.push_back(j); });
  }
  // clock.jsonl, when the engine writes one, is the better source (drift included).
  std::vector<ClockPoint> from_file;
  std::vector<std::pair<double, double>> sw_file;
  std::swap(clock, from_file);
  std::swap(sim_wall, sw_file);
  for_each_json_line(d, d.dir / "clock.jsonl", [&](const json& j) { add_clock(j); });
  if (clock.empty()) {
    clock = std::move(from_file);
    sim_wall = std::move(sw_file);
  }
  if (clock.empty()) return;
  const double sim0 = clock.front().t;
  double target = 1.0;
  if (const json* c = d.record ? &d.record->clock : field(d.run, "clock")) {
    if (auto t = get_num(*c, "target_rtf"); t && *t > 0 && std::isfinite(*t)) target = *t;
  }
  // Drift where the samples have none: simulated minus wall seconds at the target pace since
  // the first sample (pauses are not known here, so they count as drift).
  const bool have_wall = sim_wall.size() == clock.size();
  for (size_t i = 0; i < clock.size(); ++i) {
    if (std::isnan(clock[i].drift) && have_wall) {
      clock[i].drift = (sim_wall[i].first - sim_wall[0].first) -
                       target * (sim_wall[i].second - sim_wall[0].second);
    }
    clock[i].t -= sim0;
  }
  d.clock = decimate(clock, kMaxClockPoints);
  for (auto& [name, pts] : d.paths) pts = decimate(pts, kMaxPathPoints);
}

json artefacts(const Report::Data& d) {
  json out = json::array();
  std::set<std::string> seen;
  const auto add = [&](const std::string& rel) {
    if (!seen.insert(rel).second) return;
    json a = {{"path", rel}, {"size", nullptr}};
    std::error_code ec;
    if (!d.dir.empty()) {
      const auto p = d.dir / rel;
      if (fs::is_regular_file(p, ec)) {
        const auto sz = fs::file_size(p, ec);
        if (!ec) a["size"] = static_cast<uint64_t>(sz);
      } else if (rel == "report.json" || rel == "report.md" || rel == "junit.xml" ||
                 rel == "report.html") {
        a["with_report"] = true;  // written with the report that lists it, after the listing
      } else {
        a["missing"] = true;
      }
    }
    out.push_back(a);
  };
  // The recording first: the one run.json names, else the default place.
  std::string mcap = "recording/recording.mcap";
  std::error_code ec;
  if (d.record) {
    if (d.record->recording) mcap = d.record->recording->path;
    if (!d.dir.empty() && (fs::exists(d.dir / mcap, ec) || d.record->recording)) add(mcap);
    for (const RunRecord::Artefact& a : d.record->artefacts) add(a.path);
  } else {
    if (const json* r = first_field(d.run, {"recording", "mcap"})) {
      if (r->is_string()) mcap = r->get<std::string>();
      if (auto p = get_str(*r, "path")) mcap = *p;
    }
    if (!d.dir.empty() && (fs::exists(d.dir / mcap, ec) || field(d.run, "recording"))) add(mcap);
    if (const json* a = field(d.run, "artefacts"); a && a->is_array()) {
      for (const auto& e : *a) {
        if (e.is_string()) add(e.get<std::string>());
        if (auto p = get_str(e, "path")) add(*p);
      }
    }
  }
  if (d.dir.empty()) return out;
  std::vector<std::string> files;
  for (fs::recursive_directory_iterator it(d.dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (it.depth() > 2) continue;
    if (!it->is_regular_file(ec)) continue;
    const std::string name = it->path().filename().string();
    if (name == "control.sock") continue;
    files.push_back(fs::relative(it->path(), d.dir, ec).generic_string());
  }
  std::sort(files.begin(), files.end(), [](const std::string& a, const std::string& b) {
    const bool am = a.ends_with(".mcap");
    const bool bm = b.ends_with(".mcap");
    if (am != bm) return am;
    return a < b;
  });
  for (const auto& f : files) add(f);
  return out;
}

// The KPI map: run.json's kpis, else every assertion's metrics as <assertion>.<metric>.
json kpi_map(const json* k, const json* as) {
  json out = json::object();
  if (k && k->is_object()) {
    for (auto& [name, v] : k->items()) {
      if (v.is_object()) {
        out[name] = {{"value", or_null(field(v, "value"))},
                     {"unit", or_null(field(v, "unit"))},
                     {"source", or_null(field(v, "source"))}};
      } else {
        out[name] = {{"value", v}, {"unit", nullptr}, {"source", nullptr}};
      }
    }
    return out;
  }
  if (!as || !as->is_array()) return out;
  for (const auto& a : *as) {
    const auto name = get_str(a, "name");
    const json* m = field(a, "metrics");
    if (!name || !m || !m->is_object()) continue;
    for (auto& [metric, v] : m->items()) {
      const std::string key = *name + "." + metric;
      if (v.is_object()) {
        out[key] = {{"value", or_null(field(v, "value"))},
                    {"unit", or_null(field(v, "unit"))},
                    {"source", "assertion " + *name}};
      } else {
        out[key] = {{"value", v}, {"unit", nullptr}, {"source", "assertion " + *name}};
      }
    }
  }
  return out;
}

json array_of_objects(const json* v) {
  json out = json::array();
  if (!v || !v->is_array()) return out;
  for (const auto& e : *v) {
    if (e.is_object()) out.push_back(e);
  }
  return out;
}

// The fields of a document that is not a complete run record, each read where it may be.
void tolerant_fields(const json& r, json& m) {
  m["run_id"] = or_null(field(r, "run_id"));
  const auto status = get_str(r, "status");
  m["status"] = status ? json(*status) : json(nullptr);
  auto verdict = get_str(r, "verdict");
  if (!verdict && status && !verdict_of_status(*status).empty())
    verdict = verdict_of_status(*status);
  m["verdict"] = verdict ? json(*verdict) : json(nullptr);
  const json* ec = field(r, "exit_code");
  if (ec && ec->is_number_integer()) {
    m["exit_code"] = *ec;
  } else {
    m["exit_code"] = status ? exit_of_status(*status) : 1;
  }
  m["reason"] = or_null(field(r, "reason"));
  json sc = as_named_object(field(r, "scenario"));
  if (sc.is_null()) sc = json::object();
  json scenario = {{"name", or_null(field(sc, "name"))},
                   {"file", or_null(first_field(sc, {"file", "path"}))},
                   {"digest", or_null(first_field(sc, {"digest", "sha256"}))}};
  if (const json* dg = first_field(r, {"scenario_digest"})) scenario["digest"] = *dg;
  m["scenario"] = scenario;
  json world = as_named_object(field(r, "world"));
  m["world"] = world.is_null() ? json{{"name", nullptr}, {"file", nullptr}}
                               : json{{"name", or_null(field(world, "name"))},
                                      {"file", or_null(first_field(world, {"file", "path"}))}};
  json vehicles = json::array();
  if (const json* v = field(r, "vehicles"); v && v->is_array()) {
    for (const auto& e : *v) {
      if (e.is_object()) vehicles.push_back(e);
      if (e.is_string()) vehicles.push_back({{"name", e}});
    }
  }
  m["vehicles"] = vehicles;
  m["seed"] = or_null(field(r, "seed"));
  m["seed_given"] = or_null(field(r, "seed_given"));
  m["engine_version"] = or_null(first_field(r, {"engine_version", "version"}));
  if (const json* e = field(r, "engine"); e && m["engine_version"].is_null()) {
    m["engine_version"] = or_null(field(*e, "version"));
  }
  m["start"] = or_null(first_field(r, {"started_utc", "start", "started_at", "start_time"}));
  m["end"] = or_null(first_field(r, {"ended_utc", "end", "ended_at", "end_time"}));
  const json* clock = field(r, "clock");
  const json empty = json::object();
  const json& c = clock && clock->is_object() ? *clock : empty;
  const json& du =
      field(r, "durations") && field(r, "durations")->is_object() ? *field(r, "durations") : empty;
  const auto pick_num = [](std::initializer_list<const json*> vs) -> json {
    for (const json* v : vs) {
      if (v && v->is_number()) return *v;
    }
    return nullptr;
  };
  m["durations"] = {
      {"wall_s",
       pick_num({field(du, "wall_s"), field(r, "wall_elapsed_s"), field(c, "wall_elapsed_s")})},
      {"timeline_s",
       pick_num({field(du, "timeline_s"), field(r, "timeline_s"), field(c, "timeline_wall_s")})},
      {"sim_s",
       pick_num({field(du, "sim_s"), field(r, "sim_elapsed_s"), field(c, "sim_elapsed_s")})}};
  m["clock"] = clock && clock->is_object() ? *clock : json(nullptr);
}

json str_or_null(const std::string& s) { return s.empty() ? json(nullptr) : json(s); }

// The fields of a complete run record, from the type.
void typed_fields(const RunRecord& r, json& m) {
  m["run_id"] = r.run_id;
  m["status"] = to_string(r.status);
  m["verdict"] = r.verdict();
  m["exit_code"] = r.exit_code();
  m["reason"] = r.reason;
  m["scenario"] = {{"name", r.scenario.name},
                   {"file", r.scenario.file},
                   {"digest", str_or_null(r.scenario.digest)}};
  m["world"] = r.world ? json{{"name", r.world->name}, {"file", r.world->file}}
                       : json{{"name", nullptr}, {"file", nullptr}};
  json vehicles = json::array();
  for (const RunRecord::Vehicle& v : r.vehicles) {
    vehicles.push_back({{"name", v.name}, {"spawn", v.spawn}, {"stack", v.stack}});
  }
  m["vehicles"] = vehicles;
  m["seed"] = r.seed ? json(*r.seed) : json(nullptr);
  m["seed_given"] = r.seed_given;
  m["engine_version"] = r.engine_version;
  m["start"] = r.started_utc;
  m["end"] = r.ended_utc;
  m["durations"] = r.durations
                       ? json{{"wall_s", r.durations->wall_s},
                              {"timeline_s", r.durations->timeline_s},
                              {"sim_s", r.durations->sim_s}}
                       : json{{"wall_s", nullptr}, {"timeline_s", nullptr}, {"sim_s", nullptr}};
  m["clock"] = r.clock.is_object() ? r.clock : json(nullptr);
}

json build_model(const Report::Data& d) {
  const json& r = d.run;
  json m = json::object();
  m["report_version"] = 1;
  if (d.record) {
    typed_fields(*d.record, m);
  } else {
    tolerant_fields(r, m);
  }
  m["clock_line"] = clock_line(m);
  const RunRecord* rec = d.record ? &*d.record : nullptr;
  const json* assertions = rec ? &rec->assertions : field(r, "assertions");
  m["assertions"] = array_of_objects(assertions);
  m["kpis"] = kpi_map(rec ? &rec->kpis : field(r, "kpis"), assertions);
  m["kpi_collectors"] = array_of_objects(rec ? &rec->kpi_collectors : field(r, "kpi_collectors"));
  m["timeline"] = array_of_objects(rec ? &rec->timeline : field(r, "timeline"));
  // Phases are not part of the record (the engine logs them): engine.log's, or, in a document
  // that is not a complete record, run.json's when it has them.
  const json* ph = rec ? nullptr : field(r, "phases");
  m["phases"] = ph && (ph->is_array() || ph->is_object()) ? *ph : json::array();
  if (!ph && !d.dir.empty()) {
    // Without phases in run.json, the phase events of engine.log.
    for_each_json_line(d, d.dir / "engine.log", [&](const json& e) {
      if (get_str(e, "event") != "phase" || !field(e, "phase")) return;
      m["phases"].push_back({{"phase", e["phase"]},
                             {"wall_s", or_null(field(e, "wall_s"))},
                             {"sim_s", or_null(field(e, "sim_s"))}});
    });
  }
  m["resources"] = rec ? rec->resources : or_null(field(r, "resources"));
  m["artefacts"] = artefacts(d);
  json plots = {{"clock_samples", d.clock.size()}, {"paths", json::object()}};
  for (const auto& [name, pts] : d.paths) plots["paths"][name] = pts.size();
  m["plots"] = plots;
  return m;
}

}  // namespace

std::string clock_line(const json& m) {
  const json* c = field(m, "clock");
  const json empty = json::object();
  const json& k = c && c->is_object() ? *c : empty;
  std::string s = "mode " + show(field(k, "mode"));
  s += " · target RTF " + show(field(k, "target_rtf"));
  const json* rtf = field(k, "rtf");
  std::string measured = kDash;
  if (rtf && rtf->is_number()) {
    measured = show(*rtf);
  } else if (rtf && rtf->is_object()) {
    measured = show(field(*rtf, "mean"));
    if (field(*rtf, "min") || field(*rtf, "max")) {
      measured += " (min " + show(field(*rtf, "min")) + ", max " + show(field(*rtf, "max")) + ")";
    }
  }
  s += " · measured RTF " + measured;
  s += " · drift " + show_seconds(field(k, "drift_s"));
  if (field(k, "max_abs_drift_s")) s += " (max " + show_seconds(field(k, "max_abs_drift_s")) + ")";
  const json* v = field(k, "violations");
  s += " · violations " + (v && v->is_array() ? std::to_string(v->size()) : show(v));
  s += " · verdict " + show(field(k, "verdict"));
  const json* ls = field(k, "lockstep");
  if (ls && ls->is_object()) {
    s += " · lockstep steps " + show(field(*ls, "steps"));
    if (field(*ls, "step_s")) s += " of " + show_seconds(field(*ls, "step_s"));
    if (const json* t = field(*ls, "timeout")) s += " (timeout: " + show(*t) + ")";
  } else {
    s += " · lockstep steps " + std::string(kDash);
  }
  s += " · seed " + show(field(m, "seed"));
  return s;
}

bool parse_format(const std::string& text, Format* out) {
  if (text == "md" || text == "markdown") {
    *out = Format::kMarkdown;
  } else if (text == "json") {
    *out = Format::kJson;
  } else if (text == "junit" || text == "xml") {
    *out = Format::kJunit;
  } else if (text == "html") {
    *out = Format::kHtml;
  } else {
    return false;
  }
  return true;
}

Result<fs::path> resolve_run_json(const std::string& run, const fs::path& runs_dir) {
  const auto not_found = [](std::string m) { return Status(StatusCode::kNotFound, std::move(m)); };
  if (run.empty()) {
    return Status(StatusCode::kInvalidArgument,
                  "no run given (a run directory, its run.json or a run id)");
  }
  std::error_code ec;
  const fs::path p(run);
  if (fs::is_directory(p, ec)) {
    const fs::path j = p / "run.json";
    if (!fs::exists(j, ec)) return not_found(p.string() + ": no run.json in this directory");
    return j;
  }
  if (fs::exists(p, ec)) return p;
  const bool plain_id = run.find('/') == std::string::npos && run.find('\\') == std::string::npos &&
                        run != "." && run != "..";
  if (plain_id) {
    const fs::path d = runs_dir / run;
    if (fs::is_directory(d, ec)) {
      const fs::path j = d / "run.json";
      if (!fs::exists(j, ec)) return not_found(d.string() + ": no run.json in this directory");
      return j;
    }
    return not_found(run + ": no such run directory, file or run id (looked in " +
                     (runs_dir / run).string() + ")");
  }
  return not_found(run + ": no such run directory or file");
}

Result<Report> Report::from_text(const std::string& text, const fs::path& run_dir) {
  return from_text_named(text, run_dir,
                         run_dir.empty() ? "run.json" : (run_dir / "run.json").string());
}

Result<Report> Report::from_text_named(const std::string& text, const fs::path& run_dir,
                                       const std::string& name) {
  json run = json::parse(text, nullptr, false);
  // A string cut or garbled into invalid UTF-8 should not cost the whole report.
  if (run.is_discarded()) run = json::parse(valid_utf8(text), nullptr, false);
  if (run.is_discarded()) return Status(StatusCode::kInvalidArgument, "run.json is not valid JSON");
  if (!run.is_object()) {
    return Status(StatusCode::kInvalidArgument, "run.json is not a JSON object");
  }
  auto d = std::make_shared<Data>();
  d->dir = run_dir;
  d->run = std::move(run);
  if (looks_like_run_record(d->run)) {
    Result<RunRecord> rec = run_record_from_json(d->run);
    if (rec.ok()) {
      d->record = std::move(*rec);
    } else {
      d->record_problem = name + ": " + rec.status().message();
      d->warnings.push_back(d->record_problem +
                            " (read field by field; what is absent is shown as " + kDash + ")");
    }
  }
  read_samples(*d);
  d->model = build_model(*d);
  return Report(std::move(d));
}

Result<Report> Report::load(const fs::path& run_json_or_dir) {
  std::error_code ec;
  fs::path file = run_json_or_dir;
  if (fs::is_directory(file, ec)) file /= "run.json";
  const Result<std::string> in = util::read_input_file(file, util::kMaxRunFileBytes, "run.json");
  if (!in.ok()) return in.status();
  Result<Report> r = from_text_named(
      *in, file.parent_path().empty() ? fs::path(".") : file.parent_path(), file.string());
  if (!r.ok()) return Status(r.status().code(), file.string() + ": " + r.status().message());
  return r;
}

const fs::path& Report::run_dir() const { return d_->dir; }
bool Report::is_run_record() const { return looks_like_run_record(d_->run); }
const std::string& Report::record_problem() const { return d_->record_problem; }
bool Report::is_typed() const { return d_->record.has_value(); }
const std::vector<std::string>& Report::warnings() const { return d_->warnings; }
std::string Report::run_id() const { return show(field(d_->model, "run_id")); }
std::string Report::verdict() const { return show(field(d_->model, "verdict")); }
int Report::exit_code() const {
  const json* e = field(d_->model, "exit_code");
  return e && e->is_number_integer() ? e->get<int>() : 1;
}

std::string Report::to_json() const { return dump(d_->model, 2) + "\n"; }
std::string Report::to_markdown() const { return markdown_text(*d_); }
std::string Report::to_junit() const { return junit_text(*d_, nullptr); }
std::string Report::to_html() const { return html_text(*d_); }
JunitCounts Report::junit_counts() const {
  JunitCounts c;
  junit_text(*d_, &c);
  return c;
}

std::string Report::render(Format f) const {
  switch (f) {
    case Format::kMarkdown:
      return to_markdown();
    case Format::kJson:
      return to_json();
    case Format::kJunit:
      return to_junit();
    case Format::kHtml:
      return to_html();
  }
  return to_markdown();
}

Status Report::write_all(const fs::path& dir) const {
  const std::pair<const char*, Format> files[] = {{"report.json", Format::kJson},
                                                  {"report.md", Format::kMarkdown},
                                                  {"junit.xml", Format::kJunit},
                                                  {"report.html", Format::kHtml}};
  for (const auto& [name, f] : files) {
    const fs::path p = dir / name;
    const fs::path tmp = dir / (std::string(name) + ".tmp");
    {
      std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
      out << render(f);
      out.close();
      if (!out) return Status(StatusCode::kIoError, tmp.string() + ": cannot write");
    }
    std::error_code ec;
    fs::rename(tmp, p, ec);
    if (ec) {
      return Status(StatusCode::kIoError, p.string() + ": cannot write (" + ec.message() + ")");
    }
  }
  return {};
}

Status write_reports(const fs::path& run_dir) {
  // A run's reports come after its record is safe: whatever goes wrong here (a record a reader
  // cannot render, std::bad_alloc) is a Status for the run's log, never the end of the run.
  try {
    const Result<Report> r = Report::load(run_dir);
    if (!r.ok()) return r.status();
    return r->write_all(run_dir);
  } catch (const std::exception& e) {
    return Status(StatusCode::kInvalidArgument, (run_dir / "run.json").string() + ": " + e.what());
  }
}

}  // namespace fieldproof::report
