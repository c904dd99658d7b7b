// Package safetensors reads Hugging Face safetensors files: one file, or a
// model sharded over several files with a model.safetensors.index.json.
//
// The format: an 8-byte little-endian header length N, N bytes of JSON
// mapping each tensor name to {dtype, shape, data_offsets}, then the data,
// each tensor's bytes at [begin, end) relative to the end of the header.
// Files are memory-mapped where the OS allows it (internal/mmap) and read
// whole elsewhere, so a 16 GB checkpoint costs no heap
// until a tensor is converted.
//
// Everything in a header is checked before any tensor is handed out:
// dtype known, shape non-negative, byte length equal to the shape's
// element count times the dtype's size, offsets inside the file and not
// overlapping. A failure is an error naming the file and the tensor; the
// package never panics on a corrupt file.
package safetensors
