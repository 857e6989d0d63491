#include "mesh_bounds.hpp"

#include <tinyxml2.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

namespace fieldproof::world::detail {
namespace {

namespace fs = std::filesystem;

struct Accumulator {
  MeshBounds b;
  size_t n = 0;
  void add(double x, double y, double z) {
    if (!std::isfinite(x) || !std::isfinite(y) || !std::isfinite(z)) return;
    const double v[3] = {x, y, z};
    for (int i = 0; i < 3; ++i) {
      b.min[i] = n == 0 ? v[i] : std::min(b.min[i], v[i]);
      b.max[i] = n == 0 ? v[i] : std::max(b.max[i], v[i]);
    }
    ++n;
  }
};

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string extension(const std::string& path) {
  return lower(fs::path(path).extension().string());
}

bool read_obj(std::istream& in, Accumulator* acc) {
  std::string line;
  while (std::getline(in, line)) {
    if (line.size() < 2 || line[0] != 'v' || (line[1] != ' ' && line[1] != '\t')) continue;
    std::istringstream l(line.substr(2));
    l.imbue(std::locale::classic());
    double x = 0, y = 0, z = 0;
    if (l >> x >> y >> z) acc->add(x, y, z);
  }
  return true;
}

bool read_stl(const std::string& bytes, Accumulator* acc) {
  // Binary: 80-byte header, uint32 count, 50 bytes per triangle. ASCII starts with "solid" and
  // holds "vertex" lines (a binary header may start with "solid" too: the size decides).
  if (bytes.size() >= 84) {
    uint32_t count = 0;
    std::memcpy(&count, bytes.data() + 80, 4);
    if (84 + static_cast<uint64_t>(count) * 50 == bytes.size()) {
      for (uint32_t t = 0; t < count; ++t) {
        const char* tri = bytes.data() + 84 + static_cast<size_t>(t) * 50 + 12;
        for (int k = 0; k < 3; ++k) {
          float v[3];
          std::memcpy(v, tri + k * 12, 12);
          acc->add(v[0], v[1], v[2]);
        }
      }
      return true;
    }
  }
  std::istringstream in(bytes);
  in.imbue(std::locale::classic());
  std::string word;
  while (in >> word) {
    if (word != "vertex") continue;
    double x = 0, y = 0, z = 0;
    if (in >> x >> y >> z) acc->add(x, y, z);
  }
  return true;
}

Status read_dae(const std::string& path, Accumulator* acc) {
  tinyxml2::XMLDocument doc;
  if (doc.LoadFile(path.c_str()) != tinyxml2::XML_SUCCESS) {
    return Status(StatusCode::kCorrupt,
                  std::string("not readable as COLLADA XML: ") + doc.ErrorStr());
  }
  const tinyxml2::XMLElement* root = doc.RootElement();
  double unit = 1.0;
  if (const auto* asset = root ? root->FirstChildElement("asset") : nullptr) {
    if (const auto* u = asset->FirstChildElement("unit")) u->QueryDoubleAttribute("meter", &unit);
  }
  // Every <source> a <vertices> element's POSITION input names.
  std::vector<std::string> position_ids;
  std::vector<const tinyxml2::XMLElement*> stack{root};
  std::vector<const tinyxml2::XMLElement*> sources;
  while (!stack.empty()) {
    const tinyxml2::XMLElement* e = stack.back();
    stack.pop_back();
    if (!e) continue;
    const std::string_view name = e->Name();
    if (name == "vertices") {
      for (const auto* in = e->FirstChildElement("input"); in;
           in = in->NextSiblingElement("input")) {
        const char* sem = in->Attribute("semantic");
        const char* src = in->Attribute("source");
        if (sem && src && std::string_view(sem) == "POSITION" && src[0] == '#') {
          position_ids.emplace_back(src + 1);
        }
      }
    } else if (name == "source") {
      sources.push_back(e);
    }
    for (const auto* c = e->FirstChildElement(); c; c = c->NextSiblingElement()) stack.push_back(c);
  }
  for (const auto* s : sources) {
    const char* id = s->Attribute("id");
    if (!id || std::find(position_ids.begin(), position_ids.end(), id) == position_ids.end()) {
      continue;
    }
    const auto* fa = s->FirstChildElement("float_array");
    if (!fa || !fa->GetText()) continue;
    std::istringstream in(fa->GetText());
    in.imbue(std::locale::classic());
    double x = 0, y = 0, z = 0;
    while (in >> x >> y >> z) acc->add(x * unit, y * unit, z * unit);
  }
  return Status();
}

std::vector<std::string> split_paths(const char* value) {
  std::vector<std::string> out;
  if (!value) return out;
  std::string v(value);
  size_t start = 0;
  while (start <= v.size()) {
    const size_t colon = v.find(':', start);
    const std::string part = v.substr(start, colon == std::string::npos ? colon : colon - start);
    if (!part.empty()) out.push_back(part);
    if (colon == std::string::npos) break;
    start = colon + 1;
  }
  return out;
}

std::string url_decode(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size() && std::isxdigit(static_cast<unsigned char>(s[i + 1])) &&
        std::isxdigit(static_cast<unsigned char>(s[i + 2]))) {
      out += static_cast<char>(std::stoi(s.substr(i + 1, 2), nullptr, 16));
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

// host, owner, model name, version ("" for the newest) of
// https://HOST/1.0/OWNER/models/NAME[/VERSION][/...]
struct FuelRef {
  std::string host, owner, name, version;
};
std::optional<FuelRef> parse_fuel(const std::string& uri) {
  const size_t scheme = uri.find("://");
  if (scheme == std::string::npos) return std::nullopt;
  std::vector<std::string> parts;
  std::istringstream in(uri.substr(scheme + 3));
  for (std::string p; std::getline(in, p, '/');) {
    if (!p.empty()) parts.push_back(url_decode(p));
  }
  // HOST, 1.0, OWNER, models, NAME, ...
  for (size_t i = 0; i + 1 < parts.size(); ++i) {
    if (lower(parts[i]) == "models" && i >= 1) {
      FuelRef r{parts[0], parts[i - 1], parts[i + 1], ""};
      if (i + 2 < parts.size() && std::all_of(parts[i + 2].begin(), parts[i + 2].end(), [](char c) {
            return std::isdigit(static_cast<unsigned char>(c));
          })) {
        r.version = parts[i + 2];
      }
      return r;
    }
  }
  return std::nullopt;
}

// Names compared as Fuel's cache writes them: without case, a space the same as an underscore.
std::string fold(const std::string& name) {
  std::string out = lower(name);
  std::replace(out.begin(), out.end(), ' ', '_');
  return out;
}

// A child folder of `dir` named `name` (folded), or "".
std::string child_nocase(const fs::path& dir, const std::string& name) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return {};
  const fs::path exact = dir / name;
  if (fs::is_directory(exact, ec)) return exact.string();
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    if (e.is_directory(ec) && fold(e.path().filename().string()) == fold(name)) {
      return e.path().string();
    }
  }
  return {};
}

}  // namespace

