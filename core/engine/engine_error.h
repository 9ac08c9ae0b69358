// EngineError: every failure the engine facade reports (bad model, bad request, full context,
// cancelled load). One clear line in what(); never a crash. Not the lower rooms' own errors,
// which the facade wraps with the file or step they came from.
#pragma once

#include <stdexcept>

namespace alap {

class EngineError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace alap
