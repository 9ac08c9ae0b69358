// Store: the SQLite schema, its migrations and every query of the chat history (store.h).
// All SQL text is constant; user data only ever travels through bound parameters.
#include "core/store/store.h"

#include <sqlite3.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <system_error>
#include <utility>

#include "core/store/json.h"

namespace alap::store {

const char* error_kind_name(ErrorKind kind) {
    switch (kind) {
        case ErrorKind::corrupt: return "corrupt";
        case ErrorKind::too_new: return "too_new";
        case ErrorKind::invalid: return "invalid";
        case ErrorKind::not_found: return "not_found";
        case ErrorKind::busy: return "busy";
        case ErrorKind::read_only: return "read_only";
        case ErrorKind::io: return "io";
        case ErrorKind::sql: return "sql";
    }
    return "?";
}

const char* to_string(MessageStatus s) {
    switch (s) {
        case MessageStatus::complete: return "complete";
        case MessageStatus::stopped: return "stopped";
        case MessageStatus::error: return "error";
        case MessageStatus::streaming: return "streaming";
    }
    return "?";
}

std::optional<MessageStatus> parse_message_status(std::string_view s) {
    for (MessageStatus m : {MessageStatus::complete, MessageStatus::stopped, MessageStatus::error,
                            MessageStatus::streaming}) {
        if (s == to_string(m)) return m;
    }
    return std::nullopt;
}

bool is_valid_role(std::string_view role) {
    return role == "system" || role == "user" || role == "assistant" || role == "tool";
}

const char* to_string(DownloadStatus s) {
    switch (s) {
        case DownloadStatus::queued: return "queued";
        case DownloadStatus::running: return "running";
        case DownloadStatus::paused: return "paused";
        case DownloadStatus::done: return "done";
        case DownloadStatus::failed: return "failed";
    }
    return "?";
}

std::optional<DownloadStatus> parse_download_status(std::string_view s) {
    for (DownloadStatus d : {DownloadStatus::queued, DownloadStatus::running, DownloadStatus::paused,
                             DownloadStatus::done, DownloadStatus::failed}) {
        if (s == to_string(d)) return d;
    }
    return std::nullopt;
}

namespace {

// ---------------------------------------------------------------------------------------------
// Schema. Each step runs in its own transaction and ends by setting PRAGMA user_version to its
// version; steps are never edited once released, only appended.

struct Migration {
    int version;
    const char* sql;
};

constexpr Migration kMigrations[] = {
    {1, R"sql(
CREATE TABLE conversations(
  id            INTEGER PRIMARY KEY,
  title         TEXT    NOT NULL,
  created_at    INTEGER NOT NULL,
  updated_at    INTEGER NOT NULL,
  pinned        INTEGER NOT NULL DEFAULT 0 CHECK (pinned IN (0, 1)),
  system_prompt TEXT    NOT NULL DEFAULT '',
  model_path    TEXT    NOT NULL DEFAULT '',
  settings_json TEXT    NOT NULL DEFAULT '{}',
  deleted_at    INTEGER
);
CREATE INDEX conversations_by_list_order ON conversations(deleted_at, pinned DESC, updated_at DESC);

CREATE TABLE messages(
  id              INTEGER PRIMARY KEY,
  conversation_id INTEGER NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
  role            TEXT    NOT NULL CHECK (role IN ('system', 'user', 'assistant', 'tool')),
  content         TEXT    NOT NULL,
  status          TEXT    NOT NULL CHECK (status IN ('complete', 'stopped', 'error', 'streaming')),
  created_at      INTEGER NOT NULL,
  model           TEXT    NOT NULL DEFAULT '',
  settings_json   TEXT    NOT NULL DEFAULT '{}',
  stats_json      TEXT    NOT NULL DEFAULT '{}'
);
CREATE INDEX messages_by_conversation ON messages(conversation_id, id);

CREATE TABLE downloads(
  id          INTEGER PRIMARY KEY,
  url         TEXT    NOT NULL UNIQUE,
  path        TEXT    NOT NULL,
  sha256      TEXT    NOT NULL DEFAULT '',
  total_bytes INTEGER NOT NULL DEFAULT 0,
  done_bytes  INTEGER NOT NULL DEFAULT 0,
  status      TEXT    NOT NULL CHECK (status IN ('queued', 'running', 'paused', 'done', 'failed')),
  updated_at  INTEGER NOT NULL
);
CREATE INDEX downloads_by_update ON downloads(updated_at DESC);

CREATE TABLE settings(
  key   TEXT PRIMARY KEY,
  value TEXT NOT NULL
) WITHOUT ROWID;

-- trigram, not unicode61: see the comment at the top of store.h.
CREATE VIRTUAL TABLE messages_fts USING fts5(
  content, content = 'messages', content_rowid = 'id', tokenize = 'trigram'
);
CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages BEGIN
  INSERT INTO messages_fts(rowid, content) VALUES (new.id, new.content);
END;
CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages BEGIN
  INSERT INTO messages_fts(messages_fts, rowid, content) VALUES ('delete', old.id, old.content);
END;
CREATE TRIGGER messages_fts_update AFTER UPDATE OF content ON messages BEGIN
  INSERT INTO messages_fts(messages_fts, rowid, content) VALUES ('delete', old.id, old.content);
  INSERT INTO messages_fts(rowid, content) VALUES (new.id, new.content);
END;
)sql"},
};

constexpr int kSchemaVersion = kMigrations[std::size(kMigrations) - 1].version;

// ---------------------------------------------------------------------------------------------
// Thin checked wrappers over the sqlite3 C API.

ErrorKind kind_of(int rc) {
    switch (rc & 0xff) {
        case SQLITE_CORRUPT:
        case SQLITE_NOTADB: return ErrorKind::corrupt;
        case SQLITE_BUSY:
        case SQLITE_LOCKED: return ErrorKind::busy;
        case SQLITE_READONLY: return ErrorKind::read_only;
        case SQLITE_CANTOPEN:
        case SQLITE_IOERR:
        case SQLITE_FULL:
        case SQLITE_PERM: return ErrorKind::io;
        case SQLITE_CONSTRAINT: return ErrorKind::invalid;
        default: return ErrorKind::sql;
    }
}

[[noreturn]] void fail_sqlite(sqlite3* db, int rc, std::string_view what) {
    std::string detail = db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
    throw StoreError(kind_of(rc), "store: " + std::string(what) + ": " + detail + " (SQLite code " +
                                      std::to_string(rc) + ")");
}

[[noreturn]] void fail(ErrorKind kind, const std::string& message) {
    throw StoreError(kind, "store: " + message);
}

// Runs constant SQL (no parameters, no rows wanted).
void exec(sqlite3* db, const char* sql, std::string_view what) {
    char* err = nullptr;
    int rc = sqlite3_exec(db, sql, nullptr, nullptr, &err);
    if (rc != SQLITE_OK) {
        std::string detail = err ? err : sqlite3_errstr(rc);
        sqlite3_free(err);
        throw StoreError(kind_of(rc), "store: " + std::string(what) + ": " + detail + " (SQLite code " +
                                          std::to_string(rc) + ")");
    }
}

class Stmt {
public:
    Stmt(sqlite3* db, std::string_view sql) : db_(db) {
        int rc = sqlite3_prepare_v2(db, sql.data(), static_cast<int>(sql.size()), &s_, nullptr);
        if (rc != SQLITE_OK) fail_sqlite(db, rc, "prepare");
    }
    ~Stmt() { sqlite3_finalize(s_); }
    Stmt(const Stmt&) = delete;
    Stmt& operator=(const Stmt&) = delete;

