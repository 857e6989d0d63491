// The protobuf wire encoding of the fieldproof.msgs navigation and lifecycle messages, written by
// hand: the in-process plugin must not carry its own copy of the generated classes (two copies of
// a generated .proto in one process abort in protobuf's registry). The bytes are the canonical
// serialisation (fields in number order, proto3 defaults omitted), identical to what the
// generated code writes; tests/stacks compare both.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "fieldproof/stacks/types.hpp"

namespace fieldproof::stacks::wire {

std::string encode_status(const NavStatus& status);
std::string encode_feedback(const NavFeedback& feedback);
std::string encode_lifecycle(const LifecycleTransition& transition);
// nullopt when the payload is not a NavigateToPoseGoal.
std::optional<NavGoal> decode_goal(std::string_view payload);
// The `up` field of a fieldproof.msgs.LinkState (docs/network.md); nullopt when the payload does
// not parse. proto3: an absent `up` is false.
std::optional<bool> decode_link_up(std::string_view payload);

}  // namespace fieldproof::stacks::wire
