// Test helper for npm_tokenizer_crosscheck.mjs: loads one vocabulary GGUF and tokenizes many
// inputs in one process. Input: one hex-encoded UTF-8 string per line. Output: one line per input,
// its ids space-separated (no BOS/EOS, special-token texts parsed, as the .out vectors).
// Not a user tool: alap-cli tokenize is that.
#include <cstdio>
#include <exception>
#include <fstream>
#include <iostream>
#include <string>

#include "core/gguf/gguf.h"
#include "core/text/tokenizer.h"

namespace {

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s VOCAB.gguf INPUTS.hex  (prints ids per input line)\n", argv[0]);
    return 2;
  }
  try {
    const alap::Tokenizer tok(alap::vocab_from_gguf(alap::gguf::File::open(argv[1])));
    std::ifstream in(argv[2], std::ios::binary);
    if (!in) throw std::runtime_error(std::string("cannot open ") + argv[2]);
    std::string line, text, out;
    size_t line_no = 0;
    while (std::getline(in, line)) {
      ++line_no;
      if (line.size() % 2 != 0) throw std::runtime_error("odd hex length on line " + std::to_string(line_no));
      text.clear();
      for (size_t i = 0; i < line.size(); i += 2) {
        const int hi = hex_digit(line[i]), lo = hex_digit(line[i + 1]);
        if (hi < 0 || lo < 0) throw std::runtime_error("bad hex on line " + std::to_string(line_no));
        text.push_back(static_cast<char>(hi * 16 + lo));
      }
      out.clear();
      for (int32_t id : tok.encode(text, /*add_special=*/false, /*parse_special=*/true)) {
        if (!out.empty()) out.push_back(' ');
        out += std::to_string(id);
      }
      out.push_back('\n');
      std::fwrite(out.data(), 1, out.size(), stdout);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tokenize_lines: %s\n", e.what());
    return 1;
  }
  return 0;
}
