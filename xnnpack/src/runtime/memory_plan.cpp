#include "runtime/memory_plan.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <numeric>

namespace tracegraph::xnnpack::detail {

std::size_t MemoryPlan::total() const {
  std::size_t sum = 0;
  for (std::size_t c : capacity) sum = sum > SIZE_MAX - c ? SIZE_MAX : sum + c;
  return sum;
}

MemoryPlan plan_memory(const std::vector<Lifetime>& tensors) {
  MemoryPlan plan;
  plan.buffer_of.assign(tensors.size(), -1);
  std::vector<std::size_t> order(tensors.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return tensors[a].first < tensors[b].first; });
  std::multimap<int, int> busy_until;  // last step -> buffer
  std::vector<int> free_buffers;
  for (std::size_t t : order) {
    const Lifetime& life = tensors[t];
    for (auto it = busy_until.begin(); it != busy_until.end() && it->first < life.first;) {
      free_buffers.push_back(it->second);
      it = busy_until.erase(it);
    }
    auto capacity_of = [&](std::size_t j) { return plan.capacity[static_cast<std::size_t>(free_buffers[j])]; };
    int best = -1;
    for (std::size_t j = 0; j < free_buffers.size(); ++j) {
      if (capacity_of(j) >= life.bytes && (best < 0 || capacity_of(j) < capacity_of(static_cast<std::size_t>(best)))) best = static_cast<int>(j);
    }
    if (best < 0 && !free_buffers.empty()) {  // grow the largest free one
      best = 0;
      for (std::size_t j = 1; j < free_buffers.size(); ++j)
        if (capacity_of(j) > capacity_of(static_cast<std::size_t>(best))) best = static_cast<int>(j);
    }
    int buffer;
    if (best >= 0) {
      buffer = free_buffers[static_cast<std::size_t>(best)];
      free_buffers.erase(free_buffers.begin() + best);
      plan.capacity[static_cast<std::size_t>(buffer)] = std::max(plan.capacity[static_cast<std::size_t>(buffer)], life.bytes);
    } else {
      buffer = static_cast<int>(plan.capacity.size());
      plan.capacity.push_back(life.bytes);
    }
    plan.buffer_of[t] = buffer;
    busy_until.emplace(life.last, buffer);
  }
  return plan;
}

}  // namespace tracegraph::xnnpack::detail
