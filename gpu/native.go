package gpu

// This file is a placeholder for the native-mode runtime: one goroutine per
// GPU thread. It will be replaced by the real implementation.

type block struct {
	ctaid, ntid, nctaid Dim3
}

type thread struct {
	blk    *block
	tid    Dim3
	linear int
}

func (th *thread) syncBlock() { panic("gpu: native runtime not implemented") }
func (th *thread) syncWarp()  { panic("gpu: native runtime not implemented") }

func sharedArray[T Elem](th *thread, n int) []T { panic("gpu: native runtime not implemented") }
func dynShared[T Elem](th *thread) []T          { panic("gpu: native runtime not implemented") }
func shuffle[T Word](th *thread, v T, src func(int) int) T {
	panic("gpu: native runtime not implemented")
}
func ballot(th *thread, pred bool) uint32 { panic("gpu: native runtime not implemented") }
func blockReduce[T Number](th *thread, v T, op func(a, b T) T) T {
	panic("gpu: native runtime not implemented")
}
func atomicRMW[T Word](p *T, op func(T) T) T { panic("gpu: native runtime not implemented") }
func bitsEqual[T Word](a, b T) bool          { panic("gpu: native runtime not implemented") }
func fma32(x, y, z float32) float32          { panic("gpu: native runtime not implemented") }
func halfToFloat32(h uint16) float32         { panic("gpu: native runtime not implemented") }
func bf16ToFloat32(h uint16) float32         { panic("gpu: native runtime not implemented") }
func float32ToHalf(f float32) uint16         { panic("gpu: native runtime not implemented") }
func float32ToBF16(f float32) uint16         { panic("gpu: native runtime not implemented") }
func mmaF16(th *thread, a [4]uint32, b [2]uint32, c [4]float32, bf bool) [4]float32 {
	panic("gpu: native runtime not implemented")
}
func mmaS8(th *thread, a [4]uint32, b [2]uint32, c [4]int32) [4]int32 {
	panic("gpu: native runtime not implemented")
}
func ldmatrix[T Elem](th *thread, row *T, n int, trans bool) [4]uint32 {
	panic("gpu: native runtime not implemented")
}
func cpAsync[T Elem](th *thread, dst, src *T, size, srcSize int) {
	panic("gpu: native runtime not implemented")
}
func cpAsyncCommit(th *thread)      { panic("gpu: native runtime not implemented") }
func cpAsyncWait(th *thread, n int) { panic("gpu: native runtime not implemented") }
