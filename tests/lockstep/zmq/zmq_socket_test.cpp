// The ZeroMQ wrapper on its own: round trips, multipart boundaries, errors as values with
// zmq_strerror's text, timeouts, poll over sockets and plain file descriptors, moves.
#include "fieldproof/lockstep/zmq_socket.hpp"

#include <gtest/gtest.h>
#include <unistd.h>
#include <zmq.h>

#include <cerrno>
#include <string>
#include <vector>

namespace fieldproof::lockstep {
namespace {

ZmqSocket open_or_die(ZmqContext& ctx, SocketType t) {
  auto s = ZmqSocket::open(ctx, t);
  EXPECT_TRUE(s.ok()) << s.status().message();
  return std::move(s).value();
}

TEST(ZmqSocket, ReqRepRoundTripKeepsEveryFrame) {
  auto ctx = ZmqContext::create();
  ASSERT_TRUE(ctx.ok());
  ZmqSocket rep = open_or_die(*ctx, SocketType::kRep);
  ZmqSocket req = open_or_die(*ctx, SocketType::kReq);
  ASSERT_TRUE(rep.bind("inproc://roundtrip").ok());
  ASSERT_TRUE(req.connect("inproc://roundtrip").ok());
  ASSERT_TRUE(req.send_multipart({"a", "", std::string_view("b\0c", 3)}).ok());
  auto got = rep.recv_multipart();
  ASSERT_TRUE(got.ok()) << got.status().message();
  EXPECT_EQ(*got, (std::vector<std::string>{"a", "", std::string("b\0c", 3)}));
  ASSERT_TRUE(rep.send("pong").ok());
  ZmqMessage m;
  ASSERT_TRUE(req.recv(m).ok());
  EXPECT_EQ(m.view(), "pong");
  EXPECT_EQ(m.size(), 4u);
  EXPECT_FALSE(m.more());
}

TEST(ZmqSocket, ErrorsCarryTheCallAndZmqStrerror) {
  auto ctx = ZmqContext::create();
  ASSERT_TRUE(ctx.ok());
  ZmqSocket s = open_or_die(*ctx, SocketType::kRep);
  const ZmqStatus b = s.bind("bogus://nowhere");
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.error(), EPROTONOSUPPORT);
  EXPECT_EQ(b.message(), "binding 'bogus://nowhere': Protocol not supported");
  const ZmqStatus c = s.connect("tcp://no-port");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.message().rfind("connecting to 'tcp://no-port': ", 0), 0u) << c.message();
  const ZmqStatus o = s.set_int(-12345, 1, "an option that does not exist");
  ASSERT_FALSE(o.ok());
  EXPECT_EQ(o.message(), "setting an option that does not exist: Invalid argument");
  // No context: a clear failure, not a crash.
  ZmqContext none;
  auto bad = ZmqSocket::open(none, SocketType::kPair);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("no ZeroMQ context"), std::string::npos);
  // A failure built from errno 0 is still a failure.
  EXPECT_FALSE(ZmqStatus::failure("x", 0).ok());
}

TEST(ZmqSocket, TimeoutAndDontWaitAreWouldBlock) {
  auto ctx = ZmqContext::create();
  ASSERT_TRUE(ctx.ok());
  ZmqSocket rep = open_or_die(*ctx, SocketType::kRep);
  ASSERT_TRUE(rep.bind("inproc://timeout").ok());
  ZmqMessage m;
  const ZmqStatus now = rep.recv(m, /*dont_wait=*/true);
  ASSERT_FALSE(now.ok());
  EXPECT_TRUE(now.would_block());
  EXPECT_FALSE(now.interrupted());
  ASSERT_TRUE(rep.set_receive_timeout(20).ok());
  EXPECT_EQ(*rep.get_int(ZMQ_RCVTIMEO, "ZMQ_RCVTIMEO"), 20);
  auto later = rep.recv_multipart();
  ASSERT_FALSE(later.ok());
  EXPECT_TRUE(later.status().would_block());
}

TEST(ZmqSocket, RecvMultipartKeepsAtMostMaxFramesAndStaysOnTheBoundary) {
  auto ctx = ZmqContext::create();
  ASSERT_TRUE(ctx.ok());
  ZmqSocket a = open_or_die(*ctx, SocketType::kPair);
  ZmqSocket b = open_or_die(*ctx, SocketType::kPair);
  ASSERT_TRUE(a.bind("inproc://pair").ok());
  ASSERT_TRUE(b.connect("inproc://pair").ok());
  ASSERT_TRUE(b.send_multipart({"1", "2", "3", "4"}).ok());
  ASSERT_TRUE(b.send_multipart({"next"}).ok());
  size_t seen = 0;
  auto first = a.recv_multipart(false, 2, &seen);
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(*first, (std::vector<std::string>{"1", "2"}));
  EXPECT_EQ(seen, 4u);
  auto second = a.recv_multipart(true);
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(*second, std::vector<std::string>{"next"});
}

