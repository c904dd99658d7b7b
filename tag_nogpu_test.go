//go:build !gpu

package kern_test

// gpuTag is true in a -tags gpu build (tag_gpu_test.go).
const gpuTag = false
