// Where tests find ../shared (real vocabularies, models, held-out text), and how they skip
// cleanly when it is absent. Not a fixture itself: tests never copy these files.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

namespace alap::test {

// The ../shared folder beside the checkout ($ALAP_SHARED_DIR overrides), or empty if absent.
inline std::filesystem::path shared_dir() {
  if (const char* env = std::getenv("ALAP_SHARED_DIR"); env && *env && std::filesystem::is_directory(env)) {
    return env;
  }
#ifdef ALAP_SHARED_DIR
  if (std::filesystem::is_directory(ALAP_SHARED_DIR)) return ALAP_SHARED_DIR;
#endif
  return {};
}

// Path of a file under ../shared, e.g. shared_file("fixtures/stories260K.gguf"); empty if missing.
inline std::filesystem::path shared_file(const std::string& relative) {
  auto dir = shared_dir();
  if (dir.empty()) return {};
  auto p = dir / relative;
  return std::filesystem::exists(p) ? p : std::filesystem::path{};
}

}  // namespace alap::test

// Declares `var` as the path of a ../shared file, or skips the test with a clear message.
#define ALAP_SHARED_FILE_OR_SKIP(var, relative)                                         \
  const std::filesystem::path var = ::alap::test::shared_file(relative);                \
  if (var.empty()) GTEST_SKIP() << "../shared/" << (relative) << " is absent; skipping"
