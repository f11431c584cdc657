// Every kernel of winograd.h's Kernels for one vector type: the table
// kernel_table.cpp, table_avx2.cpp and table_avx512.cpp each make once.
#pragma once

#include "kernels/conv/depthwise_kernels.h"
#include "kernels/conv/pointwise_kernels.h"
#include "kernels/conv/unfolded_kernels.h"
#include "kernels/conv/winograd_kernels.h"

namespace tracegraph::xnnpack::winograd {
namespace {

template <class V>
constexpr Kernels kernels_of() {
  return {Lanes<V>::count, Lanes<V>::rows, Lanes<V>::panel_vectors * Lanes<V>::count, &transform_input_of<V>, &transform_output_of<V>, &gemm_of<V>, &pointwise_of<V>, &direct_of<V>, &depthwise_of<V>};
}

}  // namespace
}  // namespace tracegraph::xnnpack::winograd
