// llama.cpp's tokenizer test vectors (../shared/fixtures/ggml-vocab-*.gguf.inp/.out) run through
// vocab_from_gguf + Tokenizer: no BOS, special parsing on, ids compared exactly.
// Also the inline vectors of FORMATS.md §8.3–8.4 and the refusal of WordPiece (bert).
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "core/gguf/gguf.h"
#include "core/text/tokenizer.h"
#include "tests/support/shared_fixtures.h"

namespace alap {
namespace {

std::string read_binary(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::ostringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// .inp: every input is followed by "\n__ggml_vocab_test__\n".
std::vector<std::string> parse_inputs(const std::string& all) {
  const std::string sep = "\n__ggml_vocab_test__\n";
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos < all.size()) {
    const size_t p = all.find(sep, pos);
    if (p == std::string::npos) break;
    out.push_back(all.substr(pos, p - pos));
    pos = p + sep.size();
  }
  return out;
}

// .out: one line per input, ids separated by spaces (possibly a leading space).
std::vector<std::vector<int32_t>> parse_outputs(const std::string& all) {
  std::vector<std::vector<int32_t>> out;
  std::istringstream lines(all);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream ids(line);
    std::vector<int32_t> v;
    int64_t x;
    while (ids >> x) v.push_back(static_cast<int32_t>(x));
    out.push_back(std::move(v));
  }
  return out;
}

std::string ids_str(const std::vector<int32_t>& v) {
  std::string s;
  for (int32_t x : v) {
    s += ' ';
    s += std::to_string(x);
  }
  return s;
}

Tokenizer load(const std::filesystem::path& p) { return Tokenizer(vocab_from_gguf(gguf::File::open(p))); }

class VocabVectors : public ::testing::TestWithParam<std::string> {};

TEST_P(VocabVectors, AllInputsMatchExactly) {
  const std::string name = GetParam();
  ALAP_SHARED_FILE_OR_SKIP(gguf_path, "fixtures/ggml-vocab-" + name + ".gguf");
  ALAP_SHARED_FILE_OR_SKIP(inp_path, "fixtures/ggml-vocab-" + name + ".gguf.inp");
  ALAP_SHARED_FILE_OR_SKIP(out_path, "fixtures/ggml-vocab-" + name + ".gguf.out");
  const Tokenizer tok = load(gguf_path);
  const auto inputs = parse_inputs(read_binary(inp_path));
  const auto expected = parse_outputs(read_binary(out_path));
  ASSERT_GE(inputs.size(), 46u);
  ASSERT_EQ(inputs.size(), expected.size());
  size_t passed = 0;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const auto got = tok.encode(inputs[i], /*add_special=*/false, /*parse_special=*/true);
    EXPECT_EQ(got, expected[i]) << name << " input #" << i << " '" << inputs[i] << "'\n  got:     " << ids_str(got)
                                << "\n  expected:" << ids_str(expected[i]);
    passed += got == expected[i];
  }
  RecordProperty("passed", static_cast<int>(passed));
  std::cout << "[ vectors  ] " << name << ": " << passed << "/" << inputs.size() << " match\n";
}

INSTANTIATE_TEST_SUITE_P(Fixtures, VocabVectors,
                         ::testing::Values("llama-spm", "phi-3", "gemma3", "gpt-2", "mpt", "starcoder", "refact",
                                           "falcon", "deepseek-coder", "deepseek-llm", "llama3", "qwen3"),
                         [](const auto& info) {
                           std::string s = info.param;
                           for (char& c : s) {
                             if (c == '-') c = '_';
                           }
                           return s;
                         });

// The fixture .inp contains one CRLF input; the parser must keep it byte-exact.
TEST(VocabVectorFiles, InputsAreReadByteExact) {
  ALAP_SHARED_FILE_OR_SKIP(inp, "fixtures/ggml-vocab-gpt-2.gguf.inp");
  const auto inputs = parse_inputs(read_binary(inp));
  ASSERT_EQ(inputs.size(), 46u);
  EXPECT_EQ(inputs[0], "ied 4 \xC2\xBD months");
  EXPECT_EQ(inputs[1], "\xC3\x84pfel");
  EXPECT_EQ(inputs[2], "");
  EXPECT_EQ(inputs[3], " ");
  EXPECT_EQ(inputs[7], "\n");
}