TEST(ZmqSocket, RouterSeesTheDealersRoutingId) {
  auto ctx = ZmqContext::create();
  ASSERT_TRUE(ctx.ok());
  ZmqSocket router = open_or_die(*ctx, SocketType::kRouter);
  ZmqSocket dealer = open_or_die(*ctx, SocketType::kDealer);
  ASSERT_TRUE(dealer.set_identity("peer-7").ok());
  ASSERT_TRUE(router.bind("inproc://router").ok());
  ASSERT_TRUE(dealer.connect("inproc://router").ok());
  ASSERT_TRUE(dealer.send("hello").ok());
  auto got = router.recv_multipart();
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(*got, (std::vector<std::string>{"peer-7", "hello"}));
  ASSERT_TRUE(router.send_multipart({"peer-7", "back"}).ok());
  auto back = dealer.recv_multipart();
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, std::vector<std::string>{"back"});
}

TEST(ZmqSocket, LastEndpointNamesThePickedPort) {
  auto ctx = ZmqContext::create();
  ASSERT_TRUE(ctx.ok());
  ZmqSocket s = open_or_die(*ctx, SocketType::kRouter);
  ASSERT_TRUE(s.set_linger(0).ok());
  ASSERT_TRUE(s.bind("tcp://127.0.0.1:*").ok());
  auto ep = s.last_endpoint();
  ASSERT_TRUE(ep.ok());
  EXPECT_EQ(ep->rfind("tcp://127.0.0.1:", 0), 0u) << *ep;
  EXPECT_NE(ep->back(), '*');
  auto fd = s.fd();
  ASSERT_TRUE(fd.ok());
  EXPECT_GE(*fd, 0);
}

TEST(ZmqPoll, TimesOutThenReportsASocketAndAPipe) {
  auto ctx = ZmqContext::create();
  ASSERT_TRUE(ctx.ok());
  ZmqSocket a = open_or_die(*ctx, SocketType::kPair);
  ZmqSocket b = open_or_die(*ctx, SocketType::kPair);
  ASSERT_TRUE(a.bind("inproc://poll").ok());
  ASSERT_TRUE(b.connect("inproc://poll").ok());
  int pipe_fds[2];
  ASSERT_EQ(::pipe(pipe_fds), 0);
  ZmqPollItem items[2] = {{&a, -1, ZmqPoll::kIn, 0}, {nullptr, pipe_fds[0], ZmqPoll::kIn, 0}};
  auto idle = poll_sockets(items, 10);
  ASSERT_TRUE(idle.ok());
  EXPECT_EQ(*idle, 0);
  ASSERT_TRUE(b.send("x").ok());
  ASSERT_EQ(::write(pipe_fds[1], "y", 1), 1);
  // inproc delivery is asynchronous: wait (bounded by the poll timeout) until both are ready.
  int ready = 0;
  for (int i = 0; i < 50 && ready < 2; ++i) {
    auto n = poll_sockets(items, 100);
    ASSERT_TRUE(n.ok());
    ready = *n;
  }
  EXPECT_EQ(ready, 2);
  EXPECT_TRUE(items[0].revents & ZmqPoll::kIn);
  EXPECT_TRUE(items[1].revents & ZmqPoll::kIn);
  auto ev = a.events();
  ASSERT_TRUE(ev.ok());
  EXPECT_TRUE(*ev & ZmqPoll::kIn);
  ::close(pipe_fds[0]);
  ::close(pipe_fds[1]);
}

