// Package tp runs a Qwen3 model tensor-parallel over several devices, the
// Megatron-LM way: each rank holds a slice of every layer's weights and
// the ranks meet twice per layer in an all-reduce.
//
// The split, per decoder layer (qwen3's shard.go does the slicing):
//
//	q/k/v_proj, gate/up_proj   column-parallel: rank r owns a contiguous
//	                           block of output rows (whole heads, whole
//	                           KV heads, 1/T of the MLP's width)
//	attention                  local: a rank's query heads read only its
//	                           own KV heads (GQA groups stay on one rank),
//	                           and its KV cache holds only those heads
//	o_proj, down_proj          row-parallel: rank r owns the input columns
//	                           matching its heads / MLP slice, so each rank
//	                           produces a partial sum of the full output
//	all-reduce (sum)           after o_proj and after down_proj: the two
//	                           per layer
//	lm_head                    vocab-parallel: rank r computes logits for
//	                           its 1/T of the vocabulary; an all-gather
//	                           assembles them
//
// Embeddings and norms are replicated. With fewer KV heads than ranks
// (the tiny test models' 2 at TP=4; Qwen3-8B's 8 at TP=16) each KV head
// is replicated on T/kv_heads ranks, as vLLM does, so a rank's query
// heads still find theirs locally. A config whose heads, intermediate
// size or vocabulary do not divide by T, or whose KV heads neither divide
// by T nor divide it, is refused at load with the config field named.
//
// Ranks talk through Comm, which has three implementations: Local, ranks
// that are goroutines of one process over any kern devices (emu, native,
// or several GPUs without NCCL), which is how the tests run TP=2 and TP=4
// on a machine without GPUs; NCCL (nccl.go), ranks on CUDA devices
// through package nccl; and Socket (socket.go), ranks that are processes
// without NCCL, meeting through rank 0 over a local socket. Rendezvous
// (rendezvous.go) hands NCCL's unique id from rank 0 to the other
// processes over a local socket, for the one process per GPU layout NCCL
// recommends with CUDA graphs.
//
// The engine (llm/engine) steps a split model through its Runner
// interface: Runner (runner.go) when the ranks are goroutines, Leader
// (procs.go) when they are processes, each of which runs Follow. Either
// way rank 0's KV pool is the engine's and the other ranks replay each
// step's Plan (the sequences' page tables, lengths and tokens) on pools
// of their own, so they need no allocator and hold no state between
// steps. Spawn (spawn.go) starts the rank processes.
package tp
