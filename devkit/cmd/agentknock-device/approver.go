// The device program's Approver (device.Approver): for each approval, the
// policy first, then the pinned and policy rules (rules.go), then the
// time-boxed grants, else a person answers on serve's terminal or from
// another terminal through the control socket; the first answer wins. Every
// decision goes to the audit log (audit.go) before it is answered; a
// decision the log could not take is not sent: the request is denied
// instead (fail closed) and the console says why. A pin is made only after
// the person confirmed the list of what the rule does not bind (rules.go,
// unboundOf): "y" after the list on the terminal, --accept-unbound CODE
// from another terminal.
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

	commandmodel "agentknock.dev/agentknock/devkit/commands"
	"agentknock.dev/agentknock/devkit/device"
)

const (
	messageUserDenied    = "The request was denied on the device."
	messagePairingDenied = "The pairing was rejected on the device."
	messageSASMismatch   = "The verification code typed on the device did not match; the pairing was rejected."
)

type approver struct {
	policy *policy
	// classify gives the class of the command an approval runs
	// (classifyApproval with model; tests give fixed classes).
	classify func(*device.Approval) *commandClass
	grants   *grantStore
	rules    *ruleStore
	audit    *auditLog
	now      func() time.Time
	con      *console
	// model is the command model every request is explained with; it
	// remembers the executables it hashed.
	model *commandmodel.Analyzer
	// prompt: serve's standard input is a terminal, so the oldest pending
	// request is also asked about there.
	prompt atomic.Bool
	// offer is the pin the terminal asked the person to confirm; only the
	// terminal reader touches it.
	offer *pinOffer

	mu      sync.Mutex
	pending []*pendingItem // arrival order; pending[0] is the one prompted
	// decidedNow: immediate decisions not yet shown (DecideNow, then
	// ReportDecided once the device has committed).
	decidedNow map[*device.Approval]immediate
}

type pendingItem struct {
	a       *device.Approval
	view    approvalView
	class   *commandClass // of the command it runs; nil when none
	decided chan answer   // buffered: finish never blocks
}

// pinOffer: the terminal showed what a pin of p would not bind and waits
// for the person to confirm it.
type pinOffer struct {
	p    *pendingItem
	d    time.Duration
	code string
}

// answer is a decision and who made it.
type answer struct {
	d  device.Decision
	by decidedBy
}

// newApprover keeps grants, rules and the audit log in stateDir.
func newApprover(p *policy, stateDir string, now func() time.Time, con *console, prompt bool) *approver {
	ap := &approver{policy: p, grants: newGrantStore(stateDir, now), rules: newRuleStore(stateDir, now), model: commandmodel.New(),
		audit: newAuditLog(stateDir, func(m string) { con.printf("  (audit log: %s)\n", clean(m)) }), now: now, con: con}
	ap.rules.audit, ap.grants.audit = ap.audit, ap.audit // a rule or grant is used only as the log records it
	ap.classify = func(a *device.Approval) *commandClass { return classifyApproval(ap.model, a) }
	ap.prompt.Store(prompt)
	return ap
}

// record writes the decision to the audit log and returns the decision to
// send: d itself, or, when the log could not take it, a denial (fail
// closed), with the console told why.
func (ap *approver) record(a *device.Approval, d device.Decision, by decidedBy) device.Decision {
	err := ap.audit.append(auditEntryOf(a, d, by, ap.now()))
	if err == nil {
		return d
	}
	if !d.Approve {
		ap.con.printf("  -> %s: the audit log could not record its denial (%s); the denial stands\n", clean(a.ID), clean(err.Error()))
		return d
	}
	ap.con.printf("  -> %s NOT answered as decided: the audit log could not record it (%s); denied instead\n", clean(a.ID), clean(err.Error()))
	return device.Decision{Reason: "OTHER", Message: "The device could not record the decision in its audit log, so it refused the request."}
}

