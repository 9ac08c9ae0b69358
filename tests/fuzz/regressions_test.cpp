// Replays every saved fuzz finding (tests/fuzz/regressions/<target>/) and every seed
// (tests/fuzz/corpus/<target>/) through the fuzz harnesses in the regular build, so a fixed crash
// stays fixed even where libFuzzer is not built. Under the asan preset this also catches memory
// errors. Not a fuzzer: it runs only the files in the tree.
#include <gtest/gtest.h>

#include <algorithm>
#include <exception>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "tests/fuzz/fuzz_targets.h"

namespace alap::fuzz {
namespace {

namespace fs = std::filesystem;
using Harness = int (*)(const uint8_t*, size_t);

std::vector<fs::path> files_in(const fs::path& dir) {
  std::vector<fs::path> out;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return out;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.is_regular_file() && e.path().filename().string()[0] != '.') out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<uint8_t> read_all(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Runs every regression and seed of one target; returns the number of seeds found.
size_t replay(const std::string& target, Harness fn) {
  const fs::path root = ALAP_FUZZ_DIR;
  size_t seeds = 0;
  for (const char* kind : {"regressions", "corpus"}) {
    for (const fs::path& p : files_in(root / kind / target)) {
      SCOPED_TRACE(p.string());
      const std::vector<uint8_t> bytes = read_all(p);
      try {
        fn(bytes.data(), bytes.size());
      } catch (const std::exception& e) {
        ADD_FAILURE() << p.filename().string() << ": " << e.what();
      }
      if (std::string(kind) == "corpus") ++seeds;
    }
  }
  return seeds;
}

#ifdef ALAP_FUZZ_HAVE_GGUF
TEST(FuzzRegressions, GgufReader) { EXPECT_GE(replay("gguf_reader_fuzz", gguf_reader), 5u); }
#endif

#ifdef ALAP_FUZZ_HAVE_STORE
TEST(FuzzRegressions, StoreJsonImport) { EXPECT_GE(replay("store_json_import_fuzz", store_json_import), 5u); }
#endif

#ifdef ALAP_FUZZ_HAVE_TEXT
TEST(FuzzRegressions, SpmTokenizer) { EXPECT_GE(replay("spm_tokenizer_fuzz", spm_tokenizer), 3u); }
TEST(FuzzRegressions, BpeTokenizer) { EXPECT_GE(replay("bpe_tokenizer_fuzz", bpe_tokenizer), 3u); }
TEST(FuzzRegressions, ChatTemplate) { EXPECT_GE(replay("chat_template_fuzz", chat_template), 3u); }
#endif

#ifdef ALAP_FUZZ_HAVE_ENGINE
TEST(FuzzRegressions, EngineLoad) { EXPECT_GE(replay("engine_load_fuzz", engine_load), 3u); }
#endif
#ifdef ALAP_FUZZ_HAVE_HF
TEST(FuzzRegressions, HfApi) { EXPECT_GE(replay("hf_api_fuzz", hf_api), 3u); }
#endif

// The harnesses' own invariants fire on bad behaviour (so the replay above can fail).
TEST(FuzzRegressions, HarnessReportsViolations) {
  EXPECT_THROW(check(false, "x"), Violation);
  EXPECT_NO_THROW(check(true, "x"));
#ifdef ALAP_FUZZ_HAVE_GGUF
  const uint8_t garbage[] = {'G', 'G', 'U', 'F', 3, 0, 0, 0, 0xFF};
  EXPECT_NO_THROW(gguf_reader(garbage, sizeof garbage));  // malformed: a gguf::Error, swallowed
#endif
}

}  // namespace
}  // namespace alap::fuzz
