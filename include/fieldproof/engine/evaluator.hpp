// The engine's names for the assertion library (fieldproof/assertions/checker.hpp), which the
// engine, the CLI and the tests have used since the evaluator lived here.
#pragma once

#include "fieldproof/assertions/checker.hpp"

namespace fieldproof::engine {

using assertions::ActionEvent;
using assertions::AssertionResult;
using assertions::AssertionType;
using assertions::AssertionTypes;
using assertions::Checker;
using assertions::Evaluator;
using assertions::LatencyWindow;
using assertions::PlanContext;
using assertions::PlanError;
using assertions::PlannedAssertion;
using assertions::Sample;
using assertions::to_string;
using assertions::Verdict;
using assertions::Watch;

}  // namespace fieldproof::engine
