// The device program's Approver (device.Approver): for each approval, the
// policy first, then the time-boxed grants, else a person answers on serve's
// terminal or from another terminal through the control socket; the first
// answer wins.
package main

import (
	"bufio"
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"agentknock.dev/agentknock/devkit/device"
)

const (
	messageUserDenied    = "The request was denied on the device."
	messagePairingDenied = "The pairing was rejected on the device."
	messageSASMismatch   = "The verification code typed on the device did not match; the pairing was rejected."
)

type approver struct {
	policy *policy
	grants *grantStore
	con    *console
	// prompt: serve's standard input is a terminal, so the oldest pending
	// request is also asked about there.
	prompt atomic.Bool

	mu      sync.Mutex
	pending []*pendingItem // arrival order; pending[0] is the one prompted
}

type pendingItem struct {
	a       *device.Approval
	view    approvalView
	decided chan device.Decision // buffered: finish never blocks
}

func newApprover(p *policy, g *grantStore, con *console, prompt bool) *approver {
	ap := &approver{policy: p, grants: g, con: con}
	ap.prompt.Store(prompt)
	return ap
}

// Decide implements device.Approver.
func (ap *approver) Decide(ctx context.Context, a *device.Approval) device.Decision {
	v := viewOf(a)
	ap.con.print(renderApproval(&v))
	if d, note, ok := ap.automatic(a); ok {
		ap.con.printf("  -> %s %s\n", clean(a.ID), note)
		ap.showConfirmedCode(a, d)
		ap.reprompt()
		return d
	}
	p := &pendingItem{a: a, view: v, decided: make(chan device.Decision, 1)}
	ap.mu.Lock()
	ap.pending = append(ap.pending, p)
	head := len(ap.pending) == 1
	ap.mu.Unlock()
	ap.con.print(answerHint(p))
	if head {
		ap.showPrompt(p)
	} else {
		ap.reprompt()
	}
	select {
	case d := <-p.decided:
		return d
	case <-ctx.Done():
	}
	if ok, next := ap.take(p); ok {
		ap.con.printf("  -> %s withdrawn (the client cancelled or the device is closing)\n", clean(a.ID))
		ap.advance(next)
		return device.Decision{Reason: "OTHER", Message: "The request was cancelled before a decision."}
	}
	// Answered at the same moment: the answer stands.
	return <-p.decided
}

// automatic applies the policy, then the grants. ok is false when a person
// has to answer.
func (ap *approver) automatic(a *device.Approval) (d device.Decision, note string, ok bool) {
	if a.Kind == kindPairing && a.Pairing == nil {
		return device.Decision{Reason: "OTHER", Message: "incomplete pairing request"}, "refused: the pairing request carries no details", true
	}
	v, msg := ap.policy.decide(a.Kind, a.Secrets)
	switch v {
	case verdictDeny:
		return device.Decision{Reason: "POLICY_DENIED", Message: msg}, "denied by policy: " + msg, true
	case verdictApprove:
		if a.Kind == kindPairing {
			// The device confirms its own SAS: only for headless tests
			// and setups where nobody else can reach the relay.
			return device.Decision{Approve: true, SAS: a.Pairing.SAS}, `pairing confirmed by policy ("pairing": "approve")`, true
		}
		return device.Decision{Approve: true}, "approved by policy", true
	}
	if a.Kind == kindPairing {
		return device.Decision{}, "", false
	}
	g, found, err := ap.grants.matches(a.ClientID, a.Kind, a.Secrets)
	if err != nil {
		ap.con.printf("  (grants unreadable, asking instead: %s)\n", clean(err.Error()))
		return device.Decision{}, "", false
	}
	if found {
		return device.Decision{Approve: true}, "approved by a grant valid until " + g.Expires.Local().Format(time.RFC3339), true
	}
	return device.Decision{}, "", false
}

func answerHint(p *pendingItem) string {
	id := clean(p.a.ID)
	if p.a.Kind == kindPairing {
		return "  waiting: agentknock-device pairing confirm \"dddd dddd dddd\"  |  agentknock-device pairing reject\n"
	}
	return fmt.Sprintf("  waiting: agentknock-device approve %s [--for 10m]  |  agentknock-device deny %s\n", id, id)
}

func (ap *approver) showPrompt(p *pendingItem) {
	if ap.prompt.Load() {
		ap.con.print(promptText(p))
	}
}

// reprompt repeats the prompt of the request being asked after other output
// (another request's display) has pushed it up.
func (ap *approver) reprompt() {
	ap.mu.Lock()
	var head *pendingItem
	if len(ap.pending) > 0 {
		head = ap.pending[0]
	}
	ap.mu.Unlock()
	if head != nil && ap.prompt.Load() {
		ap.con.print("(still waiting for your answer to " + clean(head.a.ID) + ") " + promptText(head))
	}
}

