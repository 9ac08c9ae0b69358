// alap-cli tokenize: reads UTF-8 text from stdin and prints its token ids, space-separated, on
// one line (DESIGN.md). Loads only the vocabulary from the GGUF metadata; tensors are not read.
#include <cstdio>
#include <exception>
#include <iostream>
#include <iterator>
#include <string>
#include <vector>

#include "command.h"
#include "core/gguf/gguf.h"
#include "core/text/tokenizer.h"

namespace {

using alap::cli::Args;

int run_tokenize(const std::vector<std::string>& argv) {
  Args args("tokenize", argv);
  const auto model = args.value("--model", "-m");
  const bool no_bos = args.flag("--no-bos");
  const bool no_special = args.flag("--no-special");
  if (!args.finish()) return 1;
  if (!model) return args.fail("needs -m MODEL");
  try {
    const alap::Tokenizer tok(alap::vocab_from_gguf(alap::gguf::File::open(*model)));
    std::string text((std::istreambuf_iterator<char>(std::cin)), std::istreambuf_iterator<char>());
    std::vector<int32_t> ids = tok.encode(text, /*add_special=*/true, /*parse_special=*/!no_special);
    if (no_bos && tok.vocab().add_bos && !ids.empty() && ids.front() == tok.vocab().bos) ids.erase(ids.begin());
    std::string line;
    for (size_t i = 0; i < ids.size(); ++i) {
      if (i) line += ' ';
      line += std::to_string(ids[i]);
    }
    line += '\n';
    std::fwrite(line.data(), 1, line.size(), stdout);
    return 0;
  } catch (const std::exception& e) {
    return args.fail(e.what());
  }
}

}  // namespace

ALAP_CLI_COMMAND("tokenize", "print the token ids of UTF-8 text read from stdin", run_tokenize);
