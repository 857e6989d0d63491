#include "fieldproof/engine/determinism.hpp"

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "fieldproof/msgs/json.hpp"
#include "fieldproof/record/mcap_reader.hpp"

namespace fieldproof::engine {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr size_t kValueChars = 400;

struct StreamItem {
  std::string topic;
  int64_t stamp_ns = 0;
  uint32_t sequence = 0;
  std::string type;
  std::string data;
};

// Fields that carry wall-clock readings, by message type: left out of the comparison (they differ
// between any two runs and say nothing about the simulation).
const std::map<std::string, std::vector<std::string>>& wall_clock_fields() {
  static const std::map<std::string, std::vector<std::string>> k = {
      {"ignition.msgs.WorldStatistics", {"real_time", "real_time_factor", "pause_time"}}};
  return k;
}

// Equal once the type's wall-clock fields are left out.
bool equal_but_wall_clock(msgs::Decoder& d, const std::string& type, const std::string& x,
                          const std::string& y) {
  const auto it = wall_clock_fields().find(type);
  if (it == wall_clock_fields().end()) return false;
  msgs::Decoded a = d.decode(type, x);
  msgs::Decoded b = d.decode(type, y);
  if (!a.ok || !b.ok) return false;
  for (const std::string& f : it->second) {
    a.json.erase(f);
    b.json.erase(f);
  }
  return a.json == b.json;
}

std::string truncate(std::string s) {
  if (s.size() > kValueChars) s = s.substr(0, kValueChars) + "...";
  return s;
}

// The first path at which two JSON values differ ("" when equal).
std::string first_field(const json& a, const json& b, const std::string& path) {
  if (a.type() != b.type()) return path.empty() ? "(value)" : path;
  if (a.is_object()) {
    for (auto it = a.begin(); it != a.end(); ++it) {
      const std::string p = path.empty() ? it.key() : path + "." + it.key();
      if (!b.contains(it.key())) return p;
      if (std::string f = first_field(*it, b[it.key()], p); !f.empty()) return f;
    }
    for (auto it = b.begin(); it != b.end(); ++it) {
      if (!a.contains(it.key())) return path.empty() ? it.key() : path + "." + it.key();
    }
    return "";
  }
  if (a.is_array()) {
    const size_t n = std::min(a.size(), b.size());
    for (size_t i = 0; i < n; ++i) {
      if (std::string f = first_field(a[i], b[i], path + "[" + std::to_string(i) + "]");
          !f.empty()) {
        return f;
      }
    }
    return a.size() == b.size() ? "" : path + ".size";
  }
  return a == b ? "" : (path.empty() ? "(value)" : path);
}

// The messages of a recording, without fieldproof's side channels; the reader's Status prefixed
// with the file when it cannot be read.
Result<std::vector<StreamItem>> read_recording(const fs::path& p) {
  record::McapReader r;
  if (const record::Status s = r.open(p.string()); !s.ok()) {
    return Status(s.code(), p.string() + ": " + s.to_string());
  }
  std::vector<StreamItem> out;
  const record::Status s = r.read_messages({}, [&](const record::MessageView& m) {
    const std::string& topic = m.channel->topic;
    if (topic.rfind("/fieldproof/", 0) == 0) return true;
    StreamItem it;
    it.topic = topic;
    it.stamp_ns = m.log_time_ns;
    it.sequence = m.sequence;
    it.type = m.schema ? m.schema->name : m.channel->message_encoding;
    it.data.assign(m.data_view());
    out.push_back(std::move(it));
    return true;
  });
  if (!s.ok()) return Status(s.code(), p.string() + ": " + s.to_string());
  return out;
}

std::string describe(msgs::Decoder& d, const StreamItem& it, json* parsed) {
  const msgs::Decoded m = d.decode(it.type, it.data);
  if (m.ok) {
    *parsed = m.json;
    return truncate(m.json.dump());
  }
  *parsed = json();
  return "(" + std::to_string(it.data.size()) + " bytes of " + it.type + ")";
}

// samples.jsonl lines without the wall-clock fields and without the resource samples.
Result<std::vector<json>> read_samples(const fs::path& p) {
  std::ifstream in(p);
  if (!in) return Status(StatusCode::kIoError, p.string() + ": cannot be read");
  std::vector<json> out;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    json j = json::parse(line, nullptr, false);
    if (j.is_discarded()) {
      return Status(StatusCode::kCorrupt, p.string() + ": a line that is not JSON");
    }
    // Resource samples measure the machine, once a wall second: how many there are and what they
    // read differ between any two runs.
    if (j.is_object() && j.value("kind", "") == "resources") continue;
    if (j.is_object()) {
      j.erase("wall_s");
      j.erase("wall");  // the calendar clock of every line
      j.erase("rtf");
    }
    out.push_back(std::move(j));
  }
  return out;
}

