// Allows or refuses the AMX tiles (alap/kernels/quant.h set_amx_prefill) for one scope and allows
// them again afterwards, the default, also when an assertion leaves the scope early. For tests only.
#pragma once

#include "alap/kernels/quant.h"

namespace alap::test {

class ScopedAmxPrefill {
 public:
  explicit ScopedAmxPrefill(bool allowed) { kernels::set_amx_prefill(allowed); }
  ~ScopedAmxPrefill() { kernels::set_amx_prefill(true); }
  ScopedAmxPrefill(const ScopedAmxPrefill&) = delete;
  ScopedAmxPrefill& operator=(const ScopedAmxPrefill&) = delete;
};

}  // namespace alap::test
