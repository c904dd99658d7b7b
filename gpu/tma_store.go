package gpu

// TMA stores (cp.async.bulk.tensor, PTX ISA §9.7.9.25.5.1, sm_90): one
// thread asks the TMA unit to copy a box of shared memory into a 2-D
// tensor in global memory, described by a tensor map as for TMALoad2D
// (tma.go): the box is read row by row from src, box[0] elements a row,
// each element's shared address swizzled by the map's mode, and elements
// that fall outside the tensor are not written (a ragged edge needs no
// predicate).
//
// Completion is by bulk async-group, not by mbarrier: BulkCommitGroup
// closes a group of the thread's stores, BulkWaitGroupRead(t, n) waits
// until at most n groups may still be reading their shared memory (so
// src may be overwritten), BulkWaitGroup(t, n) until at most n groups are
// incomplete (their writes done). Shared memory written by ordinary
// stores must be made visible to the TMA unit first: FenceProxyAsync
// between the writes (and a barrier, if other threads wrote it) and the
// TMAStore2D.
//
// In native mode the copy happens inside TMAStore2D and the waits do
// nothing; the emulator reads the shared box only when the thread waits
// (or its warp's turn ends), so a kernel that overwrites src before
// BulkWaitGroupRead stores the new contents there, as it may on a GPU.

// TMAStore2D copies the box at src in shared memory to element
// coordinates (x, y) of the tensor described by the map at tmap
// (cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group
// [tmap, {x, y}], [src]).
func TMAStore2D[T Elem](t Thread, tmap *uint64, x, y int, src *T) {
	tmaStore2D(t.th, tmap, x, y, src)
}

// BulkCommitGroup closes the thread's bulk async-group of TMA stores
// (cp.async.bulk.commit_group).
func BulkCommitGroup(t Thread) {}

// BulkWaitGroup waits until at most n of the thread's committed bulk
// groups are incomplete (cp.async.bulk.wait_group n); n is a constant.
func BulkWaitGroup(t Thread, n int) {}

// BulkWaitGroupRead waits until at most n of the thread's committed bulk
// groups may still read their shared memory (cp.async.bulk.wait_group.read
// n); n is a constant.
func BulkWaitGroupRead(t Thread, n int) {}
