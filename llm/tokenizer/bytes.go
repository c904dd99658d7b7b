package tokenizer

// The byte-level alphabet: GPT-2's bijection between the 256 byte values
// and printable Unicode characters, so every byte string is a string of
// vocabulary characters. Printable Latin-1 bytes map to themselves; the
// other 68 (controls, space, …) to U+0100 onwards in byte order (space is
// 'Ġ' U+0120, newline 'Ċ' U+010A).

import "unicode/utf8"

var (
	byteToRune [256]rune
	runeToByte = map[rune]byte{}
)

func init() {
	n := 0
	for b := 0; b < 256; b++ {
		if ('!' <= b && b <= '~') || (0xA1 <= b && b <= 0xAC) || (0xAE <= b && b <= 0xFF) {
			byteToRune[b] = rune(b)
		} else {
			byteToRune[b] = rune(256 + n)
			n++
		}
		runeToByte[byteToRune[b]] = byte(b)
	}
}

// byteLevel maps s's bytes to the byte-level alphabet.
func byteLevel(s string) []rune {
	out := make([]rune, len(s))
	for i := 0; i < len(s); i++ {
		out[i] = byteToRune[s[i]]
	}
	return out
}

// unByteLevel maps a vocabulary token back to bytes, appending to dst.
// Characters outside the alphabet (only in added tokens, which are
// decoded separately) are appended as their UTF-8.
func unByteLevel(dst []byte, tok string) []byte {
	for _, r := range tok {
		if b, ok := runeToByte[r]; ok {
			dst = append(dst, b)
		} else {
			dst = utf8.AppendRune(dst, r)
		}
	}
	return dst
}

// lossy converts b to a string, replacing each maximal invalid subpart
// (Unicode's "U+FFFD substitution of maximal subparts", as Rust's
// String::from_utf8_lossy and so the tokenizers library) with U+FFFD.
func lossy(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	out := make([]byte, 0, len(b)+8)
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r != utf8.RuneError || n > 1 {
			out = append(out, b[i:i+n]...)
			i += n
			continue
		}
		out = utf8.AppendRune(out, utf8.RuneError)
		i += max(1, validPrefix(b[i:]))
	}
	return string(out)
}

// validPrefix is the length of the longest prefix of b that begins a
// well-formed UTF-8 sequence (0 if b[0] cannot start one). For a complete
// sequence it is the sequence's length.
func validPrefix(b []byte) int {
	if len(b) == 0 {
		return 0
	}
	c := b[0]
	var n int
	lo, hi := byte(0x80), byte(0xBF) // the second byte's range
	switch {
	case c < 0x80:
		return 1
	case 0xC2 <= c && c <= 0xDF:
		n = 2
	case c == 0xE0:
		n, lo = 3, 0xA0
	case 0xE1 <= c && c <= 0xEC, c == 0xEE, c == 0xEF:
		n = 3
	case c == 0xED:
		n, hi = 3, 0x9F
	case c == 0xF0:
		n, lo = 4, 0x90
	case 0xF1 <= c && c <= 0xF3:
		n = 4
	case c == 0xF4:
		n, hi = 4, 0x8F
	default:
		return 0
	}
	k := 1
	for ; k < n && k < len(b); k++ {
		x := b[k]
		if k == 1 && (x < lo || x > hi) || k > 1 && (x < 0x80 || x > 0xBF) {
			break
		}
	}
	return k
}

// incompleteTail is the length of a trailing, well-formed but unfinished
// UTF-8 sequence of b (0 if b ends on a character boundary or in bytes
// that can never become valid).
func incompleteTail(b []byte) int {
	for k := 1; k <= 3 && k <= len(b); k++ {
		c := b[len(b)-k]
		if c < 0x80 {
			return 0
		}
		if c >= 0xC0 { // a lead byte: is the rest of b a valid start?
			need := validPrefix(b[len(b)-k:])
			if need == k && !utf8.FullRune(b[len(b)-k:]) {
				return k
			}
			return 0
		}
	}
	return 0
}
