package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"os/user"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/reins-go/reins"
	"github.com/reins-go/reins/audit"
	"github.com/reins-go/reins/gate"
	"github.com/reins-go/reins/policy"
)

// Fleet is the operator's handle on the runs that share one run-state store: what the fleet
// verbs call. Its changes take effect at every sharing run's next decision (each reads the state
// from the store). Unlike a run, the operator may loosen what the runs share: clear the halt,
// reset exhausted meters, revoke grants. etcdstore.Fleet has these methods; [StoreFleet] is one
// on any reins.Store.
type Fleet interface {
	// Status reads the shared state: the halt, the meters, the grants and the runs.
	Status(ctx context.Context) (*FleetStatus, error)
	// Halt latches a manual halt unless one is in force (the first cause wins), and returns
	// the halt in force.
	Halt(ctx context.Context, reason string) (gate.Halt, error)
	// EmergencyStop latches the emergency-stop halt; runs that watch the store also cancel
	// their operations in flight. It returns the halt in force.
	EmergencyStop(ctx context.Context, reason string) (gate.Halt, error)
	// Reset clears the halt, the failure counts and every exhausted meter.
	Reset(ctx context.Context, reason string) error
	// Grants lists every grant the runs share or keep.
	Grants(ctx context.Context) ([]FleetGrant, error)
	// Revoke removes grant id wherever it is.
	Revoke(ctx context.Context, id, reason string) error
}

// FleetStatus is the shared state of a fleet.
type FleetStatus struct {
	// Halt is the halt every sharing run denies under, if any.
	Halt *gate.Halt `json:"halt"`
	// Meters are the shared meters (budgets), by name.
	Meters []reins.MeterStatus `json:"meters"`
	// Grants counts the shared grants (the grants verb lists them).
	Grants int `json:"grants"`
	// Failures and Parked are the failure counts and the number of parked actions of a store
	// whose runs keep one state (a file); a store that keeps them per run reports them in Runs.
	Failures map[string]int `json:"failures,omitempty"`
	Parked   int            `json:"parked,omitempty"`
	// Runs are the runs the store tells apart (an etcd store does; a file does not).
	Runs []FleetRun `json:"runs"`
}

// FleetRun is one run of a fleet whose store tells runs apart.
type FleetRun struct {
	ID string `json:"id"`
	// Live says the run is known to be running (its lease holds).
	Live       bool      `json:"live"`
	Host       string    `json:"host,omitempty"`
	PID        int       `json:"pid,omitempty"`
	Started    time.Time `json:"started,omitzero"`
	LastActive time.Time `json:"last_active,omitzero"`
	// Halt is the run's own halt (its tool failures), if any.
	Halt     *gate.Halt     `json:"halt,omitempty"`
	Failures map[string]int `json:"failures,omitempty"`
	Parked   int            `json:"parked,omitempty"`
	Grants   int            `json:"grants,omitempty"`
	// Problem says why the run's state could not be read; the run denies until it is fixed.
	Problem string `json:"problem,omitempty"`
}

// FleetGrant is a grant of a fleet: a shared one (Run empty) or one run's own.
type FleetGrant struct {
	Run   string
	Grant reins.Grant
	// Problem says why the grant could not be read (it does not decode, or it is broader than
	// an approval): Grant then holds only its id. Revoke removes it.
	Problem string
}

// FleetOpenOptions are what the fleet verbs hand a backend's Open.
type FleetOpenOptions struct {
	// Audit, when not nil, receives a record of every command that changes the fleet.
	Audit audit.Sink
	// By names the operator in those records.
	By string
}

// FleetBackend is where the fleet verbs find the fleet: the flags that name the store, and how
// to open it.
type FleetBackend struct {
	// Store describes the store for help, as in "the runs that share <Store>".
	Store string
	// Flags registers, on every fleet verb, the flags that say where the store is.
	Flags func(fs *flag.FlagSet)
	// Open opens the fleet the parsed flags name. It returns a usage error ([Usagef]) for flags
	// that are missing or wrong, an error matching fs.ErrNotExist for a store that does not
	// exist (exit 5), any other error for a store that cannot be reached (exit 3). close, when
	// not nil, releases what Open took.
	Open func(ctx context.Context, fs *flag.FlagSet, o FleetOpenOptions) (f Fleet, close func() error, err error)
}