    Stmt& bind(int i, int64_t v) { return check_bind(sqlite3_bind_int64(s_, i, v)); }
    Stmt& bind(int i, std::string_view v) {
        // An empty string_view may have data() == nullptr, which SQLite would store as NULL.
        const char* p = v.data() ? v.data() : "";
        return check_bind(sqlite3_bind_text64(s_, i, p, v.size(), SQLITE_TRANSIENT, SQLITE_UTF8));
    }
    Stmt& bind_null(int i) { return check_bind(sqlite3_bind_null(s_, i)); }

    // True while a row is available; false once done.
    bool step() {
        int rc = sqlite3_step(s_);
        if (rc == SQLITE_ROW) return true;
        if (rc == SQLITE_DONE) return false;
        fail_sqlite(db_, rc, "step");
    }
    void run() {
        while (step()) {
        }
    }
    // Makes the statement runnable again (bindings are kept).
    void reset() {
        int rc = sqlite3_reset(s_);
        if (rc != SQLITE_OK) fail_sqlite(db_, rc, "reset");
    }

    int64_t col_int(int i) const { return sqlite3_column_int64(s_, i); }
    bool col_null(int i) const { return sqlite3_column_type(s_, i) == SQLITE_NULL; }
    std::string col_text(int i) const {
        const unsigned char* p = sqlite3_column_text(s_, i);
        int n = sqlite3_column_bytes(s_, i);
        if (!p) {
            if (sqlite3_errcode(db_) == SQLITE_NOMEM) fail_sqlite(db_, SQLITE_NOMEM, "read column");
            return {};
        }
        return std::string(reinterpret_cast<const char*>(p), static_cast<size_t>(n));
    }

private:
    Stmt& check_bind(int rc) {
        if (rc != SQLITE_OK) fail_sqlite(db_, rc, "bind");
        return *this;
    }
    sqlite3* db_;
    sqlite3_stmt* s_ = nullptr;
};

// BEGIN IMMEDIATE: takes the write lock up front (waiting up to the busy timeout), so a reader
// never has to upgrade and deadlock with another writer.
class Transaction {
public:
    explicit Transaction(sqlite3* db) : db_(db) { exec(db_, "BEGIN IMMEDIATE", "begin transaction"); }
    ~Transaction() {
        if (!done_) sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);  // best effort on unwind
    }
    Transaction(const Transaction&) = delete;
    Transaction& operator=(const Transaction&) = delete;
    void commit() {
        exec(db_, "COMMIT", "commit");
        done_ = true;
    }

private:
    sqlite3* db_;
    bool done_ = false;
};

int64_t query_int(sqlite3* db, const char* sql, std::string_view what) {
    Stmt st(db, sql);
    if (!st.step()) fail(ErrorKind::sql, std::string(what) + ": no row");
    return st.col_int(0);
}

void require_utf8(std::string_view s, const char* field) {
    if (!json::is_valid_utf8(s)) fail(ErrorKind::invalid, std::string(field) + " is not valid UTF-8");
}

void require_json_object(std::string_view s, const char* field) {
    try {
        if (!json::parse(s).is_object()) fail(ErrorKind::invalid, std::string(field) + " must be a JSON object");
    } catch (const json::Error& e) {
        fail(ErrorKind::invalid, std::string(field) + ": " + e.what());
    }
}

sqlite3* open_connection(const std::filesystem::path& path, int flags) {
    sqlite3* db = nullptr;
    int rc = sqlite3_open_v2(path.c_str(), &db, flags, nullptr);
    if (rc != SQLITE_OK) {
        std::string detail = db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
        sqlite3_close(db);
        throw StoreError(kind_of(rc) == ErrorKind::corrupt ? ErrorKind::corrupt : ErrorKind::io,
                         "store: cannot open " + path.string() + ": " + detail);
    }
    return db;
}

// Owns a connection until released (so a throw during open closes it).
struct DbGuard {
    sqlite3* db;
    ~DbGuard() { sqlite3_close(db); }
    sqlite3* release() { return std::exchange(db, nullptr); }
};

// Reads the header and checks integrity before anything is written. Returns user_version.
int check_database(sqlite3* db, const std::filesystem::path& path, const Options& options) {
    const std::string where = " (" + path.string() + ")";
    int version = 0;
    try {
        version = static_cast<int>(query_int(db, "PRAGMA user_version", "read user_version"));
        if (options.quick_check) {
            Stmt st(db, "PRAGMA quick_check");
            std::string first;
            std::string all;
            while (st.step()) {
                std::string row = st.col_text(0);
                if (all.size() < 400) all += (all.empty() ? "" : "; ") + row;
                if (first.empty()) first = row;
            }
            if (first != "ok") fail(ErrorKind::corrupt, "database failed quick_check" + where + ": " + all);
        }
    } catch (const StoreError& e) {
        if (e.kind() == ErrorKind::corrupt) {
            throw StoreError(ErrorKind::corrupt,
                             std::string(e.what()) + where +
                                 "; the file was not modified: keep a backup copy before replacing it");
        }
        throw;
    }
    if (version > kSchemaVersion) {
        fail(ErrorKind::too_new, "database schema version " + std::to_string(version) +
                                     " is newer than this Alap understands (" + std::to_string(kSchemaVersion) +
                                     ")" + where + "; update Alap, the file was not modified");
    }
    if (version < 0) fail(ErrorKind::corrupt, "negative schema version" + where);
    return version;
}

void migrate(sqlite3* db) {
    for (const Migration& m : kMigrations) {
        Transaction tx(db);
        // Re-read inside the write lock: another connection may have migrated meanwhile.
        int64_t version = query_int(db, "PRAGMA user_version", "read user_version");
        if (version > kSchemaVersion) fail(ErrorKind::too_new, "database was upgraded by a newer Alap meanwhile");
        if (version >= m.version) continue;  // rolled back (nothing written)
        exec(db, m.sql, "migration to schema " + std::to_string(m.version));
        // PRAGMA takes no parameters; the value is our own constant, never user data.
        std::string set_version = "PRAGMA user_version = " + std::to_string(m.version);
        exec(db, set_version.c_str(), "set user_version");
        tx.commit();
    }
}

constexpr const char* kConversationColumns =
    "id, title, created_at, updated_at, pinned, system_prompt, model_path, settings_json, deleted_at";

Conversation read_conversation(const Stmt& st) {
    Conversation c;
    c.id = st.col_int(0);
    c.title = st.col_text(1);
    c.created_at = st.col_int(2);
    c.updated_at = st.col_int(3);
    c.pinned = st.col_int(4) != 0;
    c.system_prompt = st.col_text(5);
    c.model_path = st.col_text(6);
    c.settings_json = st.col_text(7);
    if (!st.col_null(8)) c.deleted_at = st.col_int(8);
    return c;
}

constexpr const char* kMessageColumns =
    "id, conversation_id, role, content, status, created_at, model, settings_json, stats_json";

Message read_message(const Stmt& st) {
    Message m;
    m.id = st.col_int(0);
    m.conversation_id = st.col_int(1);
    m.role = st.col_text(2);
    m.content = st.col_text(3);
    std::string status = st.col_text(4);
    auto parsed = parse_message_status(status);
    if (!parsed) fail(ErrorKind::corrupt, "message " + std::to_string(m.id) + " has unknown status '" + status + "'");
    m.status = *parsed;
    m.created_at = st.col_int(5);
    m.model = st.col_text(6);
    m.settings_json = st.col_text(7);
    m.stats_json = st.col_text(8);
    return m;
}

std::string format_utc(int64_t ms, const char* format) {
    std::time_t t = static_cast<std::time_t>(ms >= 0 ? ms / 1000 : (ms - 999) / 1000);
    std::tm tm{};
    gmtime_r(&t, &tm);
    char buf[64];
    size_t n = std::strftime(buf, sizeof buf, format, &tm);
    return std::string(buf, n);
}

size_t codepoint_count(std::string_view s) {
    size_t n = 0;
    for (char c : s) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
    return n;
}

std::string ascii_lower(std::string_view s) {
    std::string out(s);
    for (char& c : out) {
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    }
    return out;
}

// A snippet for LIKE matches (FTS5's snippet() needs a MATCH): up to `context` characters on each
// side of the first occurrence of term, cut at character boundaries.
std::string manual_snippet(const std::string& content, std::string_view term, const SearchOptions& opt) {
    constexpr size_t context = 24;
    std::string hay = ascii_lower(content);
    size_t at = hay.find(ascii_lower(term));
    if (at == std::string::npos) at = 0;
    size_t end = std::min(content.size(), at + term.size());
    auto is_cont = [&](size_t i) { return (static_cast<unsigned char>(content[i]) & 0xC0) == 0x80; };
    size_t begin = at;
    for (size_t k = 0; k < context && begin > 0;) {
        --begin;
        if (!is_cont(begin)) ++k;
    }
    size_t stop = end;
    for (size_t k = 0; k < context && stop < content.size();) {
        ++stop;
        while (stop < content.size() && is_cont(stop)) ++stop;
        ++k;
    }
    std::string out;
    if (begin > 0) out += "…";
    out += content.substr(begin, at - begin);
    out += opt.open_mark;
    out += content.substr(at, end - at);
    out += opt.close_mark;
    out += content.substr(end, stop - end);
    if (stop < content.size()) out += "…";
    return out;
}

std::string like_pattern(std::string_view term) {
    std::string p = "%";
    for (char c : term) {
        if (c == '%' || c == '_' || c == '\\') p += '\\';
        p += c;
    }
    p += '%';
    return p;
}

std::string role_heading(std::string_view role) {
    std::string r(role);
    if (!r.empty() && r[0] >= 'a' && r[0] <= 'z') r[0] = static_cast<char>(r[0] - 'a' + 'A');
    return r;
}

// --- import validation helpers: every failure names the JSON path.

const json::Value& member(const json::Value& obj, const char* key, const std::string& path) {
    const json::Value* v = obj.find(key);
    if (!v) fail(ErrorKind::invalid, "import: " + path + " is missing \"" + key + "\"");
    return *v;
}

void only_keys(const json::Value& obj, std::initializer_list<std::string_view> keys, const std::string& path) {
    for (const json::Member& m : obj.as_object()) {
        bool known = false;
        for (std::string_view k : keys) known = known || m.key == k;
        if (!known) fail(ErrorKind::invalid, "import: " + path + " has unknown key \"" + m.key + "\"");
    }
}

const std::string& string_field(const json::Value& obj, const char* key, const std::string& path) {
    const json::Value& v = member(obj, key, path);
    if (!v.is_string()) {
        fail(ErrorKind::invalid, "import: " + path + "." + key + " must be a string, got " + json::type_name(v.type()));
    }
    return v.as_string();
}

int64_t time_field(const json::Value& obj, const char* key, const std::string& path) {
    const json::Value& v = member(obj, key, path);
    if (!v.is_int() || v.as_int() < 0) {
        fail(ErrorKind::invalid, "import: " + path + "." + key +
                                     " must be a non-negative integer (ms since epoch), got " +
                                     (v.is_int() ? std::to_string(v.as_int()) : json::type_name(v.type())));
    }
    return v.as_int();
}

}  // namespace

