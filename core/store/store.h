// The chat history in one SQLite file: conversations, messages (with FTS5 search), downloads and
// settings, plus Markdown/JSON export and JSON import. Not thread-safe: one Store per thread.
//
//   auto store = alap::store::Store::open("history.db");     // creates or migrates
//   alap::store::Id c = store.create_conversation("Trip plan");
//   alap::store::Id m = store.append_message(c, {.role = "user", .content = "বাংলা?"});
//   alap::store::Id r = store.append_message(c, {.role = "assistant", .content = "",
//                                                .status = alap::store::MessageStatus::streaming});
//   store.update_message(r, "হ্যাঁ", alap::store::MessageStatus::complete);
//   auto hits = store.search("বাংলা");                        // conversation id, message id, snippet
//
// Threading: a Store owns one sqlite3 connection and must be used by one thread at a time (the
// app keeps it on its worker thread). Several Stores, in several threads or processes, may open
// the same file: the journal is WAL and every write waits up to Options::busy_timeout_ms.
//
// Times are milliseconds since the Unix epoch (UTC), from Options::clock.
//
// Search uses an FTS5 external-content table with tokenize='trigram' (case-insensitive substring
// match), kept in sync with messages by triggers. unicode61 was rejected: on SQLite 3.40.1 it
// treats Bengali vowel signs, virama and anusvara (Mn/Mc) as separators, so "বাংলা" becomes the
// tokens "ব" "ল" and matches unrelated words such as "বিল" (measured; see store_test.cpp).
// Terms shorter than three characters, which trigram cannot index, are matched with LIKE.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

struct sqlite3;

namespace alap::store {

enum class ErrorKind {
    corrupt,    // not a database, or it failed PRAGMA quick_check: the file was left untouched
    too_new,    // written by a newer Alap (user_version above ours): the file was left untouched
    invalid,    // bad argument or malformed import: nothing was written
    not_found,  // no row with that id
    busy,       // the database stayed locked longer than the busy timeout
    read_only,  // a write on a Store from open_read_only
    io,         // cannot open/read/write the file
    sql,        // any other SQLite failure
};
const char* error_kind_name(ErrorKind kind);

class StoreError : public std::runtime_error {
public:
    StoreError(ErrorKind kind, const std::string& message) : std::runtime_error(message), kind_(kind) {}
    ErrorKind kind() const { return kind_; }

private:
    ErrorKind kind_;
};

using Id = int64_t;

enum class MessageStatus { complete, stopped, error, streaming };
const char* to_string(MessageStatus s);
std::optional<MessageStatus> parse_message_status(std::string_view s);

// Roles accepted by append_message and import: system, user, assistant, tool.
bool is_valid_role(std::string_view role);

enum class DownloadStatus { queued, running, paused, done, failed };
const char* to_string(DownloadStatus s);
std::optional<DownloadStatus> parse_download_status(std::string_view s);

struct Conversation {
    Id id = 0;
    std::string title;
    int64_t created_at = 0;
    int64_t updated_at = 0;
    bool pinned = false;
    std::string system_prompt;
    std::string model_path;
    std::string settings_json = "{}";
    std::optional<int64_t> deleted_at;  // set while soft-deleted (undo with restore_conversation)
};

struct Message {
    Id id = 0;
    Id conversation_id = 0;
    std::string role;
    std::string content;
    MessageStatus status = MessageStatus::complete;
    int64_t created_at = 0;
    std::string model;
    std::string settings_json = "{}";  // sampling parameters, cache mode (f16, k8, k8v8)
    std::string stats_json = "{}";     // tokens, tokens/s, ttft
};

struct NewMessage {
    std::string role;
    std::string content;
    MessageStatus status = MessageStatus::complete;
    std::string model;
    std::string settings_json = "{}";  // must be a JSON object
    std::string stats_json = "{}";     // must be a JSON object
};

struct SearchHit {
    Id conversation_id = 0;
    Id message_id = 0;
    std::string conversation_title;
    std::string snippet;  // UTF-8 text around the match, matches wrapped in the marks
};

struct SearchOptions {
    int limit = 50;
    std::string open_mark = "[";
    std::string close_mark = "]";
};

struct Download {
    Id id = 0;  // assigned by upsert_download
    std::string url;
    std::string path;
    std::string sha256;  // expected digest, lowercase hex, or empty
    int64_t total_bytes = 0;
    int64_t done_bytes = 0;
    DownloadStatus status = DownloadStatus::queued;
    int64_t updated_at = 0;  // set by upsert_download
};

struct Options {
    int busy_timeout_ms = 5000;
    bool quick_check = true;              // run PRAGMA quick_check on open (Corrupt on failure)
    std::function<int64_t()> clock;       // ms since epoch; defaults to the system clock
};

class Store {
public:
    // The schema version this build writes (PRAGMA user_version).
    static int schema_version();

