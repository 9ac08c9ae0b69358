// The installed-models scanner (model_scanner.h).
#include "download/model_scanner.h"

#include <QDir>
#include <QFileInfo>
#include <QFutureWatcher>
#include <QMap>
#include <QtConcurrent/QtConcurrentRun>
#include <exception>
#include <map>

#include "core/gguf/gguf.h"
#include "core/model/hparams.h"
#include "core/runtime/memory_plan.h"

namespace alap::download {

QString fileTypeName(int64_t fileType) {
  static const std::map<int64_t, const char*> names = {
      {0, "F32"},      {1, "F16"},      {2, "Q4_0"},     {3, "Q4_1"},    {7, "Q8_0"},    {8, "Q5_0"},
      {9, "Q5_1"},     {10, "Q2_K"},    {11, "Q3_K_S"},  {12, "Q3_K_M"}, {13, "Q3_K_L"}, {14, "Q4_K_S"},
      {15, "Q4_K_M"},  {16, "Q5_K_S"},  {17, "Q5_K_M"},  {18, "Q6_K"},   {19, "IQ2_XXS"}, {20, "IQ2_XS"},
      {21, "Q2_K_S"},  {22, "IQ3_XS"},  {23, "IQ3_XXS"}, {24, "IQ1_S"},  {25, "IQ4_NL"}, {26, "IQ3_S"},
      {27, "IQ3_M"},   {28, "IQ2_S"},   {29, "IQ2_M"},   {30, "IQ4_XS"}, {31, "IQ1_M"},  {32, "BF16"},
      {36, "TQ1_0"},   {37, "TQ2_0"},   {38, "MXFP4_MOE"},
  };
  const auto it = names.find(fileType);
  return it == names.end() ? QString() : QString::fromLatin1(it->second);
}

ModelScanner::ModelScanner(QObject* parent) : QObject(parent) {}
ModelScanner::~ModelScanner() = default;

InstalledModel ModelScanner::inspectFile(const QString& path, quint64 ctx, const SystemMemory& mem) {
  InstalledModel m;
  const QFileInfo fi(path);
  m.path = fi.absoluteFilePath();
  m.fileName = fi.fileName();
  m.fileSize = fi.size();
  std::optional<gguf::File> file;
  try {
    file.emplace(gguf::File::open(QFile::encodeName(m.path).toStdString()));
  } catch (const std::exception& e) {
    m.error = QString::fromUtf8(e.what());
    return m;
  }
  m.valid = true;
  const gguf::File& f = *file;
  try {
    m.architecture = QString::fromStdString(f.opt_string("general.architecture").value_or(""));
    m.name = QString::fromStdString(f.opt_string("general.name").value_or(""));
  } catch (const std::exception& e) {
    m.valid = false;
    m.error = QString::fromUtf8(e.what());
    return m;
  }
  // Parameters, and the tensor type holding the most bytes (when general.file_type is absent).
  std::map<std::string, uint64_t> bytesByType;
  for (const gguf::TensorInfo& t : f.tensors()) {
    m.nParams += t.n_elements();
    if (t.n_dims >= 2) bytesByType[t.type_name()] += t.n_bytes;
  }
  try {
    if (auto ft = f.opt_int("general.file_type")) m.quantization = fileTypeName(*ft);
  } catch (const std::exception&) {
  }
  if (m.quantization.isEmpty()) {
    uint64_t best = 0;
    for (const auto& [type, bytes] : bytesByType) {
      if (bytes > best) {
        best = bytes;
        m.quantization = QString::fromStdString(type).toUpper();
      }
    }
  }
  try {
    const ModelHParams hp = read_hparams(f);
    m.supported = true;
    m.contextLength = hp.n_ctx_train;
    m.ctx = ctx > 0 ? ctx : static_cast<quint64>(qMin<qint64>(hp.n_ctx_train > 0 ? hp.n_ctx_train : 4096, 8192));
    const KvShape shape{.n_layer = hp.n_layer, .n_head_kv = hp.n_head_kv, .head_dim_k = hp.head_dim_k, .head_dim_v = hp.head_dim_v};
    const CacheMode modes[3] = {CacheMode::f16, CacheMode::k8, CacheMode::k8v8};
    for (int i = 0; i < 3; ++i) {
      if (!packed_mode_supported(shape, modes[i], nullptr)) continue;
      m.kvBytes[i] = kv_cache_bytes(shape, modes[i], m.ctx).total;
      m.needBytes[i] = memoryNeeded(uint64_t(m.fileSize), m.kvBytes[i]);
      m.fit[i] = fitFor(m.needBytes[i], mem);
    }
  } catch (const std::exception& e) {
    m.supported = false;
    m.error = QStringLiteral("Alap cannot run this model: ") + QString::fromUtf8(e.what());
  }
  return m;
}

QList<InstalledModel> ModelScanner::scanFolder(const QString& folder, quint64 ctx, const SystemMemory& mem) {
  QList<InstalledModel> out;
  QDir dir(folder);
  if (!dir.exists()) return out;
  const QFileInfoList files = dir.entryInfoList({QStringLiteral("*.gguf"), QStringLiteral("*.GGUF")},
                                                QDir::Files | QDir::Readable, QDir::Name | QDir::IgnoreCase);
  for (const QFileInfo& fi : files) out.push_back(inspectFile(fi.absoluteFilePath(), ctx, mem));
  return out;
}

void ModelScanner::scan(const QString& folder, quint64 ctx) {
  const quint64 gen = ++m_generation;
  if (m_pending++ == 0) emit scanningChanged();
  auto* watcher = new QFutureWatcher<QList<InstalledModel>>(this);
  connect(watcher, &QFutureWatcherBase::finished, this, [this, watcher, gen, folder] {
    watcher->deleteLater();
    const QList<InstalledModel> result = watcher->result();
    if (--m_pending == 0) emit scanningChanged();
    if (gen == m_generation) emit scanFinished(folder, result);
  });
  watcher->setFuture(QtConcurrent::run([folder, ctx] { return scanFolder(folder, ctx, systemMemory()); }));
}

bool ModelScanner::removeModel(const QString& path, QString* error) {
  if (!QFileInfo(path).isFile()) {
    if (error) *error = QStringLiteral("%1 is not a file").arg(path);
    return false;
  }
  QFile f(path);
  if (f.moveToTrash()) return true;
  if (QFile::remove(path)) return true;
  if (error) *error = QStringLiteral("cannot delete %1: %2").arg(path, f.errorString());
  return false;
}

}  // namespace alap::download
