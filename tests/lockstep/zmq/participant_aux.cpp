// A participant in a process of its own, for the multi-process tests:
//   lockstep_participant_aux --endpoint EP --name N --period-ms P --until-ms U
//                            [--subscribe TOPIC]... --trace FILE [--server-key KEY]
// Without --endpoint it reads FIELDPROOF_COORDINATOR. Writes the ordered deliveries it received
// (trace_participant.hpp) to FILE. Exit 0 when it ran to the end, 1 when the run failed, 2 on a
// bad argument.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <string>

#include "fieldproof/lockstep/transport.hpp"
#include "lockstep/zmq/trace_participant.hpp"

using fieldproof::SimTime;
using fieldproof::milliseconds;
namespace ls = fieldproof::lockstep;

int main(int argc, char** argv) {
  std::string endpoint;
  std::string trace_file;
  ls::testing::TraceSpec spec;
  ls::ConnectOptions copts;
  copts.heartbeat_interval = milliseconds(50);
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::cerr << "participant_aux: " << a << " needs a value\n";
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--endpoint") endpoint = value();
    else if (a == "--name") spec.name = value();
    else if (a == "--period-ms") spec.period = milliseconds(std::stoll(value()));
    else if (a == "--until-ms") spec.until = SimTime::zero() + milliseconds(std::stoll(value()));
    else if (a == "--subscribe") spec.subscribe.push_back(value());
    else if (a == "--trace") trace_file = value();
    else if (a == "--server-key") copts.curve.server_public_key = value();
    else {
      std::cerr << "participant_aux: unknown argument " << a << "\n";
      return 2;
    }
  }
  if (spec.name.empty() || trace_file.empty()) {
    std::cerr << "participant_aux: --name and --trace are required\n";
    return 2;
  }
  try {
    ls::ParticipantOptions popts;
    popts.name = spec.name;
    auto p = endpoint.empty() ? ls::participant_from_environment(popts, copts)
                              : ls::connect_participant(endpoint, popts, copts);
    std::string trace = ls::testing::run_trace_participant(*p, spec);
    std::ofstream(trace_file, std::ios::binary) << trace;
    return p->errors() == 0 ? 0 : 1;
  } catch (const std::exception& e) {
    std::cerr << "participant_aux: " << e.what() << "\n";
    return 1;
  }
}
