#include "fieldproof/world/robot_model.hpp"

#include <tinyxml2.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <numbers>
#include <sstream>
#include <string_view>
#include <system_error>

#include "mesh_bounds.hpp"

namespace fieldproof::world {
namespace fs = std::filesystem;

namespace {

constexpr double kPi = std::numbers::pi;
constexpr double kInf = std::numeric_limits<double>::infinity();
// Bounds of what the world simulates (the bad-input limits of docs/robots.md).
constexpr int kMaxSamples = 100000;

bool is_dir(const fs::path& p) {
  std::error_code ec;
  return fs::is_directory(p, ec);
}
bool is_file(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec);
}

std::string trim(std::string_view s) {
  const auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string_view::npos) return {};
  const auto e = s.find_last_not_of(" \t\r\n");
  return std::string(s.substr(b, e - b + 1));
}

std::string text_of(const tinyxml2::XMLElement* e) {
  const char* t = e ? e->GetText() : nullptr;
  return t ? trim(t) : std::string();
}

bool parse_double(std::string_view s, double* out) {
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  const auto r = std::from_chars(s.data(), s.data() + s.size(), *out);
  return r.ec == std::errc() && r.ptr == s.data() + s.size();
}

// Numbers separated by white space ("0.6 0.4 0.3").
bool parse_numbers(const std::string& s, std::vector<double>* out) {
  out->clear();
  std::istringstream in(s);
  std::string tok;
  while (in >> tok) {
    double v = 0;
    if (!parse_double(tok, &v) || !std::isfinite(v)) return false;
    out->push_back(v);
  }
  return true;
}

// A model folder's model file: the <sdf> of its model.config (the highest version), else
// model.sdf.
Result<fs::path> model_file_of(const fs::path& dir) {
  const fs::path config = dir / "model.config";
  if (is_file(config)) {
    tinyxml2::XMLDocument doc;
    if (doc.LoadFile(config.c_str()) != tinyxml2::XML_SUCCESS) {
      return Status(StatusCode::kCorrupt, config.string() + ":" +
                                              std::to_string(doc.ErrorLineNum()) +
                                              ": model.config is not XML: " + doc.ErrorStr());
    }
    const tinyxml2::XMLElement* model = doc.RootElement();
    std::string best;
    double best_version = -1;
    for (const auto* e = model ? model->FirstChildElement("sdf") : nullptr; e;
         e = e->NextSiblingElement("sdf")) {
      double v = 0;
      const char* a = e->Attribute("version");
      if (!a || !parse_double(a, &v)) v = 0;
      if (v > best_version && !text_of(e).empty()) {
        best_version = v;
        best = text_of(e);
      }
    }
    if (!best.empty()) return dir / best;
  }
  if (is_file(dir / "model.sdf")) return dir / "model.sdf";
  return Status(
      StatusCode::kNotFound,
      "the folder " + dir.string() +
          " holds no model: neither a model.config naming its <sdf> file nor a model.sdf");
}

std::string search_list(const std::vector<fs::path>& search) {
  std::string out;
  for (const auto& d : search) out += (out.empty() ? "" : ":") + d.string();
  return out.empty() ? "(empty)" : out;
}

// The model folder whose model.config declares <fieldproof_short_name>name</...>.
fs::path find_short_name(const std::string& name, const std::vector<fs::path>& search) {
  for (const fs::path& dir : search) {
    std::error_code ec;
    if (!is_dir(dir)) continue;
    std::vector<fs::path> subs;
    for (const auto& entry : fs::directory_iterator(dir, ec)) subs.push_back(entry.path());
    std::sort(subs.begin(), subs.end());
    for (const fs::path& sub : subs) {
      const fs::path config = sub / "model.config";
      if (!is_file(config)) continue;
      tinyxml2::XMLDocument doc;
      if (doc.LoadFile(config.c_str()) != tinyxml2::XML_SUCCESS || !doc.RootElement()) continue;
      for (const auto* e = doc.RootElement()->FirstChildElement("fieldproof_short_name"); e;
           e = e->NextSiblingElement("fieldproof_short_name")) {
        if (text_of(e) == name) return sub;
      }
    }
  }
  return {};
}

