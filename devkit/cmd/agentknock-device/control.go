// The control socket (control.sock in the state directory, mode 0600 in a
// 0700 directory): how a second terminal lists and answers the requests a
// running serve is waiting on, and tells it about revocations. Protocol:
// one JSON request line per connection, answered by one JSON response line.
//
//	-> {"op":"pending"}
//	<- {"ok":true,"pending":[{"id":"...","kind":"invocation",...}]}
//	-> {"op":"approve","id":"K3F9","for":"10m"}
//	-> {"op":"approve","id":"K3F9","for":"10m","read_only":true}
//	-> {"op":"approve","id":"K3F9","pin":"30m","accept_unbound":"CODE"}
//	-> {"op":"deny","id":"K3F9","message":"not now"}
//	-> {"op":"pairing-confirm","sas":"0123 4567 8901"}
//	-> {"op":"pairing-reject"}
//	-> {"op":"revoke","client_id":"01K..."}
//	<- {"ok":true,"message":"..."} | {"ok":false,"error":"...","usage":false}
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

const (
	controlSocket = "control.sock"
	// sockaddr_un holds 104 bytes on macOS (108 on Linux), NUL included.
	maxSocketPath   = 103
	maxControlLine  = 1 << 20
	controlDeadline = 30 * time.Second
)

type controlRequest struct {
	Op  string `json:"op"`
	ID  string `json:"id,omitempty"`
	For string `json:"for,omitempty"`
	// ReadOnly: the grant made with For covers only read-only requests.
	ReadOnly bool   `json:"read_only,omitempty"`
	Pin      string `json:"pin,omitempty"`
	// AcceptUnbound confirms what a pin does not bind: the code the
	// refusal without it printed.
	AcceptUnbound string `json:"accept_unbound,omitempty"`
	Message       string `json:"message,omitempty"`
	SAS           string `json:"sas,omitempty"`
	ClientID      string `json:"client_id,omitempty"`
}

type controlResponse struct {
	OK      bool           `json:"ok"`
	Error   string         `json:"error,omitempty"`
	Usage   bool           `json:"usage,omitempty"` // the error is the caller's input
	Message string         `json:"message,omitempty"`
	Pending []approvalView `json:"pending,omitempty"`
	// AcceptUnbound: a pin was refused for want of confirmation; this is
	// the code that confirms the list in Error.
	AcceptUnbound string `json:"accept_unbound,omitempty"`
}

// errNoServe: nothing listens on the control socket.
var errNoServe = errors.New("no agentknock-device serve is running for this state directory")

func controlPath(stateDir string) (string, error) {
	p := filepath.Join(stateDir, controlSocket)
	if len(p) > maxSocketPath {
		return "", fmt.Errorf("control socket path %s is longer than %d bytes, the Unix socket limit; use a shorter --state directory", p, maxSocketPath)
	}
	return p, nil
}

// listenControl binds the control socket. A socket file left by a serve
// that crashed is replaced; one that answers means another serve owns this
// state directory, which the single-writer grants file relies on.
func listenControl(stateDir string) (net.Listener, error) {
	path, err := controlPath(stateDir)
	if err != nil {
		return nil, err
	}
	if c, err := net.DialTimeout("unix", path, time.Second); err == nil {
		c.Close()
		return nil, fmt.Errorf("another agentknock-device serve is already running with state directory %s", stateDir)
	}
	if fi, err := os.Lstat(path); err == nil {
		if fi.Mode()&os.ModeSocket == 0 {
			return nil, fmt.Errorf("%s exists and is not a socket", path)
		}
		if err := os.Remove(path); err != nil {
			return nil, err
		}
	}
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, err
	}
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return nil, err
	}
	return ln, nil
}

// controlServer answers control requests with the approver and, for
// revocations, the running device.
type controlServer struct {
	ap     *approver
	revoke func(clientID string) error
	// unfinished lists pairings confirmed here that no client finished.
	unfinished func() ([]string, error)
}

func (s *controlServer) serve(ln net.Listener) {
	for {
		conn, err := ln.Accept()
		if err != nil {
			return
		}
		go s.handle(conn)
	}
}

