// The one exception type of the `time` part.
//
// Every refusal of the part (scheduling in the past, a period <= 0, a negative advance, advance_to
// before now, publishing on the Bus before the last delivered stamp, integers(low, high) with
// high < low, ...) throws fieldproof::TimeError whose what() says what was asked and why it is
// refused, e.g. "SimClock::schedule: at 0.5 s is before now 1 s (time never goes backwards)".
//
//   try { clock.advance(-seconds(1)); } catch (const fieldproof::TimeError& e) { log(e.what()); }
#pragma once

#include <stdexcept>
#include <string>

namespace fieldproof {

class TimeError : public std::runtime_error {
 public:
  explicit TimeError(const std::string& message) : std::runtime_error(message) {}
};

}  // namespace fieldproof