Result<fs::path> resolve(const std::string& uri, const fs::path& base_dir,
                         const std::vector<fs::path>& search) {
  if (uri.empty()) {
    return Status(StatusCode::kInvalidArgument, "an empty model URI");
  }
  if (uri.starts_with("http://") || uri.starts_with("https://")) {
    return Status(
        StatusCode::kUnsupported,
        "'" + uri +
            "' is a Fuel (web) URI and fieldproof does not download models: fetch the model "
            "into a folder NAME on FIELDPROOF_RESOURCE_PATH and name it model://NAME");
  }
  if (uri.starts_with("model://")) {
    const std::string rest = uri.substr(8);
    const auto slash = rest.find('/');
    const std::string name = rest.substr(0, slash);
    const std::string sub = slash == std::string::npos ? "" : rest.substr(slash + 1);
    if (name.empty()) {
      return Status(StatusCode::kNotFound, "'" + uri + "' names no model");
    }
    for (const fs::path& dir : search) {
      const fs::path folder = dir / name;
      if (!is_dir(folder)) continue;
      const fs::path target = sub.empty() ? folder : folder / sub;
      if (is_dir(target)) return model_file_of(target);
      if (is_file(target)) return target;
    }
    if (sub.empty()) {
      if (const fs::path dir = find_short_name(name, search); !dir.empty()) {
        return model_file_of(dir);
      }
    }
    return Status(StatusCode::kNotFound, "the model '" + uri +
                                             "' is not in any folder of the resource path (" +
                                             search_list(search) + "); add the folder holding '" +
                                             name + "' to FIELDPROOF_RESOURCE_PATH");
  }
  std::string path = uri.starts_with("file://") ? uri.substr(7) : uri;
  const bool bare = path.find('/') == std::string::npos && !path.ends_with(".sdf");
  const fs::path p = fs::path(path).is_absolute() ? fs::path(path) : base_dir / path;
  if (is_dir(p)) return model_file_of(p);
  if (is_file(p)) return p;
  if (bare) {
    if (Result<fs::path> by_name = resolve("model://" + path, base_dir, search); by_name.ok()) {
      return by_name;
    }
    if (const fs::path dir = find_short_name(path, search); !dir.empty()) {
      return model_file_of(dir);
    }
    return Status(StatusCode::kNotFound,
                  "no model '" + path +
                      "': neither a file or folder of that name beside the scenario (" +
                      base_dir.string() +
                      ") nor a model folder of that name or short name on the resource "
                      "path (" +
                      search_list(search) + ")");
  }
  return Status(StatusCode::kNotFound,
                "the model file " + p.lexically_normal().string() + " does not exist");
}

// Reads one model document into a RobotModel.
class Reader {
 public:
  Reader(std::string file, RobotModel* out) : file_(std::move(file)), out_(out) {}

  std::string at(const tinyxml2::XMLElement* e) const {
    return file_ + ":" + std::to_string(e ? e->GetLineNum() : 0) + ": ";
  }
  void error(const tinyxml2::XMLElement* e, const std::string& m) {
    out_->errors.push_back(at(e) + m);
  }
  void warn(const tinyxml2::XMLElement* e, const std::string& m) {
    out_->warnings.push_back(at(e) + m);
  }

  // A child's number; `def` when absent. Not a finite number: an error naming the element.
  double number(const tinyxml2::XMLElement* parent, const char* name, double def,
                const std::string& what, bool* given = nullptr) {
    const tinyxml2::XMLElement* e = parent ? parent->FirstChildElement(name) : nullptr;
    if (given) *given = e != nullptr;
    if (!e) return def;
    double v = 0;
    if (!parse_double(text_of(e), &v) || !std::isfinite(v)) {
      error(e, "<" + std::string(name) + "> of " + what + ": '" + text_of(e) +
                   "' is not a finite number");
      return def;
    }
    return v;
  }

  // <update_rate> as a period: > 0 (Hz).
  Duration rate(const tinyxml2::XMLElement* sensor, const std::string& what, Duration def) {
    bool given = false;
    const double hz = number(sensor, "update_rate", 0.0, what, &given);
    if (!given) return def;
    const tinyxml2::XMLElement* e = sensor->FirstChildElement("update_rate");
    if (!(hz > 0)) {
      error(e, "<update_rate> of " + what + ": " + text_of(e) +
                   " Hz; a rate must be > 0 (the sensor publishes at it)");
      return def;
    }
    const double ns = 1e9 / hz;
    if (!(ns >= 1.0)) {
      error(e, "<update_rate> of " + what + ": " + text_of(e) + " Hz is above 1 GHz");
      return def;
    }
    return Duration::from_ns(std::llround(ns));
  }

  // A <noise> element's Gaussian stddev (0 when absent or of type none).
  double noise(const tinyxml2::XMLElement* parent, const std::string& what) {
    const tinyxml2::XMLElement* n = parent ? parent->FirstChildElement("noise") : nullptr;
    if (!n) return 0.0;
    std::string type = n->Attribute("type") ? n->Attribute("type") : "";
    if (type.empty()) type = text_of(n->FirstChildElement("type"));
    if (type == "none" || type.empty()) return 0.0;
    if (type != "gaussian" && type != "gaussian_quantized") {
      warn(n, "noise of " + what + " of type '" + type + "' is not simulated (left out: no noise)");
      return 0.0;
    }
    const double mean = number(n, "mean", 0.0, what + " noise");
    if (mean != 0.0) warn(n, "the noise mean of " + what + " is left out (zero-mean noise)");
    for (const char* el : {"bias_mean", "bias_stddev", "dynamic_bias_stddev", "precision"}) {
      if (n->FirstChildElement(el)) {
        warn(n->FirstChildElement(el),
             "<" + std::string(el) + "> of " + what + " noise is not simulated (left out)");
      }
    }
    const double sd = number(n, "stddev", 0.0, what + " noise");
    if (sd < 0) {
      error(n->FirstChildElement("stddev"), "<stddev> of " + what + " noise must be >= 0");
      return 0.0;
    }
    return sd;
  }