Result<MeshBounds> read_mesh_bounds(const std::string& path) {
  const std::string ext = extension(path);
  Accumulator acc;
  if (ext == ".obj") {
    std::ifstream in(path);
    if (!in) {
      return Status(StatusCode::kIoError, "cannot read " + path);
    }
    in.imbue(std::locale::classic());
    read_obj(in, &acc);
  } else if (ext == ".stl") {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
      return Status(StatusCode::kIoError, "cannot read " + path);
    }
    std::ostringstream ss;
    ss << in.rdbuf();
    read_stl(ss.str(), &acc);
  } else if (ext == ".dae") {
    if (Status s = read_dae(path, &acc); !s.ok()) return s;
  } else {
    return Status(StatusCode::kUnsupported,
                  "the mesh format " + (ext.empty() ? std::string("(no extension)") : ext) +
                      " is not read (OBJ, STL and COLLADA are)");
  }
  if (acc.n == 0) {
    return Status(StatusCode::kCorrupt, "no vertices in " + path);
  }
  return acc.b;
}

std::vector<std::string> resource_paths() {
  std::vector<std::string> out;
  for (const char* var : {"FIELDPROOF_RESOURCE_PATH", "GZ_SIM_RESOURCE_PATH",
                          "IGN_GAZEBO_RESOURCE_PATH", "SDF_PATH"}) {
    for (auto& p : split_paths(std::getenv(var))) out.push_back(std::move(p));
  }
  return out;
}

