package safetensors

// A model's weights across one or more files: model.safetensors, or the
// shards a model.safetensors.index.json lists.

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
)

// Set is the tensors of a model directory, possibly sharded.
type Set struct {
	Dir     string
	files   []*File
	tensors map[string]*Tensor
}

// IndexName and SingleName are the file names Hugging Face writes.
const (
	IndexName  = "model.safetensors.index.json"
	SingleName = "model.safetensors"
)

// OpenDir opens the weights of a model directory: the shards named by
// model.safetensors.index.json if it exists, else model.safetensors.
// Every tensor the index names must be in the shard it names, and no
// tensor may appear in two shards.
func OpenDir(dir string) (*Set, error) {
	idx := filepath.Join(dir, IndexName)
	raw, err := os.ReadFile(idx)
	switch {
	case errors.Is(err, os.ErrNotExist):
		f, err := Open(filepath.Join(dir, SingleName))
		if err != nil {
			return nil, err
		}
		return newSet(dir, []*File{f}, nil)
	case err != nil:
		return nil, fmt.Errorf("safetensors: %w", err)
	}
	var index struct {
		WeightMap map[string]string `json:"weight_map"`
	}
	if err := json.Unmarshal(raw, &index); err != nil {
		return nil, fmt.Errorf("safetensors: %s: bad JSON: %v", idx, err)
	}
	if len(index.WeightMap) == 0 {
		return nil, fmt.Errorf("safetensors: %s: empty weight_map", idx)
	}
	var shards []string
	seen := map[string]bool{}
	for name, shard := range index.WeightMap {
		if filepath.Base(shard) != shard {
			return nil, fmt.Errorf("safetensors: %s: tensor %q: shard %q must be a file in the directory", idx, name, shard)
		}
		if !seen[shard] {
			seen[shard] = true
			shards = append(shards, shard)
		}
	}
	sort.Strings(shards)
	var files []*File
	for _, s := range shards {
		f, err := Open(filepath.Join(dir, s))
		if err != nil {
			closeAll(files)
			return nil, err
		}
		files = append(files, f)
	}
	set, err := newSet(dir, files, index.WeightMap)
	if err != nil {
		closeAll(files)
		return nil, fmt.Errorf("%w (index %s)", err, idx)
	}
	return set, nil
}

func closeAll(files []*File) {
	for _, f := range files {
		f.Close()
	}
}

// newSet merges files; weightMap, if non-nil, says which file each tensor
// must come from.
func newSet(dir string, files []*File, weightMap map[string]string) (*Set, error) {
	s := &Set{Dir: dir, files: files, tensors: map[string]*Tensor{}}
	for _, f := range files {
		for _, name := range f.names {
			if prev, ok := s.tensors[name]; ok {
				return nil, fmt.Errorf("safetensors: tensor %q is in both %s and %s", name, prev.File, f.Path)
			}
			s.tensors[name] = f.tensors[name]
		}
	}
	for name, shard := range weightMap {
		t, ok := s.tensors[name]
		if !ok {
			return nil, fmt.Errorf("safetensors: tensor %q: the index puts it in %s, which does not hold it", name, shard)
		}
		if filepath.Base(t.File) != shard {
			return nil, fmt.Errorf("safetensors: tensor %q: the index puts it in %s, but it is in %s", name, shard, t.File)
		}
	}
	return s, nil
}

// Tensor returns the named tensor, or an error naming the directory.
func (s *Set) Tensor(name string) (*Tensor, error) {
	if t, ok := s.tensors[name]; ok {
		return t, nil
	}
	return nil, fmt.Errorf("safetensors: %s: no tensor %q", s.Dir, name)
}

// Has reports whether the set holds the named tensor.
func (s *Set) Has(name string) bool { _, ok := s.tensors[name]; return ok }

// Names lists every tensor, sorted.
func (s *Set) Names() []string {
	out := make([]string, 0, len(s.tensors))
	for n := range s.tensors {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Bytes is the total size of the tensors' data.
func (s *Set) Bytes() int64 {
	var n int64
	for _, t := range s.tensors {
		n += int64(len(t.raw))
	}
	return n
}

// Close unmaps every file.
func (s *Set) Close() error {
	var first error
	for _, f := range s.files {
		if err := f.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}
