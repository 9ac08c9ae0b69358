// Tests for app/server/openai_api.{h,cpp}: the chat-completions parser on good and malformed
// bodies, the exact bytes of responses, chunks, errors and SSE frames, UTF-8 repair, bearer check.
#include "app/server/openai_api.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "core/store/json.h"

namespace alap::server {
namespace {

ApiError parse_error(const std::string& body) {
  try {
    parse_chat_request(body, 1);
  } catch (const ApiError& e) {
    return e;
  }
  ADD_FAILURE() << "no error for " << body;
  return ApiError(0, "none");
}

TEST(OpenAiParse, MapsEveryField) {
  const ChatCompletionRequest r = parse_chat_request(
      R"({"model":"m1","messages":[{"role":"developer","content":"sys"},{"role":"user","content":"hi"},
          {"role":"assistant","content":null},{"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}],
          "temperature":0.25,"top_p":0.5,"seed":-3,"max_tokens":7,"max_completion_tokens":9,"stop":"END",
          "stream":true,"stream_options":{"include_usage":true},"n":1,"presence_penalty":1.5,
          "frequency_penalty":-2,"top_k":3,"min_p":0.1,"repeat_penalty":1.1,"user":"u","tools":[],"logprobs":false})",
      99);
  EXPECT_EQ(r.model, "m1");
  EXPECT_TRUE(r.stream);
  EXPECT_TRUE(r.include_usage);
  const GenerateRequest& g = r.generate;
  ASSERT_EQ(g.messages.size(), 4u);
  EXPECT_EQ(g.messages[0].role, "system");
  EXPECT_EQ(g.messages[0].content, "sys");
  EXPECT_EQ(g.messages[2].role, "assistant");
  EXPECT_EQ(g.messages[2].content, "");
  EXPECT_EQ(g.messages[3].content, "a\nb");
  EXPECT_TRUE(g.system_prompt.empty());
  EXPECT_FLOAT_EQ(g.sampling.temperature, 0.25f);
  EXPECT_FLOAT_EQ(g.sampling.top_p, 0.5f);
  EXPECT_EQ(g.sampling.seed, static_cast<uint64_t>(-3));
  EXPECT_EQ(g.sampling.top_k, 3);
  EXPECT_FLOAT_EQ(g.sampling.min_p, 0.1f);
  EXPECT_FLOAT_EQ(g.sampling.repeat_penalty, 1.1f);
  EXPECT_FLOAT_EQ(g.sampling.presence_penalty, 1.5f);
  EXPECT_FLOAT_EQ(g.sampling.frequency_penalty, -2.0f);
  EXPECT_EQ(g.max_tokens, 9);  // max_completion_tokens wins
  EXPECT_EQ(g.stop, std::vector<std::string>{"END"});
}

TEST(OpenAiParse, DefaultsAreTheEnginesAndOpenAisUnlimitedLength) {
  const ChatCompletionRequest r = parse_chat_request(R"({"messages":[{"role":"user","content":"hi"}],
      "temperature":null,"stop":null,"seed":null,"stream":null})", 1234);
  const SamplerParams defaults;
  EXPECT_FALSE(r.stream);
  EXPECT_FALSE(r.include_usage);
  EXPECT_TRUE(r.model.empty());
  EXPECT_EQ(r.generate.sampling.seed, 1234u);
  EXPECT_EQ(r.generate.sampling.temperature, defaults.temperature);
  EXPECT_EQ(r.generate.sampling.top_k, defaults.top_k);
  EXPECT_EQ(r.generate.sampling.top_p, defaults.top_p);
  EXPECT_EQ(r.generate.sampling.min_p, defaults.min_p);
  EXPECT_EQ(r.generate.max_tokens, 0);
  EXPECT_TRUE(r.generate.stop.empty());
}

TEST(OpenAiParse, StopArraysDropEmptyStringsAndIntegralFloatsCount) {
  const ChatCompletionRequest r =
      parse_chat_request(R"({"messages":[{"role":"user","content":"x"}],"stop":["a","","\n\n"],"max_tokens":4.0})", 1);
  EXPECT_EQ(r.generate.stop, (std::vector<std::string>{"a", "\n\n"}));
  EXPECT_EQ(r.generate.max_tokens, 4);
}