// -------------------------------------------------------------------------------------------------
// Opening

int Store::schema_version() { return kSchemaVersion; }

Store::Store(sqlite3* db, Options options, bool read_only)
    : db_(db), options_(std::move(options)), read_only_(read_only) {}

Store::Store(Store&& other) noexcept
    : db_(std::exchange(other.db_, nullptr)), options_(std::move(other.options_)), read_only_(other.read_only_) {}

Store& Store::operator=(Store&& other) noexcept {
    if (this != &other) {
        sqlite3_close(db_);
        db_ = std::exchange(other.db_, nullptr);
        options_ = std::move(other.options_);
        read_only_ = other.read_only_;
    }
    return *this;
}

Store::~Store() { sqlite3_close(db_); }

Store Store::open(const std::filesystem::path& path, Options options) {
    DbGuard g{open_connection(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE)};
    sqlite3_extended_result_codes(g.db, 1);
    int rc = sqlite3_busy_timeout(g.db, options.busy_timeout_ms);
    if (rc != SQLITE_OK) fail_sqlite(g.db, rc, "set busy timeout");
    check_database(g.db, path, options);  // nothing has been written up to here
    {
        Stmt st(g.db, "PRAGMA journal_mode = WAL");
        std::string mode = st.step() ? st.col_text(0) : std::string();
        if (mode != "wal") fail(ErrorKind::io, "cannot switch " + path.string() + " to WAL (got '" + mode + "')");
    }
    exec(g.db, "PRAGMA foreign_keys = ON", "enable foreign keys");
    if (query_int(g.db, "PRAGMA foreign_keys", "read foreign_keys") != 1) {
        fail(ErrorKind::sql, "this SQLite cannot enforce foreign keys");
    }
    exec(g.db, "PRAGMA synchronous = NORMAL", "set synchronous");  // safe with WAL
    migrate(g.db);
    return Store(g.release(), std::move(options), false);
}

