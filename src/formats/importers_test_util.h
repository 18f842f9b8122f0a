// Test helpers for the importer tests: fixture loading and profile lookups.
#pragma once

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "core/model/model.h"

namespace arbor::testing_profiles {

// tests/data/profiles/NAME, found from this source file's location.
inline std::string Fixture(const std::string& name) {
  std::string here = __FILE__;
  std::string root = here.substr(0, here.rfind("/src/formats/"));
  std::ifstream in(root + "/tests/data/profiles/" + name, std::ios::binary);
  EXPECT_TRUE(in.good()) << "missing fixture " << name;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

inline const Component* Find(const Profile& p, const std::string& name) {
  for (const Component& c : p.components) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

inline double ShareOf(const Profile& p, const std::string& name) {
  const Component* c = Find(p, name);
  return c == nullptr ? -1 : c->share;
}

inline double ShareSum(const Profile& p) {
  double sum = 0;
  for (const Component& c : p.components) sum += c.share;
  return sum;
}

}  // namespace arbor::testing_profiles
