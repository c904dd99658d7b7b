package emu

// MN-major (transposed) wgmma operands, imm-trans 1 (PTX ISA §9.7.15,
// "Shared Memory Matrix Layout", the canonical MN-major layouts): the M
// or N values of one k are contiguous. For the 16-bit element (mn, k):
//
//	no swizzle:      start + mn/8·sbo + k/8·lbo + k%8·16 + mn%8·2
//	W-byte swizzle:  start + mn/(W/2)·lbo + k/8·sbo + k%8·W + mn%(W/2)·2,
//	                 then swizzleAddr
//
// (sbo steps along MN without swizzle but along K with one; lbo the
// other). gpu.WGMMAOperandOffset is the same function in native mode.

// wgmmaOperandOffset is the shared address of element (mn, k) of a 16-bit
// operand: K-major (wgmmaElemOffset) or MN-major.
func wgmmaOperandOffset(desc uint64, mnMajor bool, mn, k int) int {
	if !mnMajor {
		return wgmmaElemOffset(desc, mn, k)
	}
	start := int(desc&0x3fff) << 4
	lbo := int(desc>>16&0x3fff) << 4
	sbo := int(desc>>32&0x3fff) << 4
	var w int
	switch desc >> 62 {
	case 0:
		return start + mn/8*sbo + k/8*lbo + k%8*16 + mn%8*2
	case 1:
		w = 128
	case 2:
		w = 64
	default:
		w = 32
	}
	return swizzleAddr(start+mn/(w/2)*lbo+k/8*sbo+k%8*w+mn%(w/2)*2, w)
}