// Decide implements device.Approver.
func (ap *approver) Decide(ctx context.Context, a *device.Approval) device.Decision {
	v := viewOf(a)
	class := ap.classify(a)
	v.setClass(class)
	d, note, by, ok, askedAgain := ap.automatic(a, class)
	v.AskedAgain = askedAgain
	ap.con.print(renderApprovalWith(ap.model, &v))
	if !ok && class.irreversible() {
		ap.con.printf("  (%s: %s: asked of a person whatever a policy, pinned rule or grant says)\n", clean(a.ID), clean(class.Why))
	}
	if ok {
		ap.con.printf("  -> %s %s\n", clean(a.ID), note)
		d = ap.record(a, d, by)
		ap.showConfirmedCode(a, d)
		ap.reprompt()
		return d
	}
	p := &pendingItem{a: a, view: v, class: class, decided: make(chan answer, 1)}
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
	var ans answer
	select {
	case ans = <-p.decided:
	case <-ctx.Done():
		if ok, next := ap.take(p); ok {
			ap.con.printf("  -> %s withdrawn (the client cancelled or the device is closing)\n", clean(a.ID))
			ap.advance(next)
			ans = answer{device.Decision{Reason: "OTHER", Message: "The request was cancelled before a decision."},
				decidedBy{who: "client", how: "withdrawn before a decision (the client cancelled or the device closed)"}}
		} else {
			// Answered at the same moment: the answer stands.
			ans = <-p.decided
		}
	}
	if class != nil {
		ans.by.class, ans.by.classWhy = string(class.Class), class.Why
	}
	return ap.record(a, ans.d, ans.by)
}

// DecideNow implements device.ImmediateApprover: the policy's, a rule's or
// a grant's decision; ok is false when a person has to answer (Decide then
// shows the request and asks). It only decides: the device holds its
// state transaction while it runs, so the request is rendered and logged
// by ReportDecided, after that transaction.
func (ap *approver) DecideNow(a *device.Approval) (device.Decision, bool) {
	class := ap.classify(a)
	d, note, by, ok, _ := ap.automatic(a, class)
	if !ok {
		return device.Decision{}, false
	}
	ap.mu.Lock()
	if ap.decidedNow == nil {
		ap.decidedNow = map[*device.Approval]immediate{}
	}
	ap.decidedNow[a] = immediate{note: note, by: by, class: class}
	ap.mu.Unlock()
	return d, true
}

// immediate is how DecideNow decided, for ReportDecided to show and log.
type immediate struct {
	note  string
	by    decidedBy
	class *commandClass
}

// ReportDecided implements device.ImmediateReporter: an immediate decision
// is shown and logged as Decide shows and logs it, outside every database
// transaction and before the answer is fixed; a log entry that cannot be
// written turns an approval into a denial (record), as for a person's.
func (ap *approver) ReportDecided(a *device.Approval, d device.Decision) device.Decision {
	ap.mu.Lock()
	how, ok := ap.decidedNow[a]
	delete(ap.decidedNow, a)
	ap.mu.Unlock()
	note, by, class := how.note, how.by, how.class
	if !ok {
		note, by, class = "decided at once", decidedBy{who: "device", how: "decided at once"}, ap.classify(a)
	}
	v := viewOf(a)
	v.setClass(class)
	ap.con.print(renderApprovalWith(ap.model, &v))
	ap.con.printf("  -> %s %s\n", clean(a.ID), note)
	d = ap.record(a, d, by)
	ap.showConfirmedCode(a, d)
	ap.reprompt()
	return d
}

// Refused implements device.RefusalRecorder: requests the device refused
// as invalid without asking are logged too.
func (ap *approver) Refused(a *device.Approval, message string) {
	// Denied either way; counted rather than written one by one past a
	// few per epoch (audit.go), so a flood cannot rotate decisions out.
	e := auditEntryOf(a, device.Decision{Reason: "INVALID_REQUEST", Message: message},
		decidedBy{who: "device", how: "refused as invalid: " + message}, ap.now())
	if err := ap.audit.refused(e, a.Kind+" from client "+a.ClientID+": "+message); err != nil {
		ap.con.printf("  -> %s: the audit log could not record its refusal (%s); the refusal stands\n", clean(a.ID), clean(err.Error()))
	}
}