Store Store::open_read_only(const std::filesystem::path& path, Options options) {
    DbGuard g{open_connection(path, SQLITE_OPEN_READONLY)};
    sqlite3_extended_result_codes(g.db, 1);
    int rc = sqlite3_busy_timeout(g.db, options.busy_timeout_ms);
    if (rc != SQLITE_OK) fail_sqlite(g.db, rc, "set busy timeout");
    int version = check_database(g.db, path, options);
    if (version < kSchemaVersion) {
        fail(ErrorKind::invalid, "database " + path.string() + " has schema version " + std::to_string(version) +
                                     " and needs a migration; open it writable first");
    }
    exec(g.db, "PRAGMA foreign_keys = ON", "enable foreign keys");
    return Store(g.release(), std::move(options), true);
}

std::filesystem::path Store::backup_copy(const std::filesystem::path& path) {
    namespace fs = std::filesystem;
    std::error_code ec;
    if (!fs::is_regular_file(path, ec)) fail(ErrorKind::io, "cannot back up " + path.string() + ": not a file");
    int64_t now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                         std::chrono::system_clock::now().time_since_epoch())
                         .count();
    std::string base = path.string() + ".bak-" + format_utc(now_ms, "%Y%m%d-%H%M%S");
    for (int n = 0; n < 1000; ++n) {
        fs::path target = n == 0 ? fs::path(base) : fs::path(base + "-" + std::to_string(n));
        if (fs::exists(target, ec)) continue;
        if (!fs::copy_file(path, target, fs::copy_options::none, ec)) {
            if (ec == std::errc::file_exists) continue;
            fail(ErrorKind::io, "cannot copy " + path.string() + " to " + target.string() + ": " + ec.message());
        }
        fs::path wal = path.string() + "-wal";
        if (fs::exists(wal, ec)) {
            fs::path wal_target = target.string() + "-wal";
            if (!fs::copy_file(wal, wal_target, fs::copy_options::overwrite_existing, ec)) {
                fail(ErrorKind::io, "cannot copy " + wal.string() + ": " + ec.message());
            }
        }
        return target;
    }
    fail(ErrorKind::io, "cannot find a free backup name for " + path.string());
}

