// End-to-end tests of the OpenAI-compatible server (app/server) with the REAL engine on a tiny
// model written here (tiny_chat_model.h): raw HTTP over 127.0.0.1 with cpp-httplib's client.
// Answers are compared with the same request run directly on a fresh Engine.
#include <gtest/gtest.h>
#include <httplib.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "app/server/http_server.h"
#include "core/engine/engine.h"
#include "core/store/json.h"
#include "tests/e2e/tiny_chat_model.h"

namespace alap {
namespace {

namespace fs = std::filesystem;
using server::ChatServer;
using server::ServerOptions;

json::Value parse(const std::string& s) { return json::parse(s); }

const json::Value& at(const json::Value& v, std::string_view key) {
  const json::Value* p = v.find(key);
  if (p == nullptr) throw std::runtime_error("missing key " + std::string(key) + " in " + json::write(v));
  return *p;
}

// Splits an SSE body into the data of its events; fails the test on any malformed frame.
std::vector<std::string> sse_data(const std::string& body) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos < body.size()) {
    const size_t end = body.find("\n\n", pos);
    EXPECT_NE(end, std::string::npos) << "unterminated event at byte " << pos;
    if (end == std::string::npos) break;
    const std::string event = body.substr(pos, end - pos);
    pos = end + 2;
    if (event.rfind(": ", 0) == 0) continue;  // a comment
    EXPECT_EQ(event.rfind("data: ", 0), 0u) << event;
    EXPECT_EQ(event.find('\n'), std::string::npos) << event;
    out.push_back(event.substr(6));
  }
  return out;
}

class ServeE2E : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = fs::temp_directory_path() / ("alap_serve_e2e_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    model_ = dir_ / "tiny-chat.gguf";
    e2e::write_tiny_chat_model(model_);
    e2e::TinyChatModelOptions eog;
    eog.eog_bias = 100.0f;
    eog_model_ = dir_ / "tiny-eog.gguf";
    e2e::write_tiny_chat_model(eog_model_, eog);
  }
  static void TearDownTestSuite() {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  static LoadParams params(size_t n_ctx = 256) {
    LoadParams p;
    p.n_ctx = n_ctx;
    p.n_threads = 1;
    return p;
  }

  // A fresh engine and a server on a free loopback port; ready unless asked otherwise.
  void serve(ServerOptions options = {}, bool ready = true, const fs::path& model = model_, size_t n_ctx = 256) {
    engine_ = std::make_unique<Engine>();
    engine_->load(model, params(n_ctx));
    options.host = "127.0.0.1";
    options.port = 0;
    options.on_request = [this](const server::RequestRecord& r) {
      std::lock_guard<std::mutex> lock(records_mu_);
      records_.push_back(r);
    };
    server_ = std::make_unique<ChatServer>(*engine_, options);
    port_ = server_->start();
    ASSERT_GT(port_, 0);
    if (ready) server_->set_ready(server::model_id_from_path(model));
    client_ = std::make_unique<httplib::Client>("127.0.0.1", port_);
    client_->set_read_timeout(20, 0);
  }
  void TearDown() override {
    client_.reset();
    if (server_) server_->stop();
  }

  // What a fresh engine answers to this request.
  static GenerateResult reference(const GenerateRequest& req, std::vector<int32_t>* prompt = nullptr) {
    Engine e;
    e.load(model_, params());
    if (prompt) *prompt = e.prompt_tokens(req);
    std::atomic<bool> no{false};
    return e.generate(req, {}, no);
  }
  static GenerateRequest request(const std::string& user, int32_t max_tokens, uint64_t seed, float temperature) {
    GenerateRequest r;
    r.messages.push_back(ChatMessage{"system", "Be brief.", {}});
    r.messages.push_back(ChatMessage{"user", user, {}});
    r.max_tokens = max_tokens;
    r.sampling.seed = seed;
    r.sampling.temperature = temperature;
    return r;
  }
  static std::string body(const std::string& user, int max_tokens, int seed, double temperature,
                          const std::string& extra = "") {
    return R"({"model":"tiny-chat","messages":[{"role":"system","content":"Be brief."},{"role":"user","content":")" +
           user + R"("}],"max_tokens":)" + std::to_string(max_tokens) + R"(,"seed":)" + std::to_string(seed) +
           R"(,"temperature":)" + std::to_string(temperature) + extra + "}";
  }

  httplib::Result post(const std::string& b, const httplib::Headers& headers = {}) {
    return client_->Post("/v1/chat/completions", headers, b, "application/json");
  }
  void expect_error(const httplib::Result& res, int status, const std::string& type, const std::string& param = "") {
    ASSERT_TRUE(res) << httplib::to_string(res.error());
    EXPECT_EQ(res->status, status) << res->body;
    EXPECT_EQ(res->get_header_value("Content-Type"), "application/json");
    const json::Value v = parse(res->body);
    const json::Value& e = at(v, "error");
    EXPECT_EQ(at(e, "type").as_string(), type);
    EXPECT_FALSE(at(e, "message").as_string().empty());
    if (!param.empty()) {
      EXPECT_EQ(at(e, "param").as_string(), param) << res->body;
    }
  }

  static inline fs::path dir_, model_, eog_model_;
  std::unique_ptr<Engine> engine_;
  std::unique_ptr<ChatServer> server_;
  std::unique_ptr<httplib::Client> client_;
  int port_ = 0;
  std::mutex records_mu_;
  std::vector<server::RequestRecord> records_;
};

