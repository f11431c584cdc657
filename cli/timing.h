// What the commands time their steps with.
#pragma once

#include <chrono>

namespace tracegraph::cli {

using Clock = std::chrono::steady_clock;

inline double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

}  // namespace tracegraph::cli
