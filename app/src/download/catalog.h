// The curated model catalog (resources/catalog.json, embedded as :/alap/catalog.json): parsing
// with strict validation, and the "fits on this machine" estimate of each entry (file size + KV
// cache at a context, core/runtime/memory_plan.h, against system memory). Not a downloader and
// not a list model: the app shows CatalogEntry rows and starts downloads through HfClient and
// DownloadEngine (the expected SHA-256 comes from the server, never from the catalog).
#pragma once

#include <QByteArray>
#include <QList>
#include <QString>
#include <QStringList>
#include <array>
#include <cstdint>

#include "download/hf_api.h"
#include "download/system_memory.h"

namespace alap::download {

struct CatalogEntry {
  QString id;            // unique slug
  QString name;          // display name
  QString repository;    // "owner/name" on the hub
  QString file;          // file in the repository (its local name too)
  qint64 sizeBytes = 0;  // approximate
  QString quantization;  // as parsed from the file name ("Q4_K_M")
  QString architecture;  // llama, qwen2 or qwen3
  QString parameters;    // "1.5B"
  QString license;
  QStringList languages;  // ISO 639-1 codes the model card claims
  bool multilingual = false;
  bool bengali = false;   // languages contains "bn"
  qint64 contextLength = 0;
  qint64 nLayer = 0, nHeadKv = 0, headDim = 0;
  QString description;    // English, one line
  QString descriptionBn;  // the same in Bengali ("description_bn")
};

inline constexpr const char* kCatalogResource = ":/alap/catalog.json";

// Parses and validates a catalog document. Any invalid entry fails the whole parse with an error
// naming the entry and the field (the catalog ships with the app: an error is a bug).
Parsed<QList<CatalogEntry>> parseCatalog(const QByteArray& json);
// The embedded catalog.
Parsed<QList<CatalogEntry>> loadCatalog();

// Memory an entry needs at ctx tokens in each cache mode (f16, k8, k8v8), and the verdict.
struct CatalogFit {
  std::array<uint64_t, 3> kvBytes{};  // index: CacheMode f16, k8, k8v8
  std::array<uint64_t, 3> needBytes{};
  std::array<Fit, 3> fit{Fit::unknown, Fit::unknown, Fit::unknown};
};
CatalogFit catalogFit(const CatalogEntry& e, uint64_t ctx, const SystemMemory& mem);

}  // namespace alap::download
