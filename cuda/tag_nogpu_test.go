//go:build !gpu

package cuda

// gpuTag is true in a -tags gpu build, where Init must find the real driver.
const gpuTag = false
