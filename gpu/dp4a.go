package gpu

// Dp4a is c plus the dot product of the four signed bytes of a with the
// four signed bytes of b (byte i of each, bits 8i..8i+7, as int8), in
// int32 with wrap-around: dp4a.s32.s32 (PTX ISA §9.7.1.23, sm_61 and
// later; SASS IDP.4A). An int8 dot product of 4 elements in one
// instruction, where unpacking the bytes costs a PRMT or shift each and
// then a multiply-add.
func Dp4a(a, b uint32, c int32) int32 {
	for i := range 4 {
		c += int32(int8(a>>(8*i))) * int32(int8(b>>(8*i)))
	}
	return c
}
