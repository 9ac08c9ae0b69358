// The fuzz harnesses of tests/fuzz: one function per target that feeds arbitrary bytes to a parser
// and checks invariants. Used by the libFuzzer executables (fuzz_main.cpp) and by the regression
// test that replays saved inputs in every build. Not a fuzzer itself and not a unit test.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace alap::fuzz {

// Thrown when a harness invariant fails (never caught by a harness: the fuzzer reports it as a
// crash, the regression test as a failure). Documented parse errors are caught inside.
class Violation : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

inline void check(bool ok, const char* what) {
  if (!ok) throw Violation(std::string("fuzz invariant failed: ") + what);
}

// Each returns 0 (libFuzzer's convention); documented errors are swallowed, anything else escapes.
int gguf_reader(const uint8_t* data, size_t size);          // gguf::File::from_bytes + every accessor
int store_json_import(const uint8_t* data, size_t size);    // json::parse round trip + Store::import_json
int spm_tokenizer(const uint8_t* data, size_t size);        // SPM encode/decode + streaming detokenizer
int bpe_tokenizer(const uint8_t* data, size_t size);        // byte-level BPE encode/decode + detokenizer
int chat_template(const uint8_t* data, size_t size);        // ChatTemplate::parse + render
int hf_api(const uint8_t* data, size_t size);               // Hugging Face answer parsers (Qt)
int engine_load(const uint8_t* data, size_t size);          // Engine::load of a GGUF file + a short reply

}  // namespace alap::fuzz