TEST(OpenAiParse, MalformedBodiesNameTheField) {
  struct Case {
    const char* body;
    const char* param;
    const char* message_part;
  };
  const std::vector<Case> cases{
      {"", "", "not valid JSON"},
      {"nul", "", "not valid JSON"},
      {R"({"messages":[]} x)", "", "not valid JSON"},
      {R"({"a":1,"a":2})", "", "not valid JSON"},  // duplicate keys
      {"\"text\"", "", "must be a JSON object, not string"},
      {"{}", "messages", "'messages' is required"},
      {R"({"messages":null})", "messages", "'messages' is required"},
      {R"({"messages":"hi"})", "messages", "must be an array, not string"},
      {R"({"messages":[]})", "messages", "at least one"},
      {R"({"messages":[1]})", "messages[0]", "must be an object, not integer"},
      {R"({"messages":[{"role":"user"}]})", "messages[0].content", "is required"},
      {R"({"messages":[{"role":1,"content":"x"}]})", "messages[0].role", "must be a string"},
      {R"({"messages":[{"role":"user","content":"x"},{"role":"bot","content":"x"}]})", "messages[1].role", "'bot'"},
      {R"({"messages":[{"role":"user","content":{"text":"x"}}]})", "messages[0].content", "string or an array"},
      {R"({"messages":[{"role":"user","content":["x"]}]})", "messages[0].content[0]", "must be an object"},
      {R"({"messages":[{"role":"user","content":[{"type":"text"}]}]})", "messages[0].content[0].text", "must be a string"},
      {R"({"messages":[{"role":"user","content":[{"type":"image_url"}]}]})", "messages[0].content[0].type",
       "only text"},
      {R"({"messages":[{"role":"user","content":"x"}],"model":["a"]})", "model", "must be a string"},
      {R"({"messages":[{"role":"user","content":"x"}],"n":3})", "n", "must be 1"},
      {R"({"messages":[{"role":"user","content":"x"}],"n":0})", "n", "at least 1"},
      {R"({"messages":[{"role":"user","content":"x"}],"stream":1})", "stream", "must be a boolean"},
      {R"({"messages":[{"role":"user","content":"x"}],"stream_options":true})", "stream_options", "must be an object"},
      {R"({"messages":[{"role":"user","content":"x"}],"stream_options":{"include_usage":"y"}})",
       "stream_options.include_usage", "boolean"},
      {R"({"messages":[{"role":"user","content":"x"}],"temperature":-0.1})", "temperature", "between 0 and 2"},
      {R"({"messages":[{"role":"user","content":"x"}],"temperature":true})", "temperature", "must be a number"},
      {R"({"messages":[{"role":"user","content":"x"}],"top_p":2})", "top_p", "between 0 and 1"},
      {R"({"messages":[{"role":"user","content":"x"}],"top_k":-1})", "top_k", "at least 0"},
      {R"({"messages":[{"role":"user","content":"x"}],"min_p":1.5})", "min_p", "between 0 and 1"},
      {R"({"messages":[{"role":"user","content":"x"}],"repeat_penalty":0})", "repeat_penalty", "greater than 0"},
      {R"({"messages":[{"role":"user","content":"x"}],"presence_penalty":2.5})", "presence_penalty", "between -2 and 2"},
      {R"({"messages":[{"role":"user","content":"x"}],"frequency_penalty":"a"})", "frequency_penalty", "number"},
      {R"({"messages":[{"role":"user","content":"x"}],"seed":"1"})", "seed", "must be an integer"},
      {R"({"messages":[{"role":"user","content":"x"}],"max_tokens":-5})", "max_tokens", "at least 1"},
      {R"({"messages":[{"role":"user","content":"x"}],"max_tokens":"5"})", "max_tokens", "must be an integer"},
      {R"({"messages":[{"role":"user","content":"x"}],"max_completion_tokens":1.5})", "max_completion_tokens",
       "must be an integer"},
      {R"({"messages":[{"role":"user","content":"x"}],"stop":5})", "stop", "string or an array"},
      {R"({"messages":[{"role":"user","content":"x"}],"stop":["a",null]})", "stop", "'stop[1]' must be a string"},
      {R"({"messages":[{"role":"user","content":"x"}],"stop":["1","2","3","4","5","6","7","8","9","10","11","12","13","14","15","16","17"]})",
       "stop", "at most 16"},
      {R"({"messages":[{"role":"user","content":"x"}],"logprobs":true})", "logprobs", "not supported"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.body);
    const ApiError e = parse_error(c.body);
    EXPECT_EQ(e.status(), 400);
    EXPECT_EQ(e.param(), c.param);
    EXPECT_NE(std::string(e.what()).find(c.message_part), std::string::npos) << e.what();
  }
}

