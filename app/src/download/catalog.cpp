// Catalog parsing, validation and fit estimates (catalog.h).
#include "download/catalog.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSet>
#include <cmath>
#include <stdexcept>

#include "core/runtime/memory_plan.h"
#include "download/download_types.h"

namespace alap::download {

namespace {

struct CatalogError {
  QString message;
};

QString str(const QJsonObject& o, const char* key, const QString& where, int maxLen = 200) {
  const QJsonValue v = o.value(QLatin1String(key));
  if (!v.isString() || v.toString().trimmed().isEmpty()) {
    throw CatalogError{QStringLiteral("%1: \"%2\" must be a non-empty string").arg(where, QLatin1String(key))};
  }
  if (v.toString().size() > maxLen) {
    throw CatalogError{QStringLiteral("%1: \"%2\" is longer than %3 characters").arg(where, QLatin1String(key)).arg(maxLen)};
  }
  return v.toString();
}

qint64 positive(const QJsonObject& o, const char* key, const QString& where) {
  const QJsonValue v = o.value(QLatin1String(key));
  const double d = v.toDouble(-1);
  if (!v.isDouble() || !std::isfinite(d) || d <= 0 || d != std::floor(d) || d > 1e15) {
    throw CatalogError{QStringLiteral("%1: \"%2\" must be a positive integer").arg(where, QLatin1String(key))};
  }
  return static_cast<qint64>(d);
}

}  // namespace

Parsed<QList<CatalogEntry>> parseCatalog(const QByteArray& json) {
  Parsed<QList<CatalogEntry>> out;
  QJsonParseError pe;
  const QJsonDocument doc = QJsonDocument::fromJson(json, &pe);
  if (pe.error != QJsonParseError::NoError) {
    out.error = QStringLiteral("catalog: not valid JSON (%1 at offset %2)").arg(pe.errorString()).arg(pe.offset);
    return out;
  }
  if (!doc.isObject()) {
    out.error = QStringLiteral("catalog: the document is not a JSON object");
    return out;
  }
  const QJsonObject root = doc.object();
  if (root.value(QLatin1String("format")).toString() != QLatin1String("alap-catalog") ||
      root.value(QLatin1String("version")).toInt() != 1) {
    out.error = QStringLiteral("catalog: \"format\" must be \"alap-catalog\" and \"version\" 1");
    return out;
  }
  const QJsonValue models = root.value(QLatin1String("models"));
  if (!models.isArray() || models.toArray().isEmpty() || models.toArray().size() > 1000) {
    out.error = QStringLiteral("catalog: \"models\" must be a non-empty array");
    return out;
  }
  QList<CatalogEntry> entries;
  QSet<QString> ids;
  try {
    int index = 0;
    for (const QJsonValue& v : models.toArray()) {
      QString where = QStringLiteral("catalog entry %1").arg(index++);
      if (!v.isObject()) throw CatalogError{where + QStringLiteral(": not an object")};
      const QJsonObject o = v.toObject();
      CatalogEntry e;
      e.id = str(o, "id", where);
      where += QStringLiteral(" (%1)").arg(e.id);
      if (ids.contains(e.id)) throw CatalogError{where + QStringLiteral(": duplicate id")};
      ids.insert(e.id);
      if (o.contains(QLatin1String("sha256"))) {
        throw CatalogError{where + QStringLiteral(": carries a checksum; the SHA-256 must come from the server")};
      }
      e.name = str(o, "name", where);
      e.repository = str(o, "repository", where);
      if (!isValidRepoId(e.repository)) throw CatalogError{where + QStringLiteral(": \"repository\" is not owner/name")};
      e.file = str(o, "file", where);
      QString why;
      if (sanitizeFileName(e.file, &why) != e.file) throw CatalogError{where + QStringLiteral(": ") + why + QStringLiteral(" (or a path)")};
      if (!e.file.endsWith(QLatin1String(".gguf"))) throw CatalogError{where + QStringLiteral(": \"file\" is not a .gguf file")};
      e.sizeBytes = positive(o, "size_bytes", where);
      e.quantization = str(o, "quantization", where);
      if (quantFromFileName(e.file) != e.quantization.toUpper()) {
        throw CatalogError{where + QStringLiteral(": \"quantization\" %1 does not match the file name (%2)")
                                       .arg(e.quantization, quantFromFileName(e.file))};
      }
      e.architecture = str(o, "architecture", where);
      if (e.architecture != QLatin1String("llama") && e.architecture != QLatin1String("qwen2") &&
          e.architecture != QLatin1String("qwen3")) {
        throw CatalogError{where + QStringLiteral(": architecture %1 is not one Alap runs (llama, qwen2, qwen3)").arg(e.architecture)};
      }
      e.parameters = str(o, "parameters", where);
      e.license = str(o, "license", where);
      const QJsonValue langs = o.value(QLatin1String("languages"));
      if (!langs.isArray() || langs.toArray().isEmpty()) throw CatalogError{where + QStringLiteral(": \"languages\" must be a non-empty array")};
      for (const QJsonValue& l : langs.toArray()) {
        if (!l.isString() || l.toString().size() < 2 || l.toString().size() > 3) {
          throw CatalogError{where + QStringLiteral(": \"languages\" must hold language codes")};
        }
        e.languages << l.toString();
      }
      const QJsonValue multi = o.value(QLatin1String("multilingual"));
      if (!multi.isBool()) throw CatalogError{where + QStringLiteral(": \"multilingual\" must be true or false")};
      e.multilingual = multi.toBool();
      if (e.multilingual != (e.languages.size() > 1)) {
        throw CatalogError{where + QStringLiteral(": \"multilingual\" disagrees with \"languages\"")};
      }
      e.bengali = e.languages.contains(QStringLiteral("bn"));
      e.contextLength = positive(o, "context_length", where);
      e.nLayer = positive(o, "n_layer", where);
      e.nHeadKv = positive(o, "n_head_kv", where);
      e.headDim = positive(o, "head_dim", where);
      e.description = str(o, "description", where, 120);
      e.descriptionBn = str(o, "description_bn", where, 160);
      entries.push_back(e);
    }
  } catch (const CatalogError& err) {
    out.error = err.message;
    return out;
  }
  out.value = std::move(entries);
  return out;
}

Parsed<QList<CatalogEntry>> loadCatalog() {
  QFile f(QString::fromLatin1(kCatalogResource));
  if (!f.open(QIODevice::ReadOnly)) {
    Parsed<QList<CatalogEntry>> out;
    out.error = QStringLiteral("the model catalog %1 is missing from this build").arg(QLatin1String(kCatalogResource));
    return out;
  }
  return parseCatalog(f.readAll());
}

CatalogFit catalogFit(const CatalogEntry& e, uint64_t ctx, const SystemMemory& mem) {
  CatalogFit fit;
  const KvShape shape{.n_layer = e.nLayer, .n_head_kv = e.nHeadKv, .head_dim_k = e.headDim, .head_dim_v = e.headDim};
  const CacheMode modes[3] = {CacheMode::f16, CacheMode::k8, CacheMode::k8v8};
  for (int i = 0; i < 3; ++i) {
    if (!packed_mode_supported(shape, modes[i], nullptr)) continue;
    try {
      fit.kvBytes[i] = kv_cache_bytes(shape, modes[i], ctx).total;
    } catch (const std::invalid_argument&) {
      continue;
    }
    fit.needBytes[i] = memoryNeeded(uint64_t(e.sizeBytes), fit.kvBytes[i]);
    fit.fit[i] = fitFor(fit.needBytes[i], mem);
  }
  return fit;
}

}  // namespace alap::download
