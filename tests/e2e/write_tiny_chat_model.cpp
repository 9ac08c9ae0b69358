// write_tiny_chat_model PATH [--eog]: writes tests/e2e/tiny_chat_model.h's model to PATH (with
// --eog every answer ends at once). For the Node.js openai-client test, which needs a model file.
#include <cstdio>
#include <cstring>
#include <exception>

#include "tests/e2e/tiny_chat_model.h"

int main(int argc, char** argv) {
  if (argc < 2 || argc > 3 || (argc == 3 && std::strcmp(argv[2], "--eog") != 0)) {
    std::fprintf(stderr, "usage: write_tiny_chat_model PATH [--eog]\n");
    return 2;
  }
  try {
    alap::e2e::TinyChatModelOptions o;
    if (argc == 3) o.eog_bias = 100.0f;
    alap::e2e::write_tiny_chat_model(argv[1], o);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "write_tiny_chat_model: %s\n", e.what());
    return 1;
  }
  return 0;
}