double sample_t(const json& j) {
  for (const char* k : {"sim_s", "t_s", "sim"}) {
    if (j.is_object() && j.contains(k) && j[k].is_number()) return j[k].get<double>();
  }
  return 0.0;
}

std::string sample_topic(const json& j) {
  if (!j.is_object()) return "sample";
  std::string t = j.value("kind", std::string("sample"));
  if (j.contains("vehicle") && j["vehicle"].is_string()) t += " " + j["vehicle"].get<std::string>();
  return t;
}

StreamComparison compare_samples(const fs::path& a, const fs::path& b) {
  StreamComparison c;
  c.source = "samples";
  Result<std::vector<json>> read_a = read_samples(a);
  Result<std::vector<json>> read_b = read_a.ok() ? read_samples(b) : read_a;
  if (!read_b.ok()) {
    c.error = read_b.status().message();
    c.ok = false;
    return c;
  }
  const std::vector<json> sa = std::move(read_a).value();
  const std::vector<json> sb = std::move(read_b).value();
  c.count_a = sa.size();
  c.count_b = sb.size();
  const size_t n = std::max(sa.size(), sb.size());
  for (size_t i = 0; i < n; ++i) {
    if (i < sa.size() && i < sb.size() && sa[i] == sb[i]) continue;
    StreamDifference d;
    d.index = i;
    if (i < sa.size()) {
      d.topic_a = sample_topic(sa[i]);
      d.t_a = sample_t(sa[i]);
      d.value_a = truncate(sa[i].dump());
    } else {
      d.value_a = "(end of stream)";
    }
    if (i < sb.size()) {
      d.topic_b = sample_topic(sb[i]);
      d.t_b = sample_t(sb[i]);
      d.value_b = truncate(sb[i].dump());
    } else {
      d.value_b = "(end of stream)";
    }
    if (i < sa.size() && i < sb.size()) d.field = first_field(sa[i], sb[i], "");
    c.compared = i;
    c.difference = d;
    return c;
  }
  c.compared = n;
  return c;
}

std::string fmt_t(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", s);
  return buf;
}

}  // namespace

StreamComparison compare_recordings(const fs::path& mcap_a, const fs::path& mcap_b) {
  StreamComparison c;
  c.source = "recording";
  Result<std::vector<StreamItem>> read_a = read_recording(mcap_a);
  Result<std::vector<StreamItem>> read_b = read_a.ok() ? read_recording(mcap_b) : read_a;
  if (!read_b.ok()) {
    c.error = read_b.status().message();
    c.ok = false;
    return c;
  }
  const std::vector<StreamItem> a = std::move(read_a).value();
  const std::vector<StreamItem> b = std::move(read_b).value();
  c.count_a = a.size();
  c.count_b = b.size();
  const size_t n = std::max(a.size(), b.size());
  msgs::Decoder decoder;
  for (size_t i = 0; i < n; ++i) {
    if (i < a.size() && i < b.size()) {
      const StreamItem& x = a[i];
      const StreamItem& y = b[i];
      if (x.topic == y.topic && x.stamp_ns == y.stamp_ns && x.sequence == y.sequence &&
          x.type == y.type &&
          (x.data == y.data || equal_but_wall_clock(decoder, x.type, x.data, y.data))) {
        continue;
      }
    }
    StreamDifference d;
    d.index = i;
    json ja, jb;
    if (i < a.size()) {
      d.topic_a = a[i].topic;
      d.t_a = static_cast<double>(a[i].stamp_ns) / 1e9;
      d.value_a = describe(decoder, a[i], &ja);
    } else {
      d.value_a = "(end of stream)";
    }
    if (i < b.size()) {
      d.topic_b = b[i].topic;
      d.t_b = static_cast<double>(b[i].stamp_ns) / 1e9;
      d.value_b = describe(decoder, b[i], &jb);
    } else {
      d.value_b = "(end of stream)";
    }
    if (i < a.size() && i < b.size()) {
      if (a[i].topic != b[i].topic) {
        d.field = "topic";
      } else if (a[i].stamp_ns != b[i].stamp_ns) {
        d.field = "stamp";
      } else if (!ja.is_null() && !jb.is_null()) {
        if (const auto w = wall_clock_fields().find(a[i].type); w != wall_clock_fields().end()) {
          for (const std::string& f : w->second) {
            ja.erase(f);
            jb.erase(f);
          }
        }
        d.field = first_field(ja, jb, "");
        if (d.field.empty()) d.field = "(payload bytes; equal as printed)";
      } else if (a[i].sequence != b[i].sequence) {
        d.field = "sequence";
      }
    }
    c.compared = i;
    c.difference = d;
    return c;
  }
  c.compared = n;
  return c;
}