// Usagef returns an error that the command line is wrong (exit 4); what it says should name
// the flag and what to do.
func Usagef(format string, args ...any) error { return usagef(format, args...) }

// FileBackend is the fleet of the runs of one machine that share one reins.FileStore, named by
// -store PATH. The file must exist: a halt written to a mistyped path would halt nothing.
func FileBackend() *FleetBackend {
	return &FleetBackend{
		Store: "one run-state file",
		Flags: func(fs *flag.FlagSet) {
			fs.String("store", "", "the run-state `file` the runs share (their reins.FileStore; required)")
		},
		Open: func(ctx context.Context, fs *flag.FlagSet, o FleetOpenOptions) (Fleet, func() error, error) {
			path := fs.Lookup("store").Value.String()
			if path == "" {
				return nil, nil, usagef("-store PATH is required: the run-state file the runs share")
			}
			st, err := os.Stat(path)
			switch {
			case errors.Is(err, os.ErrNotExist):
				return nil, nil, notFoundf("no run-state file %s (the runs create it at their first change; pass the file they share)", path)
			case err != nil:
				return nil, nil, err
			case !st.Mode().IsRegular():
				return nil, nil, usagef("-store %s is not a regular file", path)
			}
			store := reins.NewFileStore(path)
			return &StoreFleet{Store: store, Audit: o.Audit, By: o.By, Name: "file " + store.Path()}, nil, nil
		},
	}
}

// StoreFleet is a [Fleet] on one reins.Store whose runs keep one state (a FileStore shared by
// the runs of a machine): it knows no runs apart, so its Status has no Runs and reports the
// failure counts and parked actions of the shared state. Its commands change the state as
// reins.Run's Halt, EmergencyStop, Reset and Revoke do, recording each in Audit when set.
type StoreFleet struct {
	Store reins.Store
	// Audit, when not nil, receives a record of every change; By names the operator in them,
	// Name the store (the records' profile field: "fleet " + Name).
	Audit audit.Sink
	By    string
	Name  string
}

// Status implements Fleet.
func (f *StoreFleet) Status(ctx context.Context) (*FleetStatus, error) {
	s, err := f.Store.Load(ctx)
	if err != nil {
		return nil, err
	}
	st := &FleetStatus{Halt: s.Halt, Grants: len(s.Grants), Failures: s.Failures, Parked: len(s.Parked), Runs: []FleetRun{}}
	for _, m := range s.Meters {
		st.Meters = append(st.Meters, m)
	}
	slices.SortFunc(st.Meters, func(a, b reins.MeterStatus) int { return strings.Compare(a.Name, b.Name) })
	return st, nil
}

// Halt implements Fleet.
func (f *StoreFleet) Halt(ctx context.Context, reason string) (gate.Halt, error) {
	return f.halt(ctx, gate.Halt{Cause: gate.CauseManual, Reason: "fleet halt: " + reason})
}

// EmergencyStop implements Fleet: it replaces a halt of another cause, as etcdstore.Fleet's
// does, so the runs that watch the store cancel their operations in flight.
func (f *StoreFleet) EmergencyStop(ctx context.Context, reason string) (gate.Halt, error) {
	return f.halt(ctx, gate.Halt{Cause: gate.CauseEmergency, Reason: "emergency stop: " + reason})
}