TEST(VocabRefusal, BertWordPieceIsRefusedWithAClearError) {
  ALAP_SHARED_FILE_OR_SKIP(p, "fixtures/ggml-vocab-bert-bge.gguf");
  const auto file = gguf::File::open(p);
  try {
    (void)vocab_from_gguf(file);
    FAIL() << "bert vocabulary was accepted";
  } catch (const TextError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("'bert'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("gpt2"), std::string::npos) << msg;
  }
}

TEST(VocabFiles, VocabsWithoutVectorsLoad) {
  ALAP_SHARED_FILE_OR_SKIP(neox, "fixtures/ggml-vocab-gpt-neox.gguf");
  ALAP_SHARED_FILE_OR_SKIP(baichuan, "fixtures/ggml-vocab-baichuan.gguf");
  const Tokenizer a = load(neox);
  EXPECT_EQ(a.vocab().type, VocabType::bpe);
  EXPECT_EQ(a.vocab().pre, PreType::default_bpe);  // no pre key → default
  EXPECT_EQ(a.vocab().n_tokens(), 50432);
  const Tokenizer b = load(baichuan);
  EXPECT_EQ(b.vocab().type, VocabType::spm);
  EXPECT_EQ(b.vocab().n_tokens(), 64000);
}

// FORMATS.md §8.3: Llama-2 vocabulary (llama-spm), no BOS.
TEST(InlineVectors, LlamaSpm) {
  ALAP_SHARED_FILE_OR_SKIP(p, "fixtures/ggml-vocab-llama-spm.gguf");
  const Tokenizer tok = load(p);
  using V = std::vector<int32_t>;
  EXPECT_EQ(tok.encode("Hello world", false, false), (V{15043, 3186}));
  EXPECT_EQ(tok.encode(" Hello world", false, false), (V{29871, 15043, 3186}));
  EXPECT_EQ(tok.encode("3333", false, false), (V{29871, 29941, 29941, 29941, 29941}));
  EXPECT_EQ(tok.encode(" this is \xF0\x9F\xA6\x99.cpp", false, false),
            (V{29871, 445, 338, 29871, 243, 162, 169, 156, 29889, 8223}));
  EXPECT_EQ(tok.encode("", true, false), (V{1}));  // empty: BOS only, no space prefix
  EXPECT_EQ(tok.encode("", false, false), V{});
  EXPECT_EQ(tok.encode("Hello world", true, false), (V{1, 15043, 3186}));
  // Special tokens: "<s>" is BOS only with parse_special; the space prefix follows it.
  EXPECT_EQ(tok.encode("<s>Hello", false, true), (V{1, 15043}));
  EXPECT_NE(tok.encode("<s>Hello", false, false)[0], 1);
  // Detokenize: leading space of the first piece is removed; bytes are reassembled.
  const std::string text = " this is \xF0\x9F\xA6\x99.cpp";
  EXPECT_EQ(tok.decode(tok.encode(text, false, false), false), text);
  EXPECT_EQ(tok.decode(tok.encode("Hello world", true, false), false), " Hello world");
  EXPECT_EQ(tok.decode(V{1, 15043}, true), "<s> Hello");
  EXPECT_TRUE(tok.is_eog(2));
  EXPECT_FALSE(tok.is_eog(1));
}

// FORMATS.md §8.4: GPT-2, Llama 3 and Qwen2-family vectors, no BOS.
TEST(InlineVectors, Gpt2) {
  ALAP_SHARED_FILE_OR_SKIP(p, "fixtures/ggml-vocab-gpt-2.gguf");
  const Tokenizer tok = load(p);
  using V = std::vector<int32_t>;
  EXPECT_EQ(tok.encode("Hello world", false, false), (V{15496, 995}));
  EXPECT_EQ(tok.encode(" Hello world", false, false), (V{18435, 995}));
  EXPECT_EQ(tok.encode("3333", false, false), (V{24840}));
  EXPECT_EQ(tok.decode(V{18435, 995}, false), " Hello world");  // BPE: no space stripping
  EXPECT_EQ(tok.decode(tok.encode("Hi , there .", false, false), false), "Hi, there.");  // clean_spaces
  EXPECT_TRUE(tok.is_eog(50256));  // <|endoftext|>
  EXPECT_FALSE(tok.vocab().add_bos);
}

TEST(InlineVectors, Llama3) {
  ALAP_SHARED_FILE_OR_SKIP(p, "fixtures/ggml-vocab-llama3.gguf");
  const Tokenizer tok = load(p);
  using V = std::vector<int32_t>;
  EXPECT_EQ(tok.encode("Hello world", false, false), (V{9906, 1917}));
  EXPECT_EQ(tok.encode(" Hello world", false, false), (V{22691, 1917}));
  EXPECT_EQ(tok.encode("3333", false, false), (V{8765, 18}));
  EXPECT_EQ(tok.encode("\n =", false, false), (V{198, 284}));
  EXPECT_EQ(tok.encode("Hello world", true, false), (V{128000, 9906, 1917}));
  EXPECT_TRUE(tok.vocab().ignore_merges);
  EXPECT_EQ(tok.encode("<|eot_id|>", false, true), (V{128009}));
  EXPECT_NE(tok.encode("<|eot_id|>", false, false), (V{128009}));  // control: plain text unless asked
  EXPECT_TRUE(tok.is_eog(128009));
  EXPECT_TRUE(tok.is_eog(128001));
  EXPECT_FALSE(tok.is_eog(128000));
  EXPECT_EQ(tok.decode(V{128000, 9906, 1917}, false), "Hello world");
  EXPECT_EQ(tok.decode(V{128000, 9906, 1917}, true), "<|begin_of_text|>Hello world");
}

TEST(InlineVectors, Qwen) {
  ALAP_SHARED_FILE_OR_SKIP(p, "fixtures/ggml-vocab-qwen3.gguf");
  const Tokenizer tok = load(p);
  using V = std::vector<int32_t>;
  EXPECT_EQ(tok.encode("Hello world", false, false), (V{9707, 1879}));
  EXPECT_EQ(tok.encode("Hello, world!", false, false), (V{9707, 11, 1879, 0}));
  EXPECT_EQ(tok.encode("3333", false, false), (V{18, 18, 18, 18}));
  EXPECT_EQ(tok.encode(" this is \xF0\x9F\xA6\x99.cpp", false, false), (V{419, 374, 11162, 99, 247, 13, 10821}));
  EXPECT_EQ(tok.encode("Hello world", true, false), (V{9707, 1879}));  // add_bos false
  EXPECT_EQ(tok.vocab().eot, 151645);  // <|im_end|> inferred from its text
  EXPECT_TRUE(tok.is_eog(151645));
  EXPECT_TRUE(tok.is_eog(151643));  // <|endoftext|>
  // User-defined tokens are matched even without parse_special.
  const int32_t think = tok.vocab().find("<think>");
  ASSERT_NE(think, kNoToken);
  EXPECT_EQ(tok.encode("<think>", false, false), (V{think}));
  EXPECT_EQ(tok.decode(tok.encode("a , b", false, false), false), "a , b");  // qwen2: no clean_spaces
}

}  // namespace
}  // namespace alap
