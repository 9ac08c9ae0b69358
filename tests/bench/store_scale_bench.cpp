// store_scale_bench: fills a temporary database through core/store with 10,000 conversations and
// 200,000 messages (one of them 1,000 messages long), then times the median of several runs of
// what the window does on start and on opening a conversation. Figures go to docs/bench/store.md.
// Not a test (ctest never runs it); usage: store_scale_bench [runs=7] [dir=/tmp].
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <string>
#include <unistd.h>
#include <vector>

#include "core/store/store.h"
#ifdef ALAP_BENCH_APP
#include "models/conversation_list_model.h"
#endif

namespace {

using Clock = std::chrono::steady_clock;

constexpr int kConversations = 10'000;
constexpr int kMessages = 200'000;
constexpr int kBigConversation = 1'000;  // messages in the one long conversation

// A message text of about 200 bytes, English or Bengali, different for every message.
std::string message_text(int n) {
  if (n % 3 == 0)
    return "বার্তা " + std::to_string(n) + ": নদীর ধারে একটি পুরনো বটগাছ, তার নিচে বিকেলের আড্ডা আর চায়ের কাপ।";
  return "Message " + std::to_string(n) + ": the keeper wrote down the wind, the swell and the colour of the sky "
         "before sunset, and the boats that passed the island that day.";
}

// One conversation in the import format of Store::import_json (one transaction per conversation).
std::string conversation_json(int index, int n_messages, int& next_message) {
  std::string j = R"({"format":"alap-conversation","version":1,"title":"Conversation )" + std::to_string(index) +
                  R"(","system_prompt":"","created_at":)" + std::to_string(1'700'000'000'000LL + index * 1000LL) +
                  R"(,"messages":[)";
  for (int m = 0; m < n_messages; ++m) {
    if (m) j += ',';
    j += R"({"role":")";
    j += m % 2 ? "assistant" : "user";
    j += R"(","content":")" + message_text(next_message++) + R"(","status":"complete","created_at":)" +
         std::to_string(1'700'000'000'000LL + index * 1000LL + m) + R"(,"model":"bench.gguf"})";
  }
  return j + "]}";
}

double median_ms(int runs, const std::function<void()>& fn) {
  std::vector<double> ms;
  for (int i = 0; i < runs; ++i) {
    const auto t0 = Clock::now();
    fn();
    ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const int runs = argc > 1 ? std::max(1, std::atoi(argv[1])) : 7;
  const std::filesystem::path dir = std::filesystem::path(argc > 2 ? argv[2] : "/tmp") /
                                    ("alap-store-bench-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::filesystem::path db = dir / "history.sqlite";
  try {
    alap::store::Id big = 0;
    const auto fill0 = Clock::now();
    {
      alap::store::Store store = alap::store::Store::open(db);
      int next_message = 0;
      // The long conversation first (so it is the oldest: the list never puts it on top by chance).
      big = store.import_json(conversation_json(0, kBigConversation, next_message));
      const int rest = kMessages - kBigConversation;
      const int per = rest / (kConversations - 1);
      int extra = rest - per * (kConversations - 1);
      for (int c = 1; c < kConversations; ++c) {
        const int n = per + (extra > 0 ? 1 : 0);
        if (extra > 0) --extra;
        store.import_json(conversation_json(c, n, next_message));
      }
      if (next_message != kMessages) {
        std::fprintf(stderr, "store_scale_bench: wrote %d messages, expected %d\n", next_message, kMessages);
        return 1;
      }
    }
    const double fill_s = std::chrono::duration<double>(Clock::now() - fill0).count();
    std::printf("filled %d conversations, %d messages in %.1f s (%.0f MB)\n", kConversations, kMessages, fill_s,
                double(std::filesystem::file_size(db)) / 1e6);

    size_t n_listed = 0, n_loaded = 0;
    const double open_ms = median_ms(runs, [&] { alap::store::Store s = alap::store::Store::open(db); });
    alap::store::Options no_check;
    no_check.quick_check = false;
    const double open_fast_ms = median_ms(runs, [&] { alap::store::Store s = alap::store::Store::open(db, no_check); });
    alap::store::Store store = alap::store::Store::open(db);
    const double list_ms = median_ms(runs, [&] { n_listed = store.list_conversations().size(); });
    const double big_ms = median_ms(runs, [&] { n_loaded = store.list_messages(big).size(); });
#ifdef ALAP_BENCH_APP
    // The sidebar's model: a fresh list handed over (a reset), then the first screen's rows read.
    double model_ms = 0.0;
    {
      const std::vector<alap::store::Conversation> rows = store.list_conversations();
      model_ms = median_ms(runs, [&] {
        alap::app::ConversationListModel model;
        model.setConversations(rows);
        for (int r = 0; r < 40 && r < model.rowCount(); ++r)
          for (int role : model.roleNames().keys()) (void)model.data(model.index(r), role);
      });
    }
#endif
    const double search_ms = median_ms(runs, [&] { (void)store.search("sunset"); });
    const double search_bn_ms = median_ms(runs, [&] { (void)store.search("বটগাছ"); });
    size_t n_rare = 0;  // a word of one message (its number)
    const double search_rare_ms = median_ms(runs, [&] { n_rare = store.search("199999").size(); });

    std::printf("median of %d runs\n", runs);
    std::printf("  Store::open (migrations check, quick_check)       %8.2f ms\n", open_ms);
    std::printf("  Store::open without quick_check                   %8.2f ms\n", open_fast_ms);
    std::printf("  list_conversations (%zu rows)                  %8.2f ms\n", n_listed, list_ms);
    std::printf("  list_messages of the %zu-message conversation    %8.2f ms\n", n_loaded, big_ms);
#ifdef ALAP_BENCH_APP
    std::printf("  ConversationListModel: set %zu rows, read 40      %8.2f ms\n", n_listed, model_ms);
#endif
    std::printf("  search \"sunset\" (50 hits)                        %8.2f ms\n", search_ms);
    std::printf("  search \"বটগাছ\" (50 hits)                       %8.2f ms\n", search_bn_ms);
    std::printf("  search \"199999\" (%zu hit)                         %8.2f ms\n", n_rare, search_rare_ms);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "store_scale_bench: %s\n", e.what());
    std::filesystem::remove_all(dir);
    return 1;
  }
  std::filesystem::remove_all(dir);
  return 0;
}
