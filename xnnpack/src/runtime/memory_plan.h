// The memory plan: which buffer holds each intermediate tensor, as a pure
// function of the tensors' sizes and lifetimes (steps of the plan), so that
// it can be tested alone and the backend only applies it.
#pragma once

#include <cstddef>
#include <vector>

namespace tracegraph::xnnpack::detail {

// A tensor that needs storage: its bytes, and the steps from its first write
// to its last read, both included (-1 for a graph input, written before the
// first step; the step count for an output, read after the last).
struct Lifetime {
  std::size_t bytes = 0;
  int first = 0;
  int last = 0;
};

struct MemoryPlan {
  std::vector<int> buffer_of;          // per tensor, in the order given
  std::vector<std::size_t> capacity;   // per buffer, in bytes
  std::size_t total() const;           // the bytes of all buffers (saturating)
};

// Greedy best fit in order of first use: a tensor takes the smallest free
// buffer that holds it, else grows the largest free one, else a new buffer;
// a buffer is free once the last reader of its tensor has run. Two tensors
// whose lifetimes overlap never share a buffer.
MemoryPlan plan_memory(const std::vector<Lifetime>& tensors);

}  // namespace tracegraph::xnnpack::detail
