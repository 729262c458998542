// Random op definitions, shape functions and wrappers (kernels: random_kernels.cc).
#include "ops/random/random_ops.h"

#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "graph/shape_inference.h"
#include "base/status_macros.h"
#include "ops/internal/array_shape_fns.h"

namespace sluice {
namespace {

// The output shape is the value of the `shape` input (input 0).
absl::Status ShapeFromInput(InferenceContext* c) {
  const TensorShape& shape_in = c->input(0);
  if (shape_in.rank() != -1 && shape_in.rank() != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat(c->node().op(), ": shape must be a vector, got a tensor of shape ",
                     shape_in.DebugString()));
  }
  ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> dims, c->InputAsInts(0));
  if (dims.has_value()) {
    for (int64_t d : *dims) {
      if (d < 0) {
        return absl::InvalidArgumentError(absl::StrCat(
            c->node().op(), ": shape has a negative dimension: [", absl::StrJoin(*dims, ","), "]"));
      }
    }
    c->set_output(0, TensorShape(absl::MakeConstSpan(*dims)));
  } else if (shape_in.rank() == 1 && shape_in.dim(0) >= 0) {
    c->set_output(0, TensorShape::UnknownOfRank(shape_in.dim(0)));
  } else {
    c->set_output(0, TensorShape::Unknown());
  }
  return absl::OkStatus();
}

// minval and maxval are the last two inputs and must be scalars.
absl::Status UniformIntShape(InferenceContext* c) {
  const int maxval = c->num_inputs() - 1;
  for (int i : {maxval - 1, maxval}) {
    if (c->input(i).rank() > 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(c->node().op(), ": ", i == maxval ? "maxval" : "minval",
                       " must be a scalar, got shape ", c->input(i).DebugString()));
    }
  }
  return ShapeFromInput(c);
}

// key [1], counter [2] (and alg []) from a seed of two words.
absl::Status KeyCounterShape(InferenceContext* c) {
  const TensorShape& seed = c->input(0);
  if (seed.rank() >= 0 && (seed.rank() != 1 || (seed.dim(0) >= 0 && seed.dim(0) != 2))) {
    return absl::InvalidArgumentError(absl::StrCat(
        c->node().op(), ": seed must have shape [2], got ", seed.DebugString()));
  }
  c->set_output(0, TensorShape({1}));
  c->set_output(1, TensorShape({2}));
  if (c->num_outputs() > 2) c->set_output(2, TensorShape());
  return absl::OkStatus();
}

absl::Status RegisterFloatRandomOp(OpRegistry* ops, std::string name) {
  return ops->Register(OpDefBuilder(std::move(name))
                           .Input("shape: T")
                           .Output("output: dtype")
                           .Attr("seed: int = 0")
                           .Attr("seed2: int = 0")
                           .Attr("dtype: {half, bfloat16, float, double}")
                           .Attr("T: {int32, int64}")
                           .SetIsStateful()
                           .SetShapeFn(ShapeFromInput));
}

Output FloatRandom(const Scope& s, const char* op, Input shape, DataType dtype,
                   const ops::RandomAttrs& attrs, std::source_location loc) {
  return s.Op(op, loc)
      .Input(shape)
      .Attr("dtype", dtype)
      .Attr("seed", attrs.seed)
      .Attr("seed2", attrs.seed2)
      .Finalize1();
}

}  // namespace

absl::Status RegisterRandomOps(OpRegistry* ops) {
  RETURN_IF_ERROR(RegisterFloatRandomOp(ops, "RandomUniform"));
  RETURN_IF_ERROR(RegisterFloatRandomOp(ops, "RandomStandardNormal"));
  RETURN_IF_ERROR(RegisterFloatRandomOp(ops, "TruncatedNormal"));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("RandomUniformInt")
                                    .Input("shape: T")
                                    .Input("minval: Tout")
                                    .Input("maxval: Tout")
                                    .Output("output: Tout")
                                    .Attr("seed: int = 0")
                                    .Attr("seed2: int = 0")
                                    .Attr("Tout: {int32, int64}")
                                    .Attr("T: {int32, int64}")
                                    .SetIsStateful()
                                    .SetShapeFn(UniformIntShape)));
  for (const char* op :
       {"RandomUniform", "RandomStandardNormal", "TruncatedNormal", "RandomUniformInt"}) {
    RETURN_IF_ERROR(ops->SetNoGradient(op));
  }
  return RegisterStatelessRandomOps(ops);
}

