// Package ptxas runs NVIDIA's PTX assembler on the PTX that kern emits and
// reports what it says.
//
// kern never needs ptxas at run time: the CUDA driver JIT-compiles PTX and the
// emulator interprets it. But the driver is the only other judge of whether
// the PTX is valid, and most machines that build kern have no GPU. ptxas is
// that judge without a GPU: if it accepts a module for sm_80 and sm_90, the
// driver will too. Its -v output is also the cheapest performance signal the
// project has (registers, spills, stack, shared and constant memory per
// kernel), so tests assert on it through Report.
//
// The package is used by tests across the repository:
//
//   - Find locates a ptxas binary: $KERN_PTXAS, then the cache that
//     scripts/fetch-ptxas.sh fills (${KERN_CACHE:-$HOME/.cache/kern}/ptxas/<version>/),
//     then $PATH.
//   - Assemble writes PTX to a temporary file, runs
//     `ptxas -arch=<arch> -v -Werror --warn-on-spills -O3`, and parses the log
//     into a Report. When ptxas rejects the PTX the error is an *Error whose
//     text quotes the PTX line each message refers to.
//   - Require and Check are the test helpers (they take testing.TB, which is
//     why this package imports testing; nothing but tests should import it).
//     Without ptxas they skip the test, except under CI=true, where a missing
//     ptxas fails it: CI must not go green by checking nothing.
//
// ptxas is proprietary and is never committed; scripts/fetch-ptxas.sh fetches
// it from the nvidia-cuda-nvcc wheel on PyPI (or Debian non-free) without
// installing a CUDA toolkit.
package ptxas
