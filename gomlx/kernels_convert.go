package gomlx

// ConvertDType kernels. float32 is the hub: every stored dtype converts
// to and from it in one kernel, and int32 ↔ int64 and bool ↔ int convert
// directly (so indices above 2^24 stay exact). Any other pair goes
// through float32 in two launches (float16 ↔ bfloat16 is then still
// rounded once, float32 holding both exactly). Float → int truncates
// toward zero as Go does; → bool is x != 0; bool → number is 0 or 1.
//
// Block: 256 threads, one element per thread.

import "github.com/gokern/kern/gpu"

type i32f struct{}

func (i32f) load(x int32) float32  { return float32(x) }
func (i32f) store(v float32) int32 { return int32(v) }

type i64f struct{}

func (i64f) load(x int64) float32  { return float32(x) }
func (i64f) store(v float32) int64 { return int64(v) }

type boolf struct{}

func (boolf) load(x bool) float32 {
	if x {
		return 1
	}
	return 0
}
func (boolf) store(v float32) bool { return v != 0 }

func convert[S, D any, CS codec[S], CD codec[D]](cs CS, cd CD, t gpu.Thread, out []D, x []S) {
	if i := t.GlobalX(); i < len(out) {
		out[i] = cd.store(cs.load(x[i]))
	}
}

//kern:kernel block=256
func cvtF32F16(t gpu.Thread, out []gpu.Half, x []float32) { convert(f32c{}, f16c{}, t, out, x) }

//kern:kernel block=256
func cvtF32BF16(t gpu.Thread, out []gpu.BFloat16, x []float32) { convert(f32c{}, bf16c{}, t, out, x) }

//kern:kernel block=256
func cvtF32I32(t gpu.Thread, out []int32, x []float32) { convert(f32c{}, i32f{}, t, out, x) }

//kern:kernel block=256
func cvtF32I64(t gpu.Thread, out []int64, x []float32) { convert(f32c{}, i64f{}, t, out, x) }

//kern:kernel block=256
func cvtF32Bool(t gpu.Thread, out []bool, x []float32) { convert(f32c{}, boolf{}, t, out, x) }

//kern:kernel block=256
func cvtF16F32(t gpu.Thread, out []float32, x []gpu.Half) { convert(f16c{}, f32c{}, t, out, x) }

//kern:kernel block=256
func cvtBF16F32(t gpu.Thread, out []float32, x []gpu.BFloat16) { convert(bf16c{}, f32c{}, t, out, x) }

//kern:kernel block=256
func cvtI32F32(t gpu.Thread, out []float32, x []int32) { convert(i32f{}, f32c{}, t, out, x) }

//kern:kernel block=256
func cvtI64F32(t gpu.Thread, out []float32, x []int64) { convert(i64f{}, f32c{}, t, out, x) }

//kern:kernel block=256
func cvtBoolF32(t gpu.Thread, out []float32, x []bool) { convert(boolf{}, f32c{}, t, out, x) }

//kern:kernel block=256
func cvtI32I64(t gpu.Thread, out []int64, x []int32) {
	if i := t.GlobalX(); i < len(out) {
		out[i] = int64(x[i])
	}
}

//kern:kernel block=256
func cvtI64I32(t gpu.Thread, out []int32, x []int64) {
	if i := t.GlobalX(); i < len(out) {
		out[i] = int32(x[i])
	}
}

//kern:kernel block=256
func cvtBoolI32(t gpu.Thread, out []int32, x []bool) {
	if i := t.GlobalX(); i < len(out) {
		out[i] = 0
		if x[i] {
			out[i] = 1
		}
	}
}

//kern:kernel block=256
func cvtBoolI64(t gpu.Thread, out []int64, x []bool) {
	if i := t.GlobalX(); i < len(out) {
		out[i] = 0
		if x[i] {
			out[i] = 1
		}
	}
}

//kern:kernel block=256
func cvtI32Bool(t gpu.Thread, out []bool, x []int32) {
	if i := t.GlobalX(); i < len(out) {
		out[i] = x[i] != 0
	}
}

//kern:kernel block=256
func cvtI64Bool(t gpu.Thread, out []bool, x []int64) {
	if i := t.GlobalX(); i < len(out) {
		out[i] = x[i] != 0
	}
}