TEST(OpenAiParse, DeepNestingIsAnErrorNotACrash) {
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  EXPECT_EQ(parse_error(deep).status(), 400);
  EXPECT_EQ(parse_error(R"({"messages":[{"role":"user","content":"\ud800"}]})").status(), 400);  // lone surrogate
  EXPECT_EQ(parse_error(std::string("{\"messages\":\"\xff\"}")).status(), 400);                  // invalid UTF-8
}

CompletionMeta meta() { return CompletionMeta{"chatcmpl-abc", 1700000000, "tiny"}; }

GenerateResult result(std::string text, StopReason reason, size_t n_prompt, size_t n_generated) {
  GenerateResult r;
  r.text = std::move(text);
  r.stats.stop_reason = reason;
  r.stats.n_prompt_tokens = n_prompt;
  r.stats.n_generated = n_generated;
  return r;
}

TEST(OpenAiResponse, CompletionBytes) {
  EXPECT_EQ(completion_json(meta(), result("Hi \"you\"", StopReason::eog, 5, 3)),
            R"({"id":"chatcmpl-abc","object":"chat.completion","created":1700000000,"model":"tiny",)"
            R"("choices":[{"index":0,"message":{"role":"assistant","content":"Hi \"you\""},"logprobs":null,)"
            R"("finish_reason":"stop"}],"usage":{"prompt_tokens":5,"completion_tokens":3,"total_tokens":8}})");
}

TEST(OpenAiResponse, FinishReasons) {
  EXPECT_STREQ(finish_reason(StopReason::eog), "stop");
  EXPECT_STREQ(finish_reason(StopReason::stop_string), "stop");
  EXPECT_STREQ(finish_reason(StopReason::cancelled), "stop");
  EXPECT_STREQ(finish_reason(StopReason::max_tokens), "length");
  EXPECT_STREQ(finish_reason(StopReason::context_full), "length");
}

TEST(OpenAiResponse, ChunkBytes) {
  const std::string head = R"({"id":"chatcmpl-abc","object":"chat.completion.chunk","created":1700000000,"model":"tiny",)";
  EXPECT_EQ(chunk_role_json(meta(), false),
            head + R"("choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]})");
  EXPECT_EQ(chunk_content_json(meta(), "a\nb", false),
            head + R"("choices":[{"index":0,"delta":{"content":"a\nb"},"logprobs":null,"finish_reason":null}]})");
  EXPECT_EQ(chunk_content_json(meta(), "x", true),
            head + R"("choices":[{"index":0,"delta":{"content":"x"},"logprobs":null,"finish_reason":null}],"usage":null})");
  EXPECT_EQ(chunk_finish_json(meta(), StopReason::max_tokens, false),
            head + R"("choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"length"}]})");
  GenerateStats s;
  s.n_prompt_tokens = 10;
  s.n_generated = 2;
  EXPECT_EQ(usage_chunk_json(meta(), s),
            head + R"("choices":[],"usage":{"prompt_tokens":10,"completion_tokens":2,"total_tokens":12}})");
}

