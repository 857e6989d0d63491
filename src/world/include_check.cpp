#include "include_check.hpp"

#include <tinyxml2.h>

#include <cstdlib>
#include <filesystem>
#include <functional>
#include <set>
#include <sstream>
#include <vector>

#include "fieldproof/util/input_file.hpp"
#include "mesh_bounds.hpp"

namespace fieldproof::world::detail {

namespace {

namespace fs = std::filesystem;

constexpr size_t kMaxDepth = 32;
constexpr size_t kMaxFiles = 10000;

// The folders model:// and relative includes are looked up in: the loader's (resource_paths()).
std::vector<fs::path> sdf_path_dirs() {
  std::vector<fs::path> out;
  for (const std::string& d : resource_paths()) out.emplace_back(d);
  return out;
}

// The SDF file of a model folder: model.config's first <sdf>, else model.sdf.
fs::path model_file(const fs::path& dir) {
  std::error_code ec;
  const fs::path config = dir / "model.config";
  if (fs::is_regular_file(config, ec)) {
    const Result<std::string> in =
        util::read_input_file(config, util::kMaxSmallFileBytes, "model.config");
    tinyxml2::XMLDocument doc;
    if (in.ok() && doc.Parse(in->c_str(), in->size()) == tinyxml2::XML_SUCCESS) {
      const tinyxml2::XMLElement* model = doc.FirstChildElement("model");
      const tinyxml2::XMLElement* sdf = model ? model->FirstChildElement("sdf") : nullptr;
      if (sdf && sdf->GetText()) return dir / sdf->GetText();
    }
  }
  return dir / "model.sdf";
}

// What `uri` names, seen from `from` (the including file); empty when it cannot be resolved here.
fs::path resolve(std::string uri, const fs::path& from) {
  std::error_code ec;
  while (!uri.empty() && (uri.back() == ' ' || uri.back() == '\n' || uri.back() == '\t')) {
    uri.pop_back();
  }
  const size_t lead = uri.find_first_not_of(" \n\t");
  if (lead == std::string::npos) return {};
  uri = uri.substr(lead);
  std::vector<fs::path> candidates;
  const fs::path here = from.parent_path();
  if (uri.rfind("model://", 0) == 0) {
    const std::string rest = uri.substr(8);
    std::vector<fs::path> dirs = sdf_path_dirs();
    dirs.push_back(here);
    for (const fs::path& d : dirs) candidates.push_back(d / rest);
  } else if (uri.find("://") != std::string::npos && uri.rfind("file://", 0) != 0) {
    return {};  // http(s), fuel: not files of this machine's
  } else {
    if (uri.rfind("file://", 0) == 0) uri = uri.substr(7);
    const fs::path p(uri);
    if (p.is_absolute()) {
      candidates.push_back(p);
    } else {
      candidates.push_back(here / p);
      for (const fs::path& d : sdf_path_dirs()) candidates.push_back(d / p);
    }
  }
  for (const fs::path& c : candidates) {
    if (!fs::exists(c, ec)) continue;
    if (fs::is_directory(c, ec)) {
      const fs::path m = model_file(c);
      if (fs::exists(m, ec)) return m;
      continue;
    }
    return c;
  }
  return {};
}

std::string show_chain(const std::vector<fs::path>& chain, const fs::path& last) {
  std::string s;
  for (const fs::path& p : chain) s += p.string() + " -> ";
  return s + last.string();
}

struct Walk {
  std::set<fs::path> done;  // checked, with everything below them
  std::vector<fs::path> chain;
  std::string error;

  void visit(const fs::path& file) {
    if (!error.empty()) return;
    std::error_code ec;
    fs::path canon = fs::weakly_canonical(file, ec);
    if (ec) canon = file;
    for (const fs::path& c : chain) {
      if (c == canon) {
        error = chain.front().string() + " includes " +
                (canon == chain.front() ? std::string("itself") : canon.string()) + ": " +
                show_chain(chain, canon) + " (an include cycle)";
        return;
      }
    }
    if (done.count(canon)) return;
    if (chain.size() >= kMaxDepth) {
      error = chain.front().string() + ": includes nested more than " + std::to_string(kMaxDepth) +
              " deep: " + show_chain(chain, canon);
      return;
    }
    if (done.size() >= kMaxFiles) {
      error =
          chain.front().string() + ": more than " + std::to_string(kMaxFiles) + " included files";
      return;
    }
    const Result<std::string> in = util::read_input_file(
        canon, util::kMaxWorldBytes, chain.empty() ? "the world file" : "an included SDF file");
    if (!in.ok()) {
      const std::string why = in.status().message();
      error = chain.empty() ? why : why + " (included by " + show_chain(chain, canon) + ")";
      return;
    }
    tinyxml2::XMLDocument doc;
    if (doc.Parse(in->c_str(), in->size()) != tinyxml2::XML_SUCCESS) {
      done.insert(canon);  // not XML: sdformat says where
      return;
    }
    chain.push_back(canon);
    std::function<void(const tinyxml2::XMLElement*)> walk = [&](const tinyxml2::XMLElement* e) {
      for (; e != nullptr && error.empty(); e = e->NextSiblingElement()) {
        if (std::string_view(e->Name()) == "include") {
          const tinyxml2::XMLElement* uri = e->FirstChildElement("uri");
          if (uri && uri->GetText()) {
            const fs::path target = resolve(uri->GetText(), canon);
            if (!target.empty()) visit(target);
          }
        }
        walk(e->FirstChildElement());
      }
    };
    walk(doc.FirstChildElement());
    chain.pop_back();
    done.insert(canon);
  }
};

}  // namespace

Status check_sdf_includes(const std::string& world_file) {
  Walk w;
  w.visit(world_file);
  if (w.error.empty()) return Status();
  return Status(StatusCode::kInvalidArgument, std::move(w.error));
}

}  // namespace fieldproof::world::detail