int64_t Store::now() const {
    if (options_.clock) return options_.clock();
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
        .count();
}

void Store::require_writable() const {
    if (read_only_) fail(ErrorKind::read_only, "this store was opened read-only");
    if (!db_) fail(ErrorKind::invalid, "use of a moved-from store");
}

void Store::touch_conversation(Id id, int64_t time_ms) {
    Stmt st(db_, "UPDATE conversations SET updated_at = ?1 WHERE id = ?2");
    st.bind(1, time_ms).bind(2, id).run();
}

// -------------------------------------------------------------------------------------------------
// Conversations

Id Store::create_conversation(std::string_view title, std::string_view system_prompt, std::string_view model_path,
                              std::string_view settings_json) {
    require_writable();
    require_utf8(title, "title");
    require_utf8(system_prompt, "system prompt");
    require_utf8(model_path, "model path");
    require_json_object(settings_json, "conversation settings_json");
    int64_t t = now();
    Transaction tx(db_);
    Stmt st(db_,
            "INSERT INTO conversations(title, created_at, updated_at, system_prompt, model_path, settings_json) "
            "VALUES (?1, ?2, ?2, ?3, ?4, ?5)");
    st.bind(1, title).bind(2, t).bind(3, system_prompt).bind(4, model_path).bind(5, settings_json).run();
    Id id = sqlite3_last_insert_rowid(db_);
    tx.commit();
    return id;
}

namespace {
// Runs a one-row UPDATE on conversations in its own transaction; not_found when no row matched.
void update_conversation(sqlite3* db, Id id, const char* sql, const std::function<void(Stmt&)>& bind) {
    Transaction tx(db);
    Stmt st(db, sql);
    bind(st);
    st.run();
    if (sqlite3_changes(db) == 0) fail(ErrorKind::not_found, "no conversation with id " + std::to_string(id));
    tx.commit();
}
}  // namespace

void Store::rename_conversation(Id id, std::string_view title) {
    require_writable();
    require_utf8(title, "title");
    update_conversation(db_, id, "UPDATE conversations SET title = ?1 WHERE id = ?2",
                        [&](Stmt& st) { st.bind(1, title).bind(2, id); });
}

void Store::set_pinned(Id id, bool pinned) {
    require_writable();
    update_conversation(db_, id, "UPDATE conversations SET pinned = ?1 WHERE id = ?2",
                        [&](Stmt& st) { st.bind(1, int64_t{pinned ? 1 : 0}).bind(2, id); });
}

void Store::set_system_prompt(Id id, std::string_view system_prompt) {
    require_writable();
    require_utf8(system_prompt, "system prompt");
    update_conversation(db_, id, "UPDATE conversations SET system_prompt = ?1 WHERE id = ?2",
                        [&](Stmt& st) { st.bind(1, system_prompt).bind(2, id); });
}

void Store::set_conversation_model(Id id, std::string_view model_path, std::string_view settings_json) {
    require_writable();
    require_utf8(model_path, "model path");
    require_json_object(settings_json, "conversation settings_json");
    update_conversation(db_, id, "UPDATE conversations SET model_path = ?1, settings_json = ?2 WHERE id = ?3",
                        [&](Stmt& st) { st.bind(1, model_path).bind(2, settings_json).bind(3, id); });
}

void Store::soft_delete_conversation(Id id) {
    require_writable();
    int64_t t = now();
    update_conversation(db_, id, "UPDATE conversations SET deleted_at = COALESCE(deleted_at, ?1) WHERE id = ?2",
                        [&](Stmt& st) { st.bind(1, t).bind(2, id); });
}

void Store::restore_conversation(Id id) {
    require_writable();
    update_conversation(db_, id, "UPDATE conversations SET deleted_at = NULL WHERE id = ?1",
                        [&](Stmt& st) { st.bind(1, id); });
}

void Store::purge_conversation(Id id) {
    require_writable();
    Transaction tx(db_);
    Stmt st(db_, "DELETE FROM conversations WHERE id = ?1");  // messages go by ON DELETE CASCADE
    st.bind(1, id).run();
    if (sqlite3_changes(db_) == 0) fail(ErrorKind::not_found, "no conversation with id " + std::to_string(id));
    tx.commit();
}

int Store::purge_deleted_before(int64_t time_ms) {
    require_writable();
    Transaction tx(db_);
    Stmt st(db_, "DELETE FROM conversations WHERE deleted_at IS NOT NULL AND deleted_at < ?1");
    st.bind(1, time_ms).run();
    int n = sqlite3_changes(db_);
    tx.commit();
    return n;
}

std::vector<Conversation> Store::list_conversations() const {
    Stmt st(db_, std::string("SELECT ") + kConversationColumns +
                     " FROM conversations WHERE deleted_at IS NULL ORDER BY pinned DESC, updated_at DESC, id DESC");
    std::vector<Conversation> out;
    while (st.step()) out.push_back(read_conversation(st));
    return out;
}

std::vector<Conversation> Store::list_deleted_conversations() const {
    Stmt st(db_, std::string("SELECT ") + kConversationColumns +
                     " FROM conversations WHERE deleted_at IS NOT NULL ORDER BY deleted_at DESC, id DESC");
    std::vector<Conversation> out;
    while (st.step()) out.push_back(read_conversation(st));
    return out;
}

std::optional<Conversation> Store::get_conversation(Id id) const {
    Stmt st(db_, std::string("SELECT ") + kConversationColumns + " FROM conversations WHERE id = ?1");
    st.bind(1, id);
    if (!st.step()) return std::nullopt;
    return read_conversation(st);
}

