// alap-cli: the command-line face of Alap's engine (DESIGN.md "alap-cli"). Dispatches to one
// function per subcommand; each prints human output to stdout and diagnostics to stderr.
#include <cstdio>
#include <cstring>
#include <string>

#include "alap/version.h"

namespace {

void print_usage(FILE* out) {
  std::fprintf(out,
               "usage: alap-cli <command> [options]\n"
               "\n"
               "commands:\n"
               "  inspect     metadata, tensors and memory needs of a GGUF model\n"
               "  tokenize    print the token ids of text read from stdin\n"
               "  generate    generate text from a prompt\n"
               "  chat        interactive chat in a terminal\n"
               "  perplexity  perplexity of a model over a text file\n"
               "  kv-compare  compare a packed KV cache against f16\n"
               "  bench       prefill and decode speed\n"
               "  download    download a file, resumable and verified\n"
               "  serve       OpenAI-compatible HTTP server\n"
               "\n"
               "  --version   print the version and exit\n");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    print_usage(stderr);
    return 2;
  }
  const std::string command = argv[1];
  if (command == "--version" || command == "-v") {
    std::printf("alap-cli %s\n", ALAP_VERSION_STRING);
    return 0;
  }
  if (command == "--help" || command == "-h" || command == "help") {
    print_usage(stdout);
    return 0;
  }
  std::fprintf(stderr, "alap-cli: unknown command '%s' (try alap-cli --help)\n", command.c_str());
  return 2;
}
