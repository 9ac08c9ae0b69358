// Fuzz harness for the Hugging Face API answer parsers (app/src/download/hf_api.h): the input is
// a server answer given to parseSearchResults and parseTree; every file name that comes out must
// be a safe local name and every download URL must stay on the endpoint's host. Not the network.
#include <QByteArray>
#include <QString>
#include <QUrl>
#include <string>

#include "download/download_types.h"
#include "download/hf_api.h"
#include "tests/fuzz/fuzz_targets.h"

namespace alap::fuzz {
namespace {

// One path component that the app can create in its models folder: not empty, not hidden (so not
// "." or ".."), no separator or control character, at most 255 bytes (NAME_MAX) in UTF-8.
const char* unsafe_file_name(const QString& name) {
  if (name.isEmpty()) return "empty";
  if (name.startsWith(QLatin1Char('.'))) return "hidden or dot name";
  for (QChar c : name) {
    if (c == QLatin1Char('/') || c == QLatin1Char('\\')) return "path separator";
    if (c.unicode() < 0x20 || c.unicode() == 0x7F) return "control character";
  }
  if (name.toUtf8().size() > 255) return "longer than NAME_MAX (255 bytes of UTF-8)";
  return nullptr;
}

void check_file_name(const QString& name, const char* where) {
  if (const char* why = unsafe_file_name(name)) {
    throw Violation(std::string("fuzz invariant failed: ") + where + " gave an unsafe file name (" + why + ")");
  }
}

bool is_sha256_or_empty(const QString& s) {
  if (s.isEmpty()) return true;
  if (s.size() != 64) return false;
  for (QChar c : s) {
    if (!((c >= QLatin1Char('0') && c <= QLatin1Char('9')) || (c >= QLatin1Char('a') && c <= QLatin1Char('f')))) {
      return false;
    }
  }
  return true;
}

}  // namespace

int hf_api(const uint8_t* data, size_t size) {
  const QByteArray bytes(reinterpret_cast<const char*>(data), static_cast<qsizetype>(size));
  download::HfParseLimits limits;
  limits.maxItems = 2000;

  const auto search = download::parseSearchResults(bytes, limits);
  check(search.ok() || !search.error.isEmpty(), "search parse failed without a message");
  if (search.ok()) {
    for (const auto& m : *search.value) check(m.downloads >= 0 && m.likes >= 0, "negative count");
  }

  const auto tree = download::parseTree(bytes, limits);
  check(tree.ok() || !tree.error.isEmpty(), "tree parse failed without a message");
  if (tree.ok()) {
    const QString endpoint = QStringLiteral("https://huggingface.co");
    for (const auto& f : *tree.value) {
      check_file_name(f.fileName, "parseTree");
      check(f.size >= 0, "negative file size");
      check(is_sha256_or_empty(f.sha256), "sha256 not normalized");
      check(f.splitIndex >= 0 && f.splitCount >= 0, "negative split numbers");
      const QUrl url = download::resolveUrl(endpoint, QStringLiteral("owner/model"), f.path);
      check(url.isValid() && url.host() == QLatin1String("huggingface.co") && url.scheme() == QLatin1String("https"),
            "resolve URL left the endpoint");
    }
    const auto groups = download::groupGgufFiles(*tree.value);
    for (const auto& g : groups) {
      qint64 total = 0;
      for (const auto& f : g.files) total += f.size;
      check(total == g.totalSize, "group total size");
    }
  }

  // The same bytes as a name the server gave.
  const QString name = QString::fromUtf8(bytes);
  const QString safe = download::sanitizeFileName(name);
  if (!safe.isEmpty()) check_file_name(safe, "sanitizeFileName");
  if (download::isValidRepoId(name)) {
    const QUrl url = download::treeUrl(QStringLiteral("https://huggingface.co"), name);
    check(url.host() == QLatin1String("huggingface.co"), "tree URL of a valid repo id left the host");
  }
  return 0;
}

}  // namespace alap::fuzz