// -------------------------------------------------------------------------------------------------
// Messages

Id Store::append_message(Id conversation_id, const NewMessage& m) {
    require_writable();
    if (!is_valid_role(m.role)) fail(ErrorKind::invalid, "unknown message role '" + m.role + "'");
    require_utf8(m.content, "message content");
    require_utf8(m.model, "message model");
    require_json_object(m.settings_json, "message settings_json");
    require_json_object(m.stats_json, "message stats_json");
    int64_t t = now();
    Transaction tx(db_);
    {
        Stmt exists(db_, "SELECT 1 FROM conversations WHERE id = ?1");
        exists.bind(1, conversation_id);
        if (!exists.step()) fail(ErrorKind::not_found, "no conversation with id " + std::to_string(conversation_id));
    }
    Stmt st(db_, "INSERT INTO messages(conversation_id, role, content, status, created_at, model, settings_json, "
                 "stats_json) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)");
    st.bind(1, conversation_id)
        .bind(2, m.role)
        .bind(3, m.content)
        .bind(4, to_string(m.status))
        .bind(5, t)
        .bind(6, m.model)
        .bind(7, m.settings_json)
        .bind(8, m.stats_json)
        .run();
    Id id = sqlite3_last_insert_rowid(db_);
    touch_conversation(conversation_id, t);
    tx.commit();
    return id;
}

void Store::update_message(Id id, std::string_view content, MessageStatus status) {
    require_writable();
    require_utf8(content, "message content");
    int64_t t = now();
    Transaction tx(db_);
    Id conversation_id = 0;
    {
        Stmt cur(db_, "SELECT conversation_id, status FROM messages WHERE id = ?1");
        cur.bind(1, id);
        if (!cur.step()) fail(ErrorKind::not_found, "no message with id " + std::to_string(id));
        conversation_id = cur.col_int(0);
        std::string from = cur.col_text(1);
        if (from != "streaming" && from != to_string(status)) {
            fail(ErrorKind::invalid, "message " + std::to_string(id) + " cannot go from '" + from + "' to '" +
                                         to_string(status) + "'");
        }
    }
    Stmt st(db_, "UPDATE messages SET content = ?1, status = ?2 WHERE id = ?3");
    st.bind(1, content).bind(2, to_string(status)).bind(3, id).run();
    touch_conversation(conversation_id, t);
    tx.commit();
}

void Store::set_message_stats(Id id, std::string_view stats_json) {
    require_writable();
    require_json_object(stats_json, "message stats_json");
    Transaction tx(db_);
    Stmt st(db_, "UPDATE messages SET stats_json = ?1 WHERE id = ?2");
    st.bind(1, stats_json).bind(2, id).run();
    if (sqlite3_changes(db_) == 0) fail(ErrorKind::not_found, "no message with id " + std::to_string(id));
    tx.commit();
}

int Store::delete_messages_after(Id id) {
    require_writable();
    int64_t t = now();
    Transaction tx(db_);
    Id conversation_id = 0;
    {
        Stmt cur(db_, "SELECT conversation_id FROM messages WHERE id = ?1");
        cur.bind(1, id);
        if (!cur.step()) fail(ErrorKind::not_found, "no message with id " + std::to_string(id));
        conversation_id = cur.col_int(0);
    }
    Stmt st(db_, "DELETE FROM messages WHERE conversation_id = ?1 AND id > ?2");
    st.bind(1, conversation_id).bind(2, id).run();
    int n = sqlite3_changes(db_);
    touch_conversation(conversation_id, t);
    tx.commit();
    return n;
}

std::vector<Message> Store::list_messages(Id conversation_id) const {
    Stmt st(db_, std::string("SELECT ") + kMessageColumns + " FROM messages WHERE conversation_id = ?1 ORDER BY id");
    st.bind(1, conversation_id);
    std::vector<Message> out;
    while (st.step()) out.push_back(read_message(st));
    return out;
}

std::optional<Message> Store::get_message(Id id) const {
    Stmt st(db_, std::string("SELECT ") + kMessageColumns + " FROM messages WHERE id = ?1");
    st.bind(1, id);
    if (!st.step()) return std::nullopt;
    return read_message(st);
}

// -------------------------------------------------------------------------------------------------
// Search

