// This machine's memory (total and available now, from /proc/meminfo on Linux) and the "fits"
// verdict of a model: weights file + KV cache at a context against that memory. Arithmetic and
// one file read; nothing is allocated.
#pragma once

#include <QString>
#include <cstdint>

namespace alap::download {

struct SystemMemory {
  uint64_t totalBytes = 0;
  uint64_t availableBytes = 0;  // MemAvailable: what can be used now without swapping
};

SystemMemory systemMemory();
// Parses the text of /proc/meminfo (tests feed their own); zeros when absent.
SystemMemory parseMeminfo(const QByteArray& text);

enum class Fit {
  unknown,  // the KV shape or the memory is unknown
  fits,     // needs <= available memory now
  tight,    // needs more than is free now but at most 90% of total: close other programs
  tooLarge  // needs more than 90% of total memory
};
const char* fitName(Fit f);  // "unknown", "fits", "tight", "too_large"

// needBytes = file + KV cache (+ a fixed 5% / 256 MiB allowance for buffers), compared with mem.
Fit fitFor(uint64_t needBytes, const SystemMemory& mem);
uint64_t memoryNeeded(uint64_t fileBytes, uint64_t kvBytes);

}  // namespace alap::download
