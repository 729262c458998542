// CRC-32C (Castagnoli), as used by TFRecord framing (event files) and by
// Sluice's checkpoint shards.
//
//   uint32_t crc = Crc32c(data, n);
//   crc = Crc32cExtend(crc, more, m);          // same as one call over both
//   uint32_t stored = MaskCrc32c(crc);         // TFRecord's masked form
//
// Why our own: Debian 12 has no packaged CRC-32C library for C++ (Abseil
// gained absl/crc only after 20220623), and the CPU's CRC32 instruction
// (SSE 4.2; a table-driven form where the build lacks it) is a few lines.
// Thread-safe (the tables are built once, on first use).
#ifndef SLUICE_RUNTIME_CRC32C_H_
#define SLUICE_RUNTIME_CRC32C_H_

#include <cstddef>
#include <cstdint>

namespace sluice {

// The CRC of `n` bytes continuing from a previous CRC `crc` (0 to start).
uint32_t Crc32cExtend(uint32_t crc, const void* data, size_t n);
inline uint32_t Crc32c(const void* data, size_t n) { return Crc32cExtend(0, data, n); }

// TFRecord's masking: rotate right by 15 bits and add a constant, so that a
// CRC stored inside CRC'd data does not confuse the check.
inline uint32_t MaskCrc32c(uint32_t crc) {
  return ((crc >> 15) | (crc << 17)) + 0xa282ead8u;
}
inline uint32_t UnmaskCrc32c(uint32_t masked) {
  uint32_t rot = masked - 0xa282ead8u;
  return (rot >> 17) | (rot << 15);
}

}  // namespace sluice

#endif  // SLUICE_RUNTIME_CRC32C_H_
