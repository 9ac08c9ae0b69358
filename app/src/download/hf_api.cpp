// Parsing and URLs of the Hugging Face Hub API (hf_api.h).
#include "download/hf_api.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QJsonParseError>
#include <QMap>
#include <QRegularExpression>
#include <algorithm>
#include <cmath>

#include "download/download_types.h"

namespace alap::download {

namespace {

template <typename T>
Parsed<T> parseError(const QString& what) {
  Parsed<T> p;
  p.error = what;
  return p;
}

// A non-negative integer from a JSON number (or a numeric string); empty when absent or invalid.
std::optional<qint64> toCount(const QJsonValue& v) {
  if (v.isDouble()) {
    const double d = v.toDouble();
    if (!std::isfinite(d) || d < 0 || d > 9.0e15 || d != std::floor(d)) return std::nullopt;
    return static_cast<qint64>(d);
  }
  if (v.isString()) {
    bool ok = false;
    const qint64 n = v.toString().toLongLong(&ok);
    if (ok && n >= 0) return n;
  }
  return std::nullopt;
}

std::optional<QJsonArray> topArray(const QByteArray& json, const HfParseLimits& limits, const char* what, QString* error) {
  if (json.size() > limits.maxBytes) {
    *error = QStringLiteral("the %1 answer is too large (%2 bytes)").arg(QLatin1String(what)).arg(json.size());
    return std::nullopt;
  }
  QJsonParseError pe;
  const QJsonDocument doc = QJsonDocument::fromJson(json, &pe);
  if (pe.error != QJsonParseError::NoError) {
    *error = QStringLiteral("the %1 answer is not valid JSON (%2 at offset %3)")
                 .arg(QLatin1String(what), pe.errorString())
                 .arg(pe.offset);
    return std::nullopt;
  }
  if (!doc.isArray()) {
    *error = QStringLiteral("the %1 answer is not a JSON array").arg(QLatin1String(what));
    return std::nullopt;
  }
  const QJsonArray a = doc.array();
  if (a.size() > limits.maxItems) {
    *error = QStringLiteral("the %1 answer has too many entries (%2)").arg(QLatin1String(what)).arg(a.size());
    return std::nullopt;
  }
  return a;
}

}  // namespace

bool isValidRepoId(const QString& id) {
  static const QRegularExpression re(QStringLiteral("^[A-Za-z0-9][A-Za-z0-9._-]{0,95}/[A-Za-z0-9][A-Za-z0-9._-]{0,95}$"));
  return re.match(id).hasMatch() && !id.contains(QLatin1String(".."));
}

Parsed<QList<HfModelSummary>> parseSearchResults(const QByteArray& json, const HfParseLimits& limits) {
  QString error;
  const auto arr = topArray(json, limits, "model search", &error);
  if (!arr) return parseError<QList<HfModelSummary>>(error);
  Parsed<QList<HfModelSummary>> out;
  QList<HfModelSummary> models;
  for (const QJsonValue& v : *arr) {
    if (!v.isObject()) {
      ++out.skipped;
      continue;
    }
    const QJsonObject o = v.toObject();
    HfModelSummary m;
    QJsonValue idv = o.value(QLatin1String("id"));
    if (!idv.isString()) idv = o.value(QLatin1String("modelId"));
    if (!idv.isString() || !isValidRepoId(idv.toString())) {
      ++out.skipped;
      continue;
    }
    m.id = idv.toString();
    m.downloads = toCount(o.value(QLatin1String("downloads"))).value_or(0);
    m.likes = toCount(o.value(QLatin1String("likes"))).value_or(0);
    const QJsonValue tags = o.value(QLatin1String("tags"));
    if (tags.isArray()) {
      const QJsonArray ta = tags.toArray();
      for (int i = 0; i < ta.size() && i < 200; ++i) {
        if (ta.at(i).isString() && ta.at(i).toString().size() <= 200) m.tags.push_back(ta.at(i).toString());
      }
    }
    const QJsonValue gated = o.value(QLatin1String("gated"));
    m.gated = (gated.isBool() && gated.toBool()) || (gated.isString() && !gated.toString().isEmpty() &&
                                                     gated.toString() != QLatin1String("false"));
    models.push_back(m);
  }
  out.value = std::move(models);
  return out;
}

Parsed<QList<HfFile>> parseTree(const QByteArray& json, const HfParseLimits& limits) {
  QString error;
  const auto arr = topArray(json, limits, "repository file list", &error);
  if (!arr) return parseError<QList<HfFile>>(error);
  Parsed<QList<HfFile>> out;
  QList<HfFile> files;
  for (const QJsonValue& v : *arr) {
    if (!v.isObject()) {
      ++out.skipped;
      continue;
    }
    const QJsonObject o = v.toObject();
    const QJsonValue type = o.value(QLatin1String("type"));
    if (type.isString() && type.toString() != QLatin1String("file")) continue;  // directories
    const QJsonValue pathv = o.value(QLatin1String("path"));
    if (!pathv.isString() || pathv.toString().size() > 1000) {
      ++out.skipped;
      continue;
    }
    HfFile f;
    f.path = pathv.toString();
    if (f.path.startsWith(QLatin1Char('/')) || f.path.contains(QLatin1String("//"))) {
      ++out.skipped;
      continue;
    }
    f.fileName = sanitizeFileName(f.path);
    if (f.fileName.isEmpty()) {
      ++out.skipped;
      continue;
    }
    const auto size = toCount(o.value(QLatin1String("size")));
    const QJsonValue lfsv = o.value(QLatin1String("lfs"));
    if (lfsv.isObject()) {
      const QJsonObject lfs = lfsv.toObject();
      f.sha256 = normalizeSha256(lfs.value(QLatin1String("oid")).toString());
      const auto lsize = toCount(lfs.value(QLatin1String("size")));
      if (lsize) f.size = *lsize;
      else if (size) f.size = *size;
    } else if (size) {
      f.size = *size;
    }
    f.quant = quantFromFileName(f.fileName);
    const auto [idx, count] = splitFromFileName(f.fileName);
    f.splitIndex = idx;
    f.splitCount = count;
    files.push_back(f);
  }
  out.value = std::move(files);
  return out;
}

QString quantFromFileName(const QString& fileName) {
  QString base = fileName;
  if (base.endsWith(QLatin1String(".gguf"), Qt::CaseInsensitive)) base.chop(5);
  static const QRegularExpression split(QStringLiteral("-\\d{5}-of-\\d{5}$"));
  base.remove(split);
  // The quantisation is a token bounded by separators; the last one wins ("Q8_0-F16" style
  // names are rare; the weights' type is conventionally last).
  static const QRegularExpression re(
      QStringLiteral("(?:^|[-._])("
                     "IQ[1-4]_(?:XXS|XS|NL|S|M)"
                     "|Q[2-8]_K(?:_(?:XL|S|M|L))?"
                     "|Q[4-8]_[01](?:_\\d_\\d)?"
                     "|TQ[12]_0|MXFP4|BF16|F16|F32|FP16|FP32"
                     ")(?=$|[-._])"),
      QRegularExpression::CaseInsensitiveOption);
  QString found;
  auto it = re.globalMatch(base);
  while (it.hasNext()) found = it.next().captured(1);
  found = found.toUpper();
  if (found == QLatin1String("FP16")) found = QStringLiteral("F16");
  if (found == QLatin1String("FP32")) found = QStringLiteral("F32");
  return found;
}

bool quantRunnable(const QString& quant) {
  if (quant.isEmpty()) return true;
  static const QRegularExpression runnable(
      QStringLiteral("^(?:F32|F16|BF16|Q[4-5]_[01]|Q8_0|Q[2-8]_K(?:_(?:XL|S|M|L))?|IQ4_(?:NL|XS))$"),
      QRegularExpression::CaseInsensitiveOption);
  return runnable.match(quant).hasMatch();
}

std::pair<int, int> splitFromFileName(const QString& fileName) {
  static const QRegularExpression re(QStringLiteral("-(\\d{5})-of-(\\d{5})\\.gguf$"), QRegularExpression::CaseInsensitiveOption);
  const auto m = re.match(fileName);
  if (!m.hasMatch()) return {0, 0};
  const int i = m.captured(1).toInt();
  const int n = m.captured(2).toInt();
  if (i < 1 || n < 1 || i > n) return {0, 0};
  return {i, n};
}

QList<HfFileGroup> groupGgufFiles(const QList<HfFile>& files) {
  static const QRegularExpression split(QStringLiteral("-\\d{5}-of-\\d{5}(?=\\.gguf$)"), QRegularExpression::CaseInsensitiveOption);
  QMap<QString, HfFileGroup> groups;  // key: directory + set name
  for (const HfFile& f : files) {
    if (!f.fileName.endsWith(QLatin1String(".gguf"), Qt::CaseInsensitive)) continue;
    QString setName = f.fileName;
    if (f.splitCount > 0) setName.remove(split);
    const int slash = int(f.path.lastIndexOf(QLatin1Char('/')));
    const QString key = (slash >= 0 ? f.path.left(slash + 1) : QString()) + setName + QLatin1Char('|') +
                        QString::number(f.splitCount);
    HfFileGroup& g = groups[key];
    g.quant = f.quant;
    g.name = setName;
    g.files.push_back(f);
    g.totalSize += f.size;
  }
  QList<HfFileGroup> out;
  for (HfFileGroup& g : groups) {
    std::sort(g.files.begin(), g.files.end(), [](const HfFile& a, const HfFile& b) { return a.splitIndex < b.splitIndex; });
    if (g.files.front().splitCount > 0) {
      const int n = g.files.front().splitCount;
      g.complete = g.files.size() == n;
      for (int i = 0; g.complete && i < n; ++i) g.complete = g.files[i].splitIndex == i + 1;
    }
    out.push_back(g);
  }
  std::stable_sort(out.begin(), out.end(), [](const HfFileGroup& a, const HfFileGroup& b) {
    if (a.quant != b.quant) return a.quant < b.quant;
    return a.name < b.name;
  });
  return out;
}

QString defaultEndpoint() {
  QString e = qEnvironmentVariable("HF_ENDPOINT").trimmed();
  if (e.isEmpty()) e = QStringLiteral("https://huggingface.co");
  while (e.endsWith(QLatin1Char('/'))) e.chop(1);
  return e;
}

QUrl searchUrl(const QString& endpoint, const QString& query, int limit) {
  QUrl u(endpoint + QStringLiteral("/api/models"));
  u.setQuery(QStringLiteral("search=") + QString::fromLatin1(QUrl::toPercentEncoding(query)) +
                 QStringLiteral("&filter=gguf&sort=downloads&direction=-1&limit=") + QString::number(qBound(1, limit, 100)),
             QUrl::StrictMode);
  return u;
}

namespace {
QString encodePath(const QString& path) {
  QStringList parts;
  for (const QString& p : path.split(QLatin1Char('/'))) parts << QString::fromLatin1(QUrl::toPercentEncoding(p));
  return parts.join(QLatin1Char('/'));
}
}  // namespace

QUrl treeUrl(const QString& endpoint, const QString& repoId, const QString& revision) {
  return QUrl(endpoint + QStringLiteral("/api/models/") + encodePath(repoId) + QStringLiteral("/tree/") +
                  QString::fromLatin1(QUrl::toPercentEncoding(revision)) + QStringLiteral("?recursive=true"),
              QUrl::StrictMode);
}

QUrl resolveUrl(const QString& endpoint, const QString& repoId, const QString& path, const QString& revision) {
  return QUrl(endpoint + QLatin1Char('/') + encodePath(repoId) + QStringLiteral("/resolve/") +
                  QString::fromLatin1(QUrl::toPercentEncoding(revision)) + QLatin1Char('/') + encodePath(path),
              QUrl::StrictMode);
}

}  // namespace alap::download
