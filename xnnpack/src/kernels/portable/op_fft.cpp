// Discrete Fourier transforms along one axis: as a matrix (XNNPACK's GEMM
// multiplies it in; lower/complex.cpp) or line by line.
#include <cmath>

#include "kernels/portable/portable.h"

namespace tracegraph::xnnpack::portable {
namespace {

constexpr double kTwoPi = 6.283185307179586476925286766559;

// The weight of input entry j in output entry k: (real, imaginary) of
// scale * e^(sign * 2 pi i j k / n), and for kC2R the Hermitian weight of
// the half-spectrum entry j (its mirror n - j counted in). Angles from
// (j * k) mod n, so the long lines lose no precision.
struct Twiddles {
  const DftAxis& a;
  std::vector<double> cos_, sin_;
  explicit Twiddles(const DftAxis& axis) : a(axis), cos_(static_cast<std::size_t>(axis.n)), sin_(static_cast<std::size_t>(axis.n)) {
    for (i64 r = 0; r < a.n; ++r) {
      const double angle = a.sign * kTwoPi * static_cast<double>(r) / static_cast<double>(a.n);
      cos_[static_cast<std::size_t>(r)] = std::cos(angle);
      sin_[static_cast<std::size_t>(r)] = std::sin(angle);
    }
  }
  // The input entries that count: the line cropped to n (to the half spectrum for kC2R).
  i64 used() const { return std::min(a.in_len, a.kind == Dft::kC2R ? a.n / 2 + 1 : a.n); }
  double c(i64 j, i64 k) const { return cos_[static_cast<std::size_t>(j * k % a.n)]; }
  double s(i64 j, i64 k) const { return sin_[static_cast<std::size_t>(j * k % a.n)]; }
  // kC2R: entry j stands for itself and its mirror n - j, but for 0 and n/2.
  double hermitian(i64 j) const { return j == 0 || 2 * j == a.n ? 1.0 : 2.0; }
};

}  // namespace

std::vector<float> dft_matrix(const DftAxis& a) {
  const i64 in = a.in_floats(), out = a.out_floats();
  std::vector<float> w(static_cast<std::size_t>(in * out), 0.0f);
  const Twiddles t(a);
  auto at = [&](i64 row, i64 col) -> float& { return w[static_cast<std::size_t>(row * in + col)]; };
  for (i64 k = 0; k < a.out_len; ++k) {
    for (i64 j = 0; j < t.used(); ++j) {
      const double c = a.scale * t.c(j, k), s = a.scale * t.s(j, k);
      switch (a.kind) {
        case Dft::kR2C:  // x_j (c + i s)
          at(2 * k, j) = static_cast<float>(c);
          at(2 * k + 1, j) = static_cast<float>(s);
          break;
        case Dft::kC2C:  // (xr + i xi)(c + i s)
          at(2 * k, 2 * j) = static_cast<float>(c);
          at(2 * k, 2 * j + 1) = static_cast<float>(-s);
          at(2 * k + 1, 2 * j) = static_cast<float>(s);
          at(2 * k + 1, 2 * j + 1) = static_cast<float>(c);
          break;
        case Dft::kC2R: {  // the real part of (xr + i xi)(c + i s), twice for a mirrored entry
          const double h = t.hermitian(j);
          at(k, 2 * j) = static_cast<float>(h * c);
          at(k, 2 * j + 1) = h == 1.0 ? 0.0f : static_cast<float>(-h * s);
          break;
        }
      }
    }
  }
  return w;
}

void dft_lines(const DftAxis& a, const float* x, float* y, i64 lines) {
  const Twiddles t(a);
  const i64 used = t.used();
  for (i64 line = 0; line < lines; ++line) {
    const float* in = x + line * a.in_floats();
    float* out = y + line * a.out_floats();
    for (i64 k = 0; k < a.out_len; ++k) {
      double re = 0, im = 0;
      for (i64 j = 0; j < used; ++j) {
        const double c = t.c(j, k), s = t.s(j, k);
        if (a.kind == Dft::kR2C) {
          re += in[j] * c;
          im += in[j] * s;
        } else {
          const double xr = in[2 * j], xi = in[2 * j + 1];
          if (a.kind == Dft::kC2R) {
            const double h = t.hermitian(j);
            re += h * (xr * c - (h == 1.0 ? 0.0 : xi * s));
          } else {
            re += xr * c - xi * s;
            im += xr * s + xi * c;
          }
        }
      }
      if (a.kind == Dft::kC2R) {
        out[k] = static_cast<float>(a.scale * re);
      } else {
        out[2 * k] = static_cast<float>(a.scale * re);
        out[2 * k + 1] = static_cast<float>(a.scale * im);
      }
    }
  }
}

}  // namespace tracegraph::xnnpack::portable
