package gguf

import "fmt"

// Type is a ggml tensor type (enum ggml_type).
type Type uint32

// The ggml types this package knows the block layout of.
const (
	F32  Type = 0
	F16  Type = 1
	Q4_0 Type = 2
	Q4_1 Type = 3
	Q5_0 Type = 6
	Q5_1 Type = 7
	Q8_0 Type = 8
	Q8_1 Type = 9
	Q2_K Type = 10
	Q3_K Type = 11
	Q4_K Type = 12
	Q5_K Type = 13
	Q6_K Type = 14
	Q8_K Type = 15
	BF16 Type = 30
)

// layout is a type's block: elements per block and bytes per block.
type layout struct {
	name  string
	block int
	bytes int
}

var layouts = map[Type]layout{
	F32:  {"F32", 1, 4},
	F16:  {"F16", 1, 2},
	BF16: {"BF16", 1, 2},
	Q4_0: {"Q4_0", 32, 2 + 16},
	Q4_1: {"Q4_1", 32, 2 + 2 + 16},
	Q5_0: {"Q5_0", 32, 2 + 4 + 16},
	Q5_1: {"Q5_1", 32, 2 + 2 + 4 + 16},
	Q8_0: {"Q8_0", 32, 2 + 32},
	Q8_1: {"Q8_1", 32, 4 + 4 + 32},
	Q2_K: {"Q2_K", 256, 256/16 + 256/4 + 2 + 2},
	Q3_K: {"Q3_K", 256, 256/8 + 256/4 + 12 + 2},
	Q4_K: {"Q4_K", 256, 2 + 2 + 12 + 256/2},
	Q5_K: {"Q5_K", 256, 2 + 2 + 12 + 256/8 + 256/2},
	Q6_K: {"Q6_K", 256, 256/2 + 256/4 + 256/16 + 2},
	Q8_K: {"Q8_K", 256, 4 + 256 + 256/16*2},
}

func (t Type) String() string {
	if l, ok := layouts[t]; ok {
		return l.name
	}
	return fmt.Sprintf("ggml_type(%d)", uint32(t))
}

// ValueType is a metadata value's type (enum gguf_metadata_value_type).
type ValueType uint32

// The metadata value types of GGUF v3.
const (
	TypeUint8   ValueType = 0
	TypeInt8    ValueType = 1
	TypeUint16  ValueType = 2
	TypeInt16   ValueType = 3
	TypeUint32  ValueType = 4
	TypeInt32   ValueType = 5
	TypeFloat32 ValueType = 6
	TypeBool    ValueType = 7
	TypeString  ValueType = 8
	TypeArray   ValueType = 9
	TypeUint64  ValueType = 10
	TypeInt64   ValueType = 11
	TypeFloat64 ValueType = 12
)

var valueTypeNames = [...]string{"uint8", "int8", "uint16", "int16", "uint32", "int32", "float32", "bool", "string", "array", "uint64", "int64", "float64"}

func (v ValueType) String() string {
	if int(v) < len(valueTypeNames) {
		return valueTypeNames[v]
	}
	return fmt.Sprintf("gguf_type(%d)", uint32(v))
}

// scalarSize is the encoded size of a fixed-size value type, 0 for
// strings and arrays, -1 for an unknown type.
func (v ValueType) scalarSize() int {
	switch v {
	case TypeUint8, TypeInt8, TypeBool:
		return 1
	case TypeUint16, TypeInt16:
		return 2
	case TypeUint32, TypeInt32, TypeFloat32:
		return 4
	case TypeUint64, TypeInt64, TypeFloat64:
		return 8
	case TypeString, TypeArray:
		return 0
	}
	return -1
}
