// Fuzz harness for the conversation JSON import: the strict JSON parser (with a write/parse round
// trip) and Store::import_json into a scratch SQLite file, then export → import → export again.
// Not a test of the other Store methods.
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

#include "core/store/json.h"
#include "core/store/store.h"
#include "tests/fuzz/fuzz_targets.h"

namespace alap::fuzz {
namespace {

void json_round_trip(std::string_view text) {
  json::Value v;
  try {
    v = json::parse(text);
  } catch (const json::ParseError& e) {
    check(e.offset() <= text.size(), "parse error offset past the input");
    return;
  }
  // Anything parsed must write, and the written text must parse back to the same value and
  // be a fixed point of write(parse()).
  for (int indent : {0, 2}) {
    std::string out = json::write(v, {.indent = indent});
    check(json::is_valid_utf8(out), "json::write gave invalid UTF-8");
    json::Value again = json::parse(out);
    check(again == v, "json round trip changed the value");
    check(json::write(again, {.indent = indent}) == out, "json::write is not a fixed point");
  }
}

std::filesystem::path scratch_path() {
  std::error_code ec;
  std::filesystem::path dir = std::filesystem::is_directory("/dev/shm", ec) ? std::filesystem::path("/dev/shm")
                                                                             : std::filesystem::temp_directory_path();
  return dir / ("alap-fuzz-store-" + std::to_string(::getpid()) + ".db");
}

void remove_scratch() {
  std::error_code ec;
  for (const char* suffix : {"", "-wal", "-shm"}) {
    std::filesystem::remove(scratch_path().string() + suffix, ec);
  }
}

store::Store& scratch_store() {
  static std::unique_ptr<store::Store> s = [] {
    remove_scratch();
    std::atexit(remove_scratch);
    store::Options opt;
    opt.clock = [] { return int64_t{1'700'000'000'000}; };
    return std::make_unique<store::Store>(store::Store::open(scratch_path(), opt));
  }();
  return *s;
}

}  // namespace

int store_json_import(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  json_round_trip(text);

  store::Store& st = scratch_store();
  store::Id id = 0;
  try {
    id = st.import_json(text);
  } catch (const store::StoreError& e) {
    check(e.kind() == store::ErrorKind::invalid, "import_json failed with a kind other than invalid");
    return 0;
  }
  // A successful import exports, and the export imports to the same export.
  const std::string first = st.export_json(id);
  store::Id id2 = st.import_json(first);
  const std::string second = st.export_json(id2);
  check(first == second, "export → import → export is not stable");
  check(st.list_messages(id).size() == st.list_messages(id2).size(), "message count differs after re-import");
  st.purge_conversation(id);
  st.purge_conversation(id2);
  return 0;
}

}  // namespace alap::fuzz