func promptText(p *pendingItem) string {
	if p.a.Kind == kindPairing {
		return `type the 12 digits the client shows, or "no": `
	}
	return fmt.Sprintf("approve %s? [y/N] ", clean(p.a.ID))
}

// take removes p from the queue; false means someone else answered first.
// next is the request to prompt for when p was the one being prompted.
func (ap *approver) take(p *pendingItem) (ok bool, next *pendingItem) {
	ap.mu.Lock()
	defer ap.mu.Unlock()
	for i, q := range ap.pending {
		if q == p {
			ap.pending = append(ap.pending[:i], ap.pending[i+1:]...)
			if i == 0 && len(ap.pending) > 0 {
				next = ap.pending[0]
			}
			return true, next
		}
	}
	return false, nil
}

// advance shows the request that the terminal now asks about, again, since
// the earlier display may have scrolled away.
func (ap *approver) advance(next *pendingItem) {
	if next != nil && ap.prompt.Load() {
		ap.con.print("\n--- next request waiting ---\n" + renderApproval(&next.view))
		ap.showPrompt(next)
	}
}

// finish answers p unless it was already answered.
func (ap *approver) finish(p *pendingItem, d device.Decision, how string) bool {
	ok, next := ap.take(p)
	if !ok {
		return false
	}
	p.decided <- d
	verb := "approved"
	if !d.Approve {
		verb = "denied"
	}
	ap.con.printf("  -> %s %s %s\n", clean(p.a.ID), verb, how)
	ap.showConfirmedCode(p.a, d)
	ap.advance(next)
	return true
}

// showConfirmedCode shows the device's verification code once a pairing is
// confirmed, never before, so that it cannot be copied instead of compared;
// then both sides have shown the same code.
func (ap *approver) showConfirmedCode(a *device.Approval, d device.Decision) {
	if d.Approve && a.Kind == kindPairing && a.Pairing != nil {
		ap.con.printf("  verification code on this device: %s (matches the client's)\n", a.Pairing.SAS)
	}
}

// Errors of the answering operations, shown to whoever answered.
var (
	errNotPending = errors.New("no such pending request (already answered, withdrawn, or a wrong id)")
	errNoPairing  = errors.New("no pairing is waiting for confirmation")
)

func (ap *approver) find(id string) *pendingItem {
	ap.mu.Lock()
	defer ap.mu.Unlock()
	for _, p := range ap.pending {
		if p.a.ID == id {
			return p
		}
	}
	return nil
}

// list returns the pending approvals in arrival order.
func (ap *approver) list() []approvalView {
	ap.mu.Lock()
	defer ap.mu.Unlock()
	out := make([]approvalView, 0, len(ap.pending))
	for _, p := range ap.pending {
		out = append(out, p.view)
	}
	return out
}

// approve answers a non-pairing request; forDur > 0 also records a grant
// for the same secret set, client and operation.
func (ap *approver) approve(id string, forDur time.Duration, how string) (string, error) {
	p := ap.find(id)
	if p == nil {
		return "", errNotPending
	}
	if p.a.Kind == kindPairing {
		return "", errors.New(`a pairing is confirmed with the digits the client shows: agentknock-device pairing confirm "dddd dddd dddd"`)
	}
	msg := "approved " + p.a.ID
	if forDur > 0 {
		g, err := ap.grants.add(p.a.ClientID, p.a.Kind, p.a.Secrets, forDur)
		if err != nil {
			return "", fmt.Errorf("recording the grant: %w", err)
		}
		msg += "; same requests approved until " + g.Expires.Local().Format(time.RFC3339)
		how += " with a grant until " + g.Expires.Local().Format(time.RFC3339)
	}
	if !ap.finish(p, device.Decision{Approve: true}, how) {
		return "", errNotPending
	}
	return msg, nil
}

// deny answers any pending request, pairing included, with USER_DENIED.
func (ap *approver) deny(id, message, how string) (string, error) {
	p := ap.find(id)
	if p == nil {
		return "", errNotPending
	}
	if message == "" {
		message = messageUserDenied
		if p.a.Kind == kindPairing {
			message = messagePairingDenied
		}
	}
	if !ap.finish(p, device.Decision{Reason: "USER_DENIED", Message: message}, how) {
		return "", errNotPending
	}
	return "denied " + p.a.ID, nil
}

