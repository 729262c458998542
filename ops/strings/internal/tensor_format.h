// A tensor's values as text, in TensorFlow's two layouts (its
// Tensor::SummarizeValue), for StringFormat, PrintV2 and Print:
//
//   FormatTensor(t, 3)        tf.print / tf.strings.format: numpy-like,
//                             "[[1 2 ... 8 9]\n [10 11 ... 18 19]\n ...]":
//                             per axis the first and last `summarize`
//                             entries around "..." (summarize < 0: all);
//                             strings quoted and C-escaped ("\"a\\n\"")
//   FormatTensorLegacy(t, 3)  tf.compat.v1.Print: the first `summarize`
//                             values in nested brackets, "..." after them
//                             ("[1 2 3...]")
//
// Numbers as TensorFlow's StrCat writes them: integers in decimal, bools 1
// or 0, floats (half and bfloat16 through float) with the fewest of 6 or 9
// significant digits that read back to the same float (doubles: 15 or 17),
// "nan", "-nan", "inf", "-inf". Types with no text (resources, variants)
// print "?" per value, as TensorFlow prints what it cannot show.
// Thread-safe: pure functions.
#ifndef SLUICE_OPS_STRINGS_INTERNAL_TENSOR_FORMAT_H_
#define SLUICE_OPS_STRINGS_INTERNAL_TENSOR_FORMAT_H_

#include <cstdint>
#include <string>

#include "runtime/tensor.h"

namespace sluice {

std::string FormatTensor(const Tensor& t, int64_t summarize);
std::string FormatTensorLegacy(const Tensor& t, int64_t summarize);

// One float or double as FormatTensor writes it.
std::string FormatFloat(float v);
std::string FormatDouble(double v);

}  // namespace sluice

#endif  // SLUICE_OPS_STRINGS_INTERNAL_TENSOR_FORMAT_H_