StreamComparison compare_streams(const fs::path& run_a, const fs::path& run_b) {
  const fs::path ra = run_a / "recording" / "recording.mcap";
  const fs::path rb = run_b / "recording" / "recording.mcap";
  std::error_code ec;
  if (fs::exists(ra, ec) && fs::exists(rb, ec)) return compare_recordings(ra, rb);
  return compare_samples(run_a / "samples.jsonl", run_b / "samples.jsonl");
}

DeterminismOutcome check_determinism(const DeterminismOptions& options) {
  DeterminismOutcome out;
  std::string prefix = options.run.run_id;
  if (!prefix.empty()) {
    if (const Status e = check_run_id(prefix); !e.ok()) {
      out.exit_code = report::exit_code_of(report::RunStatus::kInvalid);
      out.errors = {"--run-id '" + prefix + "': " + e.message()};
      return out;
    }
  } else {
    std::string base = options.run.scenario_file.stem().string();
    if (base.empty()) base = "run";
    for (int n = 1;; ++n) {
      prefix = base + "-determinism-" + std::to_string(n);
      std::error_code ec;
      if (!fs::exists(options.run.runs_dir / (prefix + "-a"), ec) &&
          !fs::exists(options.run.runs_dir / (prefix + "-b"), ec)) {
        break;
      }
    }
  }
  RunOptions ra = options.run;
  ra.run_id = prefix + "-a";
  out.a = run_scenario(ra);
  if (out.a.run_status == report::RunStatus::kInvalid) {
    out.exit_code = out.a.exit_code;
    out.errors = out.a.errors;
    return out;
  }
  if (out.a.run_status == report::RunStatus::kInterrupted) {
    out.exit_code = out.a.exit_code;
    out.report = "interrupted during the first run (" + out.a.run_dir.string() + ")\n";
    return out;
  }
  RunOptions rb = options.run;
  rb.run_id = prefix + "-b";
  if (options.second_seed) rb.seed = options.second_seed;
  out.b = run_scenario(rb);
  if (out.b.run_status == report::RunStatus::kInvalid) {
    out.exit_code = out.b.exit_code;
    out.errors = out.b.errors;
    return out;
  }
  if (out.b.run_status == report::RunStatus::kInterrupted) {
    out.exit_code = out.b.exit_code;
    out.report = "interrupted during the second run (" + out.b.run_dir.string() + ")\n";
    return out;
  }
  std::ostringstream r;
  r << "run a: " << out.a.verdict << " (" << out.a.run_dir.string() << ")\n";
  r << "run b: " << out.b.verdict << " (" << out.b.run_dir.string() << ")\n";
  out.comparison = compare_streams(out.a.run_dir, out.b.run_dir);
  const StreamComparison& c = out.comparison;
  if (!c.ok) {
    r << "cannot compare the streams: " << c.error << "\n";
    out.exit_code = 1;
  } else if (c.difference) {
    const StreamDifference& d = *c.difference;
    r << "DIFFERENT: the ordered streams (" << c.source << ") differ at message " << d.index
      << " (after " << d.index << " identical)\n";
    r << "  a: " << (d.topic_a.empty() ? "-" : d.topic_a) << " t=" << fmt_t(d.t_a) << " s "
      << d.value_a << "\n";
    r << "  b: " << (d.topic_b.empty() ? "-" : d.topic_b) << " t=" << fmt_t(d.t_b) << " s "
      << d.value_b << "\n";
    if (!d.field.empty()) r << "  first differing field: " << d.field << "\n";
    out.exit_code = 1;
  } else {
    out.identical = true;
    r << "IDENTICAL: the ordered streams (" << c.source << ") are identical (" << c.compared
      << " messages)\n";
    out.exit_code = 0;
    if (out.a.run_status != out.b.run_status) {
      r << "but the verdicts differ: " << out.a.status << " / " << out.b.status << "\n";
      out.identical = false;
      out.exit_code = 1;
    }
  }
  out.report = r.str();
  return out;
}

}  // namespace fieldproof::engine
