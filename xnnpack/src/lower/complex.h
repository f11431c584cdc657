// Complex tensors and the Fourier transforms (complex.cpp).
#pragma once

#include "lower/lowering.h"

namespace tracegraph::xnnpack {

// The ops that take complex tensors (held as (real, imaginary) float pairs,
// Slot::complex); the runtime refuses a complex input to any other.
bool takes_complex(std::string_view base);
// The refusal's reason: which ops take them.
extern const std::string kComplexOps;
// _fft_r2c, _fft_c2r, _fft_c2c and torch.fft's fft/ifft/rfft/irfft (2, n) and hfft/ihfft.
void lower_fft(Context& cx, const Node& n, NodeState& st);
// stft of a real signal (1-D or 2-D): windowed frames, then one real-to-complex transform.
void lower_stft(Context& cx, const Node& n, NodeState& st);
// hann_window, hamming_window, blackman_window, bartlett_window.
void lower_window(Context& cx, const Node& n, NodeState&);
// view_as_real, view_as_complex, real, imag, complex, conj and resolve_conj.
void lower_complex(Context& cx, const Node& n, NodeState&);
// add/sub/mul/div where an operand is complex (the others: real tensors or
// numbers, broadcast); false where neither is.
bool lower_complex_binary(Context& cx, const Node& n, const std::string& base);
// The layout ops that also move complex and int64 values (view, permute,
// select, cat, ...): lower_layout_on_pairs runs the op's own lowering over
// their pairs of 32-bit words, its dims and sizes given for their rank.
bool layout_op_on_pairs(std::string_view base);
void lower_layout_on_pairs(Context& cx, const Node& n, NodeState& st, Lowering lower);
// The magnitudes of complex slot x (abs).
int complex_abs(Context& cx, int x);
// Slot x cast to a complex type ((x, 0) pairs), or a complex x to a real one (its real parts).
int complex_cast(Context& cx, const Node& n, int x, bool to_complex_type);

}  // namespace tracegraph::xnnpack
