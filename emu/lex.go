package emu

// Tokenizing PTX source text (PTX ISA §4: comments, identifiers, constants).

import (
	"fmt"
	"strings"
)

// tokKind classifies a token.
type tokKind uint8

const (
	tokEOF    tokKind = iota
	tokIdent          // identifiers, directives (.reg), opcodes (add.f32), registers (%r1)
	tokNumber         // integer and float constants: 12, 0x1F, 0f3F800000, 1.5
	tokString         // "quoted"
	tokPunct          // one of , ; : { } [ ] ( ) + - @ ! | < > =
)

type token struct {
	kind tokKind
	text string
	line int
}

func (t token) String() string {
	if t.kind == tokEOF {
		return "end of file"
	}
	return fmt.Sprintf("%q", t.text)
}

// SyntaxError is a malformed or unsupported construct in PTX text.
type SyntaxError struct {
	Line int    // 1-based PTX line
	Msg  string // what is wrong
}

func (e *SyntaxError) Error() string { return fmt.Sprintf("ptx line %d: %s", e.Line, e.Msg) }

// ErrorList is every error found loading a module, in line order.
type ErrorList []*SyntaxError

func (l ErrorList) Error() string {
	switch len(l) {
	case 0:
		return "no errors"
	case 1:
		return "emu: " + l[0].Error()
	}
	var b strings.Builder
	fmt.Fprintf(&b, "emu: %d errors:", len(l))
	for i, e := range l {
		if i == 10 {
			fmt.Fprintf(&b, "\n\t(and %d more)", len(l)-i)
			break
		}
		b.WriteString("\n\t")
		b.WriteString(e.Error())
	}
	return b.String()
}

func isIdentStart(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c == '$' || c == '%' || c == '.'
}

func isIdentChar(c byte) bool {
	return isIdentStart(c) || c >= '0' && c <= '9'
}

// lex splits src into tokens. Comments (// and /* */) are dropped. A
// single ':' ends a label, while '::' inside a name (ld.global.L2::128B)
// stays part of it.
func lex(src []byte) ([]token, error) {
	var toks []token
	line := 1
	for i := 0; i < len(src); {
		c := src[i]
		switch {
		case c == '\n':
			line++
			i++
		case c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v':
			i++
		case c == '/' && i+1 < len(src) && src[i+1] == '/':
			for i < len(src) && src[i] != '\n' {
				i++
			}
		case c == '/' && i+1 < len(src) && src[i+1] == '*':
			start := line
			i += 2
			for {
				if i+1 >= len(src) {
					return nil, &SyntaxError{start, "unterminated /* comment"}
				}
				if src[i] == '*' && src[i+1] == '/' {
					i += 2
					break
				}
				if src[i] == '\n' {
					line++
				}
				i++
			}
		case c == '"':
			j := i + 1
			for j < len(src) && src[j] != '"' && src[j] != '\n' {
				if src[j] == '\\' {
					j++
				}
				j++
			}
			if j >= len(src) || src[j] != '"' {
				return nil, &SyntaxError{line, "unterminated string"}
			}
			toks = append(toks, token{tokString, string(src[i+1 : j]), line})
			i = j + 1
		case c >= '0' && c <= '9':
			j := i + 1
			for j < len(src) {
				ch := src[j]
				if ch >= '0' && ch <= '9' || ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z' || ch == '.' || ch == '_' {
					j++
					continue
				}
				// The sign of a decimal float's exponent: 1.5e-3.
				if (ch == '-' || ch == '+') && (src[j-1] == 'e' || src[j-1] == 'E') && isDecimal(src[i:j-1]) {
					j++
					continue
				}
				break
			}
			toks = append(toks, token{tokNumber, string(src[i:j]), line})
			i = j
		case isIdentStart(c):
			j := i + 1
			for j < len(src) {
				if isIdentChar(src[j]) {
					j++
					continue
				}
				if src[j] == ':' && j+1 < len(src) && src[j+1] == ':' {
					j += 2
					continue
				}
				break
			}
			toks = append(toks, token{tokIdent, string(src[i:j]), line})
			i = j
		case strings.IndexByte(",;:{}[]()+-@!|<>=", c) >= 0:
			toks = append(toks, token{tokPunct, string(c), line})
			i++
		default:
			return nil, &SyntaxError{line, fmt.Sprintf("unexpected character %q", c)}
		}
	}
	toks = append(toks, token{tokEOF, "", line})
	return toks, nil
}

// isDecimal reports whether b is digits and dots only.
func isDecimal(b []byte) bool {
	for _, c := range b {
		if (c < '0' || c > '9') && c != '.' {
			return false
		}
	}
	return true
}
