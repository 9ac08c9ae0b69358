// Glue for the C host API of the GPU library: the per-thread error message and the wrapper that
// turns exceptions into a return code. Host-only; not part of the public header.
#pragma once

#include <exception>
#include <string>

namespace alap::gpu {

// The message of the last failed API call on this thread (one slot shared by the library's files).
inline std::string& gpu_error_slot() {
  thread_local std::string message;
  return message;
}

// Runs f(); returns 0, or 1 with the exception's message stored for gpu_error_message().
template <class F>
int gpu_api_call(const char* api, F&& f) {
  try {
    f();
    gpu_error_slot().clear();
    return 0;
  } catch (const std::exception& e) {
    gpu_error_slot() = std::string(api) + ": " + e.what();
  } catch (...) {
    gpu_error_slot() = std::string(api) + ": unknown error";
  }
  return 1;
}

}  // namespace alap::gpu
