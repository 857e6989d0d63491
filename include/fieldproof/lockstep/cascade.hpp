// Cascade: a child coordinator for a group of participants (another machine, another network
// namespace) under a parent coordinator. A participant cannot tell whether it is under a child or
// the root: it sees the same frames in the same order.
//
//   ServerOptions o;
//   o.bind = {"ipc://child.sock"};
//   o.parent = "tcp://10.0.0.1:5545";
//   auto child = start_child_coordinator(std::move(o));   // or: fieldproof coordinator --parent
//
// How (CoordinatorServer with ServerOptions::parent set; the core in upstream mode):
//  * the child is one participant at the parent, named child_name ("cascade-<pid>" by default),
//    thread "cascade", regulating: it announces its local participants' minimum effective safe
//    time there whenever that changes, and subscribes there to every topic a local thread
//    subscribes to;
//  * each local participant's name is also registered at the parent on the child's connection
//    (thread "~cascade", safe time +inf, so it never holds time by itself), so the publishes the
//    child forwards keep their publisher name and sequence: the parent orders them in the same
//    total order as if the publisher were connected directly;
//  * the parent's Deliver frames are fanned out to the local subscribers, the parent's grants cap
//    the local grant; Heartbeat{child_name} keeps the child alive at the parent;
//  * an Error{kTimeout or kShutdown} from the parent ends the local run the same way.
// Control requests sent to a child act on the child's core only (pause it, hold it); control the
// whole run at the root.
#pragma once

#include <memory>

#include "fieldproof/lockstep/zmq_server.hpp"

namespace fieldproof::lockstep {

// A CoordinatorServer running as a child of options.parent. Throws TransportError when parent is
// empty or an endpoint is bad.
std::unique_ptr<CoordinatorServer> start_child_coordinator(ServerOptions options);

}  // namespace fieldproof::lockstep
