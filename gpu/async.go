package gpu

// Asynchronous global→shared copies (cp.async, PTX ISA §9.7.9.25, sm_80+).
// A copy issued by CpAsync is only guaranteed complete for the issuing
// thread after CpAsyncWait lets its group finish; other threads see it after
// a following Sync. dst must be shared memory, src global memory, both
// aligned to the copy size.

// CpAsync copies size bytes (constant 4, 8 or 16) from src to dst.
func CpAsync[T Elem](t Thread, dst, src *T, size int) { cpAsync(t.th, dst, src, size, size) }

// CpAsyncZFill copies srcSize bytes (0..size) from src to dst and fills the
// rest of the size bytes with zeros; with srcSize 0, src is not read, which
// makes out-of-range tile loads safe.
func CpAsyncZFill[T Elem](t Thread, dst, src *T, size, srcSize int) {
	cpAsync(t.th, dst, src, size, srcSize)
}

// CpAsyncCommit closes the group of copies this thread has issued since the
// last commit (cp.async.commit_group).
func CpAsyncCommit(t Thread) { cpAsyncCommit(t.th) }

// CpAsyncWait blocks until at most n (a constant) of this thread's
// committed groups are still pending (cp.async.wait_group n).
func CpAsyncWait(t Thread, n int) { cpAsyncWait(t.th, n) }
