// The CUDA math functions the GPU kernels call, as float and double
// overloads (so a template on its compute type picks the right one), named
// once for every .cu file. __host__ __device__: the host-run tests
// (ops/gpu/*_on_host.cu) compile the same element code for the host.
//
//   using device_math::Sqrt;   // in a kernel file's namespace
//   y = Sqrt(x);               // sqrtf for float, sqrt for double
//
// nvcc only.
#ifndef SLUICE_OPS_GPU_DEVICE_MATH_CU_H_
#define SLUICE_OPS_GPU_DEVICE_MATH_CU_H_

#include <cuda_runtime.h>

#define SLUICE_DEVICE_MATH_FN __host__ __device__ __forceinline__

namespace sluice::gpu::device_math {

SLUICE_DEVICE_MATH_FN float Sqrt(float x) { return sqrtf(x); }
SLUICE_DEVICE_MATH_FN double Sqrt(double x) { return ::sqrt(x); }
SLUICE_DEVICE_MATH_FN float Exp(float x) { return expf(x); }
SLUICE_DEVICE_MATH_FN double Exp(double x) { return ::exp(x); }
SLUICE_DEVICE_MATH_FN float Expm1(float x) { return expm1f(x); }
SLUICE_DEVICE_MATH_FN double Expm1(double x) { return ::expm1(x); }
SLUICE_DEVICE_MATH_FN float Log(float x) { return logf(x); }
SLUICE_DEVICE_MATH_FN double Log(double x) { return ::log(x); }
SLUICE_DEVICE_MATH_FN float Log1p(float x) { return log1pf(x); }
SLUICE_DEVICE_MATH_FN double Log1p(double x) { return ::log1p(x); }
SLUICE_DEVICE_MATH_FN float Tanh(float x) { return tanhf(x); }
SLUICE_DEVICE_MATH_FN double Tanh(double x) { return ::tanh(x); }
SLUICE_DEVICE_MATH_FN float Pow(float x, float y) { return powf(x, y); }
SLUICE_DEVICE_MATH_FN double Pow(double x, double y) { return ::pow(x, y); }
SLUICE_DEVICE_MATH_FN float Abs(float x) { return fabsf(x); }
SLUICE_DEVICE_MATH_FN double Abs(double x) { return ::fabs(x); }
SLUICE_DEVICE_MATH_FN float Floor(float x) { return floorf(x); }
SLUICE_DEVICE_MATH_FN double Floor(double x) { return ::floor(x); }
SLUICE_DEVICE_MATH_FN float Ceil(float x) { return ceilf(x); }
SLUICE_DEVICE_MATH_FN double Ceil(double x) { return ::ceil(x); }
// Halves to even (the default rounding mode).
SLUICE_DEVICE_MATH_FN float Rint(float x) { return rintf(x); }
SLUICE_DEVICE_MATH_FN double Rint(double x) { return ::rint(x); }
SLUICE_DEVICE_MATH_FN float Erf(float x) { return erff(x); }
SLUICE_DEVICE_MATH_FN double Erf(double x) { return ::erf(x); }
SLUICE_DEVICE_MATH_FN float Erfc(float x) { return erfcf(x); }
SLUICE_DEVICE_MATH_FN double Erfc(double x) { return ::erfc(x); }
SLUICE_DEVICE_MATH_FN float Sin(float x) { return sinf(x); }
SLUICE_DEVICE_MATH_FN double Sin(double x) { return ::sin(x); }
SLUICE_DEVICE_MATH_FN float Cos(float x) { return cosf(x); }
SLUICE_DEVICE_MATH_FN double Cos(double x) { return ::cos(x); }
SLUICE_DEVICE_MATH_FN float Tan(float x) { return tanf(x); }
SLUICE_DEVICE_MATH_FN double Tan(double x) { return ::tan(x); }
SLUICE_DEVICE_MATH_FN float Sinh(float x) { return sinhf(x); }
SLUICE_DEVICE_MATH_FN double Sinh(double x) { return ::sinh(x); }
SLUICE_DEVICE_MATH_FN float Cosh(float x) { return coshf(x); }
SLUICE_DEVICE_MATH_FN double Cosh(double x) { return ::cosh(x); }
SLUICE_DEVICE_MATH_FN float Asin(float x) { return asinf(x); }
SLUICE_DEVICE_MATH_FN double Asin(double x) { return ::asin(x); }
SLUICE_DEVICE_MATH_FN float Acos(float x) { return acosf(x); }
SLUICE_DEVICE_MATH_FN double Acos(double x) { return ::acos(x); }
SLUICE_DEVICE_MATH_FN float Atan(float x) { return atanf(x); }
SLUICE_DEVICE_MATH_FN double Atan(double x) { return ::atan(x); }
SLUICE_DEVICE_MATH_FN float Asinh(float x) { return asinhf(x); }
SLUICE_DEVICE_MATH_FN double Asinh(double x) { return ::asinh(x); }
SLUICE_DEVICE_MATH_FN float Acosh(float x) { return acoshf(x); }
SLUICE_DEVICE_MATH_FN double Acosh(double x) { return ::acosh(x); }
SLUICE_DEVICE_MATH_FN float Atanh(float x) { return atanhf(x); }
SLUICE_DEVICE_MATH_FN double Atanh(double x) { return ::atanh(x); }
SLUICE_DEVICE_MATH_FN float Atan2(float y, float x) { return atan2f(y, x); }
SLUICE_DEVICE_MATH_FN double Atan2(double y, double x) { return ::atan2(y, x); }
SLUICE_DEVICE_MATH_FN float Fmod(float x, float y) { return fmodf(x, y); }
SLUICE_DEVICE_MATH_FN double Fmod(double x, double y) { return ::fmod(x, y); }

}  // namespace sluice::gpu::device_math

#undef SLUICE_DEVICE_MATH_FN

#endif  // SLUICE_OPS_GPU_DEVICE_MATH_CU_H_
