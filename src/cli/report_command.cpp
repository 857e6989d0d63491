// `fieldproof report RUN [--format md|json|junit|html] [--write] [--strict]`: a run's record
// rendered. RUN is a run directory, its run.json, or a run id under ./runs. Exit 0 when rendered
// (whatever the run's verdict), 2 when run.json is missing, unreadable or invalid (with --strict,
// also when it is not a complete RunRecord: nothing is rendered), 1 when --write fails.
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>

#include "cli/commands.hpp"
#include "fieldproof/report/report.hpp"

namespace fieldproof::cli {
namespace {

struct ReportArgs {
  std::string run;
  std::string format = "md";
  bool write = false;
  bool strict = false;
};

int run_report(const ReportArgs& a) {
  report::Format format;
  if (!report::parse_format(a.format, &format)) {
    std::fprintf(stderr, "fieldproof report: unknown format '%s' (md, json, junit or html)\n",
                 a.format.c_str());
    return kExitInvalid;
  }
  const Result<std::filesystem::path> file = report::resolve_run_json(a.run);
  if (!file.ok()) {
    std::fprintf(stderr, "fieldproof report: %s\n", file.status().message().c_str());
    return kExitInvalid;
  }
  const Result<report::Report> r = report::Report::load(*file);
  if (!r.ok()) {
    std::fprintf(stderr, "fieldproof report: %s\n", r.status().message().c_str());
    return kExitInvalid;
  }
  if (!r->is_run_record()) {
    std::fprintf(stderr,
                 "fieldproof report: %s: not a run record (a JSON object with run_id and status, "
                 "as `fieldproof run` writes it)\n",
                 file->string().c_str());
    return kExitInvalid;
  }
  // A field the report needs but the record lacks is rendered as a dash with a warning; a CI job
  // that wants such a record to fail asks for --strict.
  if (a.strict && !r->is_typed()) {
    std::fprintf(stderr, "fieldproof report: %s\n", r->record_problem().c_str());
    return kExitInvalid;
  }
  for (const std::string& w : r->warnings()) std::fprintf(stderr, "warning: %s\n", w.c_str());
  const std::string text = r->render(format);
  std::fwrite(text.data(), 1, text.size(), stdout);
  if (a.write) {
    if (const Status s = r->write_all(r->run_dir()); !s.ok()) {
      std::fprintf(stderr, "fieldproof report: %s\n", s.message().c_str());
      return kExitFailed;
    }
    std::fprintf(stderr, "wrote report.json, report.md, junit.xml and report.html in %s\n",
                 r->run_dir().string().c_str());
  }
  return kExitOk;
}

}  // namespace

void add_report_command(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<ReportArgs>();
  CLI::App* cmd = app.add_subcommand(
      "report", "Render a run's report (run directory, run.json or run id under ./runs)");
  cmd->add_option("run", args->run, "run directory, its run.json, or a run id under ./runs")
      ->required();
  cmd->add_option("--format", args->format, "md (default), json, junit or html")
      ->check(CLI::IsMember({"md", "json", "junit", "html"}));
  cmd->add_flag("--write", args->write,
                "also (re)write report.json, report.md, junit.xml and report.html in the run "
                "directory");
  cmd->add_flag("--strict", args->strict,
                "refuse (exit 2, nothing rendered) a run.json that is not a complete run record: "
                "a field the report needs is missing or has the wrong type");
  cmd->callback([args, exit_code] { *exit_code = run_report(*args); });
}

}  // namespace fieldproof::cli
