// Tests for app/server/http_server.{h,cpp} over HTTP on 127.0.0.1 with FakeEngine (a slow,
// scripted engine): the fair queue across real connections, 503 when the line is full, a client
// that leaves cancels its generation (streaming or queued), shutdown, engine errors, failed load.
// The real engine's answers are covered by tests/e2e/serve_e2e_test.cpp.
#include "app/server/http_server.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "core/engine/fake_engine.h"
#include "core/store/json.h"

namespace alap::server {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

bool wait_until(const std::function<bool()>& cond, std::chrono::milliseconds limit = 5000ms) {
  const auto deadline = Clock::now() + limit;
  while (!cond()) {
    if (Clock::now() > deadline) return false;
    std::this_thread::sleep_for(1ms);
  }
  return true;
}

std::string chat_body(const std::string& user, bool stream) {
  return R"({"model":"fake","messages":[{"role":"user","content":")" + user + R"("}],"stream":)" +
         (stream ? "true" : "false") + "}";
}

class ServerTest : public ::testing::Test {
 protected:
  void start(FakeEngineScript script, size_t max_queue = 4) {
    engine_ = std::make_unique<FakeEngine>(std::move(script));
    engine_->load("fake.gguf", {});
    ServerOptions o;
    o.port = 0;
    o.max_queue = max_queue;
    o.queue_poll = 20ms;
    o.on_request = [this](const RequestRecord& r) {
      std::lock_guard<std::mutex> lock(mu_);
      records_.push_back(r);
    };
    server_ = std::make_unique<ChatServer>(*engine_, o);
    port_ = server_->start();
    server_->set_ready("fake");
  }
  void TearDown() override {
    if (server_) server_->stop();
  }
  std::unique_ptr<httplib::Client> client() {
    auto c = std::make_unique<httplib::Client>("127.0.0.1", port_);
    c->set_read_timeout(20, 0);
    return c;
  }
  httplib::Result post(const std::string& body) {
    return client()->Post("/v1/chat/completions", body, "application/json");
  }
  std::vector<RequestRecord> records() {
    std::lock_guard<std::mutex> lock(mu_);
    return records_;
  }
  // The record of the chat request whose generation or error matches.
  bool has_record(const std::function<bool(const RequestRecord&)>& pred) {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& r : records_) {
      if (pred(r)) return true;
    }
    return false;
  }

  std::unique_ptr<FakeEngine> engine_;
  std::unique_ptr<ChatServer> server_;
  int port_ = 0;
  std::mutex mu_;
  std::vector<RequestRecord> records_;
};

TEST_F(ServerTest, RequestsTakeTurnsInArrivalOrderAndTheFullLineIs503) {
  FakeEngineScript s;
  s.reply = "abcdefgh";
  s.piece_bytes = 1;
  s.piece_delay = 25ms;  // 200 ms a request
  start(s, /*max_queue=*/2);

  std::vector<int> statuses(3, 0);
  std::vector<std::thread> threads;
  const char* names[] = {"A", "B", "C"};
  for (int i = 0; i < 3; ++i) {
    threads.emplace_back([this, i, &statuses, &names] {
      auto res = post(chat_body(names[i], i == 1));  // B streams: both kinds share the line
      statuses[static_cast<size_t>(i)] = res ? res->status : -1;
    });
    // Arrival order is made certain by waiting until this one is running / in line.
    const bool placed = wait_until([&] { return i == 0 ? server_->busy() : server_->n_waiting() == static_cast<size_t>(i); });
    EXPECT_TRUE(placed) << names[i];
    if (!placed) break;
  }
  // One running and two waiting: the fourth is refused at once.
  const auto t0 = Clock::now();
  auto refused = post(chat_body("D", false));
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->status, 503);
  EXPECT_LT(Clock::now() - t0, 150ms);
  EXPECT_EQ(refused->get_header_value("Retry-After"), "1");
  const json::Value err = json::parse(refused->body);
  EXPECT_EQ(err.find("error")->find("code")->as_string(), "queue_full");
  EXPECT_EQ(err.find("error")->find("type")->as_string(), "service_unavailable_error");

  for (auto& t : threads) t.join();
  EXPECT_EQ(statuses, (std::vector<int>{200, 200, 200}));
  const auto& reqs = engine_->requests();
  ASSERT_EQ(reqs.size(), 3u);
  EXPECT_EQ(reqs[0].messages.back().content, "A");
  EXPECT_EQ(reqs[1].messages.back().content, "B");
  EXPECT_EQ(reqs[2].messages.back().content, "C");
}

TEST_F(ServerTest, StreamingClientThatLeavesCancelsTheGeneration) {
  FakeEngineScript s;
  s.reply = std::string(400, 'x');
  s.piece_bytes = 1;
  s.piece_delay = 5ms;  // 2 s if nobody cancels
  start(s);

  httplib::Request req;
  req.method = "POST";
  req.path = "/v1/chat/completions";
  req.set_header("Content-Type", "application/json");
  req.body = chat_body("go", true);
  size_t received = 0;
  req.content_receiver = [&](const char*, size_t n, uint64_t, uint64_t) {
    received += n;
    return received < 1000;  // a few chunks, then hang up
  };
  const auto t0 = Clock::now();
  auto res = client()->send(req);
  EXPECT_FALSE(res);  // the client cancelled
  ASSERT_TRUE(wait_until([&] {
    return has_record([](const RequestRecord& r) { return r.stream && r.generated; });
  }));
  EXPECT_LT(Clock::now() - t0, 1500ms);
  const std::vector<RequestRecord> recs = records();
  ASSERT_EQ(recs.size(), 1u);
  EXPECT_EQ(recs[0].stop_reason, StopReason::cancelled);
  EXPECT_LT(recs[0].n_generated, 300u);
  EXPECT_NE(recs[0].error.find("client left"), std::string::npos);
  EXPECT_FALSE(server_->busy());
}

