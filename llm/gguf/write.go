package gguf

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
)

// Writing GGUF: small files for tests (a tiny model, corrupt variants).
// Real models come from converters; this writer is not tuned for size.

// KV is one metadata entry to write. Value is a Go value of a GGUF type
// (uint8…float64, bool, string) or a slice of one.
type KV struct {
	Key   string
	Value any
}

// TensorData is one tensor to write: Data is already encoded in Type.
type TensorData struct {
	Name string
	Dims []int // innermost first
	Type Type
	Data []byte
}

// Encode builds a GGUF v3 image with the given alignment (0: meta's
// general.alignment if it is a uint32, else the default).
func Encode(meta []KV, tensors []TensorData, alignment int) ([]byte, error) {
	for _, kv := range meta {
		if a, ok := kv.Value.(uint32); ok && kv.Key == "general.alignment" && alignment == 0 {
			alignment = int(a)
		}
	}
	if alignment == 0 {
		alignment = DefaultAlignment
	}
	var b bytes.Buffer
	le := binary.LittleEndian
	put := func(v any) { binary.Write(&b, le, v) } // bytes.Buffer writes never fail
	str := func(s string) { put(uint64(len(s))); b.WriteString(s) }
	b.WriteString(Magic)
	put(uint32(3))
	put(uint64(len(tensors)))
	put(uint64(len(meta)))
	for _, kv := range meta {
		str(kv.Key)
		vt, err := typeOf(kv.Value)
		if err != nil {
			return nil, fmt.Errorf("gguf: metadata %q: %w", kv.Key, err)
		}
		put(uint32(vt))
		switch v := kv.Value.(type) {
		case string:
			str(v)
		case []string:
			put(uint32(TypeString))
			put(uint64(len(v)))
			for _, s := range v {
				str(s)
			}
		case bool:
			put(v)
		case []bool:
			put(uint32(TypeBool))
			put(uint64(len(v)))
			put(v)
		default:
			if vt == TypeArray {
				et, _ := elemType(v)
				put(uint32(et))
				put(uint64(sliceLen(v)))
			}
			put(v)
		}
	}
	off := 0
	offsets := make([]int, len(tensors))
	for i, t := range tensors {
		str(t.Name)
		put(uint32(len(t.Dims)))
		for _, d := range t.Dims {
			put(uint64(d))
		}
		put(uint32(t.Type))
		offsets[i] = off
		put(uint64(off))
		off += (len(t.Data) + alignment - 1) / alignment * alignment
	}
	pad := func() {
		for b.Len()%alignment != 0 {
			b.WriteByte(0)
		}
	}
	for _, t := range tensors {
		pad() // the data section and each tensor start aligned; the file ends with the last tensor
		b.Write(t.Data)
	}
	return b.Bytes(), nil
}

// WriteFile encodes and writes a GGUF file.
func WriteFile(path string, meta []KV, tensors []TensorData) error {
	img, err := Encode(meta, tensors, 0)
	if err != nil {
		return err
	}
	return os.WriteFile(path, img, 0o644)
}

func typeOf(v any) (ValueType, error) {
	switch v.(type) {
	case uint8:
		return TypeUint8, nil
	case int8:
		return TypeInt8, nil
	case uint16:
		return TypeUint16, nil
	case int16:
		return TypeInt16, nil
	case uint32:
		return TypeUint32, nil
	case int32:
		return TypeInt32, nil
	case float32:
		return TypeFloat32, nil
	case bool:
		return TypeBool, nil
	case string:
		return TypeString, nil
	case uint64:
		return TypeUint64, nil
	case int64:
		return TypeInt64, nil
	case float64:
		return TypeFloat64, nil
	}
	if _, err := elemType(v); err != nil {
		return 0, err
	}
	return TypeArray, nil
}

func elemType(v any) (ValueType, error) {
	switch v.(type) {
	case []uint8:
		return TypeUint8, nil
	case []int8:
		return TypeInt8, nil
	case []uint16:
		return TypeUint16, nil
	case []int16:
		return TypeInt16, nil
	case []uint32:
		return TypeUint32, nil
	case []int32:
		return TypeInt32, nil
	case []float32:
		return TypeFloat32, nil
	case []bool:
		return TypeBool, nil
	case []string:
		return TypeString, nil
	case []uint64:
		return TypeUint64, nil
	case []int64:
		return TypeInt64, nil
	case []float64:
		return TypeFloat64, nil
	}
	return 0, fmt.Errorf("%T has no GGUF type", v)
}

func sliceLen(v any) int {
	switch s := v.(type) {
	case []uint8:
		return len(s)
	case []int8:
		return len(s)
	case []uint16:
		return len(s)
	case []int16:
		return len(s)
	case []uint32:
		return len(s)
	case []int32:
		return len(s)
	case []float32:
		return len(s)
	case []uint64:
		return len(s)
	case []int64:
		return len(s)
	case []float64:
		return len(s)
	}
	return 0
}