func (f *StoreFleet) halt(ctx context.Context, h gate.Halt) (gate.Halt, error) {
	h.Time = time.Now()
	latched := false
	s, err := f.Store.Update(ctx, func(s *reins.RunState) error {
		latched = s.Halt == nil || h.Cause == gate.CauseEmergency && s.Halt.Cause != gate.CauseEmergency
		if latched {
			hh := h
			s.Halt = &hh
		}
		return nil
	})
	if err != nil {
		return gate.Halt{}, err
	}
	if !latched {
		return *s.Halt, nil
	}
	return h, f.record(ctx, audit.Record{Time: h.Time, Kind: audit.KindHalt, Decision: policy.Deny, RuleMatched: h.Cause.CheckID(),
		Layer: policy.LayerHardStop, Reason: h.Reason})
}

// Reset implements Fleet.
func (f *StoreFleet) Reset(ctx context.Context, reason string) error {
	now := time.Now()
	var prev *gate.Halt
	var meters []string
	_, err := f.Store.Update(ctx, func(s *reins.RunState) error {
		prev, meters = s.Halt, meters[:0]
		s.Halt = nil
		clear(s.Failures)
		for n, m := range s.Meters {
			if m.Exhausted {
				m.Used, m.Warned, m.Exhausted, m.Reason = 0, false, false, ""
				if n == reins.MeterWallTime {
					m.Start = now
				}
				s.Meters[n] = m
				meters = append(meters, n)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	slices.Sort(meters)
	for _, n := range meters {
		if err := f.record(ctx, audit.Record{Time: now, Kind: audit.KindBudget, Decision: policy.Allow, UserOverride: true,
			RuleMatched: "budget:" + n + ":reset", Reason: "fleet meter " + n + " reset: " + reason}); err != nil {
			return err
		}
	}
	rec := audit.Record{Time: now, Kind: audit.KindReset, Decision: policy.Allow, RuleMatched: gate.CheckReset,
		Layer: policy.LayerHalted, UserOverride: true, Reason: "fleet reset: " + reason}
	if prev != nil {
		rec.Reason += " (was halted: " + prev.Reason + ")"
	}
	return f.record(ctx, rec)
}

// Grants implements Fleet: every grant of the state, shared by its runs.
func (f *StoreFleet) Grants(ctx context.Context) ([]FleetGrant, error) {
	s, err := f.Store.Load(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]FleetGrant, 0, len(s.Grants))
	for _, g := range s.Grants {
		out = append(out, FleetGrant{Grant: g})
	}
	return out, nil
}

// Revoke implements Fleet.
func (f *StoreFleet) Revoke(ctx context.Context, id, reason string) error {
	found := false
	if _, err := f.Store.Update(ctx, func(s *reins.RunState) error {
		n := len(s.Grants)
		s.Grants = slices.DeleteFunc(s.Grants, func(g reins.Grant) bool { return g.ID == id })
		found = len(s.Grants) < n
		return nil
	}); err != nil {
		return err
	}
	if !found {
		return notFoundf("the fleet has no grant %q (see 'reins fleet grants')", id)
	}
	return f.record(ctx, audit.Record{Time: time.Now(), Kind: audit.KindGrantRevoked, Decision: policy.Deny, UserOverride: true,
		RuleMatched: gate.CheckGrantPrefix + id, Reason: "grant revoked for the fleet: " + reason})
}

// record writes an operator's record, when the fleet has a sink.
func (f *StoreFleet) record(ctx context.Context, rec audit.Record) error {
	if f.Audit == nil {
		return nil
	}
	id, err := uuid.NewV7()
	if err != nil {
		return err
	}
	rec.DecisionID, rec.CorrelationID = id, id
	rec.DecidedBy, rec.Approver = audit.DecidedByUser, f.By
	rec.Profile = "fleet " + f.Name
	if err := f.Audit.Write(context.WithoutCancel(ctx), rec); err != nil {
		return fmt.Errorf("audit: %w (the change was made)", err)
	}
	return nil
}

var fleetCmd = &command{name: "fleet", args: "<status|halt|reset|grants|revoke>",
	synopsis: "operate the runs that share a run-state store: status, halt, reset, grants", sub: []*command{
		{name: "status", synopsis: "the shared halt, meters, grants and runs", run: fleetStatus, backend: true},
		{name: "halt", args: "REASON...", synopsis: "halt every run sharing the store (each denies its next decision)", run: fleetHalt, backend: true,
			flags: func(fs *flag.FlagSet) {
				changeFlags(fs)
				fs.Bool("emergency", false, "an emergency stop: runs that watch the store also cancel their operations in flight")
			}},
		{name: "reset", args: "REASON...", synopsis: "clear the halt, the failure counts and the exhausted meters", run: fleetReset,
			backend: true, flags: changeFlags},
		{name: "grants", synopsis: "list the grants the runs share or keep", run: fleetGrants, backend: true},
		{name: "revoke", args: "ID [REASON...]", synopsis: "revoke a grant for every run", run: fleetRevoke, backend: true, flags: changeFlags},
	}}

// fleetBackend is the backend in force: set by Main; a cli made another way (tests) gets the
// file backend.
func (c *cli) fleetBackend() *FleetBackend {
	if c.fleet == nil {
		c.fleet = FileBackend()
	}
	return c.fleet
}

// changeFlags are the flags of a fleet verb that changes the fleet.
func changeFlags(fs *flag.FlagSet) {
	fs.String("audit", "", "record the command in this audit `log` (JSONL, hash-chained; created if missing)")
	fs.String("by", "", "the operator's `name` in the record (default: the user's login)")
}

// openFleet opens the fleet the flags name; done releases it (and the audit log).
func (c *cli) openFleet(fs *flag.FlagSet) (Fleet, func(), error) {
	var o FleetOpenOptions
	var closers []func() error
	done := func() {
		for _, cl := range slices.Backward(closers) {
			_ = cl()
		}
	}
	if f := fs.Lookup("audit"); f != nil && f.Value.String() != "" {
		j, err := audit.OpenJSONL(f.Value.String(), nil)
		if err != nil {
			return nil, nil, fmt.Errorf("-audit: %w", err)
		}
		closers = append(closers, func() error { return j.Close(context.WithoutCancel(c.ctx)) })
		o.Audit = j
		o.By = fs.Lookup("by").Value.String()
		if o.By == "" {
			if u, err := user.Current(); err == nil {
				o.By = u.Username
			}
		}
	}
	f, cl, err := c.fleetBackend().Open(c.ctx, fs, o)
	if err != nil {
		done()
		return nil, nil, err
	}
	if cl != nil {
		closers = append(closers, cl)
	}
	return f, done, nil
}

// reasonOf is the reason the words after the verb give; one is required.
func reasonOf(words []string, verb string) (string, error) {
	r := strings.TrimSpace(strings.Join(words, " "))
	if r == "" {
		return "", usagef("say why: reins fleet %s REASON... (the reason goes into the halt and the audit record)", verb)
	}
	if len(r) > 1024 {
		return "", usagef("the reason is %d bytes long: at most 1024", len(r))
	}
	return r, nil
}

func fleetStatus(c *cli, fs *flag.FlagSet) (int, error) {
	if err := exactArgs(fs, 0, "no arguments", ""); err != nil {
		return 0, err
	}
	f, done, err := c.openFleet(fs)
	if err != nil {
		return 0, err
	}
	defer done()
	st, err := f.Status(c.ctx)
	if err != nil {
		return 0, err
	}
	if st.Meters == nil {
		st.Meters = []reins.MeterStatus{}
	}
	if st.Runs == nil {
		st.Runs = []FleetRun{}
	}
	return exitOK, c.emit(st, func(w io.Writer) { printStatus(w, st) })
}

func printStatus(w io.Writer, st *FleetStatus) {
	if st.Halt != nil {
		fmt.Fprintf(w, "halt\t%s: %s (since %s): every run denies until 'reins fleet reset'\n", st.Halt.Cause, st.Halt.Reason,
			st.Halt.Time.Local().Format("2006-01-02 15:04:05"))
	} else {
		fmt.Fprintln(w, "halt\tnone")
	}
	fmt.Fprintf(w, "grants\t%d shared (see 'reins fleet grants')\n", st.Grants)
	if len(st.Failures) > 0 || st.Parked > 0 {
		fmt.Fprintf(w, "failures\t%s\n", failuresOf(st.Failures))
		fmt.Fprintf(w, "parked\t%d\n", st.Parked)
	}
	if len(st.Meters) == 0 {
		fmt.Fprintln(w, "meters\tnone")
	} else {
		fmt.Fprintln(w, "\nMETER\tUSED\tLIMIT\tSTATE")
		for _, m := range st.Meters {
			state := "ok"
			switch {
			case m.Exhausted:
				state = "exhausted: " + m.Reason
			case m.Warned:
				state = "warned"
			}
			fmt.Fprintf(w, "%s\t%g\t%g\t%s\n", m.Name, m.Used, m.Limit, state)
		}
	}
	if len(st.Runs) == 0 {
		return
	}
	fmt.Fprintln(w, "\nRUN\tLIVE\tHOST\tPID\tLAST ACTIVE\tHALT\tFAILURES\tPARKED\tGRANTS\tPROBLEM")
	for _, r := range st.Runs {
		live, active, halt, pid := "no", "-", "-", "-"
		if r.Live {
			live = "yes"
		}
		if !r.LastActive.IsZero() {
			active = r.LastActive.Local().Format("2006-01-02 15:04:05")
		}
		if r.Halt != nil {
			halt = string(r.Halt.Cause)
		}
		if r.PID > 0 {
			pid = fmt.Sprint(r.PID)
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t%d\t%s\n", r.ID, live, dash(r.Host), pid, active, halt,
			failuresOf(r.Failures), r.Parked, r.Grants, dash(r.Problem))
	}
}

func failuresOf(m map[string]int) string {
	if len(m) == 0 {
		return "-"
	}
	var parts []string
	for _, tool := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%s=%d", tool, m[tool]))
	}
	return strings.Join(parts, ",")
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func fleetHalt(c *cli, fs *flag.FlagSet) (int, error) {
	reason, err := reasonOf(fs.Args(), "halt")
	if err != nil {
		return 0, err
	}
	f, done, err := c.openFleet(fs)
	if err != nil {
		return 0, err
	}
	defer done()
	emergency := fs.Lookup("emergency").Value.(flag.Getter).Get().(bool)
	start := time.Now()
	var h gate.Halt
	if emergency {
		h, err = f.EmergencyStop(c.ctx, reason)
	} else {
		h, err = f.Halt(c.ctx, reason)
	}
	// A halt that latched but could not be recorded is still in force: say both.
	if err != nil && h.Cause == "" {
		return 0, err
	}
	type view struct {
		Halt gate.Halt `json:"halt"`
		// New says this command latched it; false: a halt was in force already, and stays.
		New bool `json:"new"`
	}
	want := gate.CauseManual
	if emergency {
		want = gate.CauseEmergency
	}
	// The halt in force is this command's when it has its cause and reason and was latched
	// after the command began (this process's clock set its time); otherwise it was there before.
	v := view{Halt: h, New: h.Cause == want && strings.HasSuffix(h.Reason, ": "+reason) && !h.Time.Before(start)}
	if eerr := c.emit(v, func(w io.Writer) {
		if v.New {
			fmt.Fprintf(w, "halted: %s: %s\nevery run sharing the store denies its next decision, until 'reins fleet reset'\n", h.Cause, h.Reason)
		} else {
			fmt.Fprintf(w, "already halted (%s: %s); that halt stays, until 'reins fleet reset'\n", h.Cause, h.Reason)
		}
	}); eerr != nil {
		return 0, eerr
	}
	return exitOK, err
}

func fleetReset(c *cli, fs *flag.FlagSet) (int, error) {
	reason, err := reasonOf(fs.Args(), "reset")
	if err != nil {
		return 0, err
	}
	f, done, err := c.openFleet(fs)
	if err != nil {
		return 0, err
	}
	defer done()
	if err := f.Reset(c.ctx, reason); err != nil {
		return 0, err
	}
	return exitOK, c.emit(map[string]string{"reset": reason}, func(w io.Writer) {
		fmt.Fprintln(w, "reset: the halt, the failure counts and the exhausted meters are cleared; the runs decide again")
	})
}

// grantView is a fleet grant in JSON and in the table.
type grantView struct {
	ID      string    `json:"id"`
	Run     string    `json:"run,omitempty"` // "" for a shared grant
	Scope   string    `json:"scope,omitempty"`
	Profile string    `json:"profile,omitempty"`
	Created time.Time `json:"created,omitzero"`
	Expires time.Time `json:"expires,omitzero"`
	Used    int       `json:"used"`
	MaxUses int       `json:"max_uses,omitempty"`
	By      string    `json:"by,omitempty"`
	Allows  []string  `json:"allows"`
	Problem string    `json:"problem,omitempty"`
}

func fleetGrants(c *cli, fs *flag.FlagSet) (int, error) {
	if err := exactArgs(fs, 0, "no arguments", ""); err != nil {
		return 0, err
	}
	f, done, err := c.openFleet(fs)
	if err != nil {
		return 0, err
	}
	defer done()
	gs, err := f.Grants(c.ctx)
	if err != nil {
		return 0, err
	}
	views := []grantView{}
	for _, fg := range gs {
		g := fg.Grant
		v := grantView{ID: g.ID, Run: fg.Run, Problem: fg.Problem, Allows: []string{}}
		if fg.Problem == "" {
			v.Scope, v.Profile, v.Created, v.Expires, v.Used, v.MaxUses, v.By = g.Scope.String(), g.Profile.Name, g.Created, g.Expires, g.Used, g.MaxUses, g.By
			for _, r := range g.Rules {
				v.Allows = append(v.Allows, when(r.Condition))
			}
		}
		views = append(views, v)
	}
	return exitOK, c.emit(views, func(w io.Writer) {
		if len(views) == 0 {
			fmt.Fprintln(w, "no grants")
			return
		}
		fmt.Fprintln(w, "ID\tRUN\tSCOPE\tPROFILE\tUSED\tALLOWS")
		for _, v := range views {
			run, used := "shared", fmt.Sprint(v.Used)
			if v.Run != "" {
				run = v.Run
			}
			if v.MaxUses > 0 {
				used += fmt.Sprintf("/%d", v.MaxUses)
			}
			if v.Problem != "" {
				fmt.Fprintf(w, "%s\t%s\t-\t-\t-\tunreadable: %s (revoke it)\n", v.ID, run, v.Problem)
				continue
			}
			for i, a := range v.Allows {
				if i == 0 {
					fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\n", v.ID, run, v.Scope, v.Profile, used, a)
				} else {
					fmt.Fprintf(w, "\t\t\t\t\t%s\n", a)
				}
			}
		}
	})
}

func fleetRevoke(c *cli, fs *flag.FlagSet) (int, error) {
	if fs.NArg() < 1 {
		return 0, usagef("want a grant id (see 'reins fleet grants')")
	}
	id := fs.Arg(0)
	reason := strings.TrimSpace(strings.Join(fs.Args()[1:], " "))
	if reason == "" {
		reason = "by the operator"
	}
	f, done, err := c.openFleet(fs)
	if err != nil {
		return 0, err
	}
	defer done()
	// Known first, so that every backend says "not found" the same way (exit 5).
	gs, err := f.Grants(c.ctx)
	if err != nil {
		return 0, err
	}
	if !slices.ContainsFunc(gs, func(g FleetGrant) bool { return g.Grant.ID == id }) {
		return 0, notFoundf("the fleet has no grant %q (see 'reins fleet grants')", id)
	}
	if err := f.Revoke(c.ctx, id, reason); err != nil {
		return 0, err
	}
	return exitOK, c.emit(map[string]string{"revoked": id}, func(w io.Writer) {
		fmt.Fprintf(w, "revoked %s: no run's decision matches it from now on\n", id)
	})
}
