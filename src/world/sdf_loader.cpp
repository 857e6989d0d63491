#include "sdf_loader.hpp"

#include <tinyxml2.h>
#include <sdf/Box.hh>
#include <sdf/Collision.hh>
#include <sdf/Console.hh>
#include <sdf/Cylinder.hh>
#include <sdf/Error.hh>
#include <sdf/Frame.hh>
#include <sdf/Geometry.hh>
#include <sdf/Link.hh>
#include <sdf/Model.hh>
#include <sdf/Physics.hh>
#include <sdf/Root.hh>
#include <sdf/SemanticPose.hh>
#include <sdf/Sphere.hh>
#include <sdf/World.hh>

#include <cmath>
#include <limits>
#include <numbers>
#include <sstream>
#include <string_view>

namespace fieldproof::world::detail {
namespace {

using ignition::math::Pose3d;

std::string describe(const sdf::Error& e, const std::string& source) {
  std::ostringstream out;
  out << e.FilePath().value_or(source);
  if (e.LineNumber()) out << ":" << *e.LineNumber();
  out << ": " << e.Message();
  if (!e.LineNumber() && e.XmlPath()) out << " (at " << *e.XmlPath() << ")";
  return out.str();
}

// sdformat reports XML syntax errors without a line; tinyxml2 knows it.
std::string xml_error(const std::string& source, const std::string* text) {
  tinyxml2::XMLDocument doc;
  const tinyxml2::XMLError rc =
      text ? doc.Parse(text->c_str(), text->size()) : doc.LoadFile(source.c_str());
  if (rc == tinyxml2::XML_SUCCESS) return {};
  std::ostringstream out;
  out << source << ":" << doc.ErrorLineNum() << ": XML error: " << doc.ErrorStr();
  return out.str();
}

const char* geometry_name(const sdf::Geometry& g) {
  switch (g.Type()) {
    case sdf::GeometryType::EMPTY:
      return "empty";
    case sdf::GeometryType::BOX:
      return "box";
    case sdf::GeometryType::CYLINDER:
      return "cylinder";
    case sdf::GeometryType::PLANE:
      return "plane";
    case sdf::GeometryType::SPHERE:
      return "sphere";
    case sdf::GeometryType::MESH:
      return "mesh";
    case sdf::GeometryType::HEIGHTMAP:
      return "heightmap";
    case sdf::GeometryType::CAPSULE:
      return "capsule";
    case sdf::GeometryType::ELLIPSOID:
      return "ellipsoid";
  }
  return "unknown";
}

// The child element's name under <geometry> (e.g. "polyline", which sdformat 12 leaves EMPTY).
std::string geometry_element_name(const sdf::Geometry& g) {
  sdf::ElementPtr el = g.Element();
  if (!el) return {};
  sdf::ElementPtr child = el->GetFirstElement();
  return child ? child->GetName() : std::string{};
}

std::string where(const sdf::Collision& c, const std::string& source) {
  sdf::ElementPtr el = c.Element();
  if (!el) return {};
  std::ostringstream out;
  // Text loaded from a string has no path (or sdformat's placeholder): name the source instead.
  const std::string path = el->FilePath();
  out << (path.empty() || path == "<data-string>" ? source : path);
  if (el->LineNumber()) out << ":" << *el->LineNumber();
  return out.str();
}

struct Walker {
  double z_min_band, z_max_band;
  SdfOutcome* out;
  std::string source;
  int dropped = 0;  // collisions left out (each with a warning)

  void error(const sdf::Errors& errs) {
    for (const auto& e : errs) out->errors.push_back(describe(e, source));
  }