TEST_F(ServeE2E, ModelsListTheFileStem) {
  serve();
  auto res = client_->Get("/v1/models");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  const json::Value v = parse(res->body);
  EXPECT_EQ(at(v, "object").as_string(), "list");
  ASSERT_EQ(at(v, "data").as_array().size(), 1u);
  const json::Value& m = at(v, "data").as_array()[0];
  EXPECT_EQ(at(m, "id").as_string(), "tiny-chat");
  EXPECT_EQ(at(m, "object").as_string(), "model");
  EXPECT_EQ(at(m, "owned_by").as_string(), "alap");
  EXPECT_GT(at(m, "created").as_int(), 1600000000);

  res = client_->Get("/v1/models/tiny-chat");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(at(parse(res->body), "id").as_string(), "tiny-chat");
  expect_error(client_->Get("/v1/models/gpt-4o"), 404, "invalid_request_error", "model");
}

TEST_F(ServeE2E, CompletionMatchesTheEngine) {
  std::vector<int32_t> prompt;
  const GenerateResult ref = reference(request("hello there", 12, 5, 0.7f), &prompt);
  ASSERT_EQ(ref.tokens.size(), 12u);
  ASSERT_FALSE(ref.text.empty());

  serve();
  auto res = post(body("hello there", 12, 5, 0.7));
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200) << res->body;
  EXPECT_EQ(res->get_header_value("Content-Type"), "application/json");
  const json::Value v = parse(res->body);
  EXPECT_EQ(at(v, "object").as_string(), "chat.completion");
  EXPECT_EQ(at(v, "id").as_string().rfind("chatcmpl-", 0), 0u);
  EXPECT_EQ(at(v, "id").as_string().size(), 9u + 24u);
  EXPECT_EQ(at(v, "model").as_string(), "tiny-chat");
  EXPECT_GT(at(v, "created").as_int(), 1600000000);
  const json::Array& choices = at(v, "choices").as_array();
  ASSERT_EQ(choices.size(), 1u);
  EXPECT_EQ(at(choices[0], "index").as_int(), 0);
  EXPECT_EQ(at(at(choices[0], "message"), "role").as_string(), "assistant");
  EXPECT_EQ(at(at(choices[0], "message"), "content").as_string(), ref.text);
  EXPECT_EQ(at(choices[0], "finish_reason").as_string(), "length");
  const json::Value& usage = at(v, "usage");
  EXPECT_EQ(at(usage, "prompt_tokens").as_int(), static_cast<int64_t>(prompt.size()));
  EXPECT_EQ(at(usage, "completion_tokens").as_int(), 12);
  EXPECT_EQ(at(usage, "total_tokens").as_int(), static_cast<int64_t>(prompt.size()) + 12);

  server_->stop();  // the log record is written after the answer; stop() joins the workers
  std::lock_guard<std::mutex> lock(records_mu_);
  ASSERT_EQ(records_.size(), 1u);
  EXPECT_EQ(records_[0].path, "/v1/chat/completions");
  EXPECT_EQ(records_[0].status, 200);
  EXPECT_TRUE(records_[0].generated);
  EXPECT_EQ(records_[0].n_generated, 12u);
  EXPECT_EQ(records_[0].stop_reason, StopReason::max_tokens);
  EXPECT_NE(server::format_record(records_[0]).find("POST /v1/chat/completions 200 127.0.0.1:"), std::string::npos);
}

