//go:build gpu

package kern_test

// gpuTag is true in a -tags gpu build: the process's libcuda is the real
// driver (it is loaded once per process), so the stub driver's tests,
// which run in every build without the tag, skip.
const gpuTag = true
