// Package attn256 holds ops.FlashAttention's head-dim-256 kernels. They
// live apart from package attnk (head dims 64 and 128) because each
// package's generated PTX is one file, and the unrolled d=256 tile loops
// would push attnk's past what a generated file may weigh (see
// docs/performance-ops.md). Use them through package ops, which checks
// shapes and sizes the launches; the kernels trust that.
package attn256
