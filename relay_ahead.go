// A relay socket opened ahead of its request (client-relay-protocol.md,
// "WebSocket connections"): once the command is selected, inspected and the
// host's facilities checked, the run path dials while it walks the launcher
// chain, installs the signal watch and seals the request, so that the TCP
// connection, TLS and the WebSocket upgrade (three round trips to a remote
// relay) are not all spent after the request is ready. Nothing is sent on
// the socket before the request: the relay sees a client connect, and the
// device sees nothing, until then.

package main

import (
	"context"
)

// relayAhead is one dial in progress for a route. The exchange that later
// uses the route takes its result as its own first connection attempt, so
// a failed dial is classified, reported and retried exactly as one made by
// the exchange itself.
type relayAhead struct {
	target string // the URL dialed; an exchange on another route ignores the dial
	cancel context.CancelFunc
	done   chan struct{}
	conn   *relayConn
	err    error
}

// dialRelayAhead starts dialing path at ep in the background.
func dialRelayAhead(ep relayEndpoint, path, clientID string, opt relayOptions) (*relayAhead, error) {
	x, err := newRelayExchange(ep, path, clientID, opt)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	a := &relayAhead{target: x.target.String(), cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(a.done)
		a.conn, a.err = x.dial(ctx)
	}()
	return a, nil
}

// take waits for the dial and hands over its result once; later calls, and
// calls for another target, report nothing (nil, nil) and the exchange
// dials itself.
func (a *relayAhead) take(ctx context.Context, target string) (*relayConn, error) {
	if a == nil || a.target != target {
		return nil, nil
	}
	select {
	case <-a.done:
	case <-ctx.Done():
		a.close()
		return nil, ctx.Err()
	}
	c, err := a.conn, a.err
	a.conn, a.err, a.target = nil, nil, ""
	return c, err
}

// close abandons a dial that no exchange took, closing its socket.
func (a *relayAhead) close() {
	if a == nil {
		return
	}
	a.cancel()
	<-a.done
	if a.conn != nil {
		a.conn.stop()
		a.conn.ws.CloseNow()
		a.conn = nil
	}
	a.target = ""
}