  void read(const tinyxml2::XMLDocument& doc) {
    const tinyxml2::XMLElement* root = doc.RootElement();
    if (!root || std::string_view(root->Name()) != "sdf") {
      error(root, std::string("not an SDF model file: the root element is <") +
                      (root ? root->Name() : "") + ">, not <sdf>");
      return;
    }
    const tinyxml2::XMLElement* model = root->FirstChildElement("model");
    if (!model) {
      error(root, root->FirstChildElement("world")
                      ? "<sdf> holds a <world>, not a <model>: a vehicle's model file is one "
                        "<model> (worlds go in the scenario's `world`)"
                      : "<sdf> holds no <model>");
      return;
    }
    if (model->NextSiblingElement("model")) {
      warn(model->NextSiblingElement("model"), "a second <model> in the file is left out");
    }
    out_->name = model->Attribute("name") ? model->Attribute("name") : "";
    for (const auto* inc = model->FirstChildElement("include"); inc;
         inc = inc->NextSiblingElement("include")) {
      warn(inc,
           "<include> inside a robot model is not read (left out): describe the vehicle "
           "in one <model>");
    }
    for (const auto* nested = model->FirstChildElement("model"); nested;
         nested = nested->NextSiblingElement("model")) {
      warn(nested, "nested <model> '" +
                       std::string(nested->Attribute("name") ? nested->Attribute("name") : "") +
                       "' is not read (left out)");
    }
    read_chassis(model);
    read_drive(model);
    read_sensors(model);
  }

 private:
  struct Rect {
    double min_x = kInf, min_y = kInf, max_x = -kInf, max_y = -kInf, min_z = kInf, max_z = -kInf;
    bool empty() const { return min_x > max_x; }
    void add(const Rect& r) {
      min_x = std::min(min_x, r.min_x);
      min_y = std::min(min_y, r.min_y);
      max_x = std::max(max_x, r.max_x);
      max_y = std::max(max_y, r.max_y);
      min_z = std::min(min_z, r.min_z);
      max_z = std::max(max_z, r.max_z);
    }
  };

  // x y z roll pitch yaw (missing: zeros). A pose with relative_to is taken in its parent.
  std::vector<double> pose_of(const tinyxml2::XMLElement* parent, const std::string& what) {
    std::vector<double> p(6, 0.0);
    const tinyxml2::XMLElement* e = parent->FirstChildElement("pose");
    if (!e) return p;
    std::vector<double> v;
    if (!parse_numbers(text_of(e), &v) || (v.size() != 6 && v.size() != 3 && !v.empty())) {
      error(e, "<pose> of " + what + ": '" + text_of(e) + "' is not 3 or 6 finite numbers");
      return p;
    }
    for (size_t i = 0; i < v.size(); ++i) p[i] = v[i];
    if (e->Attribute("degrees") && std::string_view(e->Attribute("degrees")) == "true") {
      for (int i = 3; i < 6; ++i) p[i] *= kPi / 180;
    }
    return p;
  }

