// Internals of the report part: the model built from run.json and the text helpers the renderers
// share.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "fieldproof/report/report.hpp"
#include "fieldproof/report/run_record.hpp"

namespace fieldproof::report {

using nlohmann::json;

struct Point {
  double x = 0;
  double y = 0;
};

struct ClockPoint {
  double t = 0;      // simulated seconds since the first clock sample
  double rtf = 0;    // NaN when the sample has none
  double drift = 0;  // NaN when the sample has none and it cannot be derived
};

struct TimedPose {
  double sim = 0;  // simulated seconds
  double x = 0;
  double y = 0;
};

struct Report::Data {
  std::filesystem::path dir;
  json run;                                         // run.json as read (an object)
  // run.json as a typed record, when it is a complete one: the report's fields then come from it
  // and nothing else (to_json(*record) is the view the renderers read). A run record that does not
  // parse leaves it empty and says why in record_problem (and warnings), and the report falls back
  // to reading run.json field by field, as for the other documents (sweep summaries, comparisons).
  std::optional<RunRecord> record;
  std::string record_problem;
  json model;                                       // report.json
  std::map<std::string, std::vector<Point>> paths;  // ground-truth poses per vehicle
  std::vector<ClockPoint> clock;
  // For the failed assertions' signal plots: every pose sample per model, the samples.jsonl lines
  // (rate, latency, value) of the topics they watch, resources.jsonl when one of them needs it.
  std::map<std::string, std::vector<TimedPose>> poses;
  std::map<std::string, std::vector<json>> topic_lines;
  std::vector<json> resources;
  mutable std::vector<std::string> warnings;  // skipped lines of the .jsonl files (also while modelling)
};

inline constexpr const char* kDash = "—";

// A timeline entry that ended well: "ok" (the documents' word) or "succeeded" (a navigation
// goal's result as the engine records it).
inline bool entry_ok(const std::string& status) { return status == "ok" || status == "succeeded"; }

// Null when `j` is not an object, lacks `key` or holds null there.
const json* field(const json& j, std::string_view key);
std::optional<std::string> get_str(const json& j, std::string_view key);
std::optional<double> get_num(const json& j, std::string_view key);
// First of the keys present (not null).
const json* first_field(const json& j, std::initializer_list<std::string_view> keys);

std::string fmt_num(double v);     // 12.345, 3, 1.5e-05
std::string fmt_fixed3(double v);  // 12.345 (seconds in junit)
std::string show(const json* v);   // a value as text; "—" when null
std::string show(const json& v);
std::string show_seconds(const json* v);           // "12.3 s" or "—"
std::string dump(const json& j, int indent = -1);  // invalid UTF-8 replaced, never throws
std::string human_size(uint64_t bytes);

std::string valid_utf8(std::string_view s);  // invalid sequences -> U+FFFD
std::string xml_escape(std::string_view s);  // text and attributes; control chars as \xNN
std::string html_escape(std::string_view s);
std::string md_cell(std::string_view s);  // one table cell: | escaped, newlines as <br>

// Rendering of the shared pieces.
std::string clock_line(const json& model);
std::string junit_text(const Report::Data& d, JunitCounts* counts);
std::string markdown_text(const Report::Data& d);
std::string html_text(const Report::Data& d);
std::string timeline_svg(const json& model);        // render_timeline.cpp
std::string signals_html(const Report::Data& d);    // render_signals.cpp

}  // namespace fieldproof::report
