// std::source_location, also where the standard library cannot provide it:
// libstdc++ 12 offers it only to compilers with __builtin_source_location
// (GCC 12, clang 15+), and the fuzz build uses clang-14 (fuzz/fuzz.bazelrc).
// There the same interface is built on __builtin_FILE / __builtin_LINE,
// which every supported compiler has. Include this instead of
// <source_location>.
#ifndef SLUICE_BASE_SOURCE_LOCATION_H_
#define SLUICE_BASE_SOURCE_LOCATION_H_

#include <cstdint>
#include <source_location>
#include <version>

#if !defined(__cpp_lib_source_location)
namespace std {

struct source_location {
  static constexpr source_location current(const char* file = __builtin_FILE(),
                                           const char* function = __builtin_FUNCTION(),
                                           uint_least32_t line = __builtin_LINE()) noexcept {
    source_location here;
    here.file_ = file;
    here.function_ = function;
    here.line_ = line;
    return here;
  }
  constexpr const char* file_name() const noexcept { return file_; }
  constexpr const char* function_name() const noexcept { return function_; }
  constexpr uint_least32_t line() const noexcept { return line_; }
  constexpr uint_least32_t column() const noexcept { return 0; }

 private:
  const char* file_ = "";
  const char* function_ = "";
  uint_least32_t line_ = 0;
};

}  // namespace std
#endif

#endif  // SLUICE_BASE_SOURCE_LOCATION_H_
