package kvevents

// A ZeroMQ PUB socket over TCP, bound (ListenPub: subscribers connect
// to it) or connecting (DialPub: it connects to one subscriber that
// binds, as llm-d's endpoint picker does, and reconnects when the link
// drops), speaking ZMTP 3.0 with the NULL security
// mechanism (https://rfc.zeromq.org/spec/23/), enough for SUB peers such
// as libzmq, pyzmq and go-zeromq/zmq4 to connect and receive:
//
//   - greeting: 0xFF, 8 bytes padding, 0x7F, version 3.0, mechanism
//     "NULL" padded to 20 bytes, as-server 0, 31 bytes filler (64 in all);
//   - handshake: each side sends a READY command whose metadata names its
//     Socket-Type (PUB here; the peer must be SUB or XSUB);
//   - frames: a flags byte (0x01 MORE, 0x02 LONG, 0x04 COMMAND), a size
//     (1 byte, or 8 big-endian bytes when LONG), the body.
//
// A subscriber subscribes with a message whose body is 0x01 and a topic
// prefix (ZMTP 3.0), or a SUBSCRIBE command (3.1); 0x00 and CANCEL
// unsubscribe. A message goes to each peer with a subscription that
// prefixes its first frame. As in ZeroMQ, a peer that cannot keep up
// loses messages (its queue holds HWM) rather than stalling the
// publisher.

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"time"
)

// HWM is the messages queued per subscriber before new ones are dropped.
const HWM = 1000

// PubSocket is a listening PUB socket.
type PubSocket struct {
	ln     net.Listener // nil when dialing
	dialed net.Conn     // the dialing socket's current connection
	mu     sync.Mutex
	peers  map[*peer]bool
	done   chan struct{}
	wg     sync.WaitGroup
}

type peer struct {
	conn net.Conn
	out  chan [][]byte
	mu   sync.Mutex
	subs [][]byte
}

func tcpAddr(endpoint string) (string, error) {
	addr := strings.TrimPrefix(endpoint, "tcp://")
	if strings.Contains(addr, "://") {
		return "", fmt.Errorf("kvevents: endpoint %q: only tcp:// is supported", endpoint)
	}
	if h, p, ok := strings.Cut(addr, ":"); ok && h == "*" {
		addr = ":" + p
	}
	return addr, nil
}

// ListenPub listens on endpoint: "tcp://host:port" ("*" for every
// interface) or "host:port".
func ListenPub(endpoint string) (*PubSocket, error) {
	addr, err := tcpAddr(endpoint)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("kvevents: %w", err)
	}
	s := &PubSocket{ln: ln, peers: map[*peer]bool{}, done: make(chan struct{})}
	s.wg.Add(1)
	go s.accept()
	return s, nil
}

// DialPub connects to a subscriber listening at endpoint
// ("tcp://host:port"), and again whenever the connection drops.
func DialPub(endpoint string) (*PubSocket, error) {
	addr, err := tcpAddr(endpoint)
	if err != nil {
		return nil, err
	}
	s := &PubSocket{peers: map[*peer]bool{}, done: make(chan struct{})}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		wait := 100 * time.Millisecond
		for {
			c, err := net.DialTimeout("tcp", addr, 5*time.Second)
			if err == nil {
				s.mu.Lock()
				s.dialed = c
				s.mu.Unlock()
				s.wg.Add(1)
				s.serve(c) // until the link drops
				wait = 100 * time.Millisecond
			}
			select {
			case <-s.done:
				return
			case <-time.After(wait):
			}
			wait = min(2*wait, 5*time.Second)
		}
	}()
	return s, nil
}

// Addr is the address the socket listens on (nil for a dialing socket).
func (s *PubSocket) Addr() net.Addr {
	if s.ln == nil {
		return nil
	}
	return s.ln.Addr()
}

// Subscribers is the number of peers that completed the handshake.
func (s *PubSocket) Subscribers() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.peers)
}

// Close stops listening and disconnects every peer.
func (s *PubSocket) Close() error {
	close(s.done)
	var err error
	if s.ln != nil {
		err = s.ln.Close()
	}
	s.mu.Lock()
	for p := range s.peers {
		p.conn.Close()
	}
	if s.dialed != nil {
		s.dialed.Close() // also mid-handshake
	}
	s.mu.Unlock()
	s.wg.Wait()
	return err
}

// Send queues a multipart message for every subscribed peer; it never
// blocks.
func (s *PubSocket) Send(frames ...[]byte) {
	if len(frames) == 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for p := range s.peers {
		if !p.subscribed(frames[0]) {
			continue
		}
		select {
		case p.out <- frames:
		default: // over the high-water mark: dropped, as ZeroMQ's PUB does
		}
	}
}

func (p *peer) subscribed(topic []byte) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, s := range p.subs {
		if bytes.HasPrefix(topic, s) {
			return true
		}
	}
	return false
}

func (s *PubSocket) accept() {
	defer s.wg.Done()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.wg.Add(1)
		go s.serve(c)
	}
}

