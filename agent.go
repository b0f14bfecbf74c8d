// The temporary SSH agent of the invocation service: command-execution.md,
// "Invocation service, standard input, and SSH operations". It lists the
// selected key first, then the previous agent's keys (without a duplicate
// of the selected one), asks the device for every signature with the
// selected key (one SshAuthenticate exchange each, only for a valid
// user-authentication message), passes every other request unchanged to the
// previous agent over one lazily opened connection per client connection,
// and refuses key management, which cannot apply to both.

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"syscall"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"
)

var errAgentRefused = errors.New("agentknock's temporary agent does not manage keys")

// serveAgentConn serves one client of agent.sock, in order, after checking
// that it descends from the command.
func serveAgentConn(ctx context.Context, conn net.Conn, cfg *serviceSSH, key ssh.PublicKey, owner int) {
	defer conn.Close()
	pid, err := peerPID(conn)
	if err != nil || !descendsFrom(pid, owner) {
		return
	}
	a := &connAgent{ctx: ctx, cfg: cfg, key: key}
	defer a.closeUpstream()
	agent.ServeAgent(a, conn)
}

// connAgent is the agent seen by one client connection.
type connAgent struct {
	ctx context.Context
	cfg *serviceSSH
	key ssh.PublicKey

	upstream       agent.ExtendedAgent
	upstreamConn   net.Conn
	upstreamFailed bool
}

// agent.ServeAgent finds SignWithFlags (RSA SHA-2 signatures) and
// Extension by a type assertion at run time; this makes a missing method a
// compile error instead.
var _ agent.ExtendedAgent = (*connAgent)(nil)

// usableKey reports whether the selected key type can authenticate.
func (a *connAgent) usableKey() bool {
	t := a.key.Type()
	return t == ssh.KeyAlgoED25519 || t == ssh.KeyAlgoRSA
}

func (a *connAgent) isSelected(k ssh.PublicKey) bool {
	return string(k.Marshal()) == string(a.key.Marshal())
}

// upstreamAgent opens the previous agent once per client connection; after
// a failure, upstream operations fail for the rest of this connection.
func (a *connAgent) upstreamAgent() (agent.ExtendedAgent, error) {
	if a.upstream != nil {
		return a.upstream, nil
	}
	if a.cfg.Upstream == "" || a.upstreamFailed {
		return nil, errors.New("no upstream agent")
	}
	conn, err := net.Dial("unix", a.cfg.Upstream)
	if err != nil {
		a.upstreamFailed = true
		return nil, err
	}
	a.upstreamConn = conn
	a.upstream = agent.NewClient(conn)
	return a.upstream, nil
}

// upstreamFailure marks the upstream unusable for this connection.
func (a *connAgent) upstreamFailure(err error) error {
	if err != nil && (errors.Is(err, io.EOF) || errors.Is(err, syscall.EPIPE) || errors.Is(err, net.ErrClosed)) {
		a.closeUpstream()
		a.upstreamFailed = true
	}
	return err
}

func (a *connAgent) closeUpstream() {
	if a.upstreamConn != nil {
		a.upstreamConn.Close()
		a.upstreamConn, a.upstream = nil, nil
	}
}

func (a *connAgent) List() ([]*agent.Key, error) {
	var keys []*agent.Key
	if a.usableKey() {
		// The comment is the secret's name, as the reference client lists it.
		keys = append(keys, &agent.Key{Format: a.key.Type(), Blob: a.key.Marshal(), Comment: a.cfg.Secret})
	}
	up, err := a.upstreamAgent()
	if err != nil {
		return keys, nil
	}
	others, err := up.List()
	if err != nil {
		a.upstreamFailure(err)
		return keys, nil
	}
	for _, k := range others {
		if string(k.Blob) != string(a.key.Marshal()) {
			keys = append(keys, k)
		}
	}
	return keys, nil
}

func (a *connAgent) Sign(key ssh.PublicKey, data []byte) (*ssh.Signature, error) {
	return a.SignWithFlags(key, data, 0)
}