std::vector<SearchHit> Store::search(std::string_view query, const SearchOptions& options) const {
    if (options.limit <= 0) return {};
    require_utf8(query, "search query");
    // Terms are whitespace-separated and all must match (AND). Each term >= 3 characters becomes
    // a quoted FTS5 phrase (so operators in user text are inert); shorter ones become LIKE filters.
    std::vector<std::string> long_terms, short_terms;
    for (size_t i = 0; i < query.size();) {
        while (i < query.size() && (query[i] == ' ' || query[i] == '\t' || query[i] == '\n' || query[i] == '\r')) ++i;
        size_t j = i;
        while (j < query.size() && !(query[j] == ' ' || query[j] == '\t' || query[j] == '\n' || query[j] == '\r')) ++j;
        if (j > i) {
            std::string term(query.substr(i, j - i));
            (codepoint_count(term) >= 3 ? long_terms : short_terms).push_back(term);
        }
        i = j;
    }
    if (long_terms.empty() && short_terms.empty()) return {};

    std::string sql;
    if (!long_terms.empty()) {
        sql = "SELECT m.conversation_id, m.id, c.title, m.content, snippet(messages_fts, 0, ?1, ?2, '…', 32) "
              "FROM messages_fts JOIN messages m ON m.id = messages_fts.rowid "
              "JOIN conversations c ON c.id = m.conversation_id "
              "WHERE messages_fts MATCH ?3 AND c.deleted_at IS NULL";
    } else {
        sql = "SELECT m.conversation_id, m.id, c.title, m.content, NULL "
              "FROM messages m JOIN conversations c ON c.id = m.conversation_id "
              "WHERE c.deleted_at IS NULL";
    }
    for (size_t k = 0; k < short_terms.size(); ++k) {
        sql += " AND m.content LIKE ?" + std::to_string(5 + k) + " ESCAPE '\\'";  // placeholder numbers only
    }
    sql += long_terms.empty() ? " ORDER BY m.id DESC LIMIT ?4" : " ORDER BY rank, m.id DESC LIMIT ?4";

    Stmt st(db_, sql);
    if (!long_terms.empty()) {
        st.bind(1, options.open_mark).bind(2, options.close_mark);
        std::string match;
        for (const std::string& t : long_terms) {
            if (!match.empty()) match += ' ';
            match += '"';
            for (char c : t) {
                if (c == '"') match += '"';
                match += c;
            }
            match += '"';
        }
        st.bind(3, match);
    }
    st.bind(4, int64_t{options.limit});
    for (size_t k = 0; k < short_terms.size(); ++k) st.bind(static_cast<int>(5 + k), like_pattern(short_terms[k]));

    std::vector<SearchHit> out;
    while (st.step()) {
        SearchHit h;
        h.conversation_id = st.col_int(0);
        h.message_id = st.col_int(1);
        h.conversation_title = st.col_text(2);
        h.snippet = long_terms.empty() ? manual_snippet(st.col_text(3), short_terms.front(), options) : st.col_text(4);
        out.push_back(std::move(h));
    }
    return out;
}

// -------------------------------------------------------------------------------------------------
// Settings

std::optional<std::string> Store::get_setting(std::string_view key) const {
    Stmt st(db_, "SELECT value FROM settings WHERE key = ?1");
    st.bind(1, key);
    if (!st.step()) return std::nullopt;
    return st.col_text(0);
}

void Store::set_setting(std::string_view key, std::string_view value) {
    require_writable();
    if (key.empty()) fail(ErrorKind::invalid, "empty setting key");
    require_utf8(key, "setting key");
    require_utf8(value, "setting value");
    Transaction tx(db_);
    Stmt st(db_, "INSERT INTO settings(key, value) VALUES (?1, ?2) ON CONFLICT(key) DO UPDATE SET value = excluded.value");
    st.bind(1, key).bind(2, value).run();
    tx.commit();
}

void Store::erase_setting(std::string_view key) {
    require_writable();
    Transaction tx(db_);
    Stmt st(db_, "DELETE FROM settings WHERE key = ?1");
    st.bind(1, key).run();
    tx.commit();
}

// -------------------------------------------------------------------------------------------------
// Downloads

Id Store::upsert_download(const Download& d) {
    require_writable();
    if (d.url.empty()) fail(ErrorKind::invalid, "download url is empty");
    require_utf8(d.url, "download url");
    require_utf8(d.path, "download path");
    if (d.total_bytes < 0 || d.done_bytes < 0) fail(ErrorKind::invalid, "download byte counts must be >= 0");
    if (!d.sha256.empty()) {
        bool hex = d.sha256.size() == 64;
        for (char c : d.sha256) hex = hex && ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'));
        if (!hex) fail(ErrorKind::invalid, "download sha256 must be 64 lowercase hex digits");
    }
    int64_t t = now();
    Transaction tx(db_);
    Stmt st(db_,
            "INSERT INTO downloads(url, path, sha256, total_bytes, done_bytes, status, updated_at) "
            "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) ON CONFLICT(url) DO UPDATE SET path = excluded.path, "
            "sha256 = excluded.sha256, total_bytes = excluded.total_bytes, done_bytes = excluded.done_bytes, "
            "status = excluded.status, updated_at = excluded.updated_at RETURNING id");
    st.bind(1, d.url).bind(2, d.path).bind(3, d.sha256).bind(4, d.total_bytes).bind(5, d.done_bytes);
    st.bind(6, to_string(d.status)).bind(7, t);
    if (!st.step()) fail(ErrorKind::sql, "upsert of download returned no id");
    Id id = st.col_int(0);
    st.run();
    tx.commit();
    return id;
}

std::vector<Download> Store::list_downloads() const {
    Stmt st(db_, "SELECT id, url, path, sha256, total_bytes, done_bytes, status, updated_at FROM downloads "
                 "ORDER BY updated_at DESC, id DESC");
    std::vector<Download> out;
    while (st.step()) {
        Download d;
        d.id = st.col_int(0);
        d.url = st.col_text(1);
        d.path = st.col_text(2);
        d.sha256 = st.col_text(3);
        d.total_bytes = st.col_int(4);
        d.done_bytes = st.col_int(5);
        std::string status = st.col_text(6);
        auto parsed = parse_download_status(status);
        if (!parsed) fail(ErrorKind::corrupt, "download " + std::to_string(d.id) + " has unknown status '" + status + "'");
        d.status = *parsed;
        d.updated_at = st.col_int(7);
        out.push_back(std::move(d));
    }
    return out;
}

void Store::remove_download(Id id) {
    require_writable();
    Transaction tx(db_);
    Stmt st(db_, "DELETE FROM downloads WHERE id = ?1");
    st.bind(1, id).run();
    if (sqlite3_changes(db_) == 0) fail(ErrorKind::not_found, "no download with id " + std::to_string(id));
    tx.commit();
}

// -------------------------------------------------------------------------------------------------
// Export / import

