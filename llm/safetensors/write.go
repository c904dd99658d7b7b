package safetensors

// Writing safetensors, for tests and tools that make small fixtures.

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"sort"
)

// Entry is one tensor to Encode: its dtype, shape and raw bytes.
type Entry struct {
	DType DType
	Shape []int
	Data  []byte
}

// Encode returns a safetensors image of the entries, in name order, with
// the header padded to 8 bytes as the reference writer does.
func Encode(entries map[string]Entry) ([]byte, error) {
	names := make([]string, 0, len(entries))
	for n := range entries {
		names = append(names, n)
	}
	sort.Strings(names)
	header := map[string]any{}
	var off int64
	for _, n := range names {
		e := entries[n]
		header[n] = map[string]any{"dtype": e.DType, "shape": e.Shape, "data_offsets": []int64{off, off + int64(len(e.Data))}}
		off += int64(len(e.Data))
	}
	h, err := json.Marshal(header)
	if err != nil {
		return nil, fmt.Errorf("safetensors: encoding the header: %w", err)
	}
	for len(h)%8 != 0 {
		h = append(h, ' ')
	}
	out := binary.LittleEndian.AppendUint64(nil, uint64(len(h)))
	out = append(out, h...)
	for _, n := range names {
		out = append(out, entries[n].Data...)
	}
	return out, nil
}
