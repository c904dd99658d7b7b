package tokenizer

// Byte-pair encoding of one pre-tokenized word: start from its
// characters and repeatedly merge the adjacent pair with the lowest merge
// rank (the leftmost of equal ones), as the tokenizers library's BPE
// model does; then look each symbol up in the vocabulary.

import "sync"

type pair struct{ a, b string }

// wordCache memoizes words' ids; natural text repeats words constantly.
type wordCache struct {
	mu sync.Mutex
	m  map[string][]int32
}

const wordCacheMax = 1 << 16

func (c *wordCache) get(w string) ([]int32, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	ids, ok := c.m[w]
	return ids, ok
}

func (c *wordCache) put(w string, ids []int32) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= wordCacheMax {
		c.m = map[string][]int32{} // bounded: start over rather than grow
	}
	c.m[w] = ids
}

// bpe appends the ids of word (in the byte-level alphabet) to dst.
func (t *Tokenizer) bpe(dst []int32, word []rune) []int32 {
	key := string(word)
	if ids, ok := t.cache.get(key); ok {
		return append(dst, ids...)
	}
	var ids []int32
	if id, ok := t.vocab[key]; ok && t.ignoreMerges {
		ids = []int32{id}
	} else {
		syms := make([]string, len(word))
		for i, r := range word {
			syms[i] = string(r)
		}
		for len(syms) > 1 {
			best, at := -1, -1
			for i := 0; i+1 < len(syms); i++ {
				if r, ok := t.ranks[pair{syms[i], syms[i+1]}]; ok && (best < 0 || r < best) {
					best, at = r, i
				}
			}
			if at < 0 {
				break
			}
			syms[at] += syms[at+1]
			syms = append(syms[:at+1], syms[at+2:]...)
		}
		for _, s := range syms {
			if id, ok := t.vocab[s]; ok {
				ids = append(ids, id)
			} else if t.unk >= 0 {
				ids = append(ids, t.unk)
			} // else dropped, as the tokenizers library does without unk_token
		}
	}
	t.cache.put(key, ids)
	return append(dst, ids...)
}
