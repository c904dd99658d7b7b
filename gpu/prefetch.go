package gpu

// L2 prefetch: a hint that data a thread will soon read (or that another
// block will) should be on its way from DRAM into L2 now. Its use is a
// kernel that knows its next addresses before it may read them: a
// persistent kernel waiting at GridSync between phases prefetches the
// next phase's weight rows first, so DRAM keeps streaming across the
// barrier. The prefetch returns at once; nothing waits for the line.
//
// A prefetch is only a hint, so it never fails: an index outside
// [0, len(s)) prefetches nothing (the compiler predicates the
// instruction on 0 ≤ i < len(s), and leaves the predicate out where its
// range analysis proves the index in range), and nobounds does not
// change that. On the emulator and in native mode there is no cache to
// fill: the call evaluates its arguments and does nothing.

// PrefetchL2 asks for the 128-byte line holding s[i] to be brought into
// L2 (prefetch.global.L2, PTX ISA §9.7.9.15 "prefetch"; PTX 2.0, sm_20).
// s must be in global memory: a kernel's slice parameter or a slice of
// one. An i outside [0, len(s)) prefetches nothing.
func PrefetchL2[T Elem](s []T, i int) {
	_, _ = s, i
}

// PrefetchL2Bulk asks for s[i:i+n], clamped to s (the elements s[j]
// with i ≤ j < i+n and 0 ≤ j < len(s)), to be brought into L2. On an
// sm_90 or newer target it is one cp.async.bulk.prefetch.L2.global (PTX
// ISA §9.7.9.25.4, "cp.async.bulk.prefetch"; PTX 8.0) over the range
// widened to whole 16-byte granules, as the instruction requires, and cut
// at 4 GiB − 16 bytes; on older targets, including an sm_80 module
// running on a newer GPU, it is one prefetch.global.L2 per 128-byte line,
// in a loop the thread runs alone, so split a long range between threads
// there (or call PrefetchL2 per line). s must be in global memory; an
// empty range prefetches nothing.
func PrefetchL2Bulk[T Elem](s []T, i, n int) {
	_, _, _ = s, i, n
}
