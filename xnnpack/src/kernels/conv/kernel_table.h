// Every kernel of conv_kernels.h's Kernels for one vector type: the table
// kernel_table.cpp, table_avx2.cpp and table_avx512.cpp each make once.
#pragma once

#include "kernels/conv/depthwise_kernels.h"
#include "kernels/conv/pointwise_kernels.h"
#include "kernels/conv/unfolded_kernels.h"
#include "kernels/conv/winograd_kernels.h"

namespace tracegraph::xnnpack::conv {
namespace {

template <class V>
constexpr Kernels kernels_of() {
  return {Lanes<V>::count, Lanes<V>::rows, Lanes<V>::panel_vectors * Lanes<V>::count, &winograd::transform_input_of<V>, &winograd::transform_output_of<V>,
          &winograd::gemm_of<V>, &pointwise::pointwise_of<V>, &unfolded::direct_of<V>, &depthwise::depthwise_of<V>};
}

}  // namespace
}  // namespace tracegraph::xnnpack::conv