TEST_F(ServeE2E, StreamSendsRoleDeltasFinishUsageAndDone) {
  std::vector<int32_t> prompt;
  const GenerateResult ref = reference(request("tell me more", 10, 9, 0.9f), &prompt);
  serve();
  auto res = post(body("tell me more", 10, 9, 0.9, R"(,"stream":true,"stream_options":{"include_usage":true})"));
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200) << res->body;
  EXPECT_EQ(res->get_header_value("Content-Type"), "text/event-stream");
  const std::vector<std::string> events = sse_data(res->body);
  ASSERT_GE(events.size(), 5u);  // role, >= 1 content, finish, usage, [DONE]
  EXPECT_EQ(events.back(), "[DONE]");

  const json::Value first = parse(events[0]);
  const std::string id = at(first, "id").as_string();
  EXPECT_EQ(id.rfind("chatcmpl-", 0), 0u);
  EXPECT_EQ(at(first, "object").as_string(), "chat.completion.chunk");
  EXPECT_EQ(at(at(at(first, "choices").as_array()[0], "delta"), "role").as_string(), "assistant");
  EXPECT_TRUE(at(first, "usage").is_null());

  std::string text;
  for (size_t i = 1; i + 3 < events.size(); ++i) {
    const json::Value c = parse(events[i]);
    EXPECT_EQ(at(c, "id").as_string(), id);
    const json::Value& choice = at(c, "choices").as_array()[0];
    EXPECT_TRUE(at(choice, "finish_reason").is_null());
    text += at(at(choice, "delta"), "content").as_string();
  }
  EXPECT_EQ(text, ref.text);

  const json::Value fin = parse(events[events.size() - 3]);
  EXPECT_EQ(at(fin, "id").as_string(), id);
  EXPECT_EQ(at(at(fin, "choices").as_array()[0], "finish_reason").as_string(), "length");
  EXPECT_TRUE(at(at(fin, "choices").as_array()[0], "delta").as_object().empty());

  const json::Value usage = parse(events[events.size() - 2]);
  EXPECT_TRUE(at(usage, "choices").as_array().empty());
  EXPECT_EQ(at(at(usage, "usage"), "prompt_tokens").as_int(), static_cast<int64_t>(prompt.size()));
  EXPECT_EQ(at(at(usage, "usage"), "completion_tokens").as_int(), 10);
  EXPECT_EQ(at(at(usage, "usage"), "total_tokens").as_int(), static_cast<int64_t>(prompt.size()) + 10);
}

TEST_F(ServeE2E, StreamWithoutUsageHasNoUsageKey) {
  serve();
  auto res = post(body("hi", 3, 1, 0.0, R"(,"stream":true)"));
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200);
  const std::vector<std::string> events = sse_data(res->body);
  ASSERT_GE(events.size(), 4u);
  EXPECT_EQ(events.back(), "[DONE]");
  for (size_t i = 0; i + 1 < events.size(); ++i) EXPECT_EQ(parse(events[i]).find("usage"), nullptr) << events[i];
  EXPECT_EQ(at(at(parse(events[events.size() - 2]), "choices").as_array()[0], "finish_reason").as_string(), "length");
}

TEST_F(ServeE2E, StopStringEndsTheAnswerBeforeIt) {
  const GenerateResult ref = reference(request("stop me", 16, 3, 0.0f));
  ASSERT_GE(ref.text.size(), 8u);
  const std::string stop = ref.text.substr(ref.text.size() / 2, 3);
  const size_t at_pos = ref.text.find(stop);
  serve();
  for (const std::string& spelling : {"\"" + stop + "\"", "[\"zzzz\",\"" + stop + "\"]"}) {
    auto res = post(body("stop me", 16, 3, 0.0, ",\"stop\":" + spelling));
    ASSERT_TRUE(res);
    ASSERT_EQ(res->status, 200) << res->body;
    const json::Value v = parse(res->body);
    const json::Value& choice = at(v, "choices").as_array()[0];
    EXPECT_EQ(at(at(choice, "message"), "content").as_string(), ref.text.substr(0, at_pos)) << spelling;
    EXPECT_EQ(at(choice, "finish_reason").as_string(), "stop");
  }
}

TEST_F(ServeE2E, EndOfGenerationIsStop) {
  serve({}, true, eog_model_);
  auto res = post(body("anything", 50, 1, 0.5));
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200) << res->body;
  const json::Value v = parse(res->body);
  const json::Value& choice = at(v, "choices").as_array()[0];
  EXPECT_EQ(at(at(choice, "message"), "content").as_string(), "");
  EXPECT_EQ(at(choice, "finish_reason").as_string(), "stop");
  EXPECT_EQ(at(at(v, "usage"), "completion_tokens").as_int(), 0);
  EXPECT_EQ(at(v, "model").as_string(), "tiny-eog");
}