// TensorFlow's stateless random ops (kernels: stateless_random_kernels.cc):
// the same seed, key and counter give the same values, TensorFlow's.
absl::Status RegisterStatelessRandomOps(OpRegistry* ops) {
  constexpr char kFloatTypes[] = "dtype: {half, bfloat16, float, double} = DT_FLOAT";
  constexpr char kSeedTypes[] = "Tseed: {int32, int64} = DT_INT64";
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("StatelessRandomGetKeyCounter")
                                    .Input("seed: Tseed")
                                    .Output("key: uint64")
                                    .Output("counter: uint64")
                                    .Attr(kSeedTypes)
                                    .SetShapeFn(KeyCounterShape)));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("StatelessRandomGetKeyCounterAlg")
                                    .Input("seed: Tseed")
                                    .Output("key: uint64")
                                    .Output("counter: uint64")
                                    .Output("alg: int32")
                                    .Attr(kSeedTypes)
                                    .SetShapeFn(KeyCounterShape)));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("StatelessRandomGetAlg")
                                    .Output("alg: int32")
                                    .SetIsStateful()
                                    .SetShapeFn(internal::ScalarShape)));
  constexpr char kIntTypes[] = "dtype: {int32, int64, uint32, uint64}";
  for (const char* name :
       {"StatelessRandomUniformV2", "StatelessRandomNormalV2", "StatelessTruncatedNormalV2"}) {
    RETURN_IF_ERROR(ops->Register(OpDefBuilder(name)
                                      .Input("shape: Tshape")
                                      .Input("key: uint64")
                                      .Input("counter: uint64")
                                      .Input("alg: int32")
                                      .Output("output: dtype")
                                      .Attr(kFloatTypes)
                                      .Attr("Tshape: {int32, int64} = DT_INT32")
                                      .SetShapeFn(ShapeFromInput)));
  }
  for (const char* name :
       {"StatelessRandomUniform", "StatelessRandomNormal", "StatelessTruncatedNormal"}) {
    RETURN_IF_ERROR(ops->Register(OpDefBuilder(name)
                                      .Input("shape: T")
                                      .Input("seed: Tseed")
                                      .Output("output: dtype")
                                      .Attr(kFloatTypes)
                                      .Attr("T: {int32, int64} = DT_INT32")
                                      .Attr(kSeedTypes)
                                      .SetShapeFn(ShapeFromInput)));
  }
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("StatelessRandomUniformIntV2")
                                    .Input("shape: Tshape")
                                    .Input("key: uint64")
                                    .Input("counter: uint64")
                                    .Input("alg: int32")
                                    .Input("minval: dtype")
                                    .Input("maxval: dtype")
                                    .Output("output: dtype")
                                    .Attr(kIntTypes)
                                    .Attr("Tshape: {int32, int64} = DT_INT32")
                                    .SetShapeFn(UniformIntShape)));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("StatelessRandomUniformFullIntV2")
                                    .Input("shape: Tshape")
                                    .Input("key: uint64")
                                    .Input("counter: uint64")
                                    .Input("alg: int32")
                                    .Output("output: dtype")
                                    .Attr(absl::StrCat(kIntTypes, " = DT_UINT64"))
                                    .Attr("Tshape: {int32, int64} = DT_INT32")
                                    .SetShapeFn(ShapeFromInput)));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("StatelessRandomUniformInt")
                                    .Input("shape: T")
                                    .Input("seed: Tseed")
                                    .Input("minval: dtype")
                                    .Input("maxval: dtype")
                                    .Output("output: dtype")
                                    .Attr("dtype: {int32, int64}")
                                    .Attr("T: {int32, int64}")
                                    .Attr(kSeedTypes)
                                    .SetShapeFn(UniformIntShape)));
  // TensorFlow's OpDef allows unsigned seeds here; the kernel refuses them.
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("StatelessRandomUniformFullInt")
                                    .Input("shape: T")
                                    .Input("seed: Tseed")
                                    .Output("output: dtype")
                                    .Attr(absl::StrCat(kIntTypes, " = DT_UINT64"))
                                    .Attr("T: {int32, int64} = DT_INT32")
                                    .Attr("Tseed: {int32, int64, uint32, uint64} = DT_INT64")
                                    .SetShapeFn(ShapeFromInput)));
  for (const char* op :
       {"StatelessRandomGetKeyCounter", "StatelessRandomGetKeyCounterAlg", "StatelessRandomGetAlg",
        "StatelessRandomUniformV2", "StatelessRandomNormalV2", "StatelessTruncatedNormalV2",
        "StatelessRandomUniform", "StatelessRandomNormal", "StatelessTruncatedNormal",
        "StatelessRandomUniformIntV2", "StatelessRandomUniformFullIntV2",
        "StatelessRandomUniformInt", "StatelessRandomUniformFullInt"}) {
    RETURN_IF_ERROR(ops->SetNoGradient(op));
  }
  return absl::OkStatus();
}