func (s *controlServer) handle(conn net.Conn) {
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(controlDeadline))
	line, err := bufio.NewReader(io.LimitReader(conn, maxControlLine)).ReadBytes('\n')
	if err != nil && !(errors.Is(err, io.EOF) && len(line) > 0) {
		return
	}
	var req controlRequest
	var resp controlResponse
	if err := json.Unmarshal(line, &req); err != nil {
		resp = controlResponse{Error: "malformed control request: " + err.Error()}
	} else {
		resp = s.dispatch(req)
	}
	out, _ := json.Marshal(resp)
	conn.Write(append(out, '\n'))
}

func (s *controlServer) dispatch(req controlRequest) controlResponse {
	const how = "from another terminal"
	var msg string
	var err error
	switch req.Op {
	case "pending":
		return controlResponse{OK: true, Pending: s.ap.list()}
	case "approve":
		var d time.Duration
		if req.For != "" {
			if d, err = parseGrantDuration(req.For); err != nil {
				return failure(usageError{err.Error()})
			}
		}
		var pin time.Duration
		if req.Pin != "" {
			if pin, err = parsePinDuration(req.Pin); err != nil {
				return failure(usageError{err.Error()})
			}
		}
		msg, err = s.ap.approveGrant(req.ID, d, pin, req.ReadOnly, req.AcceptUnbound, how)
	case "deny":
		msg, err = s.ap.deny(req.ID, req.Message, how)
	case "pairing-confirm":
		msg, err = s.ap.confirmPairing(req.SAS, how)
	case "pairing-reject":
		msg, err = s.ap.rejectPairings(how)
		// With no code waiting to be compared, a pairing confirmed here
		// that no client finished, or one still awaiting the client's
		// completion, is what holds the slot: end it.
		if errors.Is(err, errNoPairing) && s.unfinished != nil {
			msg, err = s.rejectUnfinished()
		}
	case "revoke":
		if err = s.revoke(req.ClientID); err == nil {
			msg = "revoked client " + req.ClientID
		}
	default:
		err = fmt.Errorf("unknown control operation %q", req.Op)
	}
	if err != nil {
		return failure(err)
	}
	return controlResponse{OK: true, Message: msg}
}

// rejectUnfinished ends the pairings that no client finished
// (device.UnfinishedPairings).
func (s *controlServer) rejectUnfinished() (string, error) {
	ids, err := s.unfinished()
	if err != nil {
		return "", err
	}
	if len(ids) == 0 {
		return "", errNoPairing
	}
	for _, id := range ids {
		if err := s.revoke(id); err != nil {
			return "", err
		}
	}
	return fmt.Sprintf("rejected %d pairing(s) that no client finished; new pairings can start", len(ids)), nil
}

func failure(err error) controlResponse {
	var u usageError
	resp := controlResponse{Error: err.Error(), Usage: errors.As(err, &u)}
	if pu := (*pinUnconfirmed)(nil); errors.As(err, &pu) {
		resp.AcceptUnbound = pu.code
	}
	return resp
}

// parseGrantDuration reads --for: a positive Go duration such as 10m or
// 1h, at most the lifetime cap (a week).
func parseGrantDuration(s string) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 || d > ruleLifetimeCap {
		return 0, fmt.Errorf("--for wants a positive duration such as 10m or 2h, at most a week, not %q", s)
	}
	return d, nil
}

// callControl sends one request to the running serve. The caller gets
// errNoServe when nobody listens, and the server's error (a usageError when
// the input was at fault) when the request failed.
func callControl(stateDir string, req controlRequest) (*controlResponse, error) {
	path, err := controlPath(stateDir)
	if err != nil {
		return nil, err
	}
	conn, err := net.DialTimeout("unix", path, 5*time.Second)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) || errors.Is(err, syscall.ECONNREFUSED) {
			return nil, errNoServe
		}
		return nil, fmt.Errorf("connecting to serve: %w", err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(controlDeadline))
	data, _ := json.Marshal(req)
	if _, err := conn.Write(append(data, '\n')); err != nil {
		return nil, fmt.Errorf("talking to serve: %w", err)
	}
	line, err := bufio.NewReader(io.LimitReader(conn, 64<<20)).ReadBytes('\n')
	if err != nil {
		return nil, fmt.Errorf("reading serve's answer: %w", err)
	}
	var resp controlResponse
	if err := json.Unmarshal(line, &resp); err != nil {
		return nil, fmt.Errorf("reading serve's answer: %w", err)
	}
	if !resp.OK {
		if resp.Usage {
			return &resp, usageError{resp.Error}
		}
		return &resp, errors.New(resp.Error)
	}
	return &resp, nil
}