  void model(const sdf::Model& m, const Pose3d& world_T_model, const std::string& scope) {
    const std::string name = scope.empty() ? m.Name() : scope + "::" + m.Name();
    if (!m.Static()) {
      out->warnings.push_back("model '" + name +
                              "' is not static: the world simulates it as a static obstacle");
    }
    for (uint64_t li = 0; li < m.LinkCount(); ++li) {
      const sdf::Link* link = m.LinkByIndex(li);
      for (uint64_t ci = 0; ci < link->CollisionCount(); ++ci) {
        collision(*link->CollisionByIndex(ci), world_T_model, name, link->Name());
      }
    }
    for (uint64_t mi = 0; mi < m.ModelCount(); ++mi) {
      const sdf::Model* child = m.ModelByIndex(mi);
      Pose3d model_T_child;
      const sdf::Errors errs = child->SemanticPose().Resolve(model_T_child);
      if (!errs.empty()) {
        error(errs);
        continue;
      }
      model(*child, world_T_model * model_T_child, name);
    }
  }

  void collision(const sdf::Collision& c, const Pose3d& world_T_model, const std::string& model,
                 const std::string& link) {
    const sdf::Geometry& g = *c.Geom();
    const std::string label = "collision '" + model + "::" + link + "::" + c.Name() + "'";
    const std::string at = where(c, source);
    const std::string prefix = at.empty() ? std::string{} : at + ": ";
    if (g.Type() == sdf::GeometryType::PLANE) return;  // the ground: the plane vehicles drive on
    if (g.Type() != sdf::GeometryType::BOX && g.Type() != sdf::GeometryType::CYLINDER &&
        g.Type() != sdf::GeometryType::SPHERE) {
      std::string type = geometry_name(g);
      if (g.Type() == sdf::GeometryType::EMPTY) {
        const std::string el = geometry_element_name(g);
        if (!el.empty()) type = el;
      }
      out->warnings.push_back(prefix + label + " has " + type +
                              " geometry, which the world cannot simulate: left out (use box, "
                              "cylinder or sphere)");
      ++dropped;
      return;
    }
    Pose3d model_T_collision;
    const sdf::Errors errs = c.SemanticPose().Resolve(model_T_collision, "__model__");
    if (!errs.empty()) {
      error(errs);
      return;
    }
    const Pose3d p = world_T_model * model_T_collision;
    StaticShape s;
    s.model = model;
    s.link = link;
    s.collision = c.Name();
    s.pose = Pose2D{p.Pos().X(), p.Pos().Y(), normalize_angle(p.Rot().Yaw())};
    const bool tilted = std::abs(p.Rot().Roll()) > 1e-6 || std::abs(p.Rot().Pitch()) > 1e-6;
    double half_z = 0.0;
    if (g.Type() == sdf::GeometryType::BOX) {
      const auto size = g.BoxShape()->Size();
      s.type = ShapeType::kBox;
      s.size_x = size.X();
      s.size_y = size.Y();
      half_z = size.Z() / 2;
    } else if (g.Type() == sdf::GeometryType::CYLINDER) {
      s.type = ShapeType::kCylinder;
      s.radius = g.CylinderShape()->Radius();
      half_z = g.CylinderShape()->Length() / 2;
    } else {
      s.type = ShapeType::kSphere;
      s.radius = g.SphereShape()->Radius();
      half_z = s.radius;
    }
    if (tilted && s.type != ShapeType::kSphere) {
      out->warnings.push_back(prefix + label +
                              " is tilted (roll or pitch): simulated upright, by its yaw only");
    }
    s.z_min = p.Pos().Z() - half_z;
    s.z_max = p.Pos().Z() + half_z;
    if (s.z_max < z_min_band || s.z_min > z_max_band) {
      out->warnings.push_back(prefix + label + " lies outside the vehicles' plane (z " +
                              std::to_string(s.z_min) + " to " + std::to_string(s.z_max) +
                              "): left out");
      ++dropped;
      return;
    }
    const bool finite = std::isfinite(s.pose.x) && std::isfinite(s.pose.y) &&
                        std::isfinite(s.pose.yaw) && std::isfinite(s.size_x) &&
                        std::isfinite(s.size_y) && std::isfinite(s.radius) &&
                        std::isfinite(s.z_min) && std::isfinite(s.z_max);
    if (!finite) {
      out->warnings.push_back(prefix + label + " has a non-finite pose or size: left out");
      ++dropped;
      return;
    }
    if (!(s.size_x >= 0 && s.size_y >= 0 && s.radius >= 0) ||
        (s.type == ShapeType::kBox && (s.size_x <= 0 || s.size_y <= 0)) ||
        (s.type != ShapeType::kBox && s.radius <= 0)) {
      out->warnings.push_back(prefix + label + " has a zero or negative size: left out");
      ++dropped;
      return;
    }
    out->world.shapes.push_back(std::move(s));
  }
};

}  // namespace

double normalize_angle(double a) {
  constexpr double kPi = std::numbers::pi;
  if (a > -kPi && a <= kPi) return a;
  a = std::fmod(a + kPi, 2 * kPi);
  if (a <= 0) a += 2 * kPi;
  return a - kPi;
}

SdfOutcome load_sdf(const std::string& source, const std::string* text, double plane_z_min,
                    double plane_z_max) {
  SdfOutcome out;
  const std::string xml = xml_error(source, text);
  if (!xml.empty()) {
    out.errors.push_back(xml);
    return out;
  }
  // Errors come back as values; sdformat's own console printing would duplicate them on stderr.
  sdf::Console::Instance()->SetQuiet(true);
  sdf::Root root;
  const sdf::Errors errs = text ? root.LoadSdfString(*text) : root.Load(source);
  for (const auto& e : errs) out.errors.push_back(describe(e, source));
  if (!out.errors.empty()) return out;
  if (root.WorldCount() == 0) {
    out.errors.push_back(source + ": no <world> in the file (fieldproof needs a world file)");
    return out;
  }
  const sdf::World& w = *root.WorldByIndex(0);
  out.world.name = w.Name();
  const sdf::Physics* physics = w.PhysicsDefault();
  const double step_s = physics ? physics->MaxStepSize() : 0.001;
  const double rtf = physics ? physics->RealTimeFactor() : 1.0;
  if (!(step_s > 0 && step_s < 10)) {
    out.errors.push_back(source +
                         ": <physics><max_step_size> must be above 0 and below 10 s, got " +
                         std::to_string(step_s));
    return out;
  }
  out.world.step = Duration::from_ns(std::llround(step_s * 1e9));
  if (out.world.step.ns() <= 0) {
    out.errors.push_back(source + ": <physics><max_step_size> is below 1 ns");
    return out;
  }
  if (!std::isfinite(rtf) || rtf < 0) {
    out.errors.push_back(source +
                         ": <physics><real_time_factor> must be 0 (as fast as possible) or a "
                         "positive number, got " + std::to_string(rtf));
    return out;
  }
  // 0 in Gazebo means "as fast as possible".
  out.world.real_time_factor = rtf > 0 ? rtf : std::numeric_limits<double>::infinity();

  Walker walker{plane_z_min, plane_z_max, &out, source, 0};
  for (uint64_t fi = 0; fi < w.FrameCount(); ++fi) {
    const sdf::Frame* f = w.FrameByIndex(fi);
    Pose3d p;
    const sdf::Errors ferrs = f->SemanticPose().Resolve(p);
    if (!ferrs.empty()) {
      walker.error(ferrs);
      continue;
    }
    if (!std::isfinite(p.Pos().X()) || !std::isfinite(p.Pos().Y()) ||
        !std::isfinite(p.Rot().Yaw())) {
      out.errors.push_back(source + ": frame '" + f->Name() + "' has a non-finite pose");
      continue;
    }
    out.world.frames[f->Name()] = Pose2D{p.Pos().X(), p.Pos().Y(), normalize_angle(p.Rot().Yaw())};
  }
  for (uint64_t mi = 0; mi < w.ModelCount(); ++mi) {
    const sdf::Model* m = w.ModelByIndex(mi);
    Pose3d p;
    const sdf::Errors merrs = m->SemanticPose().Resolve(p);
    if (!merrs.empty()) {
      walker.error(merrs);
      continue;
    }
    out.world.models.push_back(m->Name());
    out.world.model_poses[m->Name()] =
        Pose2D{p.Pos().X(), p.Pos().Y(), normalize_angle(p.Rot().Yaw())};
    walker.model(*m, p, "");
  }
  return out;
}

ModelOutcome load_model_sdf(const std::string& text, const std::string& source, const Pose2D* pose,
                            double plane_z_min, double plane_z_max) {
  ModelOutcome out;
  // Keeps line numbers: the wrapper is added on the text's first and last lines.
  const bool rooted = text.find("<sdf") != std::string::npos;
  const std::string wrapped = rooted ? text : "<sdf version=\"1.8\">" + text + "</sdf>";
  const std::string xml = xml_error(source, &wrapped);
  if (!xml.empty()) {
    out.errors.push_back(xml);
    return out;
  }
  sdf::Console::Instance()->SetQuiet(true);
  sdf::Root root;
  const sdf::Errors errs = root.LoadSdfString(wrapped);
  for (const auto& e : errs) {
    std::string m = describe(e, source);
    if (m.starts_with("<data-string>"))
      m = source + m.substr(std::string_view("<data-string>").size());
    out.errors.push_back(std::move(m));
  }
  if (!out.errors.empty()) return out;
  const sdf::Model* m = root.Model();
  if (!m) {
    out.errors.push_back(source + ": no <model> in the SDF (a spawned entity is one model)");
    return out;
  }
  out.name = m->Name();
  Pose3d world_T_model;
  if (pose) {
    world_T_model = Pose3d(pose->x, pose->y, 0.0, 0.0, 0.0, pose->yaw);
  } else {
    world_T_model = m->RawPose();  // a standalone model's pose has nothing to be relative to
  }
  out.pose = Pose2D{world_T_model.Pos().X(), world_T_model.Pos().Y(),
                    normalize_angle(world_T_model.Rot().Yaw())};
  SdfOutcome scratch;
  Walker walker{plane_z_min, plane_z_max, &scratch, source, 0};
  walker.model(*m, world_T_model, "");
  out.errors = std::move(scratch.errors);
  if (walker.dropped > 0) {
    for (auto& w : scratch.warnings) {
      if (w.find("left out") != std::string::npos) out.errors.push_back(std::move(w));
    }
    return out;
  }
  out.warnings = std::move(scratch.warnings);
  out.shapes = std::move(scratch.world.shapes);
  // The walker scopes shapes by the SDF's model name; the caller renames them.
  return out;
}

bool ugv_include(const std::string& text, std::string* name, std::optional<Pose2D>* pose) {
  tinyxml2::XMLDocument doc;
  if (doc.Parse(text.c_str(), text.size()) != tinyxml2::XML_SUCCESS) return false;
  const tinyxml2::XMLElement* el = doc.RootElement();
  if (!el) return false;
  if (std::string_view(el->Name()) == "sdf") {
    const tinyxml2::XMLElement* only = el->FirstChildElement();
    if (!only || only->NextSiblingElement()) return false;
    el = only;
  }
  if (std::string_view(el->Name()) != "include") return false;
  const tinyxml2::XMLElement* uri = el->FirstChildElement("uri");
  if (!uri || !uri->GetText()) return false;
  const std::string u = uri->GetText();
  if (u != "ugv" && u != "model://ugv") return false;
  if (const auto* n = el->FirstChildElement("name"); n && n->GetText()) *name = n->GetText();
  if (const auto* p = el->FirstChildElement("pose"); p && p->GetText()) {
    std::istringstream in(p->GetText());
    double v[6] = {};
    int k = 0;
    while (k < 6 && in >> v[k]) ++k;
    // An unreadable pose is NaN, so the spawn refuses it rather than guessing.
    const double nan = std::numeric_limits<double>::quiet_NaN();
    *pose = k == 6 || k == 3 ? Pose2D{v[0], v[1], k == 6 ? v[5] : 0.0} : Pose2D{nan, nan, nan};
  }
  return true;
}

}  // namespace fieldproof::world::detail