    // Opens or creates path, then applies pending migrations (one transaction each).
    // Throws StoreError: corrupt (file left byte-for-byte unchanged), too_new, io, busy.
    static Store open(const std::filesystem::path& path, Options options = {});
    // Opens an existing file without writing to it; no migration (an older or newer schema is
    // refused with too_new/invalid), every write method throws read_only.
    static Store open_read_only(const std::filesystem::path& path, Options options = {});
    // Copies path (and its -wal file, when present) to "<path>.bak-YYYYMMDD-HHMMSS" (UTC; a
    // "-N" suffix is added on collision) without opening it as a database; returns the new path.
    static std::filesystem::path backup_copy(const std::filesystem::path& path);

    Store(Store&& other) noexcept;
    Store& operator=(Store&& other) noexcept;
    Store(const Store&) = delete;
    Store& operator=(const Store&) = delete;
    ~Store();

    // --- conversations
    Id create_conversation(std::string_view title, std::string_view system_prompt = {},
                           std::string_view model_path = {}, std::string_view settings_json = "{}");
    void rename_conversation(Id id, std::string_view title);
    void set_pinned(Id id, bool pinned);
    void set_system_prompt(Id id, std::string_view system_prompt);
    void set_conversation_model(Id id, std::string_view model_path, std::string_view settings_json);
    void soft_delete_conversation(Id id);  // hidden from list and search until restored or purged
    void restore_conversation(Id id);      // undo of soft_delete_conversation
    void purge_conversation(Id id);        // removes it and its messages for good
    int purge_deleted_before(int64_t time_ms);  // purges soft-deleted ones; returns how many
    // Not deleted: pinned first, then most recently updated first.
    std::vector<Conversation> list_conversations() const;
    std::vector<Conversation> list_deleted_conversations() const;  // most recently deleted first
    std::optional<Conversation> get_conversation(Id id) const;     // deleted ones too

    // --- messages (each append/update also touches the conversation's updated_at)
    Id append_message(Id conversation_id, const NewMessage& message);
    // Replaces content and status. Allowed: streaming -> any status; a final status (complete,
    // stopped, error) -> the same status (an edit). Anything else throws invalid.
    void update_message(Id id, std::string_view content, MessageStatus status);
    void set_message_stats(Id id, std::string_view stats_json);
    // Deletes every message of the same conversation that comes after id; returns how many.
    int delete_messages_after(Id id);
    std::vector<Message> list_messages(Id conversation_id) const;  // in conversation order
    std::optional<Message> get_message(Id id) const;

    // --- search over all messages of conversations that are not deleted
    std::vector<SearchHit> search(std::string_view query, const SearchOptions& options = {}) const;

    // --- settings
    std::optional<std::string> get_setting(std::string_view key) const;
    void set_setting(std::string_view key, std::string_view value);
    void erase_setting(std::string_view key);

    // --- downloads (keyed by url)
    Id upsert_download(const Download& download);
    std::vector<Download> list_downloads() const;  // most recently updated first
    void remove_download(Id id);

    // --- export / import
    std::string export_markdown(Id conversation_id) const;
    // {"format":"alap-conversation","version":1,"title","system_prompt","created_at",
    //  "messages":[{"role","content","status","created_at","model"}]}, created_at in ms.
    std::string export_json(Id conversation_id) const;
    // Validates every field first, then writes in one transaction; returns the new conversation.
    // A "streaming" message is stored as "stopped". Throws invalid on any malformed input.
    Id import_json(std::string_view json_text);

private:
    Store(sqlite3* db, Options options, bool read_only);
    int64_t now() const;
    void require_writable() const;
    void touch_conversation(Id id, int64_t time_ms);

    sqlite3* db_ = nullptr;
    Options options_;
    bool read_only_ = false;
};

}  // namespace alap::store
