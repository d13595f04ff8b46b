#ifndef VITRINE_CFUZZER_SHIM_H
#define VITRINE_CFUZZER_SHIM_H
// libFuzzer's driver, for a program with its own main (LLVM's libFuzzer documentation, "Using
// libFuzzer as a library"). Defined only when linking with -sanitize=fuzzer: call it only in
// FUZZING builds.
#include <stddef.h>
#include <stdint.h>

/// Runs libFuzzer with the command line `argc`/`argv` (its flags and corpus folders), calling
/// `test_one_input` once per input; returns libFuzzer's exit status.
int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*test_one_input)(const uint8_t *data, size_t size));

#endif
