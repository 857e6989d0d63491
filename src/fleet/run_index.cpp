// The run index (run_index.hpp): SQLite, one transaction per write, WAL and a busy timeout.
#include "fieldproof/fleet/run_index.hpp"

#include <sqlite3.h>
#include <unistd.h>

#include <fstream>
#include <limits>
#include <optional>
#include <system_error>

namespace fieldproof::fleet {
namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

constexpr int kBusyTimeoutMs = 30000;
// A REAL column's NULL: SQLite stores a bound NaN as NULL.
constexpr double kNull = std::numeric_limits<double>::quiet_NaN();

constexpr const char* kSchema = R"sql(
CREATE TABLE runs(
  id TEXT PRIMARY KEY,
  run_id TEXT NOT NULL,
  scenario TEXT, scenario_file TEXT, scenario_digest TEXT,
  status TEXT, verdict TEXT, reason TEXT, exit_code INTEGER, seed INTEGER,
  started_utc TEXT, ended_utc TEXT, wall_s REAL, sim_s REAL, engine_version TEXT,
  sweep_id TEXT, point_id TEXT, overrides TEXT);
CREATE INDEX runs_started ON runs(started_utc, id);
CREATE INDEX runs_sweep ON runs(sweep_id);
CREATE INDEX runs_scenario ON runs(scenario);
CREATE TABLE assertions(
  run TEXT NOT NULL, position INTEGER NOT NULL, name TEXT NOT NULL, type TEXT, status TEXT,
  reason TEXT, t_s REAL, PRIMARY KEY(run, name));
CREATE TABLE kpis(
  run TEXT NOT NULL, name TEXT NOT NULL, value REAL, unit TEXT, source TEXT,
  PRIMARY KEY(run, name));
CREATE TABLE sweeps(
  id TEXT PRIMARY KEY, scenario TEXT, scenario_file TEXT, created_utc TEXT, points INTEGER,
  plan TEXT);
)sql";

bool damaged(int rc) { return rc == SQLITE_CORRUPT || rc == SQLITE_NOTADB; }

// The database's last error, as a Status: kCorrupt when the file is damaged or not a database.
Status db_error(sqlite3* db, const fs::path& file) {
  const int rc = sqlite3_extended_errcode(db);
  std::string m = file.string() + ": " + sqlite3_errmsg(db);
  if (damaged(rc & 0xff)) {
    m += " (the index is damaged or not an index: `fieldproof runs reindex` rebuilds it from the "
         "run directories)";
    return {StatusCode::kCorrupt, std::move(m)};
  }
  return {StatusCode::kIoError, std::move(m)};
}

