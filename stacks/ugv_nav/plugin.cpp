// The reference stack as an in-process plugin (plugin_api.hpp): UgvNavNode behind the C ABI.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "fieldproof/stacks/plugin_api.hpp"
#include "fieldproof/stacks/ugv_nav_node.hpp"
#include "fieldproof/time/system_clock.hpp"

#define FIELDPROOF_EXPORT __attribute__((visibility("default")))

namespace {

using fieldproof::SimTime;
using namespace fieldproof::stacks;

struct Plugin {
  fieldproof_stack_v1 table{};
  std::unique_ptr<UgvNavNode> node;
  std::vector<std::string> subscriptions;
  std::string error;
  fieldproof::WallNow steady = fieldproof::SystemClock::wall_now();
  fieldproof_wall_now_fn wall_fn = nullptr;
  void* wall_user = nullptr;
  LifecycleOptions::Clock clock = LifecycleOptions::Clock::kAuto;
  SimTime last_sim = SimTime::zero();  // the latest simulated time seen (tick, deliver)

  // The watchdog's clock: lifecycle.heartbeat_clock, or (auto) the host's.
  SimTime wall_now() const {
    if (clock == LifecycleOptions::Clock::kSim) return last_sim;
    if (clock == LifecycleOptions::Clock::kWall) return steady();
    return wall_fn ? SimTime::from_ns(wall_fn(wall_user)) : steady();
  }
  void saw(int64_t sim_ns) { last_sim = std::max(last_sim, SimTime::from_ns(sim_ns)); }
};

Plugin* self_of(fieldproof_stack_v1* s) { return static_cast<Plugin*>(s->impl); }

int fail(Plugin* p, std::string message) {
  p->error = std::move(message);
  return 1;
}

const char* last_error(fieldproof_stack_v1* s) { return self_of(s)->error.c_str(); }

size_t subscription_count(fieldproof_stack_v1* s) { return self_of(s)->subscriptions.size(); }

const char* subscription(fieldproof_stack_v1* s, size_t i) {
  Plugin* p = self_of(s);
  return i < p->subscriptions.size() ? p->subscriptions[i].c_str() : nullptr;
}

int set_wall_clock(fieldproof_stack_v1* s, fieldproof_wall_now_fn fn, void* user) {
  Plugin* p = self_of(s);
  if (!fn) return fail(p, "set_wall_clock: the function is NULL");
  p->wall_fn = fn;
  p->wall_user = user;
  return 0;
}

int deliver(fieldproof_stack_v1* s, const char* topic, int64_t stamp_ns, const char* type,
            const char* payload, size_t size) {
  Plugin* p = self_of(s);
  if (!topic || (!payload && size > 0)) return fail(p, "deliver: topic or payload is NULL");
  try {
    p->saw(stamp_ns);
    BusMessage m{topic, SimTime::from_ns(stamp_ns), type ? type : "",
                 std::string(payload ? payload : "", size)};
    const fieldproof::Status delivered = p->node->deliver(m);
    if (!delivered.ok()) return fail(p, delivered.message());
    return 0;
  } catch (const std::exception& ex) {
    return fail(p, std::string("deliver: ") + ex.what());
  }
}

int tick(fieldproof_stack_v1* s, int64_t now_ns) {
  Plugin* p = self_of(s);
  try {
    p->saw(now_ns);
    p->node->tick(SimTime::from_ns(now_ns));
    return 0;
  } catch (const std::exception& ex) {
    return fail(p, std::string("tick: ") + ex.what());
  }
}

int64_t next_tick_ns(fieldproof_stack_v1* s) { return self_of(s)->node->next_tick().ns(); }

int check_wall(fieldproof_stack_v1* s) {
  self_of(s)->node->check_wall();
  return 0;
}

size_t drain(fieldproof_stack_v1* s, fieldproof_stack_emit_fn emit, void* user) {
  Plugin* p = self_of(s);
  std::vector<BusMessage> out = p->node->take_messages();
  if (emit) {
    for (const BusMessage& m : out) {
      emit(user, m.topic.c_str(), m.stamp.ns(), m.type.c_str(), m.payload.data(), m.payload.size());
    }
  }
  return out.size();
}

int shutdown(fieldproof_stack_v1* s, int64_t now_ns, const char* reason) {
  self_of(s)->node->stack().shutdown(SimTime::from_ns(now_ns), reason ? reason : "shutdown");
  return 0;
}

void destroy(fieldproof_stack_v1* s) { delete self_of(s); }

void copy_error(const std::string& message, char* error, size_t size) {
  if (!error || size == 0) return;
  std::snprintf(error, size, "%s", message.c_str());
}

}  // namespace

FIELDPROOF_STACK_DECLARE_ABI();

extern "C" FIELDPROOF_EXPORT fieldproof_stack_v1* fieldproof_stack_create(
    const char* vehicle, const char* params_json, const fieldproof_grid_v1* map, char* error,
    size_t error_size) {
  try {
    if (!vehicle || !*vehicle) {
      copy_error("fieldproof_stack_create: the vehicle name is empty", error, error_size);
      return nullptr;
    }
    if (!map || !map->cells || map->width <= 0 || map->height <= 0) {
      copy_error("fieldproof_stack_create: no static map given (map, cells, width, height)", error,
                 error_size);
      return nullptr;
    }
    auto options = parse_ugv_nav_options(params_json ? params_json : "");
    if (!options.ok()) {
      copy_error(options.status().message(), error, error_size);
      return nullptr;
    }
    UgvNavOptions o = options.value();
    o.vehicle = vehicle;
    fieldproof::world::OccupancyGrid grid;
    grid.resolution = map->resolution;
    grid.origin_x = map->origin_x;
    grid.origin_y = map->origin_y;
    grid.width = map->width;
    grid.height = map->height;
    grid.cells.assign(map->cells, map->cells + static_cast<size_t>(map->width) *
                                                   static_cast<size_t>(map->height));
    auto p = std::make_unique<Plugin>();
    Plugin* raw = p.get();
    raw->clock = o.lifecycle.heartbeat_clock;
    auto node = UgvNavNode::create(o, grid, [raw] { return raw->wall_now(); });
    if (!node.ok()) {
      copy_error(node.status().message(), error, error_size);
      return nullptr;
    }
    p->node = std::move(node).value();
    p->subscriptions = p->node->subscriptions();
    fieldproof_stack_v1& t = p->table;
    t.abi_version = FIELDPROOF_STACK_ABI_VERSION;
    t.struct_size = sizeof(fieldproof_stack_v1);
    t.impl = raw;
    t.last_error = last_error;
    t.subscription_count = subscription_count;
    t.subscription = subscription;
    t.set_wall_clock = set_wall_clock;
    t.deliver = deliver;
    t.tick = tick;
    t.next_tick_ns = next_tick_ns;
    t.check_wall = check_wall;
    t.drain = drain;
    t.shutdown = shutdown;
    t.destroy = destroy;
    return &p.release()->table;
  } catch (const std::exception& ex) {
    copy_error(std::string("fieldproof_stack_create: ") + ex.what(), error, error_size);
    return nullptr;
  }
}
