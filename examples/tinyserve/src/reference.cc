#include "reference.h"

#include <cstdio>
#include <fstream>
#include <sstream>

namespace tinyserve {

std::map<int, std::vector<int>> Reference::Tokens() const {
  std::map<int, std::vector<int>> out;
  for (const auto& [id, steps] : steps) {
    for (const SampleInfo& s : steps) out[id].push_back(s.token);
  }
  return out;
}

std::optional<Reference> ReadReference(const std::string& path, std::string* error) {
  std::ifstream in(path);
  if (!in) {
    *error = "cannot read the reference " + path + " (write it with --gen-reference)";
    return std::nullopt;
  }
  Reference ref;
  std::string line;
  std::vector<SampleInfo>* current = nullptr;
  int lineno = 0;
  while (std::getline(in, line)) {
    ++lineno;
    if (line.empty() || line[0] == '#') continue;
    std::istringstream ls(line);
    std::string word;
    ls >> word;
    if (word == "parameters") {
      ls >> ref.parameters;
    } else if (word == "request") {
      int id = 0;
      ls >> id;
      current = &ref.steps[id];
    } else if (current != nullptr) {
      SampleInfo s;
      std::istringstream full(line);
      full >> s.token >> s.logit >> s.lse;
      if (!full) {
        *error = path + ":" + std::to_string(lineno) + ": expected 'token logit lse'";
        return std::nullopt;
      }
      current->push_back(s);
    } else {
      *error = path + ":" + std::to_string(lineno) + ": unexpected '" + word + "'";
      return std::nullopt;
    }
  }
  return ref;
}

bool WriteReference(const std::string& path, const Reference& ref, std::string* error) {
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr) {
    *error = "cannot write " + path;
    return false;
  }
  std::fprintf(f,
               "# tinyserve fp32 reference, written by `tinyserve --gen-reference` from the\n"
               "# untuned baseline build (-O1, default knobs). Per step: token logit lse.\n");
  std::fprintf(f, "parameters %ld\n", ref.parameters);
  for (const auto& [id, steps] : ref.steps) {
    std::fprintf(f, "request %d\n", id);
    for (const SampleInfo& s : steps) std::fprintf(f, "%d %.6f %.6f\n", s.token, s.logit, s.lse);
  }
  return std::fclose(f) == 0;
}

}  // namespace tinyserve
