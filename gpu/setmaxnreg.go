package gpu

// Register reallocation between the warpgroups of a block (setmaxnreg,
// PTX ISA §9.7.17.1, sm_90a). A warp-specialised kernel launches every
// warp with the same register count (the kernel's, which .maxntid and
// .minnctapersm bound); the producer warpgroup, which only issues TMA
// copies, then gives registers back (SetMaxNRegDec) and the consumer
// warpgroups, which hold the wgmma accumulators, take them
// (SetMaxNRegInc). ptxas allocates the code after each call within the
// new count.
//
// Rules (the hardware's; the compiler checks the constant, the emulator
// the rest): n is a constant multiple of 8 in 24..256; all four warps of
// a warpgroup execute the same call together, with every lane active;
// an Inc blocks until enough registers have been released, so the
// producers' Dec must not wait on the consumers. The sum over the block
// must fit the SM's 64K registers (e.g. one producer warpgroup at 40 and
// two consumers at 232: 128·40 + 256·232 = 64,512).
//
// In native mode both are no-ops: there are no registers to move.

// SetMaxNRegInc raises the warpgroup's per-thread register count to n
// (setmaxnreg.inc.sync.aligned.u32 n).
func SetMaxNRegInc(t Thread, n int) {}

// SetMaxNRegDec lowers the warpgroup's per-thread register count to n
// (setmaxnreg.dec.sync.aligned.u32 n).
func SetMaxNRegDec(t Thread, n int) {}
