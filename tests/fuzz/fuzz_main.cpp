// The libFuzzer entry point of one fuzz executable; ALAP_FUZZ_TARGET names the harness function
// (fuzz_targets.h). Not used by the regression test, which calls the harnesses directly.
#include "tests/fuzz/fuzz_targets.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return alap::fuzz::ALAP_FUZZ_TARGET(data, size);
}
