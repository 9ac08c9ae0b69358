// System memory and the fits verdict (system_memory.h).
#include "download/system_memory.h"

#include <unistd.h>

#include <QFile>
#include <QList>
#include <algorithm>

namespace alap::download {

SystemMemory parseMeminfo(const QByteArray& text) {
  SystemMemory m;
  for (const QByteArray& line : text.split('\n')) {
    const QList<QByteArray> f = line.simplified().split(' ');
    if (f.size() < 2) continue;
    bool ok = false;
    const uint64_t kb = f[1].toULongLong(&ok);
    if (!ok) continue;
    const uint64_t bytes = kb * (f.size() >= 3 && f[2] == "kB" ? 1024 : 1);
    if (f[0] == "MemTotal:") m.totalBytes = bytes;
    else if (f[0] == "MemAvailable:") m.availableBytes = bytes;
  }
  return m;
}

SystemMemory systemMemory() {
  QFile f(QStringLiteral("/proc/meminfo"));
  SystemMemory m;
  if (f.open(QIODevice::ReadOnly)) m = parseMeminfo(f.readAll());
  if (m.totalBytes == 0) {
    const long pages = ::sysconf(_SC_PHYS_PAGES);
    const long page = ::sysconf(_SC_PAGESIZE);
    if (pages > 0 && page > 0) m.totalBytes = uint64_t(pages) * uint64_t(page);
  }
  if (m.availableBytes == 0) {
    const long pages = ::sysconf(_SC_AVPHYS_PAGES);
    const long page = ::sysconf(_SC_PAGESIZE);
    if (pages > 0 && page > 0) m.availableBytes = uint64_t(pages) * uint64_t(page);
  }
  return m;
}

const char* fitName(Fit f) {
  switch (f) {
    case Fit::unknown: return "unknown";
    case Fit::fits: return "fits";
    case Fit::tight: return "tight";
    case Fit::tooLarge: return "too_large";
  }
  return "unknown";
}

uint64_t memoryNeeded(uint64_t fileBytes, uint64_t kvBytes) {
  const uint64_t base = fileBytes + kvBytes;
  return base + std::max<uint64_t>(base / 20, uint64_t(256) << 20);
}

Fit fitFor(uint64_t needBytes, const SystemMemory& mem) {
  if (mem.totalBytes == 0 || needBytes == 0) return Fit::unknown;
  if (needBytes > mem.totalBytes / 10 * 9) return Fit::tooLarge;
  if (mem.availableBytes > 0 && needBytes > mem.availableBytes) return Fit::tight;
  return Fit::fits;
}

}  // namespace alap::download