TEST(ZmqSocket, PollOneSocketTimesOutThenReportsOnlyTheAskedEvents) {
  auto ctx = ZmqContext::create();
  ASSERT_TRUE(ctx.ok());
  ZmqSocket a = open_or_die(*ctx, SocketType::kPair);
  ZmqSocket b = open_or_die(*ctx, SocketType::kPair);
  ASSERT_TRUE(a.bind("inproc://poll-one").ok());
  ASSERT_TRUE(b.connect("inproc://poll-one").ok());
  auto idle = a.poll(ZmqPoll::kIn, 10);
  ASSERT_TRUE(idle.ok()) << idle.status().message();
  EXPECT_EQ(*idle, 0);
  ASSERT_TRUE(b.send("x").ok());
  auto ready = a.poll(ZmqPoll::kIn, 5000);
  ASSERT_TRUE(ready.ok());
  EXPECT_EQ(*ready, ZmqPoll::kIn);
  // Writable too, but only the asked bits come back.
  auto both = a.poll(ZmqPoll::kIn | ZmqPoll::kOut, 0);
  ASSERT_TRUE(both.ok());
  EXPECT_EQ(*both, ZmqPoll::kIn | ZmqPoll::kOut);
  auto out_only = a.poll(ZmqPoll::kOut, 0);
  ASSERT_TRUE(out_only.ok());
  EXPECT_EQ(*out_only, ZmqPoll::kOut);
  // A closed socket is an error value, not a crash.
  a.close();
  ZmqSocket none;
  auto bad = none.poll(ZmqPoll::kIn, 0);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("zmq_poll"), std::string::npos);
}

TEST(ZmqSocket, MonitorEventsArriveWholeWithTheirEndpoint) {
  auto ctx = ZmqContext::create();
  ASSERT_TRUE(ctx.ok());
  ZmqSocket server = open_or_die(*ctx, SocketType::kRouter);
  ZmqSocket client = open_or_die(*ctx, SocketType::kDealer);
  ASSERT_TRUE(server.set_linger(0).ok());
  ASSERT_TRUE(client.set_linger(0).ok());
  ASSERT_TRUE(server.bind("tcp://127.0.0.1:*").ok());
  const std::string ep = *server.last_endpoint();
  ASSERT_TRUE(
      client.monitor("inproc://client-monitor", ZMQ_EVENT_CONNECTED | ZMQ_EVENT_DISCONNECTED).ok());
  ZmqSocket mon = open_or_die(*ctx, SocketType::kPair);
  ASSERT_TRUE(mon.connect("inproc://client-monitor").ok());
  auto none = mon.recv_monitor_event(/*dont_wait=*/true);
  ASSERT_FALSE(none.ok());
  EXPECT_TRUE(none.status().would_block());
  ASSERT_TRUE(client.connect(ep).ok());
  auto connected = mon.recv_monitor_event();
  ASSERT_TRUE(connected.ok()) << connected.status().message();
  EXPECT_EQ(connected->event, ZMQ_EVENT_CONNECTED);
  EXPECT_EQ(connected->endpoint, ep);
  EXPECT_GE(static_cast<int>(connected->value), 0);  // the connection's descriptor
  server.close();
  auto dropped = mon.recv_monitor_event();
  ASSERT_TRUE(dropped.ok()) << dropped.status().message();
  EXPECT_EQ(dropped->event, ZMQ_EVENT_DISCONNECTED);
  EXPECT_EQ(dropped->endpoint, ep);
  // Events stay whole: nothing half-read is left behind.
  auto after = mon.recv_monitor_event(/*dont_wait=*/true);
  ASSERT_FALSE(after.ok());
  EXPECT_TRUE(after.status().would_block());
  ASSERT_TRUE(client.monitor("", 0).ok());
}

TEST(ZmqSocket, AMonitorMessageTooShortIsAnError) {
  auto ctx = ZmqContext::create();
  ASSERT_TRUE(ctx.ok());
  ZmqSocket a = open_or_die(*ctx, SocketType::kPair);
  ZmqSocket b = open_or_die(*ctx, SocketType::kPair);
  ASSERT_TRUE(a.bind("inproc://short-event").ok());
  ASSERT_TRUE(b.connect("inproc://short-event").ok());
  ASSERT_TRUE(b.send_multipart({"abc", "ep"}).ok());
  auto e = a.recv_monitor_event();
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.status().error(), EPROTO);
  EXPECT_NE(e.status().message().find("monitor event"), std::string::npos);
}

TEST(ZmqSocket, MovesTransferOwnershipAndCloseIsIdempotent) {
  auto ctx = ZmqContext::create();
  ASSERT_TRUE(ctx.ok());
  ZmqSocket s = open_or_die(*ctx, SocketType::kPair);
  ZmqSocket t = std::move(s);
  EXPECT_FALSE(s.valid());  // NOLINT(bugprone-use-after-move): moved-from is defined as empty
  EXPECT_TRUE(t.valid());
  t.close();
  t.close();
  EXPECT_FALSE(t.valid());
  ZmqContext moved = std::move(ctx).value();
  EXPECT_TRUE(moved.valid());
  EXPECT_TRUE(ZmqContext::process().valid());
  auto on_process = ZmqSocket::open(ZmqContext::process(), SocketType::kDealer);
  EXPECT_TRUE(on_process.ok());
}

}  // namespace
}  // namespace fieldproof::lockstep