func (a *connAgent) SignWithFlags(key ssh.PublicKey, data []byte, flags agent.SignatureFlags) (*ssh.Signature, error) {
	if !a.isSelected(key) {
		up, err := a.upstreamAgent()
		if err != nil {
			return nil, err
		}
		sig, err := up.SignWithFlags(key, data, flags)
		return sig, a.upstreamFailure(err)
	}
	if !a.usableKey() {
		return nil, fmt.Errorf("the selected %s key cannot be used for SSH authentication", a.key.Type())
	}
	m, err := parseSSHUserAuthMessage(data)
	if err != nil {
		return nil, err
	}
	if want := flagsFor(m.Algorithm); flags != want {
		return nil, fmt.Errorf("signature flags %d do not match algorithm %s (legacy ssh-rsa signatures are refused)", flags, m.Algorithm)
	}
	return a.authenticate(data)
}

// flagsFor is the agent protocol's flag for an RFC 8332 algorithm.
func flagsFor(algorithm string) agent.SignatureFlags {
	switch algorithm {
	case ssh.KeyAlgoRSASHA256:
		return agent.SignatureFlagRsaSha256
	case ssh.KeyAlgoRSASHA512:
		return agent.SignatureFlagRsaSha512
	}
	return 0
}

// authenticate asks the device to sign the exact user-authentication
// message: a new protected exchange, a separate decision.
func (a *connAgent) authenticate(message []byte) (*ssh.Signature, error) {
	req, err := newSSHAuthenticateRequest(a.cfg.InvocationID, a.cfg.Token, a.cfg.Secret, a.key, message)
	if err != nil {
		return nil, err
	}
	r, err := signWithDevice(a.ctx, a.cfg.Home, req, func(plaintext []byte) (*signatureResponse, error) {
		return checkSSHAuthenticateResponse(plaintext, a.key, message)
	})
	if err != nil {
		return nil, err
	}
	return r.Signature, nil
}

// signWithDevice is one signature exchange of the invocation service
// (SshAuthenticate for the agent, GitSign for the Git helper), cancelled
// with an ABORTED completion when ctx ends (the command exited).
func signWithDevice(ctx context.Context, home string, request any, check func(plaintext []byte) (*signatureResponse, error)) (*signatureResponse, error) {
	out := newOutput(true, false)
	p, err := activePairing(home, out)
	if err != nil {
		return nil, err
	}
	watch, stop := contextWatch(ctx)
	defer stop()
	r, _, err := askDevice(home, p, signatureMethod(request, check), watch, out)
	return r, err
}

// signatureMethod is SshAuthenticate or GitSign for askDevice: the
// completion repeats the decision.
func signatureMethod(request any, check func(plaintext []byte) (*signatureResponse, error)) pairedMethod[*signatureResponse] {
	return pairedMethod[*signatureResponse]{
		request: request,
		check:   check,
		settle:  func(r *signatureResponse) (any, error) { return approvedOrDenied(r.Outcome, r.Denial) },
	}
}

// contextWatch turns the end of ctx (the command exited) into the signal
// that cancels a device exchange with an ABORTED completion.
func contextWatch(ctx context.Context) (*signalWatch, func()) {
	w := &signalWatch{ch: make(chan os.Signal, 1)}
	done := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
			w.ch <- syscall.SIGTERM
		case <-done:
		}
	}()
	return w, func() { close(done) }
}

func (a *connAgent) Add(agent.AddedKey) error       { return errAgentRefused }
func (a *connAgent) Remove(ssh.PublicKey) error     { return errAgentRefused }
func (a *connAgent) RemoveAll() error               { return errAgentRefused }
func (a *connAgent) Lock([]byte) error              { return errAgentRefused }
func (a *connAgent) Unlock([]byte) error            { return errAgentRefused }
func (a *connAgent) Signers() ([]ssh.Signer, error) { return nil, errAgentRefused }

// Extension goes to the same upstream connection, so connection-scoped
// extensions (such as session binding) keep working.
func (a *connAgent) Extension(extensionType string, contents []byte) ([]byte, error) {
	up, err := a.upstreamAgent()
	if err != nil {
		return nil, agent.ErrExtensionUnsupported
	}
	resp, err := up.Extension(extensionType, contents)
	return resp, a.upstreamFailure(err)
}
