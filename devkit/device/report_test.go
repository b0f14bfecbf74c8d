// Immediate decisions (ImmediateReporter): the slow part, showing and
// recording the request, runs after the state transaction, so it never
// holds up another request.
package device

import (
	"sync"
	"testing"
	"time"
)

// reportingApprover decides at once (the fake's DecideNow) and blocks its
// ReportDecided for the first request until told to go on, as a rendering
// of a huge script would take its time.
type reportingApprover struct {
	*fakeApprover
	entered chan *Approval
	release chan struct{}
	reports chan *Approval
}

func (r *reportingApprover) ReportDecided(a *Approval, d Decision) Decision {
	if a.Invocation != nil && a.Invocation.Reason == "huge" {
		r.entered <- a
		<-r.release
	}
	r.reports <- a
	if a.Invocation != nil && a.Invocation.Reason == "unrecorded" {
		return Decision{Reason: "OTHER", Message: "the audit log could not be written"}
	}
	return d
}

func TestImmediateReportRunsOutsideTheTransaction(t *testing.T) {
	rep := &reportingApprover{entered: make(chan *Approval, 1), release: make(chan struct{}), reports: make(chan *Approval, 4)}
	h := newHarnessWith(t, func(f *fakeApprover) Approver { rep.fakeApprover = f; return rep })
	var once sync.Once
	release := func() { once.Do(func() { close(rep.release) }) }
	t.Cleanup(release) // a failing test must not leave the device blocked
	h.secrets()
	c := h.pair()

	huge := invocationFields(map[string]any{"github": env(map[string]any{})})
	huge["reason"] = "huge"
	x := c.newRequest(newULID(h.clock.now()), body(t, "Invocation", huge))
	x.deliver()
	var first *Approval
	select {
	case first = <-rep.entered:
	case <-time.After(waitLimit):
		t.Fatal("the first request was never reported (deadlock guard)")
	}
	// The first request's report is still running: a second request is
	// accepted, decided and answered meanwhile. Were the report inside the
	// state transaction, this would wait for it forever.
	res := c.call("Invocation", invocationFields(map[string]any{"github": env(map[string]any{})}))
	if res["result"] != "APPROVED" {
		t.Fatalf("second request: %v", res)
	}
	if got := <-rep.reports; got.Invocation.Reason == "huge" {
		t.Fatal("the huge request was reported before it was released")
	}
	for _, e := range h.pub.snapshot() {
		if e.requestID == x.requestID.String() {
			t.Fatal("the first request was answered before its report finished")
		}
	}
	release()
	if got := <-rep.reports; got != first {
		t.Fatal("the first request's report did not finish")
	}
	if m, ok := x.open(x.rawResponse(1)); !ok || m["result"] != "APPROVED" {
		t.Fatalf("first request after its report: %v", m)
	}
}

// A report that cannot record the decision withdraws it: the answer is the
// denial ReportDecided returned, never the approval DecideNow made.
func TestImmediateReportCanWithdrawTheApproval(t *testing.T) {
	rep := &reportingApprover{entered: make(chan *Approval, 1), release: make(chan struct{}), reports: make(chan *Approval, 4)}
	h := newHarnessWith(t, func(f *fakeApprover) Approver { rep.fakeApprover = f; return rep })
	h.secrets()
	c := h.pair()
	f := invocationFields(map[string]any{"github": env(map[string]any{})})
	f["reason"] = "unrecorded"
	res := c.call("Invocation", f)
	if res["result"] != "DENIED" {
		t.Fatalf("unrecorded approval answered: %v", res)
	}
	if res := c.call("Invocation", invocationFields(map[string]any{"github": env(map[string]any{})})); res["result"] != "APPROVED" {
		t.Fatalf("the next request: %v", res)
	}
}
