// alap-cli's subcommand registry and argument reader. Each subcommand lives in its own file
// (inspect.cpp, tokenize.cpp, ...) and registers itself with ALAP_CLI_COMMAND.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace alap::cli {

// args excludes the program and subcommand names. Returns the process exit code.
using CommandFn = int (*)(const std::vector<std::string>& args);

struct Command {
  const char* name;
  const char* summary;
  CommandFn run;
};

std::vector<Command>& command_registry();

struct CommandRegistrar {
  CommandRegistrar(const char* name, const char* summary, CommandFn run) {
    command_registry().push_back({name, summary, run});
  }
};

// A small option reader: `--flag`, `-m VALUE`, `--ctx VALUE` in any order. Unknown options and
// missing values are errors reported by error(); positional arguments are refused.
class Args {
 public:
  Args(std::string command, const std::vector<std::string>& args) : command_(std::move(command)), args_(args) {}

  bool flag(std::string_view name);                                       // --json
  std::optional<std::string> value(std::string_view name, std::string_view alt = {});  // -m / --model
  std::optional<long long> integer(std::string_view name, std::string_view alt = {});
  std::optional<double> number(std::string_view name, std::string_view alt = {});

  // After reading every option: reports leftovers / bad values as one line on stderr. False on error.
  bool finish();
  // Prints "alap-cli <command>: <message>" to stderr and returns exit code 1.
  int fail(const std::string& message) const;

 private:
  std::string command_;
  std::vector<std::string> args_;
  std::vector<bool> used_ = std::vector<bool>(args_.size(), false);
  std::string error_;
};

}  // namespace alap::cli

#define ALAP_CLI_CONCAT2(a, b) a##b
#define ALAP_CLI_CONCAT(a, b) ALAP_CLI_CONCAT2(a, b)
#define ALAP_CLI_COMMAND(name, summary, fn) \
  static const ::alap::cli::CommandRegistrar ALAP_CLI_CONCAT(alap_cli_registrar_, __LINE__)(name, summary, fn)