bool is_fuel_uri(const std::string& uri) {
  return uri.starts_with("http://") || uri.starts_with("https://");
}

std::string resolve_resource(const std::string& uri, const std::string& base_dir) {
  std::error_code ec;
  std::string u = uri;
  if (u.starts_with("file://")) u = u.substr(7);
  if (u.starts_with("model://")) {
    const std::string rest = u.substr(8);
    for (const auto& dir : resource_paths()) {
      const fs::path p = fs::path(dir) / rest;
      if (fs::exists(p, ec)) return p.string();
    }
    return {};
  }
  if (is_fuel_uri(u)) return {};
  const fs::path p(u);
  if (p.is_absolute()) return fs::exists(p, ec) ? p.string() : std::string();
  const fs::path rel = fs::path(base_dir) / p;
  return fs::exists(rel, ec) ? rel.string() : std::string();
}

std::string find_fuel_model(const std::string& uri) {
  const auto ref = parse_fuel(uri);
  if (!ref) return {};
  for (const auto& dir : resource_paths()) {
    if (std::string found = child_nocase(dir, ref->name); !found.empty()) return found;
  }
  std::vector<fs::path> caches;
  if (const char* c = std::getenv("GZ_FUEL_CACHE_PATH")) caches.emplace_back(c);
  if (const char* home = std::getenv("HOME")) {
    caches.push_back(fs::path(home) / ".gz" / "fuel");
    caches.push_back(fs::path(home) / ".ignition" / "fuel");
  }
  for (const fs::path& cache : caches) {
    const std::string host = child_nocase(cache, ref->host);
    const std::string owner = host.empty() ? "" : child_nocase(host, ref->owner);
    const std::string models = owner.empty() ? "" : child_nocase(owner, "models");
    const std::string model = models.empty() ? "" : child_nocase(models, ref->name);
    if (model.empty()) continue;
    if (!ref->version.empty()) {
      if (std::string v = child_nocase(model, ref->version); !v.empty()) return v;
      continue;
    }
    // The newest version: the largest number among the folder's children.
    std::error_code ec;
    long best = -1;
    std::string best_path;
    for (const auto& e : fs::directory_iterator(model, ec)) {
      const std::string n = e.path().filename().string();
      if (n.empty() || !std::all_of(n.begin(), n.end(), [](char c) {
            return std::isdigit(static_cast<unsigned char>(c));
          })) {
        continue;
      }
      const long v = std::strtol(n.c_str(), nullptr, 10);
      if (v > best) {
        best = v;
        best_path = e.path().string();
      }
    }
    if (!best_path.empty()) return best_path;
  }
  return {};
}

std::string fuel_advice(const std::string& uri) {
  const auto ref = parse_fuel(uri);
  const std::string name = ref ? ref->name : std::string("the model");
  return "'" + uri +
         "' is a Fuel URI and fieldproof does not download (runs are offline and repeatable): "
         "make it available locally, either by downloading it once with Gazebo (gz fuel "
         "download -u '" +
         uri +
         "', into ~/.gz/fuel) or by putting the model's folder (model.config, model.sdf), named '" +
         name + "', in a directory on FIELDPROOF_RESOURCE_PATH";
}

}  // namespace fieldproof::world::detail
