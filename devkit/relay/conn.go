// One client WebSocket at the relay ("WebSocket connections", "WebSocket
// closure" in docs/client-relay-protocol.md): the read loop with its frame
// checks, an ordered write queue (ack before receipt holds because both are
// queued in state order), liveness pings and closure codes.

package relay

import (
	"context"
	"errors"
	"io"
	"net"
	"time"

	"github.com/coder/websocket"
)

const (
	pingInterval   = 30 * time.Second
	pongTimeout    = 10 * time.Second
	writeTimeout   = 10 * time.Second
	maxQueuedBytes = 16 * MaxFrameSize // a client that stops reading is cut off
)

type outFrame struct {
	data   []byte
	close  bool
	code   websocket.StatusCode
	reason string
}

// socket is one admitted client connection. Its queue, exchanges and
// closing fields are guarded by Relay.mu.
type socket struct {
	r         *Relay
	conn      *websocket.Conn
	clientID  string
	deviceID  string
	addressID string // set on the initial-pairing route

	ctx    context.Context
	cancel context.CancelFunc

	queue      []outFrame
	queueBytes int
	closing    bool // a close is queued; nothing more is sent or read
	wake       chan struct{}
	writerDone chan struct{}

	exchanges map[exchangeKey]*exchange
}

// send queues a text frame. Called with Relay.mu held.
func (s *socket) send(data []byte) {
	if s.closing {
		return
	}
	if s.queueBytes+len(data) > maxQueuedBytes {
		s.r.logf("relay: client %s is not reading; closing its socket", s.clientID)
		s.closeWith(websocket.StatusInternalError, "client too slow")
		return
	}
	s.queue = append(s.queue, outFrame{data: data})
	s.queueBytes += len(data)
	s.notify()
}

// closeWith queues a close after everything already queued. Called with
// Relay.mu held.
func (s *socket) closeWith(code websocket.StatusCode, reason string) {
	if s.closing {
		return
	}
	s.closing = true
	s.queue = append(s.queue, outFrame{close: true, code: code, reason: reason})
	s.notify()
}

func (s *socket) notify() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// writeLoop sends queued frames in order and performs the queued close.
func (s *socket) writeLoop() {
	defer close(s.writerDone)
	for {
		select {
		case <-s.wake:
		case <-s.ctx.Done():
			return
		}
		s.r.mu.Lock()
		batch := s.queue
		s.queue = nil
		s.queueBytes = 0
		s.r.mu.Unlock()
		for _, f := range batch {
			if f.close {
				// Close waits for the peer's close frame, reading on its own
				// once the read loop has stopped.
				s.conn.Close(f.code, f.reason)
				s.cancel()
				return
			}
			ctx, cancel := context.WithTimeout(s.ctx, writeTimeout)
			err := s.conn.Write(ctx, websocket.MessageText, f.data)
			cancel()
			if err != nil {
				s.conn.CloseNow()
				s.cancel()
				return
			}
		}
	}
}

// pingLoop notices a peer that vanished without closing, so its exchanges
// start their reconnect grace instead of staying attached forever.
func (s *socket) pingLoop(done chan<- struct{}) {
	defer close(done)
	t := time.NewTicker(pingInterval)
	defer t.Stop()
	for {
		select {
		case <-t.C:
		case <-s.ctx.Done():
			return
		}
		ctx, cancel := context.WithTimeout(s.ctx, pongTimeout)
		err := s.conn.Ping(ctx)
		cancel()
		if err != nil {
			s.conn.CloseNow()
			return
		}
	}
}

// readLoop reads client frames until the socket fails or is closed. The
// read limit makes coder/websocket close an oversized frame with 1009.
func (s *socket) readLoop() {
	s.conn.SetReadLimit(MaxFrameSize)
	for {
		typ, data, err := s.conn.Read(s.ctx)
		if err != nil {
			if !endedNormally(err) {
				s.r.logf("relay: client %s socket ended: %v", s.clientID, err)
			}
			return
		}
		if !s.r.handleFrame(s, typ, data) {
			return
		}
	}
}

// endedNormally tells a socket's normal end from a failure worth a log
// line: a close frame of either side, the relay's own shutdown, or the peer's
// connection ending between two frames. The last is how clients leave: the
// agentknock client execs the approved command, which closes its socket
// without a close handshake, after every exchange.
func endedNormally(err error) bool {
	return websocket.CloseStatus(err) != -1 || errors.Is(err, context.Canceled) ||
		errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed)
}

// handleFrame applies one frame and reports whether to keep reading.
func (r *Relay) handleFrame(s *socket, typ websocket.MessageType, data []byte) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if s.closing {
		return false
	}
	if typ != websocket.MessageText {
		r.invalidFrame(s, "Binary frames are not allowed.")
		return false
	}
	f, err := parseClientFrame(data)
	if err != nil {
		r.invalidFrame(s, err.Error())
		return false
	}
	if f.ClientID != s.clientID {
		r.invalidFrame(s, "The client_id does not match the connection.")
		return false
	}
	if s.addressID != "" && f.RequestID != s.clientID {
		// Every frame on a pairing connection uses client_id = request_id.
		r.invalidFrame(s, "The request_id does not match the pairing connection.")
		return false
	}
	switch f.Type {
	case "message":
		r.handleMessage(s, f)
	case "resume":
		r.handleResume(s, f)
	case "ack":
		r.handleResponseAck(f)
	}
	return !s.closing
}

// invalidFrame reports INVALID_FRAME and closes with 1008. The offending
// frame's ids are not echoed: they may be what was wrong.
func (r *Relay) invalidFrame(s *socket, msg string) {
	r.logf("relay: client %s sent an invalid frame: %s", s.clientID, msg)
	s.send(errorFrame("", "", "", "INVALID_FRAME", msg, false, 0))
	s.closeWith(websocket.StatusPolicyViolation, "invalid frame")
}

// serve runs an admitted socket to its end and then detaches it.
func (s *socket) serve() {
	pingDone := make(chan struct{})
	go s.writeLoop()
	go s.pingLoop(pingDone)
	s.readLoop()

	s.r.mu.Lock()
	for _, ex := range s.exchanges {
		s.r.dissociate(ex, s)
	}
	delete(s.r.sockets, s)
	closing := s.closing
	s.r.mu.Unlock()

	if !closing {
		// The peer went away or the read failed: nothing queued matters.
		s.cancel()
		s.conn.CloseNow()
	}
	<-s.writerDone
	s.cancel()
	<-pingDone
}