// automatic applies the policy (with the class of the command: an
// irreversible one always asks, a read-only one may pass by the
// "read_only" member), then the rules, then the grants. ok is false when a
// person has to answer; askedAgain then says why: an irreversible command,
// or how the request differs from the closest rule, if one nearly matched.
// An automatic approval of a command the device does not understand says
// so in its note and in the log.
func (ap *approver) automatic(a *device.Approval, class *commandClass) (d device.Decision, note string, by decidedBy, ok bool, askedAgain []string) {
	if a.Kind == kindPairing && a.Pairing == nil {
		return device.Decision{Reason: "OTHER", Message: "incomplete pairing request"}, "refused: the pairing request carries no details",
			decidedBy{who: "device", how: "refused an incomplete pairing request"}, true, nil
	}
	o := ap.policy.decideClassed(a.Kind, a.Secrets, class)
	switch o.v {
	case verdictDeny:
		_, by = cautioned("", o.by, class)
		return device.Decision{Reason: "POLICY_DENIED", Message: o.message}, o.note, by, true, nil
	case verdictApprove:
		if a.Kind == kindPairing {
			// The device confirms its own SAS: only for headless tests
			// and setups where nobody else can reach the relay.
			return device.Decision{Approve: true, SAS: a.Pairing.SAS}, `pairing confirmed by policy ("pairing": "approve")`,
				decidedBy{who: "policy", how: `"pairing": "approve"`}, true, nil
		}
		note, by = cautioned(o.note, o.by, class)
		return device.Decision{Approve: true}, note, by, true, nil
	}
	if a.Kind == kindPairing {
		return device.Decision{}, "", decidedBy{}, false, nil
	}
	if o.alwaysAsk {
		// No rule or grant is consulted, but one that would have
		// approved is named: the person sees what the shortcut would
		// have let through.
		if o.policyWouldApprove {
			askedAgain = append(askedAgain, "the policy approves these secrets for any command, but not an irreversible one")
		}
		if a.Kind == kindInvocation {
			if pinned, _, err := ap.rules.list(); err == nil {
				switch rv := checkRules(append(append([]*rule{}, ap.policy.Rules...), pinned...), a, ap.now()); {
				case rv.match != nil:
					askedAgain = append(askedAgain, rv.match.label()+" covers this request but does not apply to an irreversible command")
				case rv.near != nil:
					askedAgain = append(append(askedAgain, "this request differs from "+rv.near.label()+" in:"), rv.diff...)
				}
			}
		}
		if _, found, _, _, err := ap.grants.matches(a.ClientID, a.Kind, a.Secrets, false); err == nil && found {
			askedAgain = append(askedAgain, "a grant covers this request but does not apply to an irreversible command")
		}
		return device.Decision{}, "", decidedBy{}, false, askedAgain
	}
	if a.Kind == kindInvocation {
		pinned, refused, err := ap.rules.list()
		if err != nil {
			ap.con.printf("  (pinned rules unreadable, asking instead: %s)\n", clean(err.Error()))
		}
		// A refused rule is never applied; one that would have covered
		// this request is named, so the tampering does not go unseen.
		for _, rr := range refused {
			if len(rr.rule.differences(a, ap.now())) == 0 {
				askedAgain = append(askedAgain, "pinned rule "+clean(rr.rule.ID)+" would cover this request but is refused: "+rr.why)
				ap.con.printf("  (pinned rule %s refused for %s: %s)\n", clean(rr.rule.ID), clean(a.ID), rr.why)
			}
		}
		rv := checkRules(append(append([]*rule{}, ap.policy.Rules...), pinned...), a, ap.now())
		if r := rv.match; r != nil {
			note := "approved by " + r.label()
			if !r.Expires.IsZero() {
				note += " valid until " + r.Expires.Local().Format(time.RFC3339)
			}
			note, by := cautioned(note, decidedBy{who: "rule", how: r.label(), rule: r.ID}, class)
			return device.Decision{Approve: true}, note, by, true, nil
		}
		if rv.near != nil {
			askedAgain = append(append(askedAgain, "this request differs from "+rv.near.label()+" in:"), rv.diff...)
		}
	}
	g, found, refusedGrant, narrow, err := ap.grants.matches(a.ClientID, a.Kind, a.Secrets, class.readOnly())
	if refusedGrant != "" {
		askedAgain = append(askedAgain, "a grant would cover this request but is refused: "+refusedGrant)
		ap.con.printf("  (a grant for %s refused: %s)\n", clean(a.ID), refusedGrant)
	}
	if err != nil {
		ap.con.printf("  (grants unreadable, asking instead: %s)\n", clean(err.Error()))
		return device.Decision{}, "", decidedBy{}, false, askedAgain
	}
	if found {
		until := g.Expires.Local().Format(time.RFC3339)
		note, how := "approved by a grant valid until "+until, "for the same secrets, client and operation until "+until
		if g.ReadOnly {
			note = "approved by a read-only grant valid until " + until + " (" + class.Why + ")"
			how = "read-only, for the same secrets, client and operation until " + until + ": " + class.Why
		}
		note, by := cautioned(note, decidedBy{who: "grant", how: how}, class)
		return device.Decision{Approve: true}, note, by, true, nil
	}
	if narrow {
		why := "not read-only"
		if class != nil {
			why = class.classLine()
		}
		askedAgain = append(askedAgain, "a read-only grant covers these secrets, but this command is "+why)
	}
	return device.Decision{}, "", decidedBy{}, false, askedAgain
}

