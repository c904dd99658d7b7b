// Package kvevents publishes the engine's prefix-cache changes as vLLM's
// KV-cache events, so a prefix-cache-aware router (llm-d's KV-cache
// indexer, the Gateway API Inference Extension's prefix scorer in its
// precise mode) can track which blocks each kern server holds, exactly as
// it does for vLLM: msgpack EventBatch messages (batch.go) over a ZeroMQ
// PUB socket (zmtp.go), each a three-frame message
//
//	[topic, sequence number (8 bytes, big-endian), EventBatch]
//
// as vLLM's ZmqEventPublisher sends them. Both the encoder and the socket
// are written here on the standard library (a few hundred lines) rather
// than pulling a ZeroMQ library into kern's module; a separate test
// module (testdata/zmq4check) checks them against go-zeromq/zmq4 and a
// msgpack library.
package kvevents

import (
	"encoding/binary"
	"strings"
	"sync"
	"time"

	"github.com/gokern/kern/llm/engine"
)

// Publisher sends event batches on a PUB socket.
type Publisher struct {
	sock  *PubSocket
	topic []byte
	mu    sync.Mutex
	seq   uint64
}

// NewPublisher publishes under topic (vLLM's default is empty) at
// endpoint, which it binds or connects to by vLLM's rule: an endpoint
// with "*" or "::" in it (e.g. "tcp://*:5557", vLLM's default) is bound
// and subscribers connect; any other (e.g. "tcp://epp-service:5557", as
// llm-d's endpoint picker binds its SUB socket) is connected to.
func NewPublisher(endpoint, topic string) (*Publisher, error) {
	open := DialPub
	if strings.Contains(endpoint, "*") || strings.Contains(endpoint, "::") {
		open = ListenPub
	}
	s, err := open(endpoint)
	if err != nil {
		return nil, err
	}
	return &Publisher{sock: s, topic: []byte(topic)}, nil
}

// Socket is the underlying PUB socket.
func (p *Publisher) Socket() *PubSocket { return p.sock }

// Publish sends events as one batch; it never blocks (a slow subscriber
// loses batches, and sees the gap in the sequence numbers). It fits
// engine.Options.OnKVEvents.
func (p *Publisher) Publish(events []engine.KVEvent) {
	payload := EncodeBatch(time.Now(), events)
	p.mu.Lock() // batches leave in sequence order
	defer p.mu.Unlock()
	p.sock.Send(p.topic, binary.BigEndian.AppendUint64(nil, p.seq), payload)
	p.seq++
}

// Close stops publishing.
func (p *Publisher) Close() error { return p.sock.Close() }