TEST(OpenAiResponse, ModelsAndErrors) {
  EXPECT_EQ(models_json("tiny", 5), R"({"object":"list","data":[{"id":"tiny","object":"model","created":5,"owned_by":"alap"}]})");
  EXPECT_EQ(model_json("tiny", 5), R"({"id":"tiny","object":"model","created":5,"owned_by":"alap"})");
  EXPECT_EQ(error_json(400, "bad \"n\"", "n", "invalid_value"),
            R"({"error":{"message":"bad \"n\"","type":"invalid_request_error","param":"n","code":"invalid_value"}})");
  EXPECT_EQ(error_json(503, "busy"),
            R"({"error":{"message":"busy","type":"service_unavailable_error","param":null,"code":null}})");
  EXPECT_EQ(error_json(ApiError(401, "no key", "", "invalid_api_key")),
            R"({"error":{"message":"no key","type":"authentication_error","param":null,"code":"invalid_api_key"}})");
  EXPECT_STREQ(error_type(404), "invalid_request_error");
  EXPECT_STREQ(error_type(500), "server_error");
  EXPECT_EQ(model_id_from_path("/models/Qwen2.5-0.5B-Instruct-Q8_0.gguf"), "Qwen2.5-0.5B-Instruct-Q8_0");
}

TEST(OpenAiResponse, CompletionIdsAreHexAndDistinct) {
  std::mt19937_64 rng(1);
  const std::string a = completion_id(rng), b = completion_id(rng);
  EXPECT_NE(a, b);
  ASSERT_EQ(a.size(), 33u);
  EXPECT_EQ(a.rfind("chatcmpl-", 0), 0u);
  EXPECT_EQ(a.find_first_not_of("0123456789abcdef", 9), std::string::npos);
}

TEST(Sse, Framing) {
  EXPECT_EQ(sse_event(R"({"a":1})"), "data: {\"a\":1}\n\n");
  EXPECT_EQ(sse_event("line1\nline2\r\nline3"), "data: line1\ndata: line2\ndata: line3\n\n");
  EXPECT_EQ(sse_event(""), "data: \n\n");
  EXPECT_EQ(sse_done(), "data: [DONE]\n\n");
  EXPECT_EQ(sse_comment("waiting"), ": waiting\n\n");
  // A chunk never contains a raw newline, so one chunk is one data line.
  const std::string framed = sse_event(chunk_content_json(meta(), "a\n\nb", false));
  EXPECT_EQ(std::count(framed.begin(), framed.end(), '\n'), 2);
}

TEST(Utf8, InvalidBytesBecomeReplacementCharacters) {
  EXPECT_EQ(sanitize_utf8("ok \xE0\xA6\x95"), "ok \xE0\xA6\x95");              // valid Bengali ক kept
  EXPECT_EQ(sanitize_utf8("a\xFF" "b"), "a\xEF\xBF\xBD" "b");                  // stray byte
  EXPECT_EQ(sanitize_utf8("\xE0\xA6"), "\xEF\xBF\xBD\xEF\xBF\xBD");            // truncated sequence
  EXPECT_EQ(sanitize_utf8("\xC0\xAF"), "\xEF\xBF\xBD\xEF\xBF\xBD");            // overlong
  EXPECT_EQ(sanitize_utf8("\xED\xA0\x80"), "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");  // surrogate
  // The builders take engine text as it comes.
  EXPECT_NE(chunk_content_json(meta(), "\xFF", false).find("\xEF\xBF\xBD"), std::string::npos);
}

TEST(Auth, BearerMatchesExactly) {
  EXPECT_TRUE(bearer_matches("Bearer sk-1", "sk-1"));
  EXPECT_FALSE(bearer_matches("Bearer sk-2", "sk-1"));
  EXPECT_TRUE(bearer_matches("bearer sk-1", "sk-1"));  // the scheme is case-insensitive (RFC 7235)
  EXPECT_FALSE(bearer_matches("Bearer sk-1 ", "sk-1"));
  EXPECT_FALSE(bearer_matches("sk-1", "sk-1"));
  EXPECT_FALSE(bearer_matches("", "sk-1"));
}

}  // namespace
}  // namespace alap::server