func (s *PubSocket) serve(c net.Conn) {
	defer s.wg.Done()
	defer c.Close()
	r := bufio.NewReader(c)
	c.SetDeadline(time.Now().Add(10 * time.Second))
	if err := handshake(c, r); err != nil {
		return
	}
	c.SetDeadline(time.Time{})
	p := &peer{conn: c, out: make(chan [][]byte, HWM)}
	s.mu.Lock()
	select {
	case <-s.done:
		s.mu.Unlock()
		return
	default:
	}
	s.peers[p] = true
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.peers, p)
		s.mu.Unlock()
	}()
	quit := make(chan struct{})
	go func() { // the writer
		w := bufio.NewWriter(c)
		for {
			select {
			case msg := <-p.out:
				for i, f := range msg {
					writeFrame(w, f, i < len(msg)-1, false)
				}
				if w.Flush() != nil {
					c.Close()
					return
				}
			case <-quit:
				return
			}
		}
	}()
	defer close(quit)
	for { // the reader: subscriptions
		body, flags, err := readFrame(r)
		if err != nil {
			return
		}
		var sub, topic []byte
		switch {
		case flags&flagCommand != 0:
			name, rest, ok := command(body)
			if !ok {
				return
			}
			switch name {
			case "SUBSCRIBE":
				sub, topic = []byte{1}, rest
			case "CANCEL":
				sub, topic = []byte{0}, rest
			}
		case len(body) > 0:
			sub, topic = body[:1], body[1:]
		}
		if sub == nil {
			continue
		}
		p.mu.Lock()
		if sub[0] == 1 {
			p.subs = append(p.subs, bytes.Clone(topic))
		} else {
			for i, t := range p.subs {
				if bytes.Equal(t, topic) {
					p.subs = append(p.subs[:i], p.subs[i+1:]...)
					break
				}
			}
		}
		p.mu.Unlock()
	}
}

const (
	flagMore    = 0x01
	flagLong    = 0x02
	flagCommand = 0x04
)

// handshake exchanges greetings and READY commands.
func handshake(c net.Conn, r *bufio.Reader) error {
	g := make([]byte, 64)
	g[0], g[9], g[10], g[11] = 0xff, 0x7f, 3, 0
	copy(g[12:], "NULL")
	if _, err := c.Write(g); err != nil {
		return err
	}
	peerG := make([]byte, 64)
	if _, err := io.ReadFull(r, peerG); err != nil {
		return err
	}
	if peerG[0] != 0xff || peerG[9] != 0x7f || peerG[10] < 3 {
		return errors.New("kvevents: peer is not ZMTP 3")
	}
	if m := string(bytes.TrimRight(peerG[12:32], "\x00")); m != "NULL" {
		return fmt.Errorf("kvevents: peer wants security mechanism %q; only NULL is supported", m)
	}
	ready := []byte{5}
	ready = append(ready, "READY"...)
	ready = appendProperty(ready, "Socket-Type", "PUB")
	w := bufio.NewWriter(c)
	writeFrame(w, ready, false, true)
	if err := w.Flush(); err != nil {
		return err
	}
	body, flags, err := readFrame(r)
	if err != nil {
		return err
	}
	name, props, ok := command(body)
	if flags&flagCommand == 0 || !ok || name != "READY" {
		return errors.New("kvevents: peer sent no READY")
	}
	if t := property(props, "Socket-Type"); t != "SUB" && t != "XSUB" {
		return fmt.Errorf("kvevents: peer socket type %q cannot connect to PUB", t)
	}
	return nil
}

func appendProperty(b []byte, name, value string) []byte {
	b = append(b, byte(len(name)))
	b = append(b, name...)
	b = binary.BigEndian.AppendUint32(b, uint32(len(value)))
	return append(b, value...)
}

// property finds a metadata property (names compare case-insensitively).
func property(b []byte, name string) string {
	for len(b) > 0 {
		n := int(b[0])
		if len(b) < 1+n+4 {
			return ""
		}
		k := string(b[1 : 1+n])
		vn := int(binary.BigEndian.Uint32(b[1+n:]))
		b = b[1+n+4:]
		if len(b) < vn {
			return ""
		}
		if strings.EqualFold(k, name) {
			return string(b[:vn])
		}
		b = b[vn:]
	}
	return ""
}

// command splits a command frame's body into its name and data.
func command(b []byte) (string, []byte, bool) {
	if len(b) < 1 || len(b) < 1+int(b[0]) {
		return "", nil, false
	}
	return string(b[1 : 1+b[0]]), b[1+b[0]:], true
}

func writeFrame(w *bufio.Writer, body []byte, more, cmd bool) {
	var flags byte
	if more {
		flags |= flagMore
	}
	if cmd {
		flags |= flagCommand
	}
	if len(body) > 255 {
		w.WriteByte(flags | flagLong)
		var n [8]byte
		binary.BigEndian.PutUint64(n[:], uint64(len(body)))
		w.Write(n[:])
	} else {
		w.WriteByte(flags)
		w.WriteByte(byte(len(body)))
	}
	w.Write(body)
}

// maxFrame bounds a frame from a subscriber (they send only
// subscriptions and commands).
const maxFrame = 1 << 20

func readFrame(r *bufio.Reader) ([]byte, byte, error) {
	flags, err := r.ReadByte()
	if err != nil {
		return nil, 0, err
	}
	var n uint64
	if flags&flagLong != 0 {
		var b [8]byte
		if _, err := io.ReadFull(r, b[:]); err != nil {
			return nil, 0, err
		}
		n = binary.BigEndian.Uint64(b[:])
	} else {
		b, err := r.ReadByte()
		if err != nil {
			return nil, 0, err
		}
		n = uint64(b)
	}
	if n > maxFrame {
		return nil, 0, fmt.Errorf("kvevents: frame of %d bytes from a subscriber", n)
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(r, body); err != nil {
		return nil, 0, err
	}
	return body, flags, nil
}
