#include "command.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>

namespace alap::cli {

std::vector<Command>& command_registry() {
  static std::vector<Command> registry;
  return registry;
}

bool Args::flag(std::string_view name) {
  bool found = false;
  for (size_t i = 0; i < args_.size(); ++i) {
    if (!used_[i] && args_[i] == name) {
      used_[i] = true;
      found = true;
    }
  }
  return found;
}

std::optional<std::string> Args::value(std::string_view name, std::string_view alt) {
  std::optional<std::string> result;
  for (size_t i = 0; i < args_.size(); ++i) {
    if (used_[i] || (args_[i] != name && (alt.empty() || args_[i] != alt))) continue;
    used_[i] = true;
    if (i + 1 >= args_.size()) {
      if (error_.empty()) error_ = "option " + args_[i] + " needs a value";
      return std::nullopt;
    }
    used_[i + 1] = true;
    result = args_[i + 1];
    ++i;
  }
  return result;
}

std::optional<long long> Args::integer(std::string_view name, std::string_view alt) {
  auto text = value(name, alt);
  if (!text) return std::nullopt;
  errno = 0;
  char* end = nullptr;
  const long long v = std::strtoll(text->c_str(), &end, 10);
  if (errno != 0 || end == text->c_str() || *end != '\0') {
    if (error_.empty()) error_ = "option " + std::string(name) + " needs an integer, not '" + *text + "'";
    return std::nullopt;
  }
  return v;
}

std::optional<double> Args::number(std::string_view name, std::string_view alt) {
  auto text = value(name, alt);
  if (!text) return std::nullopt;
  errno = 0;
  char* end = nullptr;
  const double v = std::strtod(text->c_str(), &end);
  if (errno != 0 || end == text->c_str() || *end != '\0') {
    if (error_.empty()) error_ = "option " + std::string(name) + " needs a number, not '" + *text + "'";
    return std::nullopt;
  }
  return v;
}

bool Args::finish() {
  if (error_.empty()) {
    for (size_t i = 0; i < args_.size(); ++i) {
      if (!used_[i]) {
        error_ = (args_[i].rfind("-", 0) == 0 ? "unknown option " : "unexpected argument ") + args_[i];
        break;
      }
    }
  }
  if (!error_.empty()) {
    std::fprintf(stderr, "alap-cli %s: %s\n", command_.c_str(), error_.c_str());
    return false;
  }
  return true;
}

int Args::fail(const std::string& message) const {
  std::fprintf(stderr, "alap-cli %s: %s\n", command_.c_str(), message.c_str());
  return 1;
}

}  // namespace alap::cli