// A prepared statement, finalized on scope exit.
class Stmt {
 public:
  Stmt(sqlite3* db, const char* sql) { rc_ = sqlite3_prepare_v2(db, sql, -1, &s_, nullptr); }
  ~Stmt() { sqlite3_finalize(s_); }
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;
  bool ok() const { return rc_ == SQLITE_OK; }
  void text(int i, const std::string& v) {
    sqlite3_bind_text(s_, i, v.c_str(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
  }
  void integer(int i, int64_t v) { sqlite3_bind_int64(s_, i, v); }
  void real(int i, double v) { sqlite3_bind_double(s_, i, v); }
  void null(int i) { sqlite3_bind_null(s_, i); }
  int step() { return rc_ = sqlite3_step(s_); }
  bool done() { return step() == SQLITE_DONE; }
  int rc() const { return rc_; }
  sqlite3_stmt* get() const { return s_; }
  std::string col_text(int i) const {
    const unsigned char* t = sqlite3_column_text(s_, i);
    return t ? reinterpret_cast<const char*>(t) : "";
  }
  int64_t col_int(int i) const { return sqlite3_column_int64(s_, i); }
  double col_real(int i) const { return sqlite3_column_double(s_, i); }
  void reset() {
    sqlite3_reset(s_);
    sqlite3_clear_bindings(s_);
  }
  void bind(int i, const std::string& v) { text(i, v); }
  void bind(int i, int64_t v) { integer(i, v); }
  void bind(int i, int v) { integer(i, v); }
  void bind(int i, double v) { real(i, v); }  // NaN is stored as NULL (SQLite's own rule)
  void bind(int i, std::nullptr_t) { null(i); }
  template <class T>
  void bind(int i, const std::optional<T>& v) {
    if (v) {
      bind(i, *v);
    } else {
      null(i);
    }
  }
  // Binds `args` to ?1, ?2, ... and runs the statement once (reset first, so a prepared insert
  // is reused row after row); true when it completed.
  template <class... A>
  bool run(const A&... args) {
    reset();
    int i = 0;
    (bind(++i, args), ...);
    return done();
  }

 private:
  sqlite3_stmt* s_ = nullptr;
  int rc_ = SQLITE_OK;
};

std::string str(const json& j, const char* key) {
  const auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : "";
}
double num(const json& j, const char* key) {
  const auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<double>() : 0.0;
}

Result<json> read_json(const fs::path& p) {
  std::ifstream in(p);
  if (!in) return Status(StatusCode::kIoError, p.string() + ": cannot be read");
  json out;
  try {
    out = json::parse(in);
  } catch (const json::exception& e) {
    return Status(StatusCode::kCorrupt, p.string() + ": not JSON: " + e.what());
  }
  if (!out.is_object()) return Status(StatusCode::kCorrupt, p.string() + ": not a JSON object");
  return out;
}

constexpr const char* kRunColumns =
    "id, run_id, scenario, scenario_file, scenario_digest, status, verdict, reason, exit_code, "
    "seed, started_utc, ended_utc, wall_s, sim_s, engine_version, sweep_id, point_id, overrides";

// Reads the current row into *r, reusing its strings' storage.
void read_row(const Stmt& s, bool overrides, RunRow* r) {
  const auto text = [&s](int i, std::string* out) {
    const unsigned char* t = sqlite3_column_text(s.get(), i);
    if (t) {
      out->assign(reinterpret_cast<const char*>(t),
                  static_cast<size_t>(sqlite3_column_bytes(s.get(), i)));
    } else {
      out->clear();
    }
  };
  text(0, &r->id);
  text(1, &r->run_id);
  text(2, &r->scenario);
  text(3, &r->scenario_file);
  text(4, &r->scenario_digest);
  text(5, &r->status);
  text(6, &r->verdict);
  text(7, &r->reason);
  r->exit_code = static_cast<int>(s.col_int(8));
  r->seed = s.col_int(9);
  text(10, &r->started_utc);
  text(11, &r->ended_utc);
  r->wall_s = s.col_real(12);
  r->sim_s = s.col_real(13);
  text(14, &r->engine_version);
  text(15, &r->sweep_id);
  text(16, &r->point_id);
  r->overrides = json::object();
  if (overrides) {
    const std::string o = s.col_text(17);
    if (!o.empty()) r->overrides = json::parse(o, nullptr, false);
    if (r->overrides.is_discarded()) r->overrides = json::object();
  }
}

RunRow row_of(const Stmt& s) {
  RunRow r;
  read_row(s, true, &r);
  return r;
}

// The sweep point `run_dir` is, from its sweep's plan beside it; nullopt when it is not one.
std::optional<std::pair<std::string, json>> point_of(const fs::path& run_dir) {
  const fs::path plan_file = run_dir.parent_path() / kSweepPlanFile;
  std::error_code ec;
  if (!fs::exists(plan_file, ec)) return std::nullopt;
  const Result<json> read = read_json(plan_file);
  if (!read.ok()) return std::nullopt;
  const json& plan = *read;
  const std::string name = run_dir.filename().string();
  for (const json& p : plan.value("points", json::array())) {
    if (p.value("id", "") == name) return std::make_pair(plan.value("sweep_id", ""), p);
  }
  return std::nullopt;
}

}  // namespace

Result<json> read_json_object(const fs::path& file) { return read_json(file); }

json RunRow::to_json() const {
  json j = {{"id", id},
            {"run_id", run_id},
            {"scenario", scenario},
            {"scenario_file", scenario_file},
            {"scenario_digest", scenario_digest},
            {"status", status},
            {"verdict", verdict},
            {"reason", reason},
            {"exit_code", exit_code},
            {"seed", seed},
            {"started_utc", started_utc},
            {"ended_utc", ended_utc},
            {"wall_s", wall_s},
            {"sim_s", sim_s},
            {"engine_version", engine_version},
            {"overrides", overrides}};
  if (!sweep_id.empty()) {
    j["sweep_id"] = sweep_id;
    j["point_id"] = point_id;
  }
  return j;
}

Result<std::unique_ptr<RunIndex>> RunIndex::open(const fs::path& file) {
  std::unique_ptr<RunIndex> idx(new RunIndex());
  idx->file_ = file;
  std::error_code ec;
  if (!file.parent_path().empty()) fs::create_directories(file.parent_path(), ec);
  if (sqlite3_open_v2(file.c_str(), &idx->db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE,
                      nullptr) != SQLITE_OK) {
    return Status(StatusCode::kIoError, idx->db_ ? db_error(idx->db_, file).message()
                                                 : file.string() + ": cannot be opened");
  }
  sqlite3_busy_timeout(idx->db_, kBusyTimeoutMs);
  if (const Status s = idx->open_schema(); !s.ok()) return s;
  // WAL with synchronous=NORMAL: a commit is atomic and waits for no fsync (a power cut may lose
  // the last runs' rows, never corrupt the index, and `runs reindex` brings them back).
  if (Status s = idx->exec("PRAGMA journal_mode=WAL"); !s.ok()) return s;
  if (Status s = idx->exec("PRAGMA synchronous=NORMAL"); !s.ok()) return s;
  return idx;
}

Status RunIndex::open_schema() {
  int version = 0;
  {
    Stmt s(db_, "PRAGMA user_version");
    if (!s.ok() || s.step() != SQLITE_ROW) return db_error(db_, file_);
    version = static_cast<int>(s.col_int(0));
  }
  if (version > kIndexSchemaVersion) {
    return {StatusCode::kUnsupported,
            file_.string() + ": the index has schema version " + std::to_string(version) +
                ", newer than this fieldproof's " + std::to_string(kIndexSchemaVersion) +
                " (use the fieldproof that wrote it, or `fieldproof runs reindex` to rebuild it "
                "for this one)"};
  }
  if (version == kIndexSchemaVersion) return {};
  if (Status s = exec("BEGIN IMMEDIATE"); !s.ok()) return s;
  // Another process may have created it meanwhile.
  int tables = 0;
  {
    Stmt s(db_, "PRAGMA user_version");
    s.step();
    version = static_cast<int>(s.col_int(0));
    Stmt t(db_, "SELECT count(*) FROM sqlite_master");
    t.step();
    tables = static_cast<int>(t.col_int(0));
  }
  if (version == 0 && tables > 0) {
    (void)exec("ROLLBACK");
    return {StatusCode::kCorrupt,
            file_.string() +
                ": an SQLite database that is not a fieldproof run index (no schema version); "
                "`fieldproof runs reindex` replaces it"};
  }
  if (version == 0) {
    Status s = exec(kSchema);
    if (s.ok()) s = exec(("PRAGMA user_version = " + std::to_string(kIndexSchemaVersion)).c_str());
    if (!s.ok()) {
      (void)exec("ROLLBACK");
      return {StatusCode::kIoError, s.message()};
    }
  }
  if (Status s = exec("COMMIT"); !s.ok()) return {StatusCode::kIoError, s.message()};
  return {};
}

RunIndex::~RunIndex() { sqlite3_close(db_); }

Status RunIndex::exec(const char* sql) const {
  char* msg = nullptr;
  if (sqlite3_exec(db_, sql, nullptr, nullptr, &msg) != SQLITE_OK) {
    sqlite3_free(msg);
    return db_error(db_, file_);
  }
  return {};
}

void RunIndex::leave_checkpoint_to_next_connection() {
  sqlite3_db_config(db_, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, nullptr);
}

Status RunIndex::begin() { return exec("BEGIN IMMEDIATE"); }
Status RunIndex::commit() { return exec("COMMIT"); }

Status RunIndex::add_run(const fs::path& run_dir) {
  const Result<json> read = read_json(run_dir / "run.json");
  if (!read.ok()) return read.status();
  const json& run = *read;
  std::error_code ec;
  const fs::path base = fs::weakly_canonical(file_.parent_path().empty() ? "." : file_.parent_path(), ec);
  const fs::path dir = fs::weakly_canonical(run_dir, ec);
  std::string id = dir.lexically_relative(base).generic_string();
  if (id.empty() || id.rfind("..", 0) == 0) id = dir.generic_string();  // outside the runs folder
  const auto point = point_of(dir);
  const json scenario = run.value("scenario", json::object());
  const json durations = run.value("durations", json::object());

  const bool own_tx = sqlite3_get_autocommit(db_) != 0;
  if (own_tx) {
    if (Status s = exec("BEGIN IMMEDIATE"); !s.ok()) return s;
  }
  const auto rollback = [&] {
    Status s = db_error(db_, file_);
    if (own_tx) (void)exec("ROLLBACK");
    return s;
  };
  const auto opt_text = [](const std::string& v) {
    return v.empty() ? std::nullopt : std::optional<std::string>(v);
  };
  Stmt ins_run(db_,
               "INSERT OR REPLACE INTO runs(id, run_id, scenario, scenario_file, scenario_digest, "
               "status, verdict, reason, exit_code, seed, started_utc, ended_utc, wall_s, sim_s, "
               "engine_version, sweep_id, point_id, overrides) "
               "VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14,?15,?16,?17,?18)");
  Stmt del_assertions(db_, "DELETE FROM assertions WHERE run = ?1");
  Stmt del_kpis(db_, "DELETE FROM kpis WHERE run = ?1");
  Stmt ins_assertion(db_,
                     "INSERT OR REPLACE INTO assertions(run, position, name, type, status, reason, "
                     "t_s) VALUES(?1,?2,?3,?4,?5,?6,?7)");
  Stmt ins_kpi(db_,
               "INSERT OR REPLACE INTO kpis(run, name, value, unit, source) "
               "VALUES(?1,?2,?3,?4,?5)");
  for (const Stmt* st : {&ins_run, &del_assertions, &del_kpis, &ins_assertion, &ins_kpi}) {
    if (!st->ok()) return rollback();
  }
  const std::string run_id = str(run, "run_id").empty() ? dir.filename().string() : str(run, "run_id");
  if (!ins_run.run(id, run_id, str(scenario, "name"), str(scenario, "file"),
                   str(scenario, "digest"), str(run, "status"), str(run, "verdict"),
                   str(run, "reason"), static_cast<int64_t>(num(run, "exit_code")),
                   static_cast<int64_t>(num(run, "seed")), str(run, "started_utc"),
                   str(run, "ended_utc"), num(durations, "wall_s"), num(durations, "sim_s"),
                   str(run, "engine_version"),
                   point ? opt_text(point->first) : std::nullopt,
                   point ? opt_text(point->second.value("id", "")) : std::nullopt,
                   scenario.value("overrides", json::object()).dump()) ||
      !del_assertions.run(id) || !del_kpis.run(id)) {
    return rollback();
  }
  int64_t pos = 0;
  for (const json& a : run.value("assertions", json::array())) {
    if (!a.is_object()) continue;
    const auto t = a.find("t_s");
    const double t_s = t != a.end() && t->is_number() ? t->get<double>() : kNull;
    if (!ins_assertion.run(id, pos++, str(a, "name"), str(a, "type"), str(a, "status"),
                           str(a, "reason"), t_s)) {
      return rollback();
    }
  }
  const json kpis = run.value("kpis", json::object());
  for (const auto& [name, k] : kpis.items()) {
    const json v = k.is_object() ? k.value("value", json()) : k;
    const double value = v.is_number() ? v.get<double>() : kNull;
    if (!ins_kpi.run(id, name, value, k.is_object() ? str(k, "unit") : std::string(),
                     k.is_object() ? str(k, "source") : std::string())) {
      return rollback();
    }
  }
  if (own_tx && !exec("COMMIT").ok()) return rollback();
  return {};
}

Status RunIndex::add_sweep(const SweepRow& sw) {
  Stmt s(db_,
         "INSERT OR REPLACE INTO sweeps(id, scenario, scenario_file, created_utc, points, plan) "
         "VALUES(?1,?2,?3,?4,?5,?6)");
  if (!s.ok() || !s.run(sw.id, sw.scenario, sw.scenario_file, sw.created_utc, sw.points,
                        sw.plan.dump())) {
    return db_error(db_, file_);
  }
  return {};
}

Status RunIndex::scan(const RunFilter& f, bool overrides,
                      const std::function<void(const RunRow&)>& fn) const {
  std::string sql = std::string("SELECT ") + kRunColumns + " FROM runs WHERE 1";
  if (!f.scenario.empty()) sql += " AND scenario = ?1";
  if (!f.status.empty()) sql += " AND status = ?2";
  if (!f.sweep_id.empty()) sql += " AND sweep_id = ?3";
  if (!f.since_utc.empty()) sql += " AND started_utc >= ?4";
  sql += " ORDER BY started_utc, id";
  if (f.limit > 0) sql += " LIMIT " + std::to_string(f.limit);
  Stmt s(db_, sql.c_str());
  if (!s.ok()) return db_error(db_, file_);
  if (!f.scenario.empty()) s.text(1, f.scenario);
  if (!f.status.empty()) s.text(2, f.status);
  if (!f.sweep_id.empty()) s.text(3, f.sweep_id);
  if (!f.since_utc.empty()) s.text(4, f.since_utc);
  RunRow row;
  while (s.step() == SQLITE_ROW) {
    read_row(s, overrides, &row);
    fn(row);
  }
  if (s.rc() != SQLITE_DONE) return db_error(db_, file_);
  return {};
}

Result<std::vector<RunRow>> RunIndex::list(const RunFilter& f) const {
  std::vector<RunRow> out;
  if (Status s = scan(f, true, [&out](const RunRow& r) { out.push_back(r); }); !s.ok()) return s;
  return out;
}

Result<RunRow> RunIndex::find(const std::string& key) const {
  Stmt s(db_, (std::string("SELECT ") + kRunColumns +
               " FROM runs WHERE id = ?1 UNION ALL SELECT " + kRunColumns +
               " FROM runs WHERE run_id = ?1 AND id != ?1")
                  .c_str());
  if (!s.ok()) return db_error(db_, file_);
  s.text(1, key);
  std::vector<RunRow> rows;
  while (s.step() == SQLITE_ROW) rows.push_back(row_of(s));
  if (rows.empty()) return Status(StatusCode::kNotFound, "no run '" + key + "' in " + file_.string());
  if (rows.size() > 1 && rows[0].id != key) {
    std::string m = "'" + key + "' names " + std::to_string(rows.size()) + " runs (";
    for (size_t i = 0; i < rows.size(); ++i) m += (i ? ", " : "") + rows[i].id;
    m += "); give the id";
    return Status(StatusCode::kInvalidArgument, std::move(m));
  }
  return rows[0];
}

std::optional<SweepRow> RunIndex::sweep(const std::string& id) const {
  Stmt s(db_, "SELECT id, scenario, scenario_file, created_utc, points, plan FROM sweeps WHERE id = ?1");
  s.text(1, id);
  if (s.step() != SQLITE_ROW) return std::nullopt;
  SweepRow r{s.col_text(0), s.col_text(1), s.col_text(2), s.col_text(3), s.col_int(4),
             json::parse(s.col_text(5), nullptr, false)};
  return r;
}

Status index_finished_run(const fs::path& index_file, const fs::path& run_dir) {
  const Result<std::unique_ptr<RunIndex>> idx = RunIndex::open(index_file);
  if (!idx.ok()) return idx.status();
  (*idx)->leave_checkpoint_to_next_connection();
  return (*idx)->add_run(run_dir);
}

Result<ReindexSummary> reindex(const fs::path& runs_dir, const OnSkipped& on_skipped) {
  ReindexSummary r;
  const auto skip = [&](const std::string& why) {
    r.skipped.push_back(why);
    if (on_skipped) on_skipped(why);
  };
  std::error_code ec;
  if (!fs::is_directory(runs_dir, ec)) {
    return Status(StatusCode::kInvalidArgument, runs_dir.string() + ": not a directory");
  }
  const fs::path target = runs_dir / "index.sqlite";
  const fs::path tmp = runs_dir / ("index.sqlite.reindex-" + std::to_string(::getpid()));
  for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(tmp.string() + suffix, ec);
  {
    Result<std::unique_ptr<RunIndex>> opened = RunIndex::open(tmp);
    if (!opened.ok()) return opened.status();
    const std::unique_ptr<RunIndex> idx = std::move(opened).value();
    if (Status s = idx->begin(); !s.ok()) return s;
    std::vector<fs::path> entries;
    for (const auto& e : fs::directory_iterator(runs_dir, ec)) {
      if (e.is_directory(ec)) entries.push_back(e.path());
    }
    std::sort(entries.begin(), entries.end());
    const auto add = [&](const fs::path& d) {
      if (const Status s = idx->add_run(d); s.ok()) {
        ++r.runs;
      } else {
        skip(s.message());
      }
    };
    for (const fs::path& d : entries) {
      if (fs::exists(d / "run.json", ec)) {
        add(d);
        continue;
      }
      if (!fs::exists(d / kSweepPlanFile, ec)) continue;
      const Result<json> read = read_json(d / kSweepPlanFile);
      if (!read.ok()) {
        skip(read.status().message());
        continue;
      }
      const json& plan = *read;
      SweepRow sw;
      sw.id = plan.value("sweep_id", d.filename().string());
      sw.scenario = plan.value("scenario", json::object()).value("name", "");
      sw.scenario_file = plan.value("scenario", json::object()).value("file", "");
      sw.created_utc = plan.value("created_utc", "");
      sw.points = static_cast<int64_t>(plan.value("points", json::array()).size());
      sw.plan = plan;
      if (const Status s = idx->add_sweep(sw); !s.ok()) return s;
      ++r.sweeps;
      std::vector<fs::path> points;
      for (const auto& e : fs::directory_iterator(d, ec)) {
        if (e.is_directory(ec) && fs::exists(e.path() / "run.json", ec)) points.push_back(e.path());
      }
      std::sort(points.begin(), points.end());
      for (const fs::path& p : points) add(p);
    }
    if (const Status s = idx->commit(); !s.ok()) return s;
  }
  for (const char* suffix : {"-wal", "-shm", ""}) fs::remove(target.string() + suffix, ec);
  fs::rename(tmp, target, ec);
  if (ec) {
    return Status(StatusCode::kIoError,
                  target.string() + ": cannot replace the index: " + ec.message());
  }
  return r;
}

}  // namespace fieldproof::fleet
