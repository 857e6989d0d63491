// The `report` part: a run's record (run.json, + samples.jsonl / clock.jsonl for the plots and the
// run directory's files for the artefacts) rendered as report.json, report.md, junit.xml and
// report.html (one self-contained page, inline SVG plots, no scripts).
//
//   using namespace fieldproof::report;
//   Result<Report> r = Report::load("runs/depot-1");   // a run dir or its run.json
//   if (!r.ok()) return r.status();                     // "runs/depot-1/run.json: ..."
//   std::cout << r->to_markdown();                      // or to_json(), to_junit(), to_html()
//   Status s = r->write_all(r->run_dir());              // report.json, report.md, junit.xml, .html
//
// A run's run.json is read as a RunRecord (run_record.hpp) and the report's fields come from the
// typed record. One that is not a complete record (an old engine's, a field renamed or missing)
// still gives a report: it is read field by field, what is absent is rendered as "—" (null in
// report.json), and record_problem() / warnings() name the file and the fields, so a test can
// make that a failure. Only a missing, unreadable or non-JSON-object run.json is an error.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "fieldproof/util/status.hpp"

namespace fieldproof::report {

enum class Format { kMarkdown, kJson, kJunit, kHtml };

// "md" | "json" | "junit" | "html"; false if unknown.
bool parse_format(const std::string& text, Format* out);

// RUN as given to `fieldproof report`: a run directory, a run.json file, or a run id under
// `runs_dir`. The path of run.json, or kNotFound (kInvalidArgument for an empty RUN) naming what
// was tried.
Result<std::filesystem::path> resolve_run_json(const std::string& run,
                                               const std::filesystem::path& runs_dir = "runs");

struct JunitCounts {
  int tests = 0;
  int failures = 0;
  int errors = 0;
  int skipped = 0;
};

class Report {
 public:
  // Reads run.json (a file or the directory holding it) and the run directory beside it. The
  // error (kNotFound or kIoError when it cannot be read, kInvalidArgument when it is not a JSON
  // object) names the file.
  static Result<Report> load(const std::filesystem::path& run_json_or_dir);
  // From run.json's text; `run_dir` (may be empty) is read for samples, clock and artefacts.
  // kInvalidArgument when the text is not a JSON object.
  static Result<Report> from_text(const std::string& run_json_text,
                                  const std::filesystem::path& run_dir = {});

  const std::filesystem::path& run_dir() const;
  std::string run_id() const;
  std::string verdict() const;  // "—" when absent
  int exit_code() const;        // from run.json, else derived from status (1 when unknown)
  // run.json is a run record: an object with a string run_id and status, as a run writes it
  // (`fieldproof report` refuses anything else with exit 2; from_text("{}") still renders).
  bool is_run_record() const;
  // Lines of the run's .jsonl files that were skipped as not JSON (or longer than 16 MiB): one
  // entry per file, "FILE:LINE: N lines that are not JSON skipped (the first here)".
  // Also, first, why a run record is not a complete RunRecord (see record_problem()).
  const std::vector<std::string>& warnings() const;
  // "" when run.json was read as a complete RunRecord or is not a run record at all (a sweep
  // summary, a comparison); else "FILE: not a complete run record: FIELD: missing; ...".
  const std::string& record_problem() const;
  // True when the report's fields came from a complete RunRecord.
  bool is_typed() const;

  std::string to_json() const;      // report.json
  std::string to_markdown() const;  // report.md
  std::string to_junit() const;     // junit.xml
  std::string to_html() const;      // report.html
  std::string render(Format f) const;
  JunitCounts junit_counts() const;

  // (Re)writes report.json, report.md, junit.xml and report.html in `dir` (each to a temporary
  // file, then renamed over the old one); kIoError naming the file that could not be written.
  [[nodiscard]] Status write_all(const std::filesystem::path& dir) const;

  struct Data;

 private:
  explicit Report(std::shared_ptr<const Data> d) : d_(std::move(d)) {}
  // from_text, with the name warnings give run.json.
  static Result<Report> from_text_named(const std::string& run_json_text,
                                        const std::filesystem::path& run_dir,
                                        const std::string& name);
  std::shared_ptr<const Data> d_;
};

// Report::load(run_dir) and write_all(run_dir): what a run and a re-judging do once run.json is
// written. The first error, naming the file.
[[nodiscard]] Status write_reports(const std::filesystem::path& run_dir);

}  // namespace fieldproof::report