std::string Store::export_markdown(Id conversation_id) const {
    auto c = get_conversation(conversation_id);
    if (!c) fail(ErrorKind::not_found, "no conversation with id " + std::to_string(conversation_id));
    std::string out = "# " + (c->title.empty() ? std::string("Untitled") : c->title) + "\n\n";
    out += "*Created " + format_utc(c->created_at, "%Y-%m-%d %H:%M") + " UTC*\n\n";
    if (!c->system_prompt.empty()) {
        out += "**System prompt:**\n\n";
        size_t start = 0;
        while (start <= c->system_prompt.size()) {
            size_t nl = c->system_prompt.find('\n', start);
            if (nl == std::string::npos) nl = c->system_prompt.size();
            std::string_view line(c->system_prompt.data() + start, nl - start);
            out += line.empty() ? ">\n" : "> " + std::string(line) + "\n";
            start = nl + 1;
        }
        out += "\n";
    }
    for (const Message& m : list_messages(conversation_id)) {
        out += "---\n\n### " + role_heading(m.role);
        if (!m.model.empty()) out += " · " + m.model;
        out += "\n\n" + m.content + "\n\n";
        if (m.status != MessageStatus::complete) out += std::string("*(") + to_string(m.status) + ")*\n\n";
    }
    return out;
}

std::string Store::export_json(Id conversation_id) const {
    auto c = get_conversation(conversation_id);
    if (!c) fail(ErrorKind::not_found, "no conversation with id " + std::to_string(conversation_id));
    json::Array messages;
    for (const Message& m : list_messages(conversation_id)) {
        messages.push_back(json::Object{{"role", m.role},
                                        {"content", m.content},
                                        {"status", to_string(m.status)},
                                        {"created_at", m.created_at},
                                        {"model", m.model}});
    }
    json::Value doc = json::Object{{"format", "alap-conversation"},
                                   {"version", 1},
                                   {"title", c->title},
                                   {"system_prompt", c->system_prompt},
                                   {"created_at", c->created_at},
                                   {"messages", std::move(messages)}};
    try {
        return json::write(doc, {.indent = 2}) + "\n";
    } catch (const json::Error& e) {
        fail(ErrorKind::invalid, "export of conversation " + std::to_string(conversation_id) + ": " + e.what());
    }
}

Id Store::import_json(std::string_view json_text) {
    require_writable();
    json::Value doc;
    try {
        doc = json::parse(json_text);
    } catch (const json::ParseError& e) {
        fail(ErrorKind::invalid, std::string("import: ") + e.what());
    }
    // Validate everything before the first write.
    if (!doc.is_object()) fail(ErrorKind::invalid, std::string("import: the document must be an object, got ") +
                                                       json::type_name(doc.type()));
    only_keys(doc, {"format", "version", "title", "system_prompt", "created_at", "messages"}, "document");
    if (string_field(doc, "format", "document") != "alap-conversation") {
        fail(ErrorKind::invalid, "import: document.format must be \"alap-conversation\"");
    }
    const json::Value& version = member(doc, "version", "document");
    if (!version.is_int() || version.as_int() != 1) {
        fail(ErrorKind::invalid, "import: document.version must be the integer 1 (newer exports need a newer Alap)");
    }
    const std::string& title = string_field(doc, "title", "document");
    const std::string& system_prompt = string_field(doc, "system_prompt", "document");
    int64_t created_at = time_field(doc, "created_at", "document");
    const json::Value& messages = member(doc, "messages", "document");
    if (!messages.is_array()) {
        fail(ErrorKind::invalid, std::string("import: document.messages must be an array, got ") +
                                     json::type_name(messages.type()));
    }
    struct Row {
        const std::string* role;
        const std::string* content;
        MessageStatus status;
        int64_t created_at;
        const std::string* model;
    };
    std::vector<Row> rows;
    for (size_t i = 0; i < messages.as_array().size(); ++i) {
        const json::Value& m = messages.as_array()[i];
        std::string path = "messages[" + std::to_string(i) + "]";
        if (!m.is_object()) fail(ErrorKind::invalid, "import: " + path + " must be an object, got " + json::type_name(m.type()));
        only_keys(m, {"role", "content", "status", "created_at", "model"}, path);
        Row r{};
        r.role = &string_field(m, "role", path);
        if (!is_valid_role(*r.role)) {
            fail(ErrorKind::invalid, "import: " + path + ".role must be system, user, assistant or tool, got \"" + *r.role + "\"");
        }
        r.content = &string_field(m, "content", path);
        const std::string& status = string_field(m, "status", path);
        auto parsed = parse_message_status(status);
        if (!parsed) {
            fail(ErrorKind::invalid, "import: " + path + ".status must be complete, stopped, error or streaming, got \"" + status + "\"");
        }
        r.status = *parsed == MessageStatus::streaming ? MessageStatus::stopped : *parsed;
        r.created_at = time_field(m, "created_at", path);
        r.model = &string_field(m, "model", path);
        rows.push_back(r);
    }

    int64_t t = now();
    Transaction tx(db_);
    Stmt conv(db_,
              "INSERT INTO conversations(title, created_at, updated_at, system_prompt) VALUES (?1, ?2, ?3, ?4)");
    conv.bind(1, title).bind(2, created_at).bind(3, t).bind(4, system_prompt).run();
    Id id = sqlite3_last_insert_rowid(db_);
    Stmt msg(db_, "INSERT INTO messages(conversation_id, role, content, status, created_at, model) "
                  "VALUES (?1, ?2, ?3, ?4, ?5, ?6)");
    for (const Row& r : rows) {
        msg.bind(1, id).bind(2, *r.role).bind(3, *r.content).bind(4, to_string(r.status)).bind(5, r.created_at);
        msg.bind(6, *r.model);
        msg.run();
        msg.reset();
    }
    tx.commit();
    return id;
}

}  // namespace alap::store
