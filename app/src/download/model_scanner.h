// The installed models: the *.gguf files of a folder, each opened with core's validated GGUF
// reader (off the GUI thread) for architecture, parameter count, quantisation, context length and
// the memory it needs at a context in each cache mode against this machine; files that are not
// valid GGUF (or not a model Alap runs) are listed with the reason. Also deletion (to the trash
// when there is one). Reveal-in-folder is QtGui (QDesktopServices) and belongs to the app layer.
#pragma once

#include <QList>
#include <QObject>
#include <QString>
#include <array>
#include <cstdint>

#include "download/system_memory.h"

namespace alap::download {

struct InstalledModel {
  QString path;
  QString fileName;
  qint64 fileSize = 0;
  bool valid = false;       // a GGUF file core's reader accepts
  bool supported = false;   // and a model Alap runs (core/model read_hparams accepts it)
  QString error;            // why not valid, or why not supported
  QString architecture;     // general.architecture ("" when absent)
  QString name;             // general.name ("" when absent)
  qint64 nParams = 0;       // sum of tensor elements
  QString quantization;     // general.file_type name, else the dominant tensor type ("Q4_K")
  qint64 contextLength = 0; // trained context (<arch>.context_length), 0 when unknown
  uint64_t ctx = 0;         // the context the KV figures are for
  std::array<uint64_t, 3> kvBytes{};    // CacheMode f16, k8, k8v8 (0: mode not possible)
  std::array<uint64_t, 3> needBytes{};  // file + KV + allowance (system_memory.h)
  std::array<Fit, 3> fit{Fit::unknown, Fit::unknown, Fit::unknown};
};

// general.file_type names (FORMATS.md §1.8): 15 -> "Q4_K_M"; "" when unknown.
QString fileTypeName(int64_t fileType);

class ModelScanner : public QObject {
  Q_OBJECT

 public:
  explicit ModelScanner(QObject* parent = nullptr);
  ~ModelScanner() override;

  // Scans on a pool thread; scanFinished on this object's thread. A newer scan supersedes an
  // older one (whose result is dropped). ctx 0: the model's trained context, capped at 8192.
  void scan(const QString& folder, quint64 ctx = 4096);
  bool isScanning() const { return m_pending > 0; }

  // The scan itself, on any thread.
  static QList<InstalledModel> scanFolder(const QString& folder, quint64 ctx, const SystemMemory& mem);
  static InstalledModel inspectFile(const QString& path, quint64 ctx, const SystemMemory& mem);
  // Moves a model file to the trash (QFile::moveToTrash), or removes it where there is no trash.
  static bool removeModel(const QString& path, QString* error = nullptr);

 signals:
  void scanFinished(const QString& folder, const QList<alap::download::InstalledModel>& models);
  void scanningChanged();

 private:
  quint64 m_generation = 0;
  int m_pending = 0;
};

}  // namespace alap::download
