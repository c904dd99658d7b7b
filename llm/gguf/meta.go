package gguf

import (
	"fmt"
	"math"
)

// Metadata accessors. Each error names the file and the key, and says
// what the value was when it has the wrong type.

func (g *File) get(key string) (any, error) {
	v, ok := g.Meta[key]
	if !ok {
		return nil, fmt.Errorf("gguf: %s: no metadata %q", g.Path, key)
	}
	return v, nil
}

func (g *File) wrong(key string, v any, want string) error {
	return fmt.Errorf("gguf: %s: metadata %q is %T, want %s", g.Path, key, v, want)
}

// String returns a string value.
func (g *File) String(key string) (string, error) {
	v, err := g.get(key)
	if err != nil {
		return "", err
	}
	s, ok := v.(string)
	if !ok {
		return "", g.wrong(key, v, "a string")
	}
	return s, nil
}

// Uint returns a non-negative integer value of any integer type.
func (g *File) Uint(key string) (uint64, error) {
	v, err := g.get(key)
	if err != nil {
		return 0, err
	}
	n, ok := toInt(v)
	if !ok || n < 0 {
		return 0, g.wrong(key, v, "a non-negative integer")
	}
	return uint64(n), nil
}

// Int returns an integer value as int (uint64 values above MaxInt64 are
// rejected).
func (g *File) Int(key string) (int, error) {
	v, err := g.get(key)
	if err != nil {
		return 0, err
	}
	n, ok := toInt(v)
	if !ok || n > math.MaxInt || n < math.MinInt {
		return 0, g.wrong(key, v, "an integer")
	}
	return int(n), nil
}

// Float returns a float or integer value as float64.
func (g *File) Float(key string) (float64, error) {
	v, err := g.get(key)
	if err != nil {
		return 0, err
	}
	switch x := v.(type) {
	case float32:
		return float64(x), nil
	case float64:
		return x, nil
	}
	if n, ok := toInt(v); ok {
		return float64(n), nil
	}
	return 0, g.wrong(key, v, "a number")
}

// Strings returns an array of strings.
func (g *File) Strings(key string) ([]string, error) {
	v, err := g.get(key)
	if err != nil {
		return nil, err
	}
	s, ok := v.([]string)
	if !ok {
		return nil, g.wrong(key, v, "an array of strings")
	}
	return s, nil
}

// Ints returns an array of any integer type as []int.
func (g *File) Ints(key string) ([]int, error) {
	v, err := g.get(key)
	if err != nil {
		return nil, err
	}
	var out []int
	switch xs := v.(type) {
	case []int32:
		out = fill[int](len(xs), func(i int) int { return int(xs[i]) })
	case []uint32:
		out = fill[int](len(xs), func(i int) int { return int(xs[i]) })
	case []int64:
		out = fill[int](len(xs), func(i int) int { return int(xs[i]) })
	case []uint8:
		out = fill[int](len(xs), func(i int) int { return int(xs[i]) })
	case []int8:
		out = fill[int](len(xs), func(i int) int { return int(xs[i]) })
	case []int16:
		out = fill[int](len(xs), func(i int) int { return int(xs[i]) })
	case []uint16:
		out = fill[int](len(xs), func(i int) int { return int(xs[i]) })
	default:
		return nil, g.wrong(key, v, "an array of integers")
	}
	return out, nil
}

// toInt converts any integer value; ok is false for other types and for
// uint64 values that do not fit int64.
func toInt(v any) (int64, bool) {
	switch x := v.(type) {
	case uint8:
		return int64(x), true
	case int8:
		return int64(x), true
	case uint16:
		return int64(x), true
	case int16:
		return int64(x), true
	case uint32:
		return int64(x), true
	case int32:
		return int64(x), true
	case int64:
		return x, true
	case uint64:
		if x > math.MaxInt64 {
			return 0, false
		}
		return int64(x), true
	}
	return 0, false
}
