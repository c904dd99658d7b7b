package kvevents

// vLLM's KV-cache event batch (vllm/distributed/kv_events.py): msgspec
// structs encoded array_like, events tagged with their class name as the
// first element:
//
//	EventBatch       = [ts float, events [...]]
//	BlockStored      = ["BlockStored", block_hashes [int...], parent_block_hash int|nil,
//	                    token_ids [int...], block_size int, lora_id int|nil, medium str|nil]
//	BlockRemoved     = ["BlockRemoved", block_hashes [int...], medium str|nil]
//	AllBlocksCleared = ["AllBlocksCleared"]
//
// EventBatch's optional data_parallel_rank (default None) is omitted, as
// msgspec's omit_defaults does.

import (
	"time"

	"github.com/gokern/kern/llm/engine"
)

// Medium is the storage tier the events describe, as vLLM names it.
const Medium = "GPU"

// EncodeBatch encodes events as one EventBatch stamped ts.
func EncodeBatch(ts time.Time, events []engine.KVEvent) []byte {
	b := appendArray(nil, 2)
	b = appendFloat64(b, float64(ts.UnixNano())/1e9)
	b = appendArray(b, len(events))
	for _, ev := range events {
		switch ev.Kind {
		case engine.BlockStored:
			b = appendArray(b, 7)
			b = appendStr(b, "BlockStored")
			b = appendHashes(b, ev.Hashes)
			if ev.HasParent {
				b = appendUint(b, ev.Parent)
			} else {
				b = appendNil(b)
			}
			b = appendArray(b, len(ev.Tokens))
			for _, t := range ev.Tokens {
				b = appendInt(b, int64(t))
			}
			b = appendInt(b, int64(ev.BlockSize))
			b = appendNil(b) // lora_id: kern serves no adapters
			b = appendStr(b, Medium)
		case engine.BlockRemoved:
			b = appendArray(b, 3)
			b = appendStr(b, "BlockRemoved")
			b = appendHashes(b, ev.Hashes)
			b = appendStr(b, Medium)
		default:
			b = appendArray(b, 1)
			b = appendStr(b, "AllBlocksCleared")
		}
	}
	return b
}

func appendHashes(b []byte, hs []uint64) []byte {
	b = appendArray(b, len(hs))
	for _, h := range hs {
		b = appendUint(b, h)
	}
	return b
}
