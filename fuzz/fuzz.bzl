"""sluice_fuzzer: a libFuzzer target and the regression test of its corpus."""

load("//bazel:sluice.bzl", "SLUICE_COPTS")

def sluice_fuzzer(name, srcs, deps):
    """Defines NAME (the fuzzer) and NAME_corpus_test.

    In the fuzz build (clang-14, fuzz/fuzz.bazelrc, fuzz/run.sh) NAME links libFuzzer's
    main; otherwise standalone_main.cc, which runs the inputs it is given.
    NAME_corpus_test runs every file of corpus/NAME/ in the ordinary build.
    """
    native.cc_library(
        name = name + "_lib",
        testonly = True,
        srcs = srcs,
        copts = SLUICE_COPTS,
        deps = deps + [":fuzz_target"],
        alwayslink = True,
    )
    native.cc_binary(
        name = name,
        testonly = True,
        deps = [":" + name + "_lib"] + select({
            ":fuzzing": [],
            "//conditions:default": [":standalone_main"],
        }),
        linkopts = select({
            ":fuzzing": ["-fsanitize=fuzzer"],
            "//conditions:default": [],
        }),
    )
    native.cc_test(
        name = name + "_corpus_test",
        size = "small",
        deps = [":" + name + "_lib", ":standalone_main"],
        args = ["fuzz/corpus/" + name],
        data = native.glob(["corpus/" + name + "/**"]),
    )
