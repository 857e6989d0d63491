#include "sdf_loader.hpp"

#include "mesh_bounds.hpp"

#include "fieldproof/util/mutex.hpp"

#include <tinyxml2.h>
#include <sdf/Box.hh>
#include <sdf/Collision.hh>
#include <sdf/Console.hh>
#include <sdf/Cylinder.hh>
#include <sdf/Error.hh>
#include <sdf/Frame.hh>
#include <sdf/Geometry.hh>
#include <sdf/Heightmap.hh>
#include <sdf/Link.hh>
#include <sdf/Mesh.hh>
#include <sdf/Model.hh>
#include <sdf/ParserConfig.hh>
#include <sdf/Physics.hh>
#include <sdf/Plane.hh>
#include <sdf/Root.hh>
#include <sdf/SemanticPose.hh>
#include <sdf/Sphere.hh>
#include <sdf/World.hh>
#include <ignition/math/SphericalCoordinates.hh>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <locale>
#include <map>
#include <numbers>
#include <optional>
#include <set>
#include <sstream>
#include <string_view>
#include <vector>

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

std::string where(const sdf::ElementPtr& el, const std::string& source) {
  if (!el) return {};
  std::ostringstream out;
  // Text loaded from a string has no path (or sdformat's placeholder): name the source instead.
  const std::string path = el->FilePath();
  out << (path.empty() || path == "<data-string>" ? source : path);
  if (el->LineNumber()) out << ":" << *el->LineNumber();
  return out.str();
}

struct PlainCollision {
  std::string name;
  Pose3d pose;              // in the link
  std::string type;         // box, cylinder, sphere, plane
  double v[3] = {0, 0, 0};  // box size; cylinder radius, length; sphere radius; plane size x, y
  bool sized = false;       // plane: <size> given
  ignition::math::Vector3d normal{0, 0, 1};
  int line = 0;
};
struct PlainLink {
  std::string name;
  Pose3d pose;  // in the model
  std::vector<PlainCollision> collisions;
};
struct PlainModel {
  std::string name;
  bool is_static = false;
  Pose3d pose;  // in the world
  std::vector<PlainLink> links;
  int line = 0;
};

