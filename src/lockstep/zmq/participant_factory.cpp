// Participants over ZeroMQ links (kept apart from the link so that programs using only the link
// or the server do not pull in the participant library).
#include <cstdlib>

#include "fieldproof/lockstep/transport.hpp"

namespace fieldproof::lockstep {

std::unique_ptr<Participant> connect_participant(const std::string& endpoint,
                                                 ParticipantOptions options,
                                                 const ConnectOptions& connect_options) {
  auto p = std::make_unique<Participant>(connect(endpoint, connect_options), std::move(options));
  if (!p->ok()) {
    throw TransportError("participant '" + p->name() + "' could not join the coordinator at " +
                         endpoint + ": " + p->last_error());
  }
  return p;
}

std::unique_ptr<Participant> participant_from_environment(ParticipantOptions options,
                                                          ConnectOptions connect_options) {
  const char* ep = std::getenv(kCoordinatorEnv);
  if (ep == nullptr || *ep == '\0') {
    throw TransportError(std::string(kCoordinatorEnv) +
                         " is not set: set it to the coordinator's endpoint (e.g. "
                         "ipc:///tmp/run/coordinator.sock or tcp://host:5545), as printed by "
                         "`fieldproof coordinator`");
  }
  if (const char* key = std::getenv("FIELDPROOF_COORDINATOR_SERVER_KEY");
      key != nullptr && *key != '\0' && connect_options.curve.server_public_key.empty()) {
    connect_options.curve.server_public_key = key;
  }
  return connect_participant(ep, std::move(options), connect_options);
}

}  // namespace fieldproof::lockstep
