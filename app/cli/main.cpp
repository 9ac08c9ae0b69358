// alap-cli: the command-line face of Alap's engine (DESIGN.md "alap-cli"). Dispatches to the
// subcommands registered in this folder; each prints human output to stdout and diagnostics
// to stderr, and exits non-zero with one clear line on error.
#include <cstdio>
#include <string>
#include <vector>

#include "alap/version.h"
#include "command.h"

namespace {

void print_usage(FILE* out) {
  std::fprintf(out, "usage: alap-cli <command> [options]\n\ncommands:\n");
  for (const auto& c : alap::cli::command_registry()) std::fprintf(out, "  %-11s %s\n", c.name, c.summary);
  std::fprintf(out, "\n  --version   print the version and exit\n");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    print_usage(stderr);
    return 2;
  }
  const std::string name = argv[1];
  if (name == "--version" || name == "-v") {
    std::printf("alap-cli %s\n", ALAP_VERSION_STRING);
    return 0;
  }
  if (name == "--help" || name == "-h" || name == "help") {
    print_usage(stdout);
    return 0;
  }
  for (const auto& c : alap::cli::command_registry()) {
    if (name == c.name) return c.run(std::vector<std::string>(argv + 2, argv + argc));
  }
  std::fprintf(stderr, "alap-cli: unknown command '%s' (try alap-cli --help)\n", name.c_str());
  return 2;
}