// "file:line: " of an element, or "" when sdformat does not know it.
std::string location(const sdf::ElementPtr& el, const std::string& source) {
  const std::string w = where(el, source);
  return w.empty() ? w : w + ": ";
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
      out->warnings.push_back(location(m.Element(), source) + "model '" + name +
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

  // A horizontal plane of stated size bounds the map; one without <size> (sdformat's default is
  // 1 x 1, which no world means) or tilted says nothing about the extent.
  void ground(const sdf::Collision& c, const sdf::Geometry& g, const Pose3d& world_T_model) {
    Pose3d model_T_collision;
    if (!c.SemanticPose().Resolve(model_T_collision, "__model__").empty()) return;
    const Pose3d p = world_T_model * model_T_collision;
    const sdf::Plane* plane = g.PlaneShape();
    if (!plane) return;
    bool sized = false;
    if (sdf::ElementPtr el = g.Element(); el && el->HasElement("plane")) {
      sdf::ElementPtr pl = el->GetElement("plane");
      sized = pl->HasElement("size") && pl->GetElement("size")->GetExplicitlySetInFile();
    }
    add_ground(p, plane->Normal(), sized, plane->Size().X(), plane->Size().Y());
  }

  void add_ground(const Pose3d& p, const ignition::math::Vector3d& normal, bool sized, double sx,
                  double sy) {
    const ignition::math::Vector3d n = p.Rot().RotateVector(normal.Normalized());
    if (!(std::abs(n.Z()) > 0.999)) return;
    if (!sized || !(sx > 0 && sy > 0) || !std::isfinite(sx) || !std::isfinite(sy) ||
        !std::isfinite(p.Pos().X()) || !std::isfinite(p.Pos().Y())) {
      out->world.unbounded_ground = true;
      return;
    }
    out->world.grounds.push_back(
        GroundPatch{Pose2D{p.Pos().X(), p.Pos().Y(), normalize_angle(p.Rot().Yaw())}, sx, sy});
  }

  void collision(const sdf::Collision& c, const Pose3d& world_T_model, const std::string& model,
                 const std::string& link) {
    const sdf::Geometry& g = *c.Geom();
    const std::string label = "collision '" + model + "::" + link + "::" + c.Name() + "'";
    const std::string at = where(c.Element(), source);
    const std::string prefix = at.empty() ? std::string{} : at + ": ";
    if (g.Type() == sdf::GeometryType::PLANE) {  // the ground: the plane vehicles drive on
      ground(c, g, world_T_model);
      return;
    }
    if (g.Type() == sdf::GeometryType::MESH || g.Type() == sdf::GeometryType::HEIGHTMAP) {
      bounding_box(c, g, world_T_model, model, link, prefix, label);
      return;
    }
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
    add_shape(std::move(s), p, half_z, prefix, label);
  }

  // A mesh or a heightmap: an obstacle by its bounding box (a box at the collision's pose, its
  // yaw kept), with a warning naming it; left out with a warning when its file cannot be read.
  void bounding_box(const sdf::Collision& c, const sdf::Geometry& g, const Pose3d& world_T_model,
                    const std::string& model, const std::string& link, const std::string& prefix,
                    const std::string& label) {
    Pose3d model_T_collision;
    if (const sdf::Errors errs = c.SemanticPose().Resolve(model_T_collision, "__model__");
        !errs.empty()) {
      error(errs);
      return;
    }
    double lo[3] = {0, 0, 0}, hi[3] = {0, 0, 0};
    std::string what;
    if (const sdf::Heightmap* h = g.HeightmapShape()) {
      // Gazebo centres a heightmap on <pos> in x and y, its heights from <pos> z up by size z.
      const auto size = h->Size(), at = h->Position();
      lo[0] = at.X() - size.X() / 2, hi[0] = at.X() + size.X() / 2;
      lo[1] = at.Y() - size.Y() / 2, hi[1] = at.Y() + size.Y() / 2;
      lo[2] = at.Z(), hi[2] = at.Z() + size.Z();
      what = "heightmap";
    } else if (const sdf::Mesh* m = g.MeshShape()) {
      // Relative URIs against the file the mesh is written in.
      const std::string base =
          m->FilePath().empty() || m->FilePath() == "<data-string>" ? source : m->FilePath();
      const std::string dir = std::filesystem::path(base).parent_path().string();
      const std::string file = resolve_resource(m->Uri(), dir);
      std::string why;
      Result<MeshBounds> b = Status(StatusCode::kNotFound, "");
      if (file.empty()) {
        why = is_fuel_uri(m->Uri()) ? fuel_advice(m->Uri())
                                    : "its file '" + m->Uri() +
                                          "' is not found (model:// URIs are looked up on "
                                          "FIELDPROOF_RESOURCE_PATH, GZ_SIM_RESOURCE_PATH, "
                                          "SDF_PATH; relative ones against the SDF file's folder)";
      } else {
        b = read_mesh_bounds(file);
        if (!b.ok()) why = b.status().message();
      }
      if (!b.ok()) {
        out->warnings.push_back(prefix + label + " is a mesh the world cannot read: left out (" +
                                why + ")");
        ++dropped;
        return;
      }
      const auto scale = m->Scale();
      const double k[3] = {scale.X(), scale.Y(), scale.Z()};
      for (int i = 0; i < 3; ++i) {
        lo[i] = std::min(b->min[i] * k[i], b->max[i] * k[i]);
        hi[i] = std::max(b->min[i] * k[i], b->max[i] * k[i]);
      }
      what = "mesh '" + m->Uri() + "'";
    } else {
      return;
    }
    // The box's centre in the collision frame, carried into the world.
    const Pose3d local(
        ignition::math::Vector3d((lo[0] + hi[0]) / 2, (lo[1] + hi[1]) / 2, (lo[2] + hi[2]) / 2),
        ignition::math::Quaterniond::Identity);
    const Pose3d p = world_T_model * model_T_collision * local;
    StaticShape s;
    s.model = model;
    s.link = link;
    s.collision = c.Name();
    s.type = ShapeType::kBox;
    s.size_x = hi[0] - lo[0];
    s.size_y = hi[1] - lo[1];
    const size_t shapes_before = out->world.shapes.size();
    const int dropped_before = dropped;
    add_shape(std::move(s), p, (hi[2] - lo[2]) / 2, prefix, label);
    if (dropped == dropped_before && out->world.shapes.size() > shapes_before) {
      char size[96];
      std::snprintf(size, sizeof size, "%.2f x %.2f x %.2f m", hi[0] - lo[0], hi[1] - lo[1],
                    hi[2] - lo[2]);
      out->warnings.push_back(prefix + label + " is a " + what +
                              ": simulated as an obstacle by its bounding box (" + size + ")");
    }
  }

  // A plain model read without sdformat (split_plain_models): as model() would walk it.
  void plain(const PlainModel& m) {
    if (!m.is_static) {
      out->warnings.push_back(source + ":" + std::to_string(m.line) + ": model '" + m.name +
                              "' is not static: the world simulates it as a static obstacle");
    }
    out->world.models.push_back(m.name);
    out->world.model_poses[m.name] =
        Pose2D{m.pose.Pos().X(), m.pose.Pos().Y(), normalize_angle(m.pose.Rot().Yaw())};
    for (const PlainLink& l : m.links) {
      for (const PlainCollision& c : l.collisions) {
        const Pose3d p = m.pose * (l.pose * c.pose);
        if (c.type == "plane") {
          add_ground(p, c.normal, c.sized, c.v[0], c.v[1]);
          continue;
        }
        StaticShape s;
        s.model = m.name;
        s.link = l.name;
        s.collision = c.name;
        double half_z = 0.0;
        if (c.type == "box") {
          s.type = ShapeType::kBox;
          s.size_x = c.v[0];
          s.size_y = c.v[1];
          half_z = c.v[2] / 2;
        } else if (c.type == "cylinder") {
          s.type = ShapeType::kCylinder;
          s.radius = c.v[0];
          half_z = c.v[1] / 2;
        } else {
          s.type = ShapeType::kSphere;
          s.radius = c.v[0];
          half_z = s.radius;
        }
        add_shape(std::move(s), p, half_z, source + ":" + std::to_string(c.line) + ": ",
                  "collision '" + m.name + "::" + l.name + "::" + c.name + "'");
      }
    }
  }

  // A box, cylinder or sphere at world pose p (type and size set in s): checked and kept, or
  // left out with a warning.
  void add_shape(StaticShape s, const Pose3d& p, double half_z, const std::string& prefix,
                 const std::string& label) {
    s.pose = Pose2D{p.Pos().X(), p.Pos().Y(), normalize_angle(p.Rot().Yaw())};
    const bool tilted = std::abs(p.Rot().Roll()) > 1e-6 || std::abs(p.Rot().Pitch()) > 1e-6;
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

// --- Large worlds ---
//
// libsdformat 12 spends about 30 ms and 2.3 MB on every <model> it reads (it copies the model's
// whole description for each), so a world of a few thousand models takes minutes and gigabytes.
// Top-level models that are plain static geometry are therefore read here with tinyxml2 and
// blanked out of the text sdformat reads (newlines kept, so its line numbers stay right), once a
// world holds at least `threshold` of them. Plain: attributes only `name`; children only the
// elements listed below; poses without attributes (relative_to, degrees, rotation_format); links
// and collisions with unique names; geometry box, cylinder, sphere or plane with every number
// readable; and no relative_to, attached_to, <parent> or <child> anywhere naming the model. Any
// other model goes through sdformat as before.

bool only_name_attribute(const tinyxml2::XMLElement* e) {
  for (const tinyxml2::XMLAttribute* a = e->FirstAttribute(); a; a = a->Next()) {
    if (std::string_view(a->Name()) != "name") return false;
  }
  return e->Attribute("name") && *e->Attribute("name");
}

bool allowed(const tinyxml2::XMLElement* e, std::initializer_list<std::string_view> names) {
  for (const tinyxml2::XMLElement* c = e->FirstChildElement(); c; c = c->NextSiblingElement()) {
    bool ok = false;
    for (std::string_view n : names) ok = ok || n == c->Name();
    if (!ok) return false;
  }
  return true;
}

// Exactly n finite numbers (no attributes); an empty <pose/> reads as zeros when n == 6.
bool numbers(const tinyxml2::XMLElement* e, double* out, int n) {
  if (!e || e->FirstAttribute() || e->FirstChildElement()) return false;
  const char* t = e->GetText();
  if (!t) {
    if (n != 6) return false;
    for (int i = 0; i < n; ++i) out[i] = 0.0;
    return true;
  }
  std::istringstream in(t);
  in.imbue(std::locale::classic());
  for (int i = 0; i < n; ++i) {
    if (!(in >> out[i]) || !std::isfinite(out[i])) return false;
  }
  std::string rest;
  return !(in >> rest);
}

bool pose_of(const tinyxml2::XMLElement* parent, Pose3d* pose) {
  const tinyxml2::XMLElement* p = parent->FirstChildElement("pose");
  if (!p) {
    *pose = Pose3d::Zero;
    return true;
  }
  if (p->NextSiblingElement("pose")) return false;
  double v[6];
  if (!numbers(p, v, 6)) return false;
  *pose = Pose3d(v[0], v[1], v[2], v[3], v[4], v[5]);
  return true;
}

std::optional<PlainModel> plain_model(const tinyxml2::XMLElement* m) {
  if (!only_name_attribute(m) || !allowed(m, {"static", "pose", "link", "self_collide",
                                              "allow_auto_disable", "enable_wind"})) {
    return std::nullopt;
  }
  PlainModel out;
  out.name = m->Attribute("name");
  out.line = m->GetLineNum();
  if (!pose_of(m, &out.pose)) return std::nullopt;
  if (const auto* st = m->FirstChildElement("static")) {
    const std::string t = st->GetText() ? st->GetText() : "";
    if (t == "true" || t == "1") {
      out.is_static = true;
    } else if (t != "false" && t != "0") {
      return std::nullopt;
    }
  }
  std::set<std::string> links;
  for (const auto* l = m->FirstChildElement("link"); l; l = l->NextSiblingElement("link")) {
    if (!only_name_attribute(l) ||
        !allowed(l, {"pose", "collision", "visual", "inertial", "self_collide", "gravity",
                     "kinematic", "enable_wind", "must_be_base_link", "velocity_decay"})) {
      return std::nullopt;
    }
    PlainLink pl;
    pl.name = l->Attribute("name");
    if (!links.insert(pl.name).second || !pose_of(l, &pl.pose)) return std::nullopt;
    std::set<std::string> names;
    for (const auto* c = l->FirstChildElement("collision"); c;
         c = c->NextSiblingElement("collision")) {
      if (!only_name_attribute(c) ||
          !allowed(c, {"pose", "geometry", "surface", "laser_retro", "max_contacts"})) {
        return std::nullopt;
      }
      PlainCollision pc;
      pc.name = c->Attribute("name");
      pc.line = c->GetLineNum();
      if (!names.insert(pc.name).second || !pose_of(c, &pc.pose)) return std::nullopt;
      const auto* g = c->FirstChildElement("geometry");
      if (!g || g->NextSiblingElement("geometry") || g->FirstAttribute()) return std::nullopt;
      const auto* shape = g->FirstChildElement();
      if (!shape || shape->NextSiblingElement() || shape->FirstAttribute()) return std::nullopt;
      pc.type = shape->Name();
      if (pc.type == "box") {
        if (!allowed(shape, {"size"}) || !numbers(shape->FirstChildElement("size"), pc.v, 3)) {
          return std::nullopt;
        }
      } else if (pc.type == "cylinder") {
        if (!allowed(shape, {"radius", "length"}) ||
            !numbers(shape->FirstChildElement("radius"), &pc.v[0], 1) ||
            !numbers(shape->FirstChildElement("length"), &pc.v[1], 1)) {
          return std::nullopt;
        }
      } else if (pc.type == "sphere") {
        if (!allowed(shape, {"radius"}) ||
            !numbers(shape->FirstChildElement("radius"), &pc.v[0], 1)) {
          return std::nullopt;
        }
      } else if (pc.type == "plane") {
        double n[3];
        if (!allowed(shape, {"normal", "size"}) ||
            !numbers(shape->FirstChildElement("normal"), n, 3)) {
          return std::nullopt;
        }
        pc.normal = ignition::math::Vector3d(n[0], n[1], n[2]);
        if (const auto* sz = shape->FirstChildElement("size")) {
          if (!numbers(sz, pc.v, 2)) return std::nullopt;
          pc.sized = true;
        }
      } else {
        return std::nullopt;
      }
      pl.collisions.push_back(std::move(pc));
    }
    out.links.push_back(std::move(pl));
  }
  return out;
}

// Every name the document refers to by relative_to, attached_to, <parent> or <child>; a model
// named there (or scoped under it) stays with sdformat.
void collect_references(const tinyxml2::XMLElement* e, std::set<std::string>* refs) {
  for (; e; e = e->NextSiblingElement()) {
    for (const char* attr : {"relative_to", "attached_to"}) {
      if (const char* v = e->Attribute(attr))
        refs->insert(std::string(v).substr(0, std::string(v).find("::")));
    }
    const std::string_view n = e->Name();
    if ((n == "parent" || n == "child") && e->GetText()) {
      const std::string v = e->GetText();
      refs->insert(v.substr(0, v.find("::")));
    }
    collect_references(e->FirstChildElement(), refs);
  }
}

// The byte spans of the first <world>'s top-level <model> elements, in document order, found by
// a small scanner that skips comments, CDATA, declarations and quoted attribute values. Empty
// when the text does not scan (sdformat then reads it whole).
std::vector<std::pair<size_t, size_t>> world_model_spans(const std::string& t) {
  std::vector<std::pair<size_t, size_t>> spans;
  std::vector<std::string> stack;
  int worlds = 0;
  size_t open_at = std::string::npos;
  size_t i = 0;
  const auto skip_to = [&](const char* end) {
    const size_t k = t.find(end, i);
    if (k == std::string::npos) return false;
    i = k + std::strlen(end);
    return true;
  };
  while ((i = t.find('<', i)) != std::string::npos) {
    if (t.compare(i, 4, "<!--") == 0) {
      if (!skip_to("-->")) return {};
      continue;
    }
    if (t.compare(i, 9, "<![CDATA[") == 0) {
      if (!skip_to("]]>")) return {};
      continue;
    }
    if (t.compare(i, 2, "<?") == 0) {
      if (!skip_to("?>")) return {};
      continue;
    }
    if (t.compare(i, 2, "<!") == 0) {
      if (!skip_to(">")) return {};
      continue;
    }
    const size_t start = i;
    const bool closing = t.compare(i, 2, "</") == 0;
    size_t k = i + (closing ? 2 : 1);
    size_t name_end = k;
    while (name_end < t.size() && !std::isspace(static_cast<unsigned char>(t[name_end])) &&
           t[name_end] != '>' && t[name_end] != '/') {
      ++name_end;
    }
    const std::string name = t.substr(k, name_end - k);
    char quote = 0;
    for (k = name_end; k < t.size(); ++k) {
      if (quote) {
        if (t[k] == quote) quote = 0;
      } else if (t[k] == '"' || t[k] == '\'') {
        quote = t[k];
      } else if (t[k] == '>') {
        break;
      }
    }
    if (k >= t.size()) return {};
    const bool self_closing = !closing && t[k - 1] == '/';
    i = k + 1;
    const bool at_world =
        stack.size() == 2 && stack[0] == "sdf" && stack[1] == "world" && worlds == 1;
    if (closing) {
      if (stack.empty() || stack.back() != name) return {};
      stack.pop_back();
      if (name == "model" && open_at != std::string::npos && stack.size() == 2) {
        spans.emplace_back(open_at, i);
        open_at = std::string::npos;
      }
      continue;
    }
    if (name == "world" && stack.size() == 1) ++worlds;
    if (name == "model" && at_world) {
      if (self_closing) {
        spans.emplace_back(start, i);
        continue;
      }
      open_at = start;
    }
    if (!self_closing) stack.push_back(name);
  }
  if (!stack.empty()) return {};
  return spans;
}

// Reads the plain top-level models of `text` (when there are at least `threshold`) into
// `plain` and returns the text with them blanked out; otherwise returns nothing.
std::optional<std::string> split_plain_models(const std::string& text, size_t threshold,
                                              std::vector<PlainModel>* plain) {
  tinyxml2::XMLDocument doc;
  if (doc.Parse(text.c_str(), text.size()) != tinyxml2::XML_SUCCESS) return std::nullopt;
  const auto* root = doc.RootElement();
  const auto* world = root ? root->FirstChildElement("world") : nullptr;
  if (!root || std::string_view(root->Name()) != "sdf" || !world) return std::nullopt;
  std::vector<const tinyxml2::XMLElement*> models;
  std::set<std::string> names;
  for (const auto* m = world->FirstChildElement("model"); m; m = m->NextSiblingElement("model")) {
    models.push_back(m);
    if (!m->Attribute("name") || !names.insert(m->Attribute("name")).second) return std::nullopt;
  }
  if (models.size() < threshold) return std::nullopt;
  std::set<std::string> refs;
  collect_references(root, &refs);
  std::vector<std::optional<PlainModel>> read(models.size());
  size_t count = 0;
  for (size_t i = 0; i < models.size(); ++i) {
    if (refs.count(models[i]->Attribute("name"))) continue;
    read[i] = plain_model(models[i]);
    count += read[i].has_value();
  }
  if (count < threshold) return std::nullopt;
  const auto spans = world_model_spans(text);
  if (spans.size() != models.size()) return std::nullopt;
  std::string rest = text;
  for (size_t i = 0; i < models.size(); ++i) {
    if (!read[i]) continue;
    for (size_t k = spans[i].first; k < spans[i].second; ++k) {
      if (rest[k] != '\n' && rest[k] != '\r') rest[k] = ' ';
    }
    plain->push_back(std::move(*read[i]));
  }
  return rest;
}

// Where includes are found: model:// on resource_paths() (sdformat itself reads SDF_PATH), a Fuel
// URI from a local folder or Gazebo's cache; a Fuel URI found nowhere goes to *missing.
sdf::ParserConfig parser_config(std::set<std::string>* missing) {
  sdf::ParserConfig config;
  for (const std::string& dir : resource_paths()) config.AddURIPath("model://", dir);
  config.SetFindCallback([missing](const std::string& uri) -> std::string {
    if (is_fuel_uri(uri)) {
      std::string found = find_fuel_model(uri);
      if (found.empty()) missing->insert(uri);
      return found;
    }
    return resolve_resource(uri, "");
  });
  return config;
}

// "file:line: " of every <include> whose <uri> is `uri` in the file's text.
std::vector<std::string> include_locations(const std::string& source, const std::string& text,
                                           const std::string& uri) {
  std::vector<std::string> out;
  tinyxml2::XMLDocument doc;
  if (doc.Parse(text.c_str(), text.size()) != tinyxml2::XML_SUCCESS) return out;
  std::vector<const tinyxml2::XMLElement*> stack{doc.RootElement()};
  while (!stack.empty()) {
    const tinyxml2::XMLElement* e = stack.back();
    stack.pop_back();
    if (!e) continue;
    if (std::string_view(e->Name()) == "include") {
      const auto* u = e->FirstChildElement("uri");
      if (u && u->GetText()) {
        std::string t = u->GetText();
        const auto b = t.find_first_not_of(" \t\r\n"), f = t.find_last_not_of(" \t\r\n");
        t = b == std::string::npos ? "" : t.substr(b, f - b + 1);
        if (t == uri) out.push_back(source + ":" + std::to_string(u->GetLineNum()) + ": ");
      }
    }
    for (const auto* c = e->FirstChildElement(); c; c = c->NextSiblingElement()) stack.push_back(c);
  }
  return out;
}

// sdformat 12 refuses an unknown sensor type without saying which sensor: find each <sensor> of
// the text whose type it refuses (each tried alone) and name it with its file and line.
std::vector<std::string> bad_sensors(const std::string& source, const std::string& text) {
  std::vector<std::string> out;
  tinyxml2::XMLDocument doc;
  if (doc.Parse(text.c_str(), text.size()) != tinyxml2::XML_SUCCESS) return out;
  std::map<std::string, bool> known;  // type -> sdformat accepts it
  const auto accepts = [&known](const std::string& type) {
    auto it = known.find(type);
    if (it != known.end()) return it->second;
    sdf::Root probe;
    const std::string sdf =
        "<sdf version=\"1.9\"><model name=\"m\"><link name=\"l\"><sensor "
        "name=\"s\" type=\"" +
        type + "\"/></link></model></sdf>";
    bool ok = true;
    for (const auto& e : probe.LoadSdfString(sdf)) {
      if (e.Message().find("sensor type") != std::string::npos) ok = false;
    }
    known[type] = ok;
    return ok;
  };
  std::vector<std::pair<const tinyxml2::XMLElement*, std::string>> stack{{doc.RootElement(), ""}};
  while (!stack.empty()) {
    auto [e, scope] = stack.back();
    stack.pop_back();
    if (!e) continue;
    const std::string_view name = e->Name();
    const char* n = e->Attribute("name");
    std::string inner = scope;
    if (name == "model" || name == "link") {
      inner = (scope.empty() ? "" : scope + "::") + (n ? n : "?");
    }
    if (name == "sensor") {
      const char* type = e->Attribute("type");
      const std::string t = type ? type : "";
      // Quotes and markup cannot be in a type sdformat knows; the probe would not parse them.
      const bool plain = t.find_first_of("\"<>&") == std::string::npos;
      if (t.empty() || !plain || !accepts(t)) {
        out.push_back(source + ":" + std::to_string(e->GetLineNum()) + ": sensor '" + (n ? n : "") +
                      "'" + (scope.empty() ? "" : " of " + scope) +
                      (t.empty() ? " has no type" : " has type '" + t + "'") +
                      ", which libsdformat does not know (e.g. lidar, gpu_lidar, imu, contact, "
                      "navsat, camera, altimeter, magnetometer, air_pressure, force_torque)");
      }
    }
    for (const auto* c = e->FirstChildElement(); c; c = c->NextSiblingElement()) {
      stack.emplace_back(c, inner);
    }
  }
  std::reverse(out.begin(), out.end());  // file order (the stack walks it backwards)
  return out;
}

}  // namespace

double normalize_angle(double a) {
  constexpr double kPi = std::numbers::pi;
  if (a > -kPi && a <= kPi) return a;
  a = std::fmod(a + kPi, 2 * kPi);
  if (a <= 0) a += 2 * kPi;
  return a - kPi;
}

namespace {

// The whole of a file (empty when it cannot be read: sdformat has said why by then).
std::string file_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream whole;
  whole << in.rdbuf();
  return whole.str();
}

// sdformat's errors as fieldproof states them: a sensor type it does not know, with the file,
// line and sensor name; a Fuel URI not available offline, once, with how to make it available.
void report_load_errors(const std::string& source, const std::string* text, const sdf::Errors& errs,
                        const std::set<std::string>& missing_fuel, SdfOutcome* outcome) {
  SdfOutcome& out = *outcome;
  bool sensor_type_error = false;
  for (const auto& e : errs) {
    if (e.Message().find("provided sensor type is missing or invalid") != std::string::npos) {
      sensor_type_error = true;
      continue;
    }
    // A Fuel URI not found offline: said once, with how to make it available, below.
    bool fuel = false;
    for (const auto& uri : missing_fuel) fuel = fuel || e.Message().find(uri) != std::string::npos;
    if (fuel) continue;
    std::string m = describe(e, source);
    if (m.starts_with("<data-string>")) {
      m = source + m.substr(std::string_view("<data-string>").size());
    }
    out.errors.push_back(std::move(m));
  }
  if (sensor_type_error || !missing_fuel.empty()) {
    const std::string whole = text ? *text : file_text(source);
    for (const auto& uri : missing_fuel) {
      std::vector<std::string> at = include_locations(source, whole, uri);
      if (at.empty()) at.push_back(source + ": (an included model) ");
      for (const auto& where : at) out.errors.push_back(where + "<include> " + fuel_advice(uri));
    }
    if (sensor_type_error) {
      std::vector<std::string> bad = bad_sensors(source, whole);
      if (bad.empty()) {
        bad.push_back(source +
                      ": a sensor of an included model has a type libsdformat does not know "
                      "(Attempting to load a Sensor, but the provided sensor type is missing or "
                      "invalid)");
      }
      for (auto& b : bad) out.errors.push_back(std::move(b));
    }
  }
}

// The world's name, physics step and real-time factor, and its spherical coordinates; false
// (with the error) when the physics cannot be simulated.
bool read_world_physics(const std::string& source, const sdf::World& w, SdfOutcome* outcome) {
  SdfOutcome& out = *outcome;
  out.world.name = w.Name();
  const sdf::Physics* physics = w.PhysicsDefault();
  const double step_s = physics ? physics->MaxStepSize() : 0.001;
  const double rtf = physics ? physics->RealTimeFactor() : 1.0;
  if (!(step_s > 0 && step_s < 10)) {
    out.errors.push_back(source +
                         ": <physics><max_step_size> must be above 0 and below 10 s, got " +
                         std::to_string(step_s));
    return false;
  }
  out.world.step = Duration::from_ns(std::llround(step_s * 1e9));
  if (out.world.step.ns() <= 0) {
    out.errors.push_back(source + ": <physics><max_step_size> is below 1 ns");
    return false;
  }
  if (!std::isfinite(rtf) || rtf < 0) {
    out.errors.push_back(source +
                         ": <physics><real_time_factor> must be 0 (as fast as possible) or a "
                         "positive number, got " + std::to_string(rtf));
    return false;
  }
  // 0 in Gazebo means "as fast as possible".
  out.world.real_time_factor = rtf > 0 ? rtf : std::numeric_limits<double>::infinity();
  if (const ignition::math::SphericalCoordinates* sc = w.SphericalCoordinates()) {
    out.world.spherical.latitude_deg = sc->LatitudeReference().Degree();
    out.world.spherical.longitude_deg = sc->LongitudeReference().Degree();
    out.world.spherical.elevation = sc->ElevationReference();
    out.world.spherical.heading_rad = sc->HeadingOffset().Radian();
  }

  return true;
}

// The world's frames and models (each model's shapes through the walker), then the plain models
// split off before sdformat's parse.
void walk_world(const sdf::World& w, const std::vector<PlainModel>& plain, double plane_z_min,
                double plane_z_max, const std::string& source, SdfOutcome* outcome) {
  SdfOutcome& out = *outcome;
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
  for (const PlainModel& m : plain) walker.plain(m);
}

SdfOutcome parse_sdf(const std::string& source, const std::string* text, double plane_z_min,
                     double plane_z_max, size_t plain_threshold) {
  SdfOutcome out;
  const std::string xml = xml_error(source, text);
  if (!xml.empty()) {
    out.errors.push_back(xml);
    return out;
  }
  // Errors come back as values; sdformat's own console printing would duplicate them on stderr.
  sdf::Console::Instance()->SetQuiet(true);
  sdf::Root root;
  std::vector<PlainModel> plain;
  std::optional<std::string> rest;
  if (plain_threshold > 0) {
    rest = split_plain_models(text ? *text : file_text(source), plain_threshold, &plain);
  }
  std::set<std::string> missing_fuel;
  const sdf::ParserConfig config = parser_config(&missing_fuel);
  const sdf::Errors errs = rest   ? root.LoadSdfString(*rest, config)
                           : text ? root.LoadSdfString(*text, config)
                                  : root.Load(source, config);
  report_load_errors(source, text, errs, missing_fuel, &out);
  if (!out.errors.empty()) return out;
  if (root.WorldCount() == 0) {
    out.errors.push_back(source + ": no <world> in the file (fieldproof needs a world file)");
    return out;
  }
  const sdf::World& w = *root.WorldByIndex(0);
  if (!read_world_physics(source, w, &out)) return out;
  walk_world(w, plain, plane_z_min, plane_z_max, source, &out);
  return out;
}

// The last worlds loaded in this process, by what determines them: a run plans (which loads its
// world) and then starts its session (which loads it again); sdformat's parse of depot.sdf is
// most of a run's start-up CPU (docs/performance.md), so the second load is this copy. Only a
// world that names no other file (no <include>, no <uri>: meshes, models, Fuel) is kept, since
// its text, its source name and the options are then all its outcome depends on; the file is
// read each time and compared whole, so an edited world is parsed again.
struct MemoEntry {
  std::string source;
  std::string text;
  double z_min = 0, z_max = 0;
  size_t threshold = 0;
  SdfOutcome outcome;
};

Mutex g_memo_mutex;
std::vector<MemoEntry> g_memo
    FIELDPROOF_GUARDED_BY(g_memo_mutex);  // most recent last, at most kMemoEntries
constexpr size_t kMemoEntries = 4;

}  // namespace

SdfOutcome load_sdf(const std::string& source, const std::string* text, double plane_z_min,
                    double plane_z_max, size_t plain_threshold) {
  std::optional<std::string> content;
  if (text) {
    content = *text;
  } else {
    std::ifstream in(source, std::ios::binary);
    if (in) {
      std::ostringstream whole;
      whole << in.rdbuf();
      if (in.good() || in.eof()) content = whole.str();
    }
  }
  const bool memo = content && content->size() <= (size_t{64} << 20) &&
                    content->find("<include") == std::string::npos &&
                    content->find("<uri") == std::string::npos;
  if (memo) {
    const MutexLock lock(g_memo_mutex);
    for (const MemoEntry& e : g_memo) {
      if (e.source == source && e.z_min == plane_z_min && e.z_max == plane_z_max &&
          e.threshold == plain_threshold && e.text == *content) {
        return e.outcome;
      }
    }
  }
  // Parsed as before (a file by its path, so sdformat's messages name it); an outcome with
  // errors is not kept (a refused world is said afresh each time).
  SdfOutcome out = parse_sdf(source, text, plane_z_min, plane_z_max, plain_threshold);
  if (memo && out.errors.empty()) {
    const MutexLock lock(g_memo_mutex);
    if (g_memo.size() >= kMemoEntries) g_memo.erase(g_memo.begin());
    g_memo.push_back(MemoEntry{source, std::move(*content), plane_z_min, plane_z_max,
                               plain_threshold, out});
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

bool model_include(const std::string& text, std::string* uri_out, std::string* name,
                   std::optional<Pose2D>* pose) {
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
  std::string u = uri->GetText();
  u.erase(0, u.find_first_not_of(" \t\r\n"));
  u.erase(u.find_last_not_of(" \t\r\n") + 1);
  if (u.empty()) return false;
  *uri_out = u;
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