TEST_F(ServerTest, QueuedStreamThatLeavesGivesUpItsPlace) {
  FakeEngineScript s;
  s.reply = std::string(100, 'y');
  s.piece_bytes = 1;
  s.piece_delay = 5ms;  // 500 ms for the request holding the engine
  start(s);

  std::thread first([this] { post(chat_body("first", false)); });
  ASSERT_TRUE(wait_until([&] { return server_->busy(); }));

  httplib::Request req;
  req.method = "POST";
  req.path = "/v1/chat/completions";
  req.set_header("Content-Type", "application/json");
  req.body = chat_body("second", true);
  std::string got;
  req.content_receiver = [&](const char* d, size_t n, uint64_t, uint64_t) {
    got.append(d, n);
    return false;  // leave at the first bytes (the queue's keep-alive comment)
  };
  EXPECT_FALSE(client()->send(req));
  EXPECT_EQ(got.rfind(": waiting", 0), 0u) << got;
  // The next keep-alive write fails and the ticket leaves the line while "first" still runs.
  EXPECT_TRUE(wait_until([&] { return server_->n_waiting() == 0; }, 400ms));
  EXPECT_TRUE(server_->busy());
  first.join();
  ASSERT_EQ(engine_->requests().size(), 1u);  // "second" never reached the engine
}

TEST_F(ServerTest, StopCancelsTheRunningStreamAndRefusesTheQueued) {
  FakeEngineScript s;
  s.reply = std::string(2000, 'z');
  s.piece_bytes = 1;
  s.piece_delay = 5ms;  // 10 s if not cancelled
  start(s);

  std::string stream_body;
  int stream_status = 0;
  std::thread streamer([&] {
    auto res = post(chat_body("long", true));
    if (res) {
      stream_status = res->status;
      stream_body = res->body;
    }
  });
  ASSERT_TRUE(wait_until([&] { return server_->busy(); }));
  int queued_status = 0;
  std::string queued_body;
  std::thread queued([&] {
    auto res = post(chat_body("queued", false));
    if (res) {
      queued_status = res->status;
      queued_body = res->body;
    }
  });
  ASSERT_TRUE(wait_until([&] { return server_->n_waiting() == 1; }));
  std::this_thread::sleep_for(50ms);

  const auto t0 = Clock::now();
  server_->stop();
  EXPECT_LT(Clock::now() - t0, 3s);
  streamer.join();
  queued.join();
  EXPECT_EQ(stream_status, 200);
  // The cut stream ends with an error event, not a finish chunk that would pass it off as whole.
  const std::string tail = "data: " R"({"error":{"message":"the server is shutting down; the answer was cut short",)"
                           R"("type":"service_unavailable_error","param":null,"code":"shutting_down"}})" "\n\n";
  ASSERT_GE(stream_body.size(), tail.size());
  EXPECT_EQ(stream_body.substr(stream_body.size() - tail.size()), tail);
  EXPECT_NE(stream_body.find(R"({"content":"z"})"), std::string::npos);  // some text came first
  EXPECT_EQ(stream_body.find("finish_reason\":\""), std::string::npos);
  EXPECT_EQ(stream_body.find("[DONE]"), std::string::npos);
  EXPECT_EQ(queued_status, 503);
  EXPECT_NE(queued_body.find("shutting_down"), std::string::npos);
  EXPECT_EQ(engine_->requests().size(), 1u);  // "queued" never reached the engine
}

TEST_F(ServerTest, EngineErrorIs500OrAnErrorEvent) {
  FakeEngineScript s;
  s.fail_generate = "the prompt does not fit";
  start(s);
  auto res = post(chat_body("x", false));
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 500);
  EXPECT_EQ(res->body,
            R"({"error":{"message":"the prompt does not fit","type":"server_error","param":null,"code":"engine_error"}})");

  res = post(chat_body("x", true));
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);  // sent before the engine ran
  const std::string tail =
      "data: " R"({"error":{"message":"the prompt does not fit","type":"server_error","param":null,"code":"engine_error"}})"
      "\n\n";
  ASSERT_GE(res->body.size(), tail.size());
  EXPECT_EQ(res->body.substr(res->body.size() - tail.size()), tail);
  EXPECT_EQ(res->body.find("[DONE]"), std::string::npos);
  EXPECT_EQ(res->body.rfind("data: {", 0), 0u);  // the role chunk came first
}

TEST_F(ServerTest, FailedLoadIs503WithTheReason) {
  start({});
  server_->set_failed("bad magic in x.gguf");
  auto res = post(chat_body("x", false));
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 503);
  EXPECT_NE(res->body.find("the model failed to load: bad magic in x.gguf"), std::string::npos);
  EXPECT_NE(res->body.find("model_load_failed"), std::string::npos);
}

TEST_F(ServerTest, BodyLimitIs413AndStartFailsOnABusyPort) {
  start({});
  auto res = post(std::string(9u << 20, ' '));
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 413);
  EXPECT_NE(res->body.find("too large"), std::string::npos);

  FakeEngine other;
  ServerOptions o;
  o.port = port_;  // taken by the first server
  ChatServer second(other, o);
  EXPECT_THROW(second.start(), ServerError);
}

}  // namespace
}  // namespace alap::server
