// Host checks of the GPU window kernels' index arithmetic (window_index.h,
// the code conv.cu runs), over many geometries: im2col followed by a GEMM
// is the convolution computed from its definition; the col2im gather is
// exactly im2col's adjoint (so Conv2DBackpropInput is right whenever
// Conv2D is), for chunks of pixels too; the pooling windows an element
// belongs to are exactly those whose span holds it, the first maximum is
// the CPU MaxPoolGrad's choice on ties, and AvgPool's gathered gradient is
// the CPU's scatter, addition for addition.
#include "ops/gpu/window_index.h"

#include <algorithm>
#include <cstdint>
#include <random>
#include <set>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "ops/nn/internal/window_geometry.h"

namespace sluice::gpu {
namespace {

struct Case {
  int64_t batch, rows, cols, depth, filter_rows, filter_cols, out_depth;
  int64_t stride_rows, stride_cols, dilation_rows, dilation_cols;
  internal::Padding padding;
};

std::vector<Case> Cases() {
  using internal::Padding;
  return {
      {2, 7, 6, 3, 3, 3, 4, 1, 1, 1, 1, Padding::kSame},
      {2, 7, 6, 3, 3, 3, 4, 1, 1, 1, 1, Padding::kValid},
      {1, 9, 8, 2, 3, 2, 3, 2, 3, 1, 1, Padding::kSame},
      {3, 10, 11, 1, 5, 5, 2, 2, 2, 1, 1, Padding::kSame},
      {2, 9, 9, 2, 3, 3, 2, 1, 1, 2, 2, Padding::kSame},
      {1, 12, 7, 3, 2, 3, 1, 3, 1, 2, 1, Padding::kValid},
      {2, 5, 5, 4, 1, 1, 3, 1, 1, 1, 1, Padding::kValid},  // the direct (1x1) case
      {1, 4, 4, 2, 4, 4, 2, 1, 1, 1, 1, Padding::kSame},   // even filter: asymmetric padding
  };
}

Window2D Geometry(const Case& c) {
  internal::WindowAttrs attrs;
  attrs.strides = {1, c.stride_rows, c.stride_cols, 1};
  attrs.dilations = {1, c.dilation_rows, c.dilation_cols, 1};
  attrs.padding = c.padding;
  absl::StatusOr<internal::Conv2DGeometry> g = internal::ComputeConv2DGeometry(
      attrs, TensorShape({c.batch, c.rows, c.cols, c.depth}), c.filter_rows, c.filter_cols,
      c.out_depth);
  EXPECT_TRUE(g.ok()) << g.status();
  Window2D w;
  w.batch = g->batch;
  w.in_rows = g->in_rows;
  w.in_cols = g->in_cols;
  w.in_depth = g->in_depth;
  w.filter_rows = g->filter_rows;
  w.filter_cols = g->filter_cols;
  w.out_depth = g->out_depth;
  w.stride_rows = g->stride_rows;
  w.stride_cols = g->stride_cols;
  w.dilation_rows = g->dilation_rows;
  w.dilation_cols = g->dilation_cols;
  w.out_rows = g->out_rows;
  w.out_cols = g->out_cols;
  w.pad_top = g->pad_top;
  w.pad_left = g->pad_left;
  return w;
}

std::string Name(const Window2D& w) {
  return absl::StrCat("input ", w.batch, "x", w.in_rows, "x", w.in_cols, "x", w.in_depth,
                      " filter ", w.filter_rows, "x", w.filter_cols, " stride ", w.stride_rows,
                      ",", w.stride_cols, " dilation ", w.dilation_rows, ",", w.dilation_cols,
                      " out ", w.out_rows, "x", w.out_cols, " pad ", w.pad_top, ",", w.pad_left);
}

std::vector<double> Random(int64_t n, std::mt19937& rng, int lo = -8, int hi = 8) {
  std::uniform_int_distribution<int> d(lo, hi);  // small integers: sums are exact
  std::vector<double> v(n);
  for (double& x : v) x = d(rng);
  return v;
}

// The convolution from its definition, NHWC input, HWIO filter.
std::vector<double> Convolve(const Window2D& w, const std::vector<double>& in,
                             const std::vector<double>& filter) {
  std::vector<double> out(w.batch * w.out_rows * w.out_cols * w.out_depth, 0.0);
  for (int64_t b = 0; b < w.batch; ++b)
    for (int64_t oh = 0; oh < w.out_rows; ++oh)
      for (int64_t ow = 0; ow < w.out_cols; ++ow)
        for (int64_t fr = 0; fr < w.filter_rows; ++fr)
          for (int64_t fc = 0; fc < w.filter_cols; ++fc) {
            const int64_t ih = oh * w.stride_rows - w.pad_top + fr * w.dilation_rows;
            const int64_t iw = ow * w.stride_cols - w.pad_left + fc * w.dilation_cols;
            if (ih < 0 || ih >= w.in_rows || iw < 0 || iw >= w.in_cols) continue;
            for (int64_t c = 0; c < w.in_depth; ++c)
              for (int64_t o = 0; o < w.out_depth; ++o) {
                out[((b * w.out_rows + oh) * w.out_cols + ow) * w.out_depth + o] +=
                    in[((b * w.in_rows + ih) * w.in_cols + iw) * w.in_depth + c] *
                    filter[((fr * w.filter_cols + fc) * w.in_depth + c) * w.out_depth + o];
              }
          }
  return out;
}

std::vector<double> Im2Col(const Window2D& w, const std::vector<double>& in, int64_t p0,
                           int64_t p1) {
  std::vector<double> col((p1 - p0) * w.patch());
  for (int64_t i = 0; i < static_cast<int64_t>(col.size()); ++i) {
    const int64_t from = Im2ColSource(w, p0, i);
    col[i] = from < 0 ? 0.0 : in[from];
  }
  return col;
}

TEST(WindowIndexTest, Im2ColThenGemmIsTheConvolution) {
  std::mt19937 rng(7);
  for (const Case& c : Cases()) {
    const Window2D w = Geometry(c);
    const std::vector<double> in = Random(w.batch * w.image_elements(), rng);
    const std::vector<double> filter = Random(w.patch() * w.out_depth, rng);
    const std::vector<double> want = Convolve(w, in, filter);
    const int64_t pixels = w.batch * w.image_pixels();
    const std::vector<double> col = Im2Col(w, in, 0, pixels);
    for (int64_t p = 0; p < pixels; ++p) {
      for (int64_t o = 0; o < w.out_depth; ++o) {
        double sum = 0;
        for (int64_t j = 0; j < w.patch(); ++j) sum += col[p * w.patch() + j] * filter[j * w.out_depth + o];
        ASSERT_EQ(sum, want[p * w.out_depth + o]) << Name(w) << " pixel " << p << " channel " << o;
      }
    }
  }
}

TEST(WindowIndexTest, TheCol2ImGatherIsIm2ColsAdjoint) {
  std::mt19937 rng(11);
  for (const Case& c : Cases()) {
    const Window2D w = Geometry(c);
    const int64_t pixels = w.batch * w.image_pixels();
    const int64_t elements = w.batch * w.image_elements();
    // Whole images per chunk, as the kernels split them, and the whole batch.
    for (int64_t images : {int64_t{1}, w.batch}) {
      for (int64_t b0 = 0; b0 < w.batch; b0 += images) {
        const int64_t p0 = b0 * w.image_pixels();
        const int64_t p1 = std::min(pixels, (b0 + images) * w.image_pixels());
        const std::vector<double> x = Random(elements, rng);
        const std::vector<double> col = Random((p1 - p0) * w.patch(), rng);
        // <im2col(x), col>
        const std::vector<double> x_col = Im2Col(w, x, p0, p1);
        double left = 0;
        for (size_t i = 0; i < col.size(); ++i) left += x_col[i] * col[i];
        // <x, col2im(col)>, col2im by the gather; its entries stay in the chunk.
        double right = 0;
        for (int64_t e = 0; e < elements; ++e) {
          double sum = 0;
          int entries = 0;
          ForEachColumnEntryOf(w, p0, p1, e, [&](int64_t i) {
            ASSERT_GE(i, 0);
            ASSERT_LT(i, static_cast<int64_t>(col.size()));
            ASSERT_EQ(Im2ColSource(w, p0, i), e) << Name(w);
            sum += col[i];
            ++entries;
          });
          const int64_t image = e / w.image_elements();
          if (image < b0 || image >= b0 + images) EXPECT_EQ(entries, 0) << Name(w);
          right += x[e] * sum;
        }
        EXPECT_EQ(left, right) << Name(w) << " images from " << b0;
      }
    }
  }
}

// Pooling windows (no dilation) over the same inputs.
Window2D PoolGeometry(const Case& c) {
  Case p = c;
  p.dilation_rows = p.dilation_cols = 1;
  p.out_depth = p.depth;
  return Geometry(p);
}

TEST(WindowIndexTest, AnElementsPoolWindowsAreThoseHoldingIt) {
  for (const Case& c : Cases()) {
    const Window2D w = PoolGeometry(c);
    const int64_t pixels = w.batch * w.image_pixels();
    std::vector<std::set<int64_t>> holders(w.batch * w.in_rows * w.in_cols);
    for (int64_t p = 0; p < pixels; ++p) {
      const int64_t ow = p % w.out_cols, oh = (p / w.out_cols) % w.out_rows,
                    b = p / w.image_pixels();
      int64_t r0, r1, c0, c1;
      PoolSpan(oh, w.stride_rows, w.pad_top, w.filter_rows, w.in_rows, &r0, &r1);
      PoolSpan(ow, w.stride_cols, w.pad_left, w.filter_cols, w.in_cols, &c0, &c1);
      for (int64_t h = r0; h < r1; ++h)
        for (int64_t x = c0; x < c1; ++x) holders[(b * w.in_rows + h) * w.in_cols + x].insert(p);
    }
    for (int64_t e = 0; e < w.batch * w.image_elements(); ++e) {
      std::set<int64_t> got;
      int64_t last = -1;
      ForEachPoolWindowOf(w, e, [&](int64_t p) {
        EXPECT_GT(p, last) << Name(w);
        last = p;
        got.insert(p);
      });
      EXPECT_EQ(got, holders[e / w.in_depth]) << Name(w) << " element " << e;
    }
  }
}

TEST(WindowIndexTest, TheFirstMaximumWinsTies) {
  std::mt19937 rng(5);
  for (const Case& c : Cases()) {
    const Window2D w = PoolGeometry(c);
    const std::vector<double> in = Random(w.batch * w.image_elements(), rng, 0, 2);  // many ties
    for (int64_t p = 0; p < w.batch * w.image_pixels(); ++p) {
      for (int64_t ch = 0; ch < w.in_depth; ++ch) {
        const int64_t at = FirstMaxOf(w, [&](int64_t i) { return in[i]; }, p, ch);
        ASSERT_GE(at, 0) << Name(w);
        EXPECT_EQ(at % w.in_depth, ch);
        // Nothing before it in the window (row-major) is as large, nothing
        // after it larger.
        const int64_t ow = p % w.out_cols, oh = (p / w.out_cols) % w.out_rows,
                      b = p / w.image_pixels();
        int64_t r0, r1, c0, c1;
        PoolSpan(oh, w.stride_rows, w.pad_top, w.filter_rows, w.in_rows, &r0, &r1);
        PoolSpan(ow, w.stride_cols, w.pad_left, w.filter_cols, w.in_cols, &c0, &c1);
        bool before = true;
        for (int64_t h = r0; h < r1; ++h) {
          for (int64_t x = c0; x < c1; ++x) {
            const int64_t e = ((b * w.in_rows + h) * w.in_cols + x) * w.in_depth + ch;
            if (e == at) {
              before = false;
            } else if (before) {
              EXPECT_LT(in[e], in[at]) << Name(w);
            } else {
              EXPECT_LE(in[e], in[at]) << Name(w);
            }
          }
        }
      }
    }
  }
}

// The two-pass MaxPoolGrad (each window's first maximum once, then a
// gather per element) routes each window's gradient to its first maximum
// alone: it equals the CPU kernel's scatter, dx[first max] += dy.
TEST(WindowIndexTest, TheMaxPoolGradGatherIsTheScatterOfEachWindowsGradient) {
  std::mt19937 rng(7);
  for (const Case& c : Cases()) {
    const Window2D w = PoolGeometry(c);
    const std::vector<double> in = Random(w.batch * w.image_elements(), rng, 0, 3);  // ties
    const std::vector<double> dy = Random(w.batch * w.image_pixels() * w.in_depth, rng, -1, 1);
    std::vector<int64_t> first_max(dy.size());
    std::vector<double> scattered(in.size(), 0.0);
    for (size_t i = 0; i < dy.size(); ++i) {
      first_max[i] = FirstMaxOf(w, [&](int64_t at) { return in[at]; },
                                static_cast<int64_t>(i) / w.in_depth,
                                static_cast<int64_t>(i) % w.in_depth);
      if (first_max[i] >= 0) scattered[first_max[i]] += static_cast<float>(dy[i]);
    }
    for (size_t e = 0; e < in.size(); ++e) {
      const float gathered = MaxPoolGradOf(
          w, first_max.data(), [&](int64_t at) { return static_cast<float>(dy[at]); },
          static_cast<int64_t>(e));
      EXPECT_FLOAT_EQ(gathered, static_cast<float>(scattered[e])) << Name(w) << " element " << e;
    }
  }
}

// AvgPool's mean is the window's sum over its elements inside the input
// divided by their count; AvgPoolGrad's gather equals the CPU kernel's
// scatter (each window's gradient spread evenly over its elements), in
// the same order of additions.
TEST(WindowIndexTest, TheAvgPoolGatherIsTheScatterOfEachWindowsShare) {
  std::mt19937 rng(9);
  for (const Case& c : Cases()) {
    const Window2D w = PoolGeometry(c);
    const std::vector<double> in = Random(w.batch * w.image_elements(), rng);
    const std::vector<double> dy = Random(w.batch * w.image_pixels() * w.in_depth, rng, -3, 3);
    std::vector<float> scattered(in.size(), 0.0f);
    for (int64_t p = 0; p < w.batch * w.image_pixels(); ++p) {
      const int64_t ow = p % w.out_cols, oh = (p / w.out_cols) % w.out_rows;
      const int64_t b = p / (w.out_cols * w.out_rows);
      int64_t r0, r1, c0, c1;
      PoolSpan(oh, w.stride_rows, w.pad_top, w.filter_rows, w.in_rows, &r0, &r1);
      PoolSpan(ow, w.stride_cols, w.pad_left, w.filter_cols, w.in_cols, &c0, &c1);
      const int64_t count = (r1 - r0) * (c1 - c0);
      ASSERT_EQ(PoolCount(w, p), (r1 > r0 && c1 > c0) ? count : 0) << Name(w);
      for (int64_t ch = 0; ch < w.in_depth; ++ch) {
        float sum = 0;
        for (int64_t h = r0; h < r1; ++h) {
          for (int64_t x = c0; x < c1; ++x) {
            const int64_t at = ((b * w.in_rows + h) * w.in_cols + x) * w.in_depth + ch;
            sum += static_cast<float>(in[at]);
            scattered[at] += static_cast<float>(dy[p * w.in_depth + ch]) / count;
          }
        }
        const float mean = AvgPoolOf(
            w, [&](int64_t at) { return static_cast<float>(in[at]); }, p, ch);
        EXPECT_FLOAT_EQ(mean, count > 0 ? sum / count : 0.0f) << Name(w) << " window " << p;
      }
    }
    for (size_t e = 0; e < in.size(); ++e) {
      const float gathered = AvgPoolGradOf(
          w, [&](int64_t at) { return static_cast<float>(dy[at]); }, static_cast<int64_t>(e));
      EXPECT_EQ(gathered, scattered[e]) << Name(w) << " element " << e;
    }
  }
}

}  // namespace
}  // namespace sluice::gpu
