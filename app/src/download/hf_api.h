// The Hugging Face Hub API as data: parsing of /api/models (search) and /api/models/{id}/tree/main
// answers, quantisation names parsed from GGUF file names, grouping into quantisations and split
// sets, and the URLs of the routes. Pure functions (any thread); hostile input (malformed JSON,
// wrong types, huge arrays) gives a clear error or skipped entries, never a crash. The network
// side is hf_client.h.
#pragma once

#include <QByteArray>
#include <QList>
#include <QString>
#include <QStringList>
#include <QUrl>
#include <optional>

namespace alap::download {

struct HfModelSummary {
  QString id;  // "owner/name"
  qint64 downloads = 0;
  qint64 likes = 0;
  QStringList tags;
  bool gated = false;  // "gated": "auto"/"manual"/true
};

struct HfFile {
  QString path;      // path inside the repository ("sub/x.gguf")
  QString fileName;  // sanitised last component, the local name
  qint64 size = 0;   // lfs.size when present, else size
  QString sha256;    // lfs.oid (lowercase hex), empty for non-LFS files
  QString quant;     // "Q4_K_M", "IQ4_XS", "F16", ... or "" when the name does not say
  int splitIndex = 0;  // 1-based part of an "-0000i-of-0000n" set, 0 when not split
  int splitCount = 0;
};

// The GGUF files of one quantisation: one file, or every part of a split set.
struct HfFileGroup {
  QString quant;  // "" when unknown
  QString name;   // display name: the file name, or the set's name without the split suffix
  QList<HfFile> files;  // split parts in order
  qint64 totalSize = 0;
  bool complete = true;  // every part of a split set is present
};

struct HfParseLimits {
  qint64 maxBytes = 32 << 20;  // answers larger than this are refused
  int maxItems = 20000;        // array entries read; the rest is refused
};

// Result of a parse: value, or error (a sentence naming what is wrong).
template <typename T>
struct Parsed {
  std::optional<T> value;
  QString error;
  int skipped = 0;  // entries left out for a missing/mistyped field or an unsafe path
  bool ok() const { return value.has_value(); }
};

Parsed<QList<HfModelSummary>> parseSearchResults(const QByteArray& json, const HfParseLimits& limits = {});
// Files (not directories) of a tree answer; GGUF and others alike, unsafe paths skipped.
Parsed<QList<HfFile>> parseTree(const QByteArray& json, const HfParseLimits& limits = {});

// "Qwen2.5-7B-Instruct-Q4_K_M.gguf" -> "Q4_K_M"; case-insensitive; "" when none.
QString quantFromFileName(const QString& fileName);
// Whether Alap's engine multiplies the weight types a quantisation name stands for: the plain,
// 32-block, K-quant and IQ4 types (FORMATS.md §2, §3). False for the lattice IQ1/IQ2/IQ3 types,
// the ternary TQ types, MXFP4 and the retired Q4_0_4_4-style repacks, which it refuses. True for
// "" (the name does not say): the file is checked once on disk (model_scanner.h).
bool quantRunnable(const QString& quant);
// "-00002-of-00005.gguf" -> {2, 5}; {0, 0} when not a split part.
std::pair<int, int> splitFromFileName(const QString& fileName);
// GGUF files only, grouped by (quant, split-set name); sorted by quant then name.
QList<HfFileGroup> groupGgufFiles(const QList<HfFile>& files);

// A repository id is "owner/name" of [A-Za-z0-9._-] with no ".." and no leading '.'.
bool isValidRepoId(const QString& id);

// The endpoint: $HF_ENDPOINT when set (without a trailing '/'), else https://huggingface.co.
QString defaultEndpoint();
QUrl searchUrl(const QString& endpoint, const QString& query, int limit);
QUrl treeUrl(const QString& endpoint, const QString& repoId, const QString& revision = QStringLiteral("main"));
QUrl resolveUrl(const QString& endpoint, const QString& repoId, const QString& path,
                const QString& revision = QStringLiteral("main"));

}  // namespace alap::download