  // R = Rz(yaw) Ry(pitch) Rx(roll), as SDF poses.
  static void rotation(const std::vector<double>& p, double r[3][3]) {
    const double cr = std::cos(p[3]), sr = std::sin(p[3]);
    const double cp = std::cos(p[4]), sp = std::sin(p[4]);
    const double cy = std::cos(p[5]), sy = std::sin(p[5]);
    const double m[3][3] = {{cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr},
                            {sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr},
                            {-sp, cp * sr, cp * cr}};
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) r[i][j] = m[i][j];
  }

  // The bounds of a collision in the model frame, its link at `link_pose` (a box of half
  // extents h turned by R spans sum_j |R_ij| h_j on axis i). Empty when its geometry is not
  // simulated (warned) or wrong (an error).
  Rect collision_rect(const tinyxml2::XMLElement* c, const std::vector<double>& link_pose,
                      const std::string& what, bool chassis) {
    Rect r;
    const std::vector<double> p = pose_of(c, what);
    const tinyxml2::XMLElement* g = c->FirstChildElement("geometry");
    const tinyxml2::XMLElement* shape = g ? g->FirstChildElement() : nullptr;
    if (!shape) {
      error(c, what + " has no <geometry>");
      return r;
    }
    const std::string type = shape->Name();
    double h[3] = {0, 0, 0};
    if (type == "box") {
      std::vector<double> size;
      if (!parse_numbers(text_of(shape->FirstChildElement("size")), &size) || size.size() != 3 ||
          size[0] <= 0 || size[1] <= 0 || size[2] <= 0) {
        error(shape, "<box><size> of " + what + " must be three numbers > 0");
        return r;
      }
      for (int i = 0; i < 3; ++i) h[i] = size[static_cast<size_t>(i)] / 2;
    } else if (type == "cylinder" || type == "sphere" || type == "capsule") {
      const double radius = number(shape, "radius", 0.0, what);
      const double length = type == "sphere" ? 2 * radius : number(shape, "length", 0.0, what);
      if (!(radius > 0) || !(length > 0)) {
        error(shape, "<" + type + "> of " + what + ": radius and length must be > 0");
        return r;
      }
      h[0] = h[1] = radius;
      h[2] = length / 2 + (type == "capsule" ? radius : 0.0);
      if (chassis) {
        warn(shape, "the " + type + " of " + what +
                        " is simulated as its bounding box in plan view (a footprint is a "
                        "rectangle)");
      }
    } else {
      warn(shape, "<" + type + "> geometry of " + what +
                      " is not simulated (left out): use a box, cylinder or sphere");
      return r;
    }
    if (chassis && (p[3] != 0 || p[4] != 0 || link_pose[3] != 0 || link_pose[4] != 0)) {
      warn(c, "the roll and pitch of " + what + " are left out (the world is planar)");
    }
    double rc[3][3], rl[3][3];
    rotation(chassis ? std::vector<double>{0, 0, 0, 0, 0, p[5]} : p, rc);
    rotation(chassis ? std::vector<double>{0, 0, 0, 0, 0, link_pose[5]} : link_pose, rl);
    double ext_l[3], ext[3], ctr[3];
    for (int i = 0; i < 3; ++i) {
      ext_l[i] = 0;
      for (int j = 0; j < 3; ++j) ext_l[i] += std::abs(rc[i][j]) * h[j];
    }
    for (int i = 0; i < 3; ++i) {
      ext[i] = 0;
      ctr[i] = link_pose[static_cast<size_t>(i)];
      for (int j = 0; j < 3; ++j) {
        ext[i] += std::abs(rl[i][j]) * ext_l[j];
        ctr[i] += rl[i][j] * p[static_cast<size_t>(j)];
      }
    }
    r.min_x = ctr[0] - ext[0];
    r.max_x = ctr[0] + ext[0];
    r.min_y = ctr[1] - ext[1];
    r.max_y = ctr[1] + ext[1];
    r.min_z = ctr[2] - ext[2];
    r.max_z = ctr[2] + ext[2];
    return r;
  }

  void read_chassis(const tinyxml2::XMLElement* model) {
    const tinyxml2::XMLElement* first = model->FirstChildElement("link");
    if (!first) {
      error(model, "model '" + out_->name +
                       "' has no chassis: it needs a <link> with a box <collision> (its "
                       "footprint)");
      return;
    }
    const tinyxml2::XMLElement* chassis = first;
    if (const char* canon = model->Attribute("canonical_link")) {
      chassis = nullptr;
      for (const auto* l = first; l; l = l->NextSiblingElement("link")) {
        if (l->Attribute("name") && std::string_view(l->Attribute("name")) == canon) chassis = l;
      }
      if (!chassis) {
        error(model, std::string("canonical_link '") + canon + "' names no <link> of the model");
        return;
      }
    }
    chassis_ = chassis;
    const std::string link_name = chassis->Attribute("name") ? chassis->Attribute("name") : "";
    out_->params.chassis_link = link_name;
    const std::vector<double> chassis_pose = pose_of(chassis, "link '" + link_name + "'");
    if (chassis_pose[0] != 0 || chassis_pose[1] != 0 || chassis_pose[5] != 0) {
      warn(chassis->FirstChildElement("pose"),
           "the chassis link's offset from the model's origin is left out (the model's origin "
           "is taken at the chassis centre)");
    }
    Rect footprint;
    bool named = false;
    for (const auto* c = chassis->FirstChildElement("collision"); c;
         c = c->NextSiblingElement("collision")) {
      const std::string cname = c->Attribute("name") ? c->Attribute("name") : "";
      const std::vector<double> at_origin{0, 0, chassis_pose[2], chassis_pose[3], chassis_pose[4],
                                          0};
      const Rect r = collision_rect(c, at_origin, "collision '" + cname + "' of the chassis", true);
      if (r.empty()) continue;
      chassis_collisions_.push_back(cname);
      if (!named) {
        out_->params.chassis_collision = cname;
        named = true;
      }
      footprint.add(r);
    }
    if (footprint.empty()) {
      if (out_->errors.empty()) {
        error(chassis, "model '" + out_->name + "' has no chassis: its first link '" + link_name +
                           "' has no box, cylinder or sphere <collision> (the footprint)");
      }
      return;
    }
    const double cx = (footprint.min_x + footprint.max_x) / 2;
    const double cy = (footprint.min_y + footprint.max_y) / 2;
    if (std::abs(cx) > 1e-9 || std::abs(cy) > 1e-9) {
      warn(chassis, "the chassis footprint is centred on the link's origin (its offset (" +
                        std::to_string(cx) + ", " + std::to_string(cy) + ") is left out)");
    }
    if (chassis_collisions_.size() > 1) {
      warn(chassis, "the chassis' collisions are simulated as one box, their plan-view bounds");
    }
    out_->params.length = footprint.max_x - footprint.min_x;
    out_->params.width = footprint.max_y - footprint.min_y;
    out_->params.height = footprint.max_z - footprint.min_z;
    // Other links' collisions (wheels, masts): covered by the footprint, or left out.
    for (const auto* l = first; l; l = l->NextSiblingElement("link")) {
      if (l == chassis) continue;
      const std::string ln = l->Attribute("name") ? l->Attribute("name") : "";
      const std::vector<double> lp = pose_of(l, "link '" + ln + "'");
      for (const auto* c = l->FirstChildElement("collision"); c;
           c = c->NextSiblingElement("collision")) {
        const std::string cname = c->Attribute("name") ? c->Attribute("name") : "";
        // The chassis' offset is left out: other links are taken relative to it.
        std::vector<double> rel = lp;
        rel[0] -= chassis_pose[0];
        rel[1] -= chassis_pose[1];
        const Rect r =
            collision_rect(c, rel, "collision '" + cname + "' of link '" + ln + "'", false);
        if (r.empty()) continue;
        const double tol = 1e-6;
        if (r.min_x < -out_->params.length / 2 - tol || r.max_x > out_->params.length / 2 + tol ||
            r.min_y < -out_->params.width / 2 - tol || r.max_y > out_->params.width / 2 + tol) {
          warn(c, "collision '" + cname + "' of link '" + ln +
                      "' reaches outside the chassis footprint and is left out (only the "
                      "chassis collides)");
        }
      }
    }
  }

  bool is_diff_drive(const tinyxml2::XMLElement* p) const {
    const std::string name = p->Attribute("name") ? p->Attribute("name") : "";
    const std::string file = p->Attribute("filename") ? p->Attribute("filename") : "";
    return name.find("DiffDrive") != std::string::npos ||
           file.find("diff-drive") != std::string::npos ||
           file.find("diff_drive") != std::string::npos;
  }

  // The model's one DiffDrive plugin (on the model or a link); every other plugin is warned as
  // left out, a second drive is an error, and none is an error naming what is needed.
  const tinyxml2::XMLElement* find_drive(const tinyxml2::XMLElement* model) {
    const tinyxml2::XMLElement* drive = nullptr;
    std::vector<const tinyxml2::XMLElement*> plugins;
    for (const auto* p = model->FirstChildElement("plugin"); p;
         p = p->NextSiblingElement("plugin")) {
      plugins.push_back(p);
    }
    for (const auto* l = model->FirstChildElement("link"); l; l = l->NextSiblingElement("link")) {
      for (const auto* p = l->FirstChildElement("plugin"); p; p = p->NextSiblingElement("plugin"))
        plugins.push_back(p);
    }
    for (const tinyxml2::XMLElement* p : plugins) {
      const std::string name = p->Attribute("name") ? p->Attribute("name") : "";
      if (!is_diff_drive(p)) {
        warn(p, "plugin '" + name +
                    "' is not simulated (left out); the world simulates the "
                    "DiffDrive system and the sensors");
        continue;
      }
      if (drive) {
        error(p, "model '" + out_->name +
                     "' has two drives: a second DiffDrive plugin (the "
                     "first is at line " +
                     std::to_string(drive->GetLineNum()) + ")");
        continue;
      }
      drive = p;
    }
    if (!drive) {
      error(model,
            "model '" + out_->name +
                "' has no drive: it needs a DiffDrive system plugin (<plugin "
                "filename=\"gz-sim-diff-drive-system\" name=\"gz::sim::systems::DiffDrive\">)");
      return nullptr;
    }
    return drive;
  }

  void read_drive(const tinyxml2::XMLElement* model) {
    const tinyxml2::XMLElement* drive = find_drive(model);
    if (!drive) return;
    VehicleParams& v = out_->params;
    const std::string what = "the DiffDrive plugin";
    out_->wheel_separation = number(drive, "wheel_separation", 1.0, what);
    out_->wheel_radius = number(drive, "wheel_radius", 0.2, what);
    if (!(out_->wheel_separation > 0)) {
      error(drive->FirstChildElement("wheel_separation"),
            "<wheel_separation> of " + what + " must be > 0 (m)");
    }
    if (!(out_->wheel_radius > 0)) {
      error(drive->FirstChildElement("wheel_radius"),
            "<wheel_radius> of " + what + " must be > 0 (m)");
    }
    read_limit(drive, "max_linear_velocity", "min_linear_velocity", "max_velocity", true,
               &v.max_linear);
    read_limit(drive, "max_angular_velocity", "min_angular_velocity", nullptr, true,
               &v.max_angular);
    read_limit(drive, "max_linear_acceleration", "min_linear_acceleration", "max_acceleration",
               false, &v.max_linear_accel);
    read_limit(drive, "max_angular_acceleration", "min_angular_acceleration", nullptr, false,
               &v.max_angular_accel);
    read_odometry(drive);
    warn_unsimulated(drive);
  }

  // A limit of the drive: the world's drive is symmetric (|v| <= max); an asymmetric pair is
  // warned, a missing required one is an error.
  void read_limit(const tinyxml2::XMLElement* drive, const char* max_name, const char* min_name,
                  const char* legacy, bool required, double* out) {
    const std::string what = "the DiffDrive plugin";
    bool given = false;
    double max_v = number(drive, max_name, kInf, what, &given);
    const tinyxml2::XMLElement* at_el = drive->FirstChildElement(max_name);
    if (!given && legacy) {
      max_v = number(drive, legacy, kInf, what, &given);
      at_el = drive->FirstChildElement(legacy);
    }
    bool min_given = false;
    const double min_v = number(drive, min_name, -max_v, what, &min_given);
    if (!given && min_given) {
      max_v = -min_v;
      at_el = drive->FirstChildElement(min_name);
      given = true;
    }
    if (!given) {
      if (required) {
        error(drive, std::string("<") + max_name + "> of " + what +
                         " is needed: the world limits the drive to it");
      }
      *out = kInf;
      return;
    }
    if (!(max_v > 0)) {
      error(at_el, std::string("<") + max_name + "> of " + what + " must be > 0");
      return;
    }
    if (min_given && min_v != -max_v) {
      warn(drive->FirstChildElement(min_name), std::string("<") + min_name + "> " +
                                                   text_of(drive->FirstChildElement(min_name)) +
                                                   " is left out: the drive is limited to +/-" +
                                                   text_of(at_el) + " (<" + max_name + ">)");
    }
    *out = max_v;
  }

  // The odometry's rate, frames and noise.
  void read_odometry(const tinyxml2::XMLElement* drive) {
    VehicleParams& v = out_->params;
    const std::string what = "the DiffDrive plugin";
    bool given = false;
    const double hz = number(drive, "odom_publish_frequency", 50.0, what, &given);
    if (!(hz > 0) || 1e9 / hz < 1.0) {
      error(drive->FirstChildElement("odom_publish_frequency"),
            "<odom_publish_frequency> of " + what + " must be > 0 and at most 1 GHz");
    } else {
      v.odometry_period = Duration::from_ns(std::llround(1e9 / hz));
    }
    v.odometry_frame = text_of(drive->FirstChildElement("frame_id"));
    v.odometry_child_frame = text_of(drive->FirstChildElement("child_frame_id"));
    const tinyxml2::XMLElement* noise = drive->FirstChildElement("fieldproof_odometry_noise");
    const std::string nw = "<fieldproof_odometry_noise>";
    v.odometry_linear_noise = number(noise, "linear", 0.0, nw);
    v.odometry_angular_noise = number(noise, "angular", 0.0, nw);
    v.odometry_linear_scale_stddev = number(noise, "linear_scale_stddev", 0.0, nw);
    v.odometry_angular_scale_stddev = number(noise, "angular_scale_stddev", 0.0, nw);
    for (double x : {v.odometry_linear_noise, v.odometry_angular_noise,
                     v.odometry_linear_scale_stddev, v.odometry_angular_scale_stddev}) {
      if (x < 0) error(noise, nw + " values must be >= 0");
    }
  }

  // The drive's elements the world does not simulate, each warned.
  void warn_unsimulated(const tinyxml2::XMLElement* drive) {
    const std::string what = "the DiffDrive plugin";
    static const char* const kKnown[] = {"wheel_separation",
                                         "wheel_radius",
                                         "max_linear_velocity",
                                         "min_linear_velocity",
                                         "max_angular_velocity",
                                         "min_angular_velocity",
                                         "max_linear_acceleration",
                                         "min_linear_acceleration",
                                         "max_angular_acceleration",
                                         "min_angular_acceleration",
                                         "max_velocity",
                                         "max_acceleration",
                                         "odom_publish_frequency",
                                         "frame_id",
                                         "child_frame_id",
                                         "left_joint",
                                         "right_joint",
                                         "fieldproof_odometry_noise"};
    for (const auto* c = drive->FirstChildElement(); c; c = c->NextSiblingElement()) {
      const std::string_view n = c->Name();
      if (n == "topic" || n == "odom_topic" || n == "tf_topic") {
        warn(c, "<" + std::string(n) +
                    "> is left out: the drive listens on /model/<vehicle>/"
                    "cmd_vel and odometry goes to /model/<vehicle>/odometry "
                    "(docs/vehicle-interface.md)");
        continue;
      }
      if (std::find(std::begin(kKnown), std::end(kKnown), n) == std::end(kKnown)) {
        warn(c, "<" + std::string(n) + "> of " + what + " is not simulated (left out)");
      }
    }
  }

  void check_topic(const tinyxml2::XMLElement* sensor, const std::string& what,
                   const std::string& topic) {
    if (const auto* t = sensor->FirstChildElement("topic")) {
      warn(t, "<topic> of " + what + " is left out: it publishes on /model/<vehicle>/" + topic +
                  " (docs/vehicle-interface.md)");
    }
  }

  void check_placement(const tinyxml2::XMLElement* link, const tinyxml2::XMLElement* sensor,
                       const std::string& what) {
    if (link != chassis_) {
      warn(sensor, what + " is on link '" +
                       std::string(link->Attribute("name") ? link->Attribute("name") : "") +
                       "', simulated at the chassis centre");
      return;
    }
    const std::vector<double> p = pose_of(sensor, what);
    if (p[0] != 0 || p[1] != 0 || p[5] != 0) {
      warn(sensor->FirstChildElement("pose"),
           "the <pose> of " + what +
               " is left out (simulated at the chassis centre, facing "
               "forward)");
    }
  }

  void read_lidar(const tinyxml2::XMLElement* link, const tinyxml2::XMLElement* s,
                  const std::string& what, const std::string& type) {
    VehicleParams& v = out_->params;
    if (have_lidar_) {
      warn(s, what + " is left out: the world simulates one lidar per vehicle");
      return;
    }
    have_lidar_ = true;
    v.lidar = true;
    v.lidar_sensor = s->Attribute("name") ? s->Attribute("name") : "";
    v.lidar_period = rate(s, what, milliseconds(100));
    check_topic(s, what, "scan");
    check_placement(link, s, what);
    const tinyxml2::XMLElement* body =
        s->FirstChildElement(type == "ray" || type == "gpu_ray" ? "ray" : "lidar");
    if (!body) body = s->FirstChildElement(type == "ray" || type == "gpu_ray" ? "lidar" : "ray");
    if (!body) {
      error(s, what + " has no <lidar> (or <ray>) element: samples, angles and range are needed");
      return;
    }
    const tinyxml2::XMLElement* scan = body->FirstChildElement("scan");
    const tinyxml2::XMLElement* h = scan ? scan->FirstChildElement("horizontal") : nullptr;
    if (!h) {
      error(body, what + " has no <scan><horizontal>");
      return;
    }
    const double samples = number(h, "samples", 640, what);
    const tinyxml2::XMLElement* se = h->FirstChildElement("samples");
    if (samples != std::floor(samples) || samples < 1 || samples > kMaxSamples) {
      error(se ? se : h, "<samples> of " + what + ": " + text_of(se) +
                             "; it must be a whole "
                             "number from 1 to " +
                             std::to_string(kMaxSamples));
      return;
    }
    v.lidar_rays = static_cast<int>(samples);
    if (const double res = number(h, "resolution", 1.0, what); res != 1.0) {
      warn(h->FirstChildElement("resolution"),
           "<resolution> of " + what + " is left out (one range per sample)");
    }
    const double amin = number(h, "min_angle", 0.0, what);
    const double amax = number(h, "max_angle", 0.0, what);
    if (amax < amin) {
      error(h, "<max_angle> of " + what + " is below <min_angle>");
      return;
    }
    const double span = amax - amin;
    const double step = v.lidar_rays > 1 ? span / (v.lidar_rays - 1) : 0.0;
    // A full turn (Gazebo spreads the samples from min to max inclusive; a turn whose last
    // sample would repeat the first is the world's full-turn scan, angle_min = -pi).
    v.lidar_full_turn = span >= 2 * kPi - 1e-6 || span + step >= 2 * kPi - 1e-6;
    v.lidar_angle_min = v.lidar_full_turn ? -kPi : amin;
    v.lidar_angle_max = v.lidar_full_turn ? kPi : amax;
    if (v.lidar_full_turn && (std::abs(amin + kPi) > 1e-6)) {
      warn(h, what + " covers a full turn: simulated from -pi");
    }
    if (span > 2 * kPi + 1e-6) warn(h, what + " spans more than a turn: simulated as one turn");
    if (scan->FirstChildElement("vertical")) {
      const double vs = number(scan->FirstChildElement("vertical"), "samples", 1, what);
      if (vs > 1) {
        warn(scan->FirstChildElement("vertical"),
             what + " has " +
                 text_of(scan->FirstChildElement("vertical")->FirstChildElement("samples")) +
                 " vertical samples: one plane is simulated (the rest left out)");
      }
    }
    const tinyxml2::XMLElement* range = body->FirstChildElement("range");
    if (!range) {
      error(body, what + " has no <range> (min and max)");
      return;
    }
    v.lidar_range_min = number(range, "min", 0.0, what + " range");
    v.lidar_range_max = number(range, "max", 0.0, what + " range");
    if (!(v.lidar_range_min >= 0) || !(v.lidar_range_max > v.lidar_range_min)) {
      error(range, "<range> of " + what + ": min must be >= 0 and max above min");
    }
    v.lidar_noise_stddev = noise(body, what);
  }

  // The largest stddev over the axes x, y, z of an IMU quantity (warned when they differ).
  double axes_noise(const tinyxml2::XMLElement* q, const std::string& what) {
    if (!q) return 0.0;
    double sd[3] = {0, 0, 0};
    int i = 0;
    for (const char* axis : {"x", "y", "z"}) {
      sd[i++] = noise(q->FirstChildElement(axis), what + " " + axis);
    }
    const double m = std::max({sd[0], sd[1], sd[2]});
    if (sd[0] != sd[1] || sd[1] != sd[2]) {
      warn(q, what + ": one noise for the three axes is simulated, the largest (" +
                  std::to_string(m) + ")");
    }
    return m;
  }

  void read_sensors(const tinyxml2::XMLElement* model) {
    VehicleParams& v = out_->params;
    v.lidar = v.imu = v.contact = v.navsat = false;
    for (const auto* link = model->FirstChildElement("link"); link;
         link = link->NextSiblingElement("link")) {
      for (const auto* s = link->FirstChildElement("sensor"); s;
           s = s->NextSiblingElement("sensor")) {
        const std::string name = s->Attribute("name") ? s->Attribute("name") : "";
        const std::string type = s->Attribute("type") ? s->Attribute("type") : "";
        const std::string what = "sensor '" + name + "' (" + type + ")";
        if (type == "lidar" || type == "gpu_lidar" || type == "ray" || type == "gpu_ray") {
          read_lidar(link, s, what, type);
        } else if (type == "imu") {
          if (v.imu) {
            warn(s, what + " is left out: the world simulates one IMU per vehicle");
            continue;
          }
          v.imu = true;
          v.imu_sensor = name;
          v.imu_period = rate(s, what, milliseconds(10));
          check_topic(s, what, "imu");
          check_placement(link, s, what);
          const tinyxml2::XMLElement* imu = s->FirstChildElement("imu");
          v.imu_angular_velocity_stddev =
              axes_noise(imu ? imu->FirstChildElement("angular_velocity") : nullptr,
                         what + " angular_velocity");
          v.imu_linear_acceleration_stddev =
              axes_noise(imu ? imu->FirstChildElement("linear_acceleration") : nullptr,
                         what + " linear_acceleration");
        } else if (type == "contact") {
          (void)rate(s, what, Duration::zero());
          check_topic(s, what, "contacts");
          const tinyxml2::XMLElement* c = s->FirstChildElement("contact");
          const std::string col = text_of(c ? c->FirstChildElement("collision") : nullptr);
          const bool on_chassis =
              link == chassis_ && std::find(chassis_collisions_.begin(), chassis_collisions_.end(),
                                            col) != chassis_collisions_.end();
          if (!on_chassis) {
            warn(s, what + " on collision '" + col +
                        "' is left out: contacts are simulated for the chassis collision only");
            continue;
          }
          v.contact = true;
        } else if (type == "navsat" || type == "gps") {
          if (v.navsat) {
            warn(s, what + " is left out: the world simulates one navsat per vehicle");
            continue;
          }
          v.navsat = true;
          v.navsat_period = rate(s, what, seconds(1));
          check_topic(s, what, "navsat");
          check_placement(link, s, what);
          const tinyxml2::XMLElement* n = s->FirstChildElement(type == "gps" ? "gps" : "navsat");
          const auto sensing = [&](const char* which, const char* dir) {
            const tinyxml2::XMLElement* a = n ? n->FirstChildElement(which) : nullptr;
            const tinyxml2::XMLElement* b = a ? a->FirstChildElement(dir) : nullptr;
            return noise(b, what + " " + which + " " + dir);
          };
          v.navsat_horizontal_stddev = sensing("position_sensing", "horizontal");
          v.navsat_vertical_stddev = sensing("position_sensing", "vertical");
          v.navsat_velocity_stddev = std::max(sensing("velocity_sensing", "horizontal"),
                                              sensing("velocity_sensing", "vertical"));
        } else {
          (void)rate(s, what, Duration::zero());
          warn(s, what +
                      " is not simulated (left out): the world simulates lidar, gpu_lidar, "
                      "imu, contact and navsat sensors");
        }
      }
    }
  }

  std::string file_;
  RobotModel* out_;
  const tinyxml2::XMLElement* chassis_ = nullptr;
  std::vector<std::string> chassis_collisions_;
  bool have_lidar_ = false;
};