// cautioned gives an automatic decision's log entry the command's class,
// and adds to an approval's note and entry that the device does not
// understand the command, when it does not: the approval stands (a policy,
// rule or grant that approves any command said so), but nobody should read
// it as "the command was checked".
func cautioned(note string, by decidedBy, class *commandClass) (string, decidedBy) {
	if class != nil {
		by.class, by.classWhy = string(class.Class), class.Why
	}
	if caution := class.caution(); caution != "" && note != "" {
		note += "; note: " + caution
		by.how += "; " + caution
	}
	return note, by
}

func answerHint(p *pendingItem) string {
	id := clean(p.a.ID)
	if p.a.Kind == kindPairing {
		return "  waiting: agentknock-device pairing confirm \"dddd dddd dddd\"  |  agentknock-device pairing reject\n"
	}
	if p.class.irreversible() {
		return fmt.Sprintf("  waiting: agentknock-device approve %s  |  agentknock-device deny %s  (irreversible: no pin; a grant never covers it)\n", id, id)
	}
	if p.a.Kind == kindInvocation {
		return fmt.Sprintf("  waiting: agentknock-device approve %s [--pin 30m | --for 10m [--read-only]]  |  agentknock-device deny %s\n", id, id)
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
	if p.class.irreversible() {
		return fmt.Sprintf("approve %s, %s? [y/N] ", clean(p.a.ID), clean(p.class.Why))
	}
	if p.a.Kind == kindInvocation {
		return fmt.Sprintf("approve %s? [y/N, or \"p 30\": yes, and again for 30 minutes for this exact command] ", clean(p.a.ID))
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
		ap.con.print("\n--- next request waiting ---\n" + renderApprovalWith(ap.model, &next.view))
		ap.showPrompt(next)
	}
}

// finish answers p unless it was already answered.
func (ap *approver) finish(p *pendingItem, d device.Decision, how string) bool {
	return ap.finishBy(p, d, how, decidedBy{who: "person", how: how})
}

func (ap *approver) finishBy(p *pendingItem, d device.Decision, how string, by decidedBy) bool {
	ok, next := ap.take(p)
	if !ok {
		return false
	}
	p.decided <- answer{d, by}
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
// for the same secret set, client and operation (readOnly: covering only
// read-only requests); pinDur > 0 a rule for this exact command
// (rules.go), but only when accept is the confirmation code of what that
// rule would not bind; otherwise nothing is answered and the error (a
// *pinUnconfirmed) carries the list and the code. An irreversible command
// is never pinned (pinRefused).
func (ap *approver) approve(id string, forDur, pinDur time.Duration, accept, how string) (string, error) {
	return ap.approveGrant(id, forDur, pinDur, false, accept, how)
}

// approveGrant is approve with the grant's scope: readOnly makes the grant
// cover only read-only requests.
func (ap *approver) approveGrant(id string, forDur, pinDur time.Duration, readOnly bool, accept, how string) (string, error) {
	p := ap.find(id)
	if p == nil {
		return "", errNotPending
	}
	if p.a.Kind == kindPairing {
		return "", errors.New(`a pairing is confirmed with the digits the client shows: agentknock-device pairing confirm "dddd dddd dddd"`)
	}
	if readOnly && forDur <= 0 {
		return "", usagef("--read-only shapes a grant: it needs --for DURATION")
	}
	msg := "approved " + p.a.ID
	by := decidedBy{who: "person", how: how}
	if pinDur > 0 && p.class.irreversible() {
		return "", pinRefused{p.class.Why}
	}
	if pinDur > 0 {
		r, err := ruleFromRequest(p.a, pinDur, ap.now(), how)
		if err != nil {
			return "", usageError{err.Error()}
		}
		if code := pinCode(p.a.ID, r.Unbound); accept != code {
			return "", &pinUnconfirmed{id: p.a.ID, code: code, items: r.Unbound, wrong: accept != ""}
		}
		if err := ap.rules.add(r); err != nil {
			return "", fmt.Errorf("recording the rule: %w", err)
		}
		msg += "; " + r.describe()
		how += ", pinning " + r.describe()
		by.rule = r.ID
		by.creates = append(by.creates, auditBinding{Kind: "rule", ID: r.ID, MAC: r.MAC, Expires: r.end()})
		for _, it := range r.Unbound {
			by.unbound = append(by.unbound, it.Name)
		}
	}
	if forDur > 0 {
		g, err := ap.grants.add(p.a.ClientID, p.a.Kind, p.a.Secrets, forDur, readOnly)
		if err != nil {
			return "", fmt.Errorf("recording the grant: %w", err)
		}
		by.creates = append(by.creates, auditBinding{Kind: "grant", MAC: g.MAC, Expires: g.Expires})
		until := g.Expires.Local().Format(time.RFC3339)
		if readOnly {
			msg += "; same requests approved until " + until + " when read-only"
			how += " with a read-only grant until " + until
		} else {
			msg += "; same requests approved until " + until + ", except irreversible ones"
			how += " with a grant until " + until
		}
	}
	by.how = how
	if !ap.finishBy(p, device.Decision{Approve: true}, how, by) {
		return "", errNotPending
	}
	return msg, nil
}

// pinRefused: a pin of an irreversible command, refused with the reason;
// the request stays pending.
type pinRefused struct{ why string }

func (e pinRefused) Error() string {
	return "nothing answered, nothing pinned: " + clean(e.why) +
		"; an irreversible command is asked of a person every time, so no rule may approve it (approve it once, without --pin)"
}

// pinUnconfirmed: a pin was asked for without confirming what the rule
// would not bind. The request stays pending.
type pinUnconfirmed struct {
	id, code string
	items    []unboundItem
	wrong    bool // a code was given, but not this list's
}

func (e *pinUnconfirmed) Error() string {
	head := "nothing answered yet: a rule for " + clean(e.id) + " would not bind what follows, and pinning needs your confirmation of it."
	if e.wrong {
		head = "nothing answered yet: the confirmation code is not this request's (the list below is what it confirms)."
	}
	return head + "\n" + unboundText(e.items, "  ") +
		"To pin it anyway, repeat the command with --accept-unbound " + e.code + "; to approve once, leave out --pin."
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
	d := device.Decision{Approve: true, SAS: sas}
	if !sasEqual(sas, p.a.Pairing.SAS) {
		d, how = device.Decision{Reason: "USER_DENIED", Message: messageSASMismatch, SAS: sas}, how+" (wrong digits)"
	}
	if !ap.finish(p, d, how) {
		return false
	}
	awaitStored(p.a)
	return true
}

// storeWait bounds how long a pairing's answer waits for the device to
// store it: a transaction takes milliseconds, so this is reached only when
// the device is closing or its state cannot be written.
const storeWait = 10 * time.Second

// awaitStored returns once the device has stored the answer to a pairing,
// or after storeWait. Without it, `pairing reject` (or a wrong code)
// answered before the attempt's slot was free, and a client's `pairing
// start` right after it was refused as "another pairing is in progress".
func awaitStored(a *device.Approval) {
	if a.Stored == nil {
		return
	}
	t := time.NewTimer(storeWait)
	defer t.Stop()
	select {
	case <-a.Stored:
	case <-t.C:
	}
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
			awaitStored(p.a)
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
	if offer := ap.offer; offer != nil {
		ap.offer = nil
		if offer.p != p {
			// Answered elsewhere meanwhile: this line was meant for it.
			ap.con.printf("  (%s was answered meanwhile; nothing pinned, and this line answers nothing)\n", clean(offer.p.a.ID))
			ap.con.print(promptText(p))
			return
		}
		if answer == "y" || answer == "yes" {
			if _, err := ap.approve(p.a.ID, 0, offer.d, offer.code, how); err != nil {
				ap.con.printf("  (%s)\n", clean(err.Error()))
				ap.con.print(promptText(p))
			}
			return
		}
		ap.con.print("  not pinned; the request still waits.\n" + promptText(p))
		return
	}
	switch answer {
	case "y", "yes":
		ap.finish(p, device.Decision{Approve: true}, how)
	case "", "n", "no":
		ap.finish(p, device.Decision{Reason: "USER_DENIED", Message: messageUserDenied}, how)
	default:
		if d, ok := pinAnswer(answer); ok && p.a.Kind == kindInvocation {
			if p.class.irreversible() {
				ap.con.printf("  (%s)\n", pinRefused{p.class.Why}.Error())
				ap.con.print(promptText(p))
				return
			}
			r, err := ruleFromRequest(p.a, d, ap.now(), how)
			if err != nil {
				ap.con.printf("  (%s)\n", clean(err.Error()))
				ap.con.print(promptText(p))
				return
			}
			ap.offer = &pinOffer{p: p, d: d, code: pinCode(p.a.ID, r.Unbound)}
			ap.con.print("  a rule for this command would not bind:\n" + unboundText(r.Unbound, "  ") +
				"pin it anyway, knowing the above is not bound? [y/N: no pin, back to the question] ")
			return
		}
		ap.con.print(promptText(p))
	}
}

// pinAnswer reads the terminal's "p 30" / "pin 30m" / "p 2h": approve and
// pin; a bare number counts minutes.
func pinAnswer(s string) (time.Duration, bool) {
	var rest string
	switch {
	case strings.HasPrefix(s, "pin"):
		rest = s[3:]
	case strings.HasPrefix(s, "p"):
		rest = s[1:]
	default:
		return 0, false
	}
	d, err := parsePinDuration(strings.TrimSpace(rest))
	return d, err == nil
}

// parsePinDuration reads how long a rule lasts: minutes (30) or a Go
// duration (30m, 2h), at most a week.
func parsePinDuration(s string) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	if err != nil {
		var n int
		if _, err2 := fmt.Sscanf(s, "%d", &n); err2 == nil && fmt.Sprint(n) == s {
			d, err = time.Duration(n)*time.Minute, nil
		}
	}
	if err != nil || d <= 0 || d > 7*24*time.Hour {
		return 0, fmt.Errorf("--pin wants minutes (30) or a duration (30m, 2h) of at most a week, not %q", s)
	}
	return d, nil
}