namespace ops {

Output RandomUniform(const Scope& s, Input shape, DataType dtype, const RandomAttrs& attrs,
                     std::source_location loc) {
  return FloatRandom(s, "RandomUniform", shape, dtype, attrs, loc);
}

Output RandomStandardNormal(const Scope& s, Input shape, DataType dtype, const RandomAttrs& attrs,
                            std::source_location loc) {
  return FloatRandom(s, "RandomStandardNormal", shape, dtype, attrs, loc);
}

Output TruncatedNormal(const Scope& s, Input shape, DataType dtype, const RandomAttrs& attrs,
                       std::source_location loc) {
  return FloatRandom(s, "TruncatedNormal", shape, dtype, attrs, loc);
}

StatelessKeyCounter StatelessRandomGetKeyCounter(const Scope& s, Input seed,
                                                 std::source_location loc) {
  std::vector<Output> out = s.Op("StatelessRandomGetKeyCounter", loc).Input(seed).FinalizeAll();
  if (out.size() != 2) return {};
  return {out[0], out[1]};
}

Output StatelessRandomUniformV2(const Scope& s, Input shape, const StatelessKeyCounter& kc,
                                DataType dtype, std::source_location loc) {
  return s.Op("StatelessRandomUniformV2", loc)
      .Input(shape)
      .Input(kc.key)
      .Input(kc.counter)
      .Input(int32_t{1})  // Philox
      .Attr("dtype", dtype)
      .Finalize1();
}

Output StatelessRandomNormalV2(const Scope& s, Input shape, const StatelessKeyCounter& kc,
                               DataType dtype, std::source_location loc) {
  return s.Op("StatelessRandomNormalV2", loc)
      .Input(shape)
      .Input(kc.key)
      .Input(kc.counter)
      .Input(int32_t{1})
      .Attr("dtype", dtype)
      .Finalize1();
}

Output StatelessTruncatedNormalV2(const Scope& s, Input shape, const StatelessKeyCounter& kc,
                                  DataType dtype, std::source_location loc) {
  return s.Op("StatelessTruncatedNormalV2", loc)
      .Input(shape)
      .Input(kc.key)
      .Input(kc.counter)
      .Input(int32_t{1})
      .Attr("dtype", dtype)
      .Finalize1();
}

Output StatelessRandomUniformIntV2(const Scope& s, Input shape, const StatelessKeyCounter& kc,
                                   Input minval, Input maxval, std::source_location loc) {
  return s.Op("StatelessRandomUniformIntV2", loc)
      .Input(shape)
      .Input(kc.key)
      .Input(kc.counter)
      .Input(int32_t{1})
      .Input(minval)
      .Input(maxval)
      .Finalize1();
}

Output StatelessRandomUniformFullIntV2(const Scope& s, Input shape, const StatelessKeyCounter& kc,
                                       DataType dtype, std::source_location loc) {
  return s.Op("StatelessRandomUniformFullIntV2", loc)
      .Input(shape)
      .Input(kc.key)
      .Input(kc.counter)
      .Input(int32_t{1})
      .Attr("dtype", dtype)
      .Finalize1();
}

Output RandomUniformInt(const Scope& s, Input shape, Input minval, Input maxval,
                        const RandomAttrs& attrs, std::source_location loc) {
  return s.Op("RandomUniformInt", loc)
      .Input(shape)
      .Input(minval)
      .Input(maxval)
      .Attr("seed", attrs.seed)
      .Attr("seed2", attrs.seed2)
      .Finalize1();
}

}  // namespace ops
}  // namespace sluice