TEST_F(ServeE2E, FullContextIsLengthAndAnOverlongPromptIs500) {
  serve({}, true, model_, 48);
  // No max_tokens: OpenAI's default runs until the context is full.
  auto res = post(R"({"messages":[{"role":"user","content":"go"}],"temperature":0})");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200) << res->body;
  const json::Value v = parse(res->body);
  EXPECT_EQ(at(at(v, "choices").as_array()[0], "finish_reason").as_string(), "length");
  // The cache holds 48 tokens; the last sampled one is answered without entering it.
  EXPECT_EQ(at(at(v, "usage"), "total_tokens").as_int(), 48 + 1);

  const std::string long_text(400, 'a');
  res = post(R"({"messages":[{"role":"user","content":")" + long_text + R"("}]})");
  expect_error(res, 500, "server_error");
  EXPECT_NE(res->body.find("context"), std::string::npos) << res->body;
}

TEST_F(ServeE2E, BadBodiesAre400WithTheField) {
  serve();
  struct Case {
    std::string body;
    std::string param;  // "" when there is no field to name
  };
  const std::vector<Case> cases{
      {"", ""},
      {"{", ""},
      {"[1,2]", ""},
      {R"({"messages":[{"role":"user","content":"x"}],})", ""},
      {R"({"model":"m"})", "messages"},
      {R"({"messages":{}})", "messages"},
      {R"({"messages":[]})", "messages"},
      {R"({"messages":["hi"]})", "messages[0]"},
      {R"({"messages":[{"content":"hi"}]})", "messages[0].role"},
      {R"({"messages":[{"role":"wizard","content":"hi"}]})", "messages[0].role"},
      {R"({"messages":[{"role":"user","content":5}]})", "messages[0].content"},
      {R"({"messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"x"}}]}]})",
       "messages[0].content[0].type"},
      {R"({"messages":[{"role":"user","content":"x"}],"n":2})", "n"},
      {R"({"messages":[{"role":"user","content":"x"}],"temperature":"hot"})", "temperature"},
      {R"({"messages":[{"role":"user","content":"x"}],"temperature":3})", "temperature"},
      {R"({"messages":[{"role":"user","content":"x"}],"top_p":1.5})", "top_p"},
      {R"({"messages":[{"role":"user","content":"x"}],"max_tokens":0})", "max_tokens"},
      {R"({"messages":[{"role":"user","content":"x"}],"max_completion_tokens":2.5})", "max_completion_tokens"},
      {R"({"messages":[{"role":"user","content":"x"}],"stream":"yes"})", "stream"},
      {R"({"messages":[{"role":"user","content":"x"}],"stop":[1]})", "stop"},
      {R"({"messages":[{"role":"user","content":"x"}],"seed":1.5})", "seed"},
      {R"({"messages":[{"role":"user","content":"x"}],"model":7})", "model"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.body);
    expect_error(post(c.body), 400, "invalid_request_error", c.param);
  }
}

TEST_F(ServeE2E, UnknownRouteIs404WrongMethodIs405) {
  serve();
  expect_error(client_->Get("/v1/nope"), 404, "invalid_request_error");
  expect_error(client_->Post("/v1/completions", "{}", "application/json"), 404, "invalid_request_error");
  auto res = client_->Get("/v1/chat/completions");
  expect_error(res, 405, "invalid_request_error");
  EXPECT_EQ(res->get_header_value("Allow"), "POST");
}

TEST_F(ServeE2E, ApiKeyIsRequiredWhenSet) {
  ServerOptions o;
  o.api_key = "sk-test-123";
  serve(o);
  expect_error(client_->Get("/v1/models"), 401, "authentication_error");
  expect_error(client_->Get("/v1/models", {{"Authorization", "Bearer sk-test-124"}}), 401, "authentication_error");
  expect_error(post(body("x", 2, 1, 0.0), {{"Authorization", "sk-test-123"}}), 401, "authentication_error");
  auto res = client_->Get("/v1/models", {{"Authorization", "Bearer sk-test-123"}});
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  res = post(body("x", 2, 1, 0.0), {{"Authorization", "Bearer sk-test-123"}});
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200) << res->body;
  res = client_->Get("/health");  // liveness needs no key
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
}

TEST_F(ServeE2E, LoadingAnswers503UntilReady) {
  serve({}, /*ready=*/false);
  expect_error(client_->Get("/v1/models"), 503, "service_unavailable_error");
  auto res = post(body("x", 2, 1, 0.0));
  expect_error(res, 503, "service_unavailable_error");
  EXPECT_EQ(res->get_header_value("Retry-After"), "2");
  res = client_->Get("/health");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 503);
  EXPECT_EQ(res->body, R"({"status":"loading"})");
  server_->set_ready("tiny-chat");
  res = post(body("x", 2, 1, 0.0));
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200) << res->body;
}

}  // namespace
}  // namespace alap
