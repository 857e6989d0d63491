// Prints one line per frame, "<name> <hex of encode_frame>", for the Python client's codec test
// (tests/python/test_codec.py): the Python encoder must produce these bytes and decode them back
// to the same values. With an argument, decodes that hex and prints "ok <kind>" or
// "error <code> <reason>" (the C++ verdict on bytes the Python encoder made).
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "fieldproof/lockstep/codec.hpp"

using namespace fieldproof;
using namespace fieldproof::lockstep;

namespace {

std::string hex(const std::string& s) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (unsigned char c : s) {
    out.push_back(digits[c >> 4]);
    out.push_back(digits[c & 15]);
  }
  return out;
}

std::string unhex(const std::string& h) {
  std::string out;
  for (size_t i = 0; i + 1 < h.size(); i += 2) {
    out.push_back(static_cast<char>(std::stoi(h.substr(i, 2), nullptr, 16)));
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 2) {
    DecodeResult r = decode_frame(unhex(argv[1]));
    if (r) {
      std::printf("ok %s\n", frame_kind_name(frame_kind(r.frame())));
    } else {
      std::printf("error %d %s\n", static_cast<int>(r.error().code), r.error().reason.c_str());
    }
    return 0;
  }
  Publish pub{"ugv1_nav", "/model/ugv1/cmd_vel", SimTime::from_ns(1'500'000'000),
              42,         "ignition.msgs.Twist", std::string("\x12\x09\x11\x00\xff", 5)};
  CoordinatorStatus st;
  st.paused = true;
  st.time = SimTime::from_ns(2'000'000'000);
  st.grants = 17;
  st.measured_rtf = 1.5;
  st.max_rtf = 0.0;
  st.hold = SimTime::infinite();
  st.participants = {{"world", "main", Role::kRegulating, SimTime::from_ns(2'100'000'000)},
                     {"ugv1_nav", "main", Role::kFollowing, SimTime::infinite()}};
  std::vector<std::pair<const char*, Frame>> frames = {
      {"announce", Announce{"ugv1_nav", "main", Role::kRegulating, SimTime::from_ns(100'000'000)}},
      {"announce_inf", Announce{"ugv1_nav", "main", Role::kFollowing, SimTime::infinite()}},
      {"subscribe", Subscribe{"ugv1_nav", "main", "/model/ugv1/odometry"}},
      {"unsubscribe", Unsubscribe{"ugv1_nav", "main", "/model/ugv1/scan"}},
      {"publish", pub},
      {"publish_empty", Publish{"p", "t", SimTime::zero(), 1, "", ""}},
      {"leave", Leave{"ugv1_nav", ""}},
      {"heartbeat", Heartbeat{"ugv1_nav"}},
      {"grant", Grant{SimTime::from_ns(123'456'789), 7}},
      {"deliver", Deliver{"main", pub}},
      {"error", Error{ErrorCode::kDuplicateName, "the name ugv1_nav is in use"}},
      {"control", Control{ControlOp::kStep, milliseconds(250), SimTime::infinite(), 2.5}},
      {"control_reply", ControlReply{false, "the run failed", st}},
      {"hello", Hello{kProtocolVersion, "fieldproof-python 0.2.0"}},
      {"welcome", Welcome{kProtocolVersion, "fieldproof-coordinator 0.2.0", uint64_t{64} << 20}},
      {"error_version", Error{ErrorCode::kVersion, "protocol version 2 is not supported"}},
      {"error_no_hello", Error{ErrorCode::kNoHello, "no Hello"}},
      {"player_control", PlayerControl{PlayerOp::kBurst, nanoseconds(-5), 7, 2.5}},
      {"player_reply",
       PlayerReply{true, "", true, 0.5, SimTime::from_ns(3'000'000'000), seconds(2), 3, 3, 5, 1,
                   SimTime::from_ns(5'000'000'000), true, "seek to 99 s clamped", 2}},
  };
  for (const auto& [name, f] : frames) std::printf("%s %s\n", name, hex(encode_frame(f)).c_str());
  return 0;
}
