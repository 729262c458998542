// The entry point every fuzz target in this folder defines, libFuzzer's:
// called once per input; must not leak, hang or keep state that changes
// the outcome of a later input. Built two ways (fuzz/BUILD.bazel):
//  - in the fuzz build (fuzz/fuzz.bazelrc: clang-14, libFuzzer, ASan, UBSan), libFuzzer's
//    main runs it on generated inputs (fuzz/run.sh);
//  - in the ordinary build, standalone_main.cc runs it once per file of the
//    target's corpus, as a regression test of every input kept there.
#ifndef SLUICE_FUZZ_FUZZ_TARGET_H_
#define SLUICE_FUZZ_FUZZ_TARGET_H_

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

#endif  // SLUICE_FUZZ_FUZZ_TARGET_H_
