package main

import "github.com/gokern/kern/gpu"

//go:generate go run github.com/gokern/kern/cmd/kern gen

// The format: a template for writing your own.
//
// Values are signed 6-bit integers q in -32..31, each standing for
// q·scale, with one float32 scale per group of 32 values. Four values are
// packed into three bytes, little-endian: read the three bytes as one
// 24-bit word
//
//	w = byte0 | byte1<<8 | byte2<<16
//
// and value k (0..3) is bits 6k..6k+5 of w:
//
//	         byte 2           byte 1           byte 0
//	bit  23 ........ 16 | 15 ........ 8 | 7 ......... 0
//	     d d d d d d c c  c c c c b b b b  b b a a a a a a
//	     └─ value 3 ─┘└── value 2 ─┘└── value 1 ─┘└ value 0 ┘
//
// so value 0 is the low six bits of byte 0, value 1 straddles bytes 0 and
// 1, value 2 straddles bytes 1 and 2, and value 3 is the top six bits of
// byte 2. A group of 32 values is 24 bytes; the whole tensor is padded
// with zeros to a whole number of groups, so the kernel needs no tail
// case. 32 values cost 24 + 4 bytes: 7 bits a value with the scale.
//
// To adapt it: change how many bytes make a word and how many bits a value
// takes (5 bits: 8 values in 5 bytes, a 40-bit word in a uint64), how the
// bits become a number (signExtend6 below, or a lookup table in
// gpu.Shared for non-uniform codes such as NF4), and where the scale
// lives. Keep one thread per word: adjacent threads then read adjacent
// bytes and write adjacent floats, so a warp's accesses coalesce.

const groupSize = 32 // values sharing one scale

// Unpack6 expands the packed 6-bit values to float32, one 3-byte word
// (four values) per thread; out has len(packed)/3·4 elements.
//
//kern:kernel block=256
func Unpack6(t gpu.Thread, packed []uint8, scale, out []float32) {
	g := t.GlobalX() // the word this thread unpacks
	if 4*g >= len(out) {
		return
	}
	w := uint32(packed[3*g]) | uint32(packed[3*g+1])<<8 | uint32(packed[3*g+2])<<16
	s := scale[4*g/groupSize]
	var v [4]float32
	//kern:unroll
	for k := range 4 {
		v[k] = float32(signExtend6(w>>(6*k))) * s
	}
	gpu.Store4(out, 4*g, v) // one 128-bit store: 4g is a multiple of 4
}

// signExtend6 returns the low six bits of w as a signed number: shift them
// to the top of a 32-bit word, then shift back arithmetically, which
// copies bit 5 (the sign) into the upper bits.
func signExtend6(w uint32) int32 { return int32(w<<26) >> 26 }