void read_document(tinyxml2::XMLDocument& doc, tinyxml2::XMLError rc, const std::string& source,
                   RobotModel* out) {
  if (rc != tinyxml2::XML_SUCCESS) {
    out->errors.push_back(source + ":" + std::to_string(doc.ErrorLineNum()) +
                          ": not an SDF model file: the XML does not parse (" + doc.ErrorStr() +
                          ")");
    return;
  }
  Reader reader(source, out);
  reader.read(doc);
}

}  // namespace

std::vector<fs::path> model_search_path(const fs::path& tool_dir) {
  std::vector<fs::path> out;
  for (const std::string& p : detail::resource_paths()) out.emplace_back(p);
  fs::path tools = tool_dir;
  if (tools.empty()) {
    std::error_code ec;
    const fs::path self = fs::read_symlink("/proc/self/exe", ec);
    if (!ec) tools = self.parent_path();
  }
  if (!tools.empty()) out.push_back(tools.parent_path() / "share" / "fieldproof" / "models");
#ifdef FIELDPROOF_SOURCE_MODELS_DIR
  out.emplace_back(FIELDPROOF_SOURCE_MODELS_DIR);
#endif
  return out;
}

RobotModel load_robot_model(const std::string& uri, const fs::path& base_dir,
                            const std::vector<fs::path>& search) {
  RobotModel out;
  out.uri = uri;
  const Result<fs::path> resolved = resolve(uri, base_dir, search);
  if (!resolved.ok()) {
    out.errors.push_back(resolved.status().message());
    return out;
  }
  const fs::path& file = *resolved;
  if (!is_file(file)) {
    out.errors.push_back("the model file " + file.string() + " (of '" + uri + "') does not exist");
    return out;
  }
  out.file = file.lexically_normal();
  tinyxml2::XMLDocument doc;
  const tinyxml2::XMLError rc = doc.LoadFile(out.file.c_str());
  read_document(doc, rc, out.file.string(), &out);
  return out;
}

RobotModel load_robot_model_string(const std::string& text, const std::string& source) {
  RobotModel out;
  out.uri = source;
  tinyxml2::XMLDocument doc;
  const tinyxml2::XMLError rc = doc.Parse(text.c_str(), text.size());
  read_document(doc, rc, source, &out);
  return out;
}

}  // namespace fieldproof::world
