// Package bwdkv holds the dK/dV kernels of ops.FlashAttentionBackward's
// v2, on the tensor cores, at head dims 64 and 128; package bwdq holds
// its dQ kernels (ops/flash_bwd.go describes the math and the layouts;
// package bwdk holds v1, on CUDA cores, and the delta kernel both
// versions use). The two are packages of their own because each
// package's generated PTX is one file, and together they would come to
// 0.9 MB. Use them through package ops, which checks the shapes; the
// kernels trust that.
//
// FlashAttention-2's backward (Dao 2023, Algorithm 2) as two kernels, so
// that no gradient is summed with atomics and the results are
// deterministic:
//
//   - KV (kv.go): a block owns 64 keys of one KV head, a warp 16 of them;
//     it walks every query tile of 32 rows of every query head of the
//     group and accumulates dV += Pᵀ·dO and dK += dSᵀ·Q in registers,
//     computing the transposed tiles Sᵀ = K·Qᵀ and dPᵀ = V·dOᵀ directly, so
//     that Pᵀ and dSᵀ leave the multiply already in the A-fragment layout
//     of the next one.
//   - Q (package bwdq, q.go): a block owns 64 queries of one head, a
//     warp 16; it walks the key tiles of 32 rows, recomputes S = Q·Kᵀ and
//     dP = dO·Vᵀ, and accumulates dQ += dS·K.
//
// FlashAttention-2 instead adds each key block's dQ contribution into a
// float32 buffer with atomics; the Q kernel costs two more matrix products
// per tile (S and dP once more) but no scratch and no atomics.
//
// Every multiply is mma.sync m16n8k16 (f32 accumulators) fed by ldmatrix
// from shared memory rows padded to headDim+8 elements (as in package
// attnk: 0 bank conflicts for ldmatrix and for the 16-byte cp.async
// stores). P and dS are rounded to the element type once, to enter the
// second multiply, as FlashAttention-2 does.
package bwdkv
