// Tests of core/store/store: schema and migrations, CRUD, soft delete, cascade, FTS5 search in
// English and Bengali, export/import, corrupt-file refusal and two writers on one file.
#include "core/store/store.h"

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <thread>

namespace fs = std::filesystem;
using namespace alap::store;

namespace {

constexpr int64_t kT0 = 1700000000000;  // 2023-11-14 22:13:20 UTC

// A fresh directory per test, removed afterwards.
class StoreTest : public ::testing::Test {
protected:
    void SetUp() override {
        const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
        dir_ = fs::temp_directory_path() /
               ("alap_store_" + std::to_string(::getpid()) + "_" + info->test_suite_name() + "_" + info->name());
        fs::remove_all(dir_);
        fs::create_directories(dir_);
        db_path_ = dir_ / "history.db";
    }
    void TearDown() override { fs::remove_all(dir_); }

    // A clock that starts at kT0 and advances 1 s per reading, so every write has a distinct time.
    Options opts() {
        Options o;
        o.clock = [this] { return kT0 + 1000 * ticks_++; };
        return o;
    }
    Store open() { return Store::open(db_path_, opts()); }

    fs::path dir_;
    fs::path db_path_;
    std::atomic<int64_t> ticks_{0};
};

int64_t raw_int(const fs::path& path, const char* sql) {
    sqlite3* db = nullptr;
    EXPECT_EQ(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE, nullptr), SQLITE_OK);
    sqlite3_stmt* st = nullptr;
    EXPECT_EQ(sqlite3_prepare_v2(db, sql, -1, &st, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
    int64_t v = -1;
    if (sqlite3_step(st) == SQLITE_ROW) v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    sqlite3_close(db);
    return v;
}

void raw_exec(const fs::path& path, const char* sql) {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(db, sql, nullptr, nullptr, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
    sqlite3_close(db);
}

std::string read_bytes(const fs::path& p) {
    std::ifstream f(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(f), {});
}

void write_bytes(const fs::path& p, const std::string& bytes) {
    std::ofstream f(p, std::ios::binary | std::ios::trunc);
    f << bytes;
}

ErrorKind kind_of(const std::function<void()>& fn) {
    try {
        fn();
    } catch (const StoreError& e) {
        return e.kind();
    }
    ADD_FAILURE() << "no StoreError thrown";
    return ErrorKind::sql;
}

std::vector<Id> hit_ids(const std::vector<SearchHit>& hits) {
    std::vector<Id> ids;
    for (const auto& h : hits) ids.push_back(h.message_id);
    return ids;
}

NewMessage msg(const char* role, const char* content, MessageStatus status = MessageStatus::complete,
               const char* model = "") {
    NewMessage m;
    m.role = role;
    m.content = content;
    m.status = status;
    m.model = model;
    return m;
}

}  // namespace

TEST_F(StoreTest, MigratesFromEmptyAndReopenIsIdempotent) {
    Id c;
    {
        Store s = open();
        c = s.create_conversation("first");
    }
    EXPECT_EQ(raw_int(db_path_, "PRAGMA user_version"), Store::schema_version());
    EXPECT_EQ(Store::schema_version(), 1);
    EXPECT_EQ(raw_int(db_path_, "SELECT count(*) FROM sqlite_master WHERE name IN ('conversations', 'messages', "
                                "'downloads', 'settings', 'messages_fts', 'messages_by_conversation', "
                                "'conversations_by_list_order', 'messages_fts_insert', 'messages_fts_delete', "
                                "'messages_fts_update')"),
              10);
    EXPECT_EQ(raw_int(db_path_, "SELECT journal_mode = 'wal' FROM pragma_journal_mode"), 1);
    for (int i = 0; i < 2; ++i) {
        Store s = open();
        ASSERT_EQ(s.list_conversations().size(), 1u);
        EXPECT_EQ(s.list_conversations()[0].id, c);
    }
    EXPECT_EQ(raw_int(db_path_, "PRAGMA user_version"), Store::schema_version());
    // A zero-byte file is an empty database and is migrated too.
    fs::path empty = dir_ / "empty.db";
    write_bytes(empty, "");
    EXPECT_NO_THROW(Store::open(empty, opts()));
    EXPECT_EQ(raw_int(empty, "PRAGMA user_version"), Store::schema_version());
}

TEST_F(StoreTest, NewerSchemaIsRefusedAndLeftUntouched) {
    { Store s = open(); }
    std::string set = "PRAGMA user_version = " + std::to_string(Store::schema_version() + 1);
    raw_exec(db_path_, set.c_str());
    std::string before = read_bytes(db_path_);
    try {
        Store::open(db_path_, opts());
        FAIL() << "opened a newer database";
    } catch (const StoreError& e) {
        EXPECT_EQ(e.kind(), ErrorKind::too_new);
        EXPECT_NE(std::string(e.what()).find("newer than this Alap understands"), std::string::npos) << e.what();
    }
    EXPECT_EQ(kind_of([&] { Store::open_read_only(db_path_, opts()); }), ErrorKind::too_new);
    EXPECT_EQ(read_bytes(db_path_), before);
}

TEST_F(StoreTest, ConversationCrudAndListOrder) {
    Store s = open();
    Id a = s.create_conversation("alpha", "be brief", "/m/a.gguf", R"({"temp":0.7})");
    Id b = s.create_conversation("beta");
    Id c = s.create_conversation("gamma");
    auto ids = [&] {
        std::vector<Id> v;
        for (const auto& x : s.list_conversations()) v.push_back(x.id);
        return v;
    };
    EXPECT_EQ(ids(), (std::vector<Id>{c, b, a}));  // most recently updated first
    s.append_message(a, msg("user", "hi"));         // activity moves alpha to the top
    EXPECT_EQ(ids(), (std::vector<Id>{a, c, b}));
    s.set_pinned(b, true);
    EXPECT_EQ(ids(), (std::vector<Id>{b, a, c}));  // pinned first
    s.rename_conversation(a, "আলাপ ১");
    s.set_system_prompt(a, "তুমি সাহায্যকারী");
    s.set_conversation_model(a, "/m/b.gguf", R"({"cache":"k8"})");
    auto got = s.get_conversation(a);
    ASSERT_TRUE(got);
    EXPECT_EQ(got->title, "আলাপ ১");
    EXPECT_EQ(got->system_prompt, "তুমি সাহায্যকারী");
    EXPECT_EQ(got->model_path, "/m/b.gguf");
    EXPECT_EQ(got->settings_json, R"({"cache":"k8"})");
    EXPECT_EQ(got->created_at, kT0);
    EXPECT_FALSE(got->pinned);
    EXPECT_FALSE(got->deleted_at);
    EXPECT_TRUE(s.get_conversation(b)->pinned);
    EXPECT_FALSE(s.get_conversation(999));
    EXPECT_EQ(kind_of([&] { s.rename_conversation(999, "x"); }), ErrorKind::not_found);
    EXPECT_EQ(kind_of([&] { s.create_conversation("bad", "", "", "[1]"); }), ErrorKind::invalid);
    EXPECT_EQ(kind_of([&] { s.create_conversation("\xFF"); }), ErrorKind::invalid);
}

TEST_F(StoreTest, SoftDeleteUndoAndPurge) {
    Store s = open();
    Id a = s.create_conversation("a");
    Id b = s.create_conversation("b");
    Id m = s.append_message(a, msg("user", "searchable words here"));
    s.soft_delete_conversation(a);
    ASSERT_EQ(s.list_conversations().size(), 1u);
    EXPECT_EQ(s.list_conversations()[0].id, b);
    ASSERT_EQ(s.list_deleted_conversations().size(), 1u);
    int64_t deleted_at = *s.get_conversation(a)->deleted_at;
    EXPECT_GT(deleted_at, kT0);
    EXPECT_TRUE(s.search("searchable").empty());  // hidden while deleted
    s.restore_conversation(a);                     // undo
    EXPECT_EQ(s.list_conversations().size(), 2u);
    EXPECT_FALSE(s.get_conversation(a)->deleted_at);
    EXPECT_EQ(hit_ids(s.search("searchable")), std::vector<Id>{m});
    ASSERT_EQ(s.list_messages(a).size(), 1u);  // messages survive a soft delete
    s.soft_delete_conversation(a);
    s.soft_delete_conversation(b);
    EXPECT_EQ(s.purge_deleted_before(deleted_at), 0);  // both deleted later than that
    EXPECT_EQ(s.purge_deleted_before(kT0 + 1000000), 2);
    EXPECT_FALSE(s.get_conversation(a));
    EXPECT_TRUE(s.list_deleted_conversations().empty());
    EXPECT_EQ(kind_of([&] { s.purge_conversation(a); }), ErrorKind::not_found);
}

TEST_F(StoreTest, PurgeCascadesToMessagesAndSearchIndex) {
    {
        Store s = open();
        Id a = s.create_conversation("a");
        Id b = s.create_conversation("b");
        s.append_message(a, msg("user", "cascade me please"));
        s.append_message(a, msg("assistant", "cascade done"));
        Id keep = s.append_message(b, msg("user", "cascade keeps this one"));
        s.purge_conversation(a);
        EXPECT_TRUE(s.list_messages(a).empty());
        EXPECT_EQ(hit_ids(s.search("cascade")), std::vector<Id>{keep});
    }
    EXPECT_EQ(raw_int(db_path_, "SELECT count(*) FROM messages"), 1);
    EXPECT_EQ(raw_int(db_path_, "SELECT count(*) FROM conversations"), 1);
    raw_exec(db_path_, "INSERT INTO messages_fts(messages_fts, rank) VALUES ('integrity-check', 1)");
}

TEST_F(StoreTest, MessagesAppendUpdateAndTruncate) {
    Store s = open();
    Id c = s.create_conversation("chat");
    Id u1 = s.append_message(c, msg("user", "question"));
    NewMessage reply = msg("assistant", "", MessageStatus::streaming, "tiny-llama");
    reply.settings_json = R"({"temperature":0.8,"cache":"k8"})";
    Id a1 = s.append_message(c, reply);
    s.update_message(a1, "partial", MessageStatus::streaming);
    s.update_message(a1, "partial answer", MessageStatus::stopped);
    s.set_message_stats(a1, R"({"tokens":2,"tokens_per_s":41.5,"ttft_ms":120})");
    Message m = *s.get_message(a1);
    EXPECT_EQ(m.content, "partial answer");
    EXPECT_EQ(m.status, MessageStatus::stopped);
    EXPECT_EQ(m.model, "tiny-llama");
    EXPECT_EQ(m.role, "assistant");
    EXPECT_EQ(m.conversation_id, c);
    EXPECT_EQ(m.settings_json, R"({"temperature":0.8,"cache":"k8"})");
    EXPECT_EQ(m.stats_json, R"({"tokens":2,"tokens_per_s":41.5,"ttft_ms":120})");
    // A finished message cannot change status or go back to streaming; an edit keeps its status.
    EXPECT_EQ(kind_of([&] { s.update_message(a1, "x", MessageStatus::complete); }), ErrorKind::invalid);
    EXPECT_EQ(kind_of([&] { s.update_message(a1, "x", MessageStatus::streaming); }), ErrorKind::invalid);
    s.update_message(u1, "edited question", MessageStatus::complete);
    Id u2 = s.append_message(c, msg("user", "second"));
    Id a2 = s.append_message(c, msg("assistant", "second answer", MessageStatus::error));
    std::vector<Message> all = s.list_messages(c);
    ASSERT_EQ(all.size(), 4u);
    EXPECT_EQ((std::vector<Id>{all[0].id, all[1].id, all[2].id, all[3].id}), (std::vector<Id>{u1, a1, u2, a2}));
    EXPECT_EQ(all[0].content, "edited question");
    // Regenerate from u2, then edit-and-resend from u1.
    EXPECT_EQ(s.delete_messages_after(u2), 1);
    EXPECT_EQ(s.list_messages(c).size(), 3u);
    EXPECT_EQ(s.delete_messages_after(u1), 2);
    ASSERT_EQ(s.list_messages(c).size(), 1u);
    EXPECT_EQ(s.list_messages(c)[0].id, u1);
    EXPECT_FALSE(s.get_message(a2));
    EXPECT_EQ(kind_of([&] { s.append_message(c, msg("robot", "x")); }), ErrorKind::invalid);
    EXPECT_EQ(kind_of([&] { s.append_message(c, msg("user", "bad \xC3")); }), ErrorKind::invalid);
    EXPECT_EQ(kind_of([&] { s.append_message(777, msg("user", "x")); }), ErrorKind::not_found);
    EXPECT_EQ(kind_of([&] { s.set_message_stats(u1, "{bad"); }), ErrorKind::invalid);
    EXPECT_EQ(kind_of([&] { s.delete_messages_after(12345); }), ErrorKind::not_found);
}

// trigram was chosen because unicode61 splits Bengali words at vowel signs and virama; these
// cases fail with unicode61 (বাংলা would also find বিল, both reduce to the tokens ব, ল).
TEST_F(StoreTest, SearchFindsEnglishAndBengaliWithSnippets) {
    Store s = open();
    Id c1 = s.create_conversation("English");
    Id c2 = s.create_conversation("বাংলা আলাপ");
    Id e1 = s.append_message(c1, msg("user", "How do I install the Model on Linux?"));
    Id e2 = s.append_message(c1, msg("assistant", "Download the GGUF model file first, then open it."));
    Id b1 = s.append_message(c2, msg("user", "আমি বাংলা ভাষায় কথা বলি।"));
    Id b2 = s.append_message(c2, msg("assistant", "আলাপ একটি কম্পিউটার প্রোগ্রাম।"));
    Id b3 = s.append_message(c2, msg("user", "বিল দিতে হবে"));

    auto model = s.search("model");  // case-insensitive
    EXPECT_EQ(model.size(), 2u);
    EXPECT_EQ(std::set<Id>({model[0].message_id, model[1].message_id}), std::set<Id>({e1, e2}));
    EXPECT_EQ(hit_ids(s.search("GGUF file")), std::vector<Id>{e2});  // all terms must match
    EXPECT_TRUE(s.search("model windows").empty());

    auto bangla = s.search("বাংলা");
    ASSERT_EQ(bangla.size(), 1u);
    EXPECT_EQ(bangla[0].message_id, b1);
    EXPECT_EQ(bangla[0].conversation_id, c2);
    EXPECT_EQ(bangla[0].conversation_title, "বাংলা আলাপ");
    EXPECT_EQ(bangla[0].snippet, "আমি [বাংলা] ভাষায় কথা বলি।");
    auto alap = s.search("আলাপ", {.limit = 10, .open_mark = "<b>", .close_mark = "</b>"});
    ASSERT_EQ(alap.size(), 1u);
    EXPECT_EQ(alap[0].message_id, b2);
    EXPECT_EQ(alap[0].snippet, "<b>আলাপ</b> একটি কম্পিউটার প্রোগ্রাম।");
    EXPECT_EQ(hit_ids(s.search("কম্পিউটার")), std::vector<Id>{b2});
    EXPECT_EQ(hit_ids(s.search("বিল")), std::vector<Id>{b3});  // not বাংলা
    EXPECT_TRUE(s.search("বলা").empty());                      // বলি differs only in the vowel sign

    // A 2-character term (below trigram's 3) is matched by LIKE, with a snippet built by hand.
    auto short_hits = s.search("কম");
    ASSERT_EQ(short_hits.size(), 1u);
    EXPECT_EQ(short_hits[0].message_id, b2);
    EXPECT_EQ(short_hits[0].snippet, "আলাপ একটি [কম]্পিউটার প্রোগ্রাম।");
    // FTS5 syntax in user text is inert; empty queries find nothing.
    EXPECT_TRUE(s.search("\"model AND OR NEAR(").empty());
    EXPECT_TRUE(s.search("   ").empty());
    EXPECT_EQ(s.search("the", {.limit = 1}).size(), 1u);
    EXPECT_EQ(s.search("%").size(), 0u);  // LIKE wildcards are escaped
}

TEST_F(StoreTest, SearchStaysInSyncAfterUpdateAndDelete) {
    Store s = open();
    Id c = s.create_conversation("sync");
    Id u = s.append_message(c, msg("user", "tell me about rivers"));
    Id a = s.append_message(c, msg("assistant", "", MessageStatus::streaming));
    EXPECT_TRUE(s.search("পদ্মা").empty());
    s.update_message(a, "পদ্মা একটি নদী", MessageStatus::streaming);
    s.update_message(a, "পদ্মা একটি বড় নদী, and the Meghna too", MessageStatus::complete);
    EXPECT_EQ(hit_ids(s.search("পদ্মা")), std::vector<Id>{a});
    EXPECT_EQ(hit_ids(s.search("meghna")), std::vector<Id>{a});
    s.update_message(u, "tell me about mountains", MessageStatus::complete);
    EXPECT_TRUE(s.search("rivers").empty());
    EXPECT_EQ(hit_ids(s.search("mountains")), std::vector<Id>{u});
    s.delete_messages_after(u);
    EXPECT_TRUE(s.search("পদ্মা").empty());
    EXPECT_TRUE(s.search("meghna").empty());
}

TEST_F(StoreTest, ExportsMarkdownExactly) {
    Store s = open();
    Id c = s.create_conversation("বাংলা test", "Be brief.\nAnswer in Bengali.");  // created at kT0
    s.append_message(c, msg("user", "What is আলাপ?"));
    s.append_message(c, msg("assistant", "A chat app.\n\n- offline", MessageStatus::complete, "tiny-q4"));
    s.append_message(c, msg("assistant", "Half", MessageStatus::stopped, "tiny-q4"));
    EXPECT_EQ(s.export_markdown(c),
              "# বাংলা test\n"
              "\n"
              "*Created 2023-11-14 22:13 UTC*\n"
              "\n"
              "**System prompt:**\n"
              "\n"
              "> Be brief.\n"
              "> Answer in Bengali.\n"
              "\n"
              "---\n"
              "\n"
              "### User\n"
              "\n"
              "What is আলাপ?\n"
              "\n"
              "---\n"
              "\n"
              "### Assistant · tiny-q4\n"
              "\n"
              "A chat app.\n"
              "\n"
              "- offline\n"
              "\n"
              "---\n"
              "\n"
              "### Assistant · tiny-q4\n"
              "\n"
              "Half\n"
              "\n"
              "*(stopped)*\n"
              "\n");
}

TEST_F(StoreTest, ExportJsonThenImportGivesIdenticalContent) {
    Store s = open();
    Id c = s.create_conversation("round \"trip\" ✓", "sys\tprompt");
    s.append_message(c, msg("system", "be kind"));
    s.append_message(c, msg("user", "বাংলা\nline two \xF0\x9F\x98\x80"));
    s.append_message(c, msg("assistant", "ok", MessageStatus::error, "m1"));
    std::string exported = s.export_json(c);
    EXPECT_EQ(exported.substr(0, 60), "{\n  \"format\": \"alap-conversation\",\n  \"version\": 1,\n  \"title\"");
    EXPECT_NE(exported.find("    {\n      \"role\": \"assistant\",\n      \"content\": \"ok\",\n      \"status\": "
                            "\"error\",\n      \"created_at\": 1700000003000,\n      \"model\": \"m1\"\n    }\n  ]\n}\n"),
              std::string::npos)
        << exported;
    Id copy = s.import_json(exported);
    EXPECT_NE(copy, c);
    EXPECT_EQ(s.export_json(copy), exported);
    auto a = s.list_messages(c);
    auto b = s.list_messages(copy);
    ASSERT_EQ(a.size(), b.size());
    for (size_t i = 0; i < a.size(); ++i) {
        EXPECT_EQ(a[i].role, b[i].role);
        EXPECT_EQ(a[i].content, b[i].content);
        EXPECT_EQ(a[i].status, b[i].status);
        EXPECT_EQ(a[i].created_at, b[i].created_at);
        EXPECT_EQ(a[i].model, b[i].model);
    }
    EXPECT_EQ(s.get_conversation(copy)->title, "round \"trip\" ✓");
    EXPECT_EQ(s.get_conversation(copy)->system_prompt, "sys\tprompt");
    EXPECT_EQ(s.get_conversation(copy)->created_at, s.get_conversation(c)->created_at);
    EXPECT_EQ(s.search("বাংলা").size(), 2u);  // imported rows are indexed too
}

TEST_F(StoreTest, MalformedImportsAreRejectedWithoutWriting) {
    Store s = open();
    Id c = s.create_conversation("source");
    s.append_message(c, msg("user", "hello"));
    const std::string good = s.export_json(c);
    ASSERT_NO_THROW(s.import_json(good));  // the base document is valid
    const int64_t conversations = raw_int(db_path_, "SELECT count(*) FROM conversations");
    const int64_t messages = raw_int(db_path_, "SELECT count(*) FROM messages");

    auto replaced = [&](const std::string& from, const std::string& to) {
        std::string t = good;
        size_t at = t.find(from);
        EXPECT_NE(at, std::string::npos) << from;
        return t.replace(at, from.size(), to);
    };
    const std::string deep = "{\"format\":\"alap-conversation\",\"version\":1,\"title\":" +
                             std::string(70, '[') + std::string(70, ']') + "}";
    const std::vector<std::pair<std::string, std::string>> cases = {
        {good.substr(0, good.size() / 2), "end of input"},
        {good.substr(0, good.size() - 2), "end of input"},
        {good + "x", "trailing"},
        {replaced("\"version\": 1", "\"version\": \"1\""), "version"},
        {replaced("\"version\": 1", "\"version\": 2"), "version"},
        {replaced("\"alap-conversation\"", "\"other\""), "format"},
        {replaced("\"title\": \"source\"", "\"title\": 5"), "document.title must be a string, got integer"},
        {replaced("\"role\": \"user\"", "\"role\": \"robot\""), "messages[0].role"},
        {replaced("\"status\": \"complete\"", "\"status\": true"), "messages[0].status must be a string"},
        {replaced("\"content\": \"hello\"", "\"content\": null"), "messages[0].content"},
        {replaced("\"model\": \"\"", "\"model\": \"\", \"extra\": 1"), "unknown key \"extra\""},
        {replaced("\"content\": \"hello\",", ""), "missing \"content\""},
        {replaced("\"messages\": [", "\"messages\": [1, "), "messages[0] must be an object"},
        {replaced("\"content\": \"hello\"", "\"content\": \"\\ud800\""), "surrogate"},
        {replaced("\"content\": \"hello\"", "\"content\": \"\\uZZZZ\""), "hex"},
        {replaced("\"content\": \"hello\"", "\"content\": \"\xC3(\""), "UTF-8"},
        {deep, "nesting deeper than 64"},
        {"[]", "must be an object"},
        {"", "end of input"},
    };
    for (const auto& [text, expected] : cases) {
        try {
            s.import_json(text);
            ADD_FAILURE() << "imported: " << text;
        } catch (const StoreError& e) {
            EXPECT_EQ(e.kind(), ErrorKind::invalid);
            EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what() << " / wanted " << expected;
        }
    }
    // A late failure (second message invalid) must not leave the first one or the conversation.
    std::string two = replaced("\"messages\": [", "\"messages\": [{\"role\":\"user\",\"content\":\"a\",\"status\":"
                                                  "\"complete\",\"created_at\":1,\"model\":\"\"},");
    two = two.replace(two.rfind("\"created_at\": "), 14, "\"created_at\": -");
    EXPECT_EQ(kind_of([&] { s.import_json(two); }), ErrorKind::invalid);
    EXPECT_EQ(raw_int(db_path_, "SELECT count(*) FROM conversations"), conversations);
    EXPECT_EQ(raw_int(db_path_, "SELECT count(*) FROM messages"), messages);
}

TEST_F(StoreTest, GarbageFileIsCorruptAndUntouched) {
    std::string garbage;
    for (int i = 0; i < 8192; ++i) garbage += static_cast<char>((i * 7919 + 13) & 0xFF);
    write_bytes(db_path_, garbage);
    try {
        Store::open(db_path_, opts());
        FAIL() << "opened garbage";
    } catch (const StoreError& e) {
        EXPECT_EQ(e.kind(), ErrorKind::corrupt);
        EXPECT_NE(std::string(e.what()).find(db_path_.string()), std::string::npos) << e.what();
    }
    EXPECT_EQ(kind_of([&] { Store::open_read_only(db_path_, opts()); }), ErrorKind::corrupt);
    EXPECT_EQ(read_bytes(db_path_), garbage);
    EXPECT_FALSE(fs::exists(db_path_.string() + "-wal"));
    fs::path bak = Store::backup_copy(db_path_);
    EXPECT_EQ(bak.string().rfind(db_path_.string() + ".bak-", 0), 0u) << bak;
    EXPECT_EQ(read_bytes(bak), garbage);
    EXPECT_NE(Store::backup_copy(db_path_), bak);  // a second backup in the same second gets "-1"
}

TEST_F(StoreTest, DamagedPagesAreCorruptAndUntouched) {
    {
        Store s = open();
        Id c = s.create_conversation("x");
        for (int i = 0; i < 50; ++i) s.append_message(c, msg("user", "some text to fill a few pages of the file"));
    }
    ASSERT_FALSE(fs::exists(db_path_.string() + "-wal"));  // checkpointed on close
    std::string bytes = read_bytes(db_path_);
    ASSERT_GE(bytes.size(), 4096u * 8);
    for (size_t i = 4096 * 2; i < 4096 * 6; ++i) bytes[i] = static_cast<char>(0xA5 ^ (i & 0xFF));
    write_bytes(db_path_, bytes);
    EXPECT_EQ(kind_of([&] { Store::open(db_path_, opts()); }), ErrorKind::corrupt);
    EXPECT_EQ(read_bytes(db_path_), bytes);
}

TEST_F(StoreTest, ReadOnlyStoreReadsButRefusesWrites) {
    Id c;
    {
        Store s = open();
        c = s.create_conversation("kept");
        s.set_setting("theme", "dark");
    }
    Store r = Store::open_read_only(db_path_, opts());
    EXPECT_EQ(r.get_conversation(c)->title, "kept");
    EXPECT_EQ(r.get_setting("theme"), "dark");
    EXPECT_EQ(kind_of([&] { r.create_conversation("no"); }), ErrorKind::read_only);
    EXPECT_EQ(kind_of([&] { r.set_setting("theme", "light"); }), ErrorKind::read_only);
    fs::path missing = dir_ / "missing.db";
    EXPECT_EQ(kind_of([&] { Store::open_read_only(missing, opts()); }), ErrorKind::io);
    EXPECT_FALSE(fs::exists(missing));
}

TEST_F(StoreTest, SettingsAndDownloads) {
    Store s = open();
    EXPECT_FALSE(s.get_setting("lang"));
    s.set_setting("lang", "bn");
    s.set_setting("lang", "en");
    EXPECT_EQ(s.get_setting("lang"), "en");
    s.erase_setting("lang");
    EXPECT_FALSE(s.get_setting("lang"));
    EXPECT_EQ(kind_of([&] { s.set_setting("", "x"); }), ErrorKind::invalid);

    Download d;
    d.url = "https://example.org/a.gguf";
    d.path = "/models/a.gguf";
    d.total_bytes = 1000;
    Id id = s.upsert_download(d);
    d.url = "https://example.org/b.gguf";
    Id id2 = s.upsert_download(d);
    d.url = "https://example.org/a.gguf";
    d.done_bytes = 1000;
    d.status = DownloadStatus::done;
    d.sha256 = std::string(64, 'a');
    EXPECT_EQ(s.upsert_download(d), id);  // same url updates in place
    auto all = s.list_downloads();
    ASSERT_EQ(all.size(), 2u);
    EXPECT_EQ(all[0].id, id);  // most recently updated first
    EXPECT_EQ(all[0].done_bytes, 1000);
    EXPECT_EQ(all[0].status, DownloadStatus::done);
    EXPECT_EQ(all[0].sha256, std::string(64, 'a'));
    EXPECT_EQ(all[1].id, id2);
    EXPECT_EQ(all[1].status, DownloadStatus::queued);
    d.sha256 = "XYZ";
    EXPECT_EQ(kind_of([&] { s.upsert_download(d); }), ErrorKind::invalid);
    s.remove_download(id2);
    EXPECT_EQ(s.list_downloads().size(), 1u);
    EXPECT_EQ(kind_of([&] { s.remove_download(id2); }), ErrorKind::not_found);
}

// Two Store objects on one file, each in its own thread, writing concurrently (WAL + busy timeout).
TEST_F(StoreTest, TwoWritersInTwoThreads) {
    Id c;
    { c = open().create_conversation("shared"); }
    constexpr int kPerThread = 150;
    std::atomic<int> failures{0};
    std::vector<std::string> errors(2);
    auto writer = [&](int t) {
        try {
            Store s = open();
            Id own = s.create_conversation("thread " + std::to_string(t));
            for (int i = 0; i < kPerThread; ++i) {
                std::string text = "thread " + std::to_string(t) + " message " + std::to_string(i);
                Id m = s.append_message(i % 2 ? own : c, msg("user", "", MessageStatus::streaming));
                s.update_message(m, text, MessageStatus::complete);
                if (i % 25 == 0) s.search("message");
            }
        } catch (const std::exception& e) {
            ++failures;
            errors[static_cast<size_t>(t)] = e.what();
        }
    };
    std::thread t0(writer, 0), t1(writer, 1);
    t0.join();
    t1.join();
    EXPECT_EQ(failures.load(), 0) << errors[0] << " | " << errors[1];
    Store s = open();
    EXPECT_EQ(s.list_messages(c).size(), static_cast<size_t>(kPerThread));
    EXPECT_EQ(s.list_conversations().size(), 3u);
    EXPECT_EQ(raw_int(db_path_, "SELECT count(*) FROM messages WHERE status = 'complete'"), 2 * kPerThread);
    EXPECT_EQ(s.search("thread message", {.limit = 1000}).size(), static_cast<size_t>(2 * kPerThread));
}

// Why not unicode61: on this SQLite it splits Bengali at vowel signs/virama/anusvara, so
// বাংলা and বিল both become the tokens "ব" "ল" and find each other. If this ever starts
// failing, SQLite changed and the tokenizer choice in store.h can be revisited.
TEST(StoreTokenizer, Unicode61SplitsBengaliAtCombiningMarks) {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(":memory:", &db), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(db,
                           "CREATE VIRTUAL TABLE u USING fts5(c, tokenize = 'unicode61 remove_diacritics 0');"
                           "INSERT INTO u(rowid, c) VALUES (1, 'আমি বাংলা বলি'), (2, 'বিল দিতে হবে');",
                           nullptr, nullptr, nullptr),
              SQLITE_OK);
    sqlite3_stmt* st = nullptr;
    ASSERT_EQ(sqlite3_prepare_v2(db, "SELECT rowid FROM u WHERE u MATCH ?1 ORDER BY rowid", -1, &st, nullptr), SQLITE_OK);
    sqlite3_bind_text(st, 1, "বাংলা", -1, SQLITE_STATIC);
    std::vector<int64_t> rows;
    while (sqlite3_step(st) == SQLITE_ROW) rows.push_back(sqlite3_column_int64(st, 0));
    sqlite3_finalize(st);
    sqlite3_close(db);
    EXPECT_EQ(rows, (std::vector<int64_t>{1, 2}));  // row 2 (বিল) is a false positive
}
