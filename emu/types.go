package emu

// PTX fundamental types (PTX ISA §5.2.1) and their properties.

// dtype is a PTX fundamental or packed type.
type dtype uint8

const (
	tNone dtype = iota
	tPred
	tB8
	tB16
	tB32
	tB64
	tB128
	tU8
	tU16
	tU32
	tU64
	tS8
	tS16
	tS32
	tS64
	tF16
	tF16x2
	tBF16
	tBF16x2
	tF32
	tF64
	tTF32
	numTypes
)

type typeInfo struct {
	name  string
	bytes int
	kind  tkind
}

// tkind groups types by how their bits are interpreted.
type tkind uint8

const (
	kBits tkind = iota
	kUnsigned
	kSigned
	kFloat
	kPredicate
)

var types = [numTypes]typeInfo{
	tNone:   {"", 0, kBits},
	tPred:   {"pred", 1, kPredicate},
	tB8:     {"b8", 1, kBits},
	tB16:    {"b16", 2, kBits},
	tB32:    {"b32", 4, kBits},
	tB64:    {"b64", 8, kBits},
	tB128:   {"b128", 16, kBits},
	tU8:     {"u8", 1, kUnsigned},
	tU16:    {"u16", 2, kUnsigned},
	tU32:    {"u32", 4, kUnsigned},
	tU64:    {"u64", 8, kUnsigned},
	tS8:     {"s8", 1, kSigned},
	tS16:    {"s16", 2, kSigned},
	tS32:    {"s32", 4, kSigned},
	tS64:    {"s64", 8, kSigned},
	tF16:    {"f16", 2, kFloat},
	tF16x2:  {"f16x2", 4, kFloat},
	tBF16:   {"bf16", 2, kFloat},
	tBF16x2: {"bf16x2", 4, kFloat},
	tF32:    {"f32", 4, kFloat},
	tF64:    {"f64", 8, kFloat},
	tTF32:   {"tf32", 4, kFloat},
}

var typeByName = func() map[string]dtype {
	m := make(map[string]dtype, numTypes)
	for i, t := range types {
		if t.name != "" {
			m[t.name] = dtype(i)
		}
	}
	return m
}()

func (t dtype) String() string { return types[t].name }

// size is the type's width in bytes (1 for .pred).
func (t dtype) size() int { return types[t].bytes }

// bits is the type's width in bits.
func (t dtype) bits() int { return types[t].bytes * 8 }

func (t dtype) isFloat() bool  { return types[t].kind == kFloat }
func (t dtype) isSigned() bool { return types[t].kind == kSigned }

// mask is the all-ones value of the type's width.
func (t dtype) mask() uint64 {
	if t.size() >= 8 {
		return ^uint64(0)
	}
	return 1<<(8*t.size()) - 1
}

// sext sign-extends the low bits of v from the type's width to 64 bits.
func (t dtype) sext(v uint64) uint64 {
	sh := 64 - t.bits()
	if sh <= 0 {
		return v
	}
	return uint64(int64(v<<sh) >> sh)
}

// ext extends v from the type's width to 64 bits: sign extension for
// signed types, zero extension otherwise (PTX ISA §5.2.2 on operand sizes).
func (t dtype) ext(v uint64) uint64 {
	if t.isSigned() {
		return t.sext(v)
	}
	return v & t.mask()
}