func (ap *approver) pendingPairings() []*pendingItem {
	ap.mu.Lock()
	defer ap.mu.Unlock()
	var out []*pendingItem
	for _, p := range ap.pending {
		if p.a.Kind == kindPairing {
			out = append(out, p)
		}
	}
	return out
}

// confirmPairing confirms the waiting pairing whose SAS equals the typed
// digits. The digits identify the client, so if several pairings wait, the
// matching one is confirmed; if none matches, every waiting pairing is
// rejected: a mismatch means a typo at best and a substituted client at
// worst, and a fresh pairing costs little.
func (ap *approver) confirmPairing(typed, how string) (string, error) {
	sas, ok := parseSAS(typed)
	if !ok {
		return "", usagef("the verification code is 12 digits, e.g. \"0123 4567 8901\"")
	}
	pairings := ap.pendingPairings()
	if len(pairings) == 0 {
		return "", errNoPairing
	}
	for _, p := range pairings {
		if sasEqual(sas, p.a.Pairing.SAS) {
			if !ap.answerPairing(p, sas, how) {
				return "", errNotPending
			}
			return "pairing " + p.a.ID + " confirmed; the client can now run `agentknock pairing finish`", nil
		}
	}
	for _, p := range pairings {
		ap.answerPairing(p, sas, how)
	}
	return "", errors.New("the digits do not match the pairing's verification code; the pairing was rejected (start it again on the client)")
}

// answerPairing confirms p if the typed digits are its SAS and rejects it
// otherwise; false if p was already answered.
func (ap *approver) answerPairing(p *pendingItem, sas, how string) bool {
	if sasEqual(sas, p.a.Pairing.SAS) {
		return ap.finish(p, device.Decision{Approve: true, SAS: sas}, how)
	}
	return ap.finish(p, device.Decision{Reason: "USER_DENIED", Message: messageSASMismatch, SAS: sas}, how+" (wrong digits)")
}

// rejectPairings rejects every waiting pairing.
func (ap *approver) rejectPairings(how string) (string, error) {
	pairings := ap.pendingPairings()
	if len(pairings) == 0 {
		return "", errNoPairing
	}
	n := 0
	for _, p := range pairings {
		if ap.finish(p, device.Decision{Reason: "USER_DENIED", Message: messagePairingDenied}, how) {
			n++
		}
	}
	if n == 0 {
		return "", errNoPairing
	}
	return fmt.Sprintf("rejected %d pairing request(s)", n), nil
}

// parseSAS accepts the 12 digits with or without the spaces (or dashes)
// between groups and returns them in the canonical "dddd dddd dddd" form.
func parseSAS(s string) (string, bool) {
	var digits []byte
	for _, c := range []byte(strings.TrimSpace(s)) {
		switch {
		case c >= '0' && c <= '9':
			digits = append(digits, c)
		case c == ' ' || c == '-':
		default:
			return "", false
		}
	}
	if len(digits) != 12 {
		return "", false
	}
	return string(digits[0:4]) + " " + string(digits[4:8]) + " " + string(digits[8:12]), true
}

func sasEqual(typed, deviceSAS string) bool {
	want, ok := parseSAS(deviceSAS)
	if !ok {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(typed), []byte(want)) == 1
}

// readTerminal answers the oldest pending request from serve's own
// terminal. A line answers the request that was prompted when it arrived;
// if another terminal answered that request in the meantime, the line is
// dropped rather than applied to the next one.
func (ap *approver) readTerminal(r io.Reader) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		ap.terminalLine(sc.Text())
	}
	ap.prompt.Store(false)
	ap.con.print("terminal input ended; answer from another terminal: agentknock-device pending | approve ID | deny ID\n")
}

func (ap *approver) terminalLine(line string) {
	ap.mu.Lock()
	var p *pendingItem
	if len(ap.pending) > 0 {
		p = ap.pending[0]
	}
	ap.mu.Unlock()
	if p == nil {
		return
	}
	answer := strings.ToLower(strings.TrimSpace(line))
	const how = "on the terminal"
	if p.a.Kind == kindPairing {
		switch {
		case answer == "no" || answer == "n":
			ap.finish(p, device.Decision{Reason: "USER_DENIED", Message: messagePairingDenied}, how)
		default:
			sas, ok := parseSAS(answer)
			if !ok {
				ap.con.print(promptText(p))
				return
			}
			ap.answerPairing(p, sas, how)
		}
		return
	}
	switch answer {
	case "y", "yes":
		ap.finish(p, device.Decision{Approve: true}, how)
	case "", "n", "no":
		ap.finish(p, device.Decision{Reason: "USER_DENIED", Message: messageUserDenied}, how)
	default:
		ap.con.print(promptText(p))
	}
}
