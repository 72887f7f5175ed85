package etcdstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins"
	"github.com/reins-go/reins/etcdstore"
	"github.com/reins-go/reins/gate"
	"github.com/reins-go/reins/policy"
	"github.com/reins-go/reins/reinstest"
)

// The store passes the run-state conformance kit; the second handle is another client of the
// same run.
func TestConformance(t *testing.T) {
	srv := startEtcd(t)
	reinstest.TestStore(t, func(t *testing.T) reins.Store {
		return srv.newStore(t, srv.prefix(), "run-1", nil)
	}, func(t *testing.T, s reins.Store) reins.Store {
		es := s.(*etcdstore.Store)
		return srv.newStore(t, es.Prefix(), es.RunID(), nil)
	})
}

func TestOptions(t *testing.T) {
	srv := startEtcd(t)
	c := srv.newClient(t)
	for _, tt := range []struct {
		name string
		o    etcdstore.Options
		want string
	}{
		{"prefix without a slash", etcdstore.Options{Prefix: "reins"}, "must start with '/'"},
		{"prefix ending in a slash", etcdstore.Options{Prefix: "/reins/"}, "must start with '/'"},
		{"prefix with a space", etcdstore.Options{Prefix: "/re ins"}, "space"},
		{"run id with a slash", etcdstore.Options{RunID: "a/b"}, "only letters"},
		{"run id ..", etcdstore.Options{RunID: ".."}, "not starting with '.'"},
		{"run id too long", etcdstore.Options{RunID: string(make([]byte, 129))}, "128"},
		{"short TTL", etcdstore.Options{TTL: time.Second}, "shorter than 2s"},
		{"negative grace", etcdstore.Options{Grace: -time.Second}, "negative"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := etcdstore.New(c, &tt.o)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
	s, err := etcdstore.New(c, nil)
	require.NoError(t, err)
	defer s.Close()
	assert.Equal(t, etcdstore.DefaultPrefix, s.Prefix())
	require.NoError(t, etcdstore.CheckRunID(s.RunID()), "the default run id is valid: %s", s.RunID())
	_, err = etcdstore.New(nil, nil)
	require.Error(t, err)
}

// The fleet shares the halt, the meters and the "always" grants; failure counts, parked actions
// and session grants stay with their run; the tool-failures hard stop is the run's own.
func TestWhatIsShared(t *testing.T) {
	srv := startEtcd(t)
	ctx := context.Background()
	prefix := srv.prefix()
	a := srv.newStore(t, prefix, "a", nil)
	b := srv.newStore(t, prefix, "b", nil)
	g := grant("g-session", reins.ForSession)
	always := grant("g-always", reins.Always)
	_, err := a.Update(ctx, func(s *reins.RunState) error {
		s.Failures = map[string]int{"bash": 2}
		s.Meters = map[string]reins.MeterStatus{"cost": {Meter: reins.Meter{Name: "cost", Limit: 10, WarnAt: 0.8}, Used: 3}}
		s.Grants = append(s.Grants, g, always)
		s.Parked = []reins.Parked{{ID: "p1", Action: readme}}
		s.Seq = 1
		return nil
	})
	require.NoError(t, err)
	sb, err := b.Load(ctx)
	require.NoError(t, err)
	assert.Empty(t, sb.Failures, "failure counts are the run's")
	assert.Empty(t, sb.Parked, "parked actions are the run's")
	assert.Zero(t, sb.Seq)
	assert.Equal(t, 3.0, sb.Meters["cost"].Used, "meters are the fleet's")
	require.Len(t, sb.Grants, 1, "always grants are the fleet's, session grants the run's")
	assert.Equal(t, "g-always", sb.Grants[0].ID)

	// A tool-failures halt stays with its run; any other halt is the fleet's.
	_, err = a.Update(ctx, func(s *reins.RunState) error {
		s.Halt = &gate.Halt{Cause: gate.CauseToolFailures, Reason: "bash failed 3 times"}
		return nil
	})
	require.NoError(t, err)
	sb, err = b.Load(ctx)
	require.NoError(t, err)
	assert.Nil(t, sb.Halt)
	_, err = b.Update(ctx, func(s *reins.RunState) error {
		s.Halt = &gate.Halt{Cause: gate.CauseSandboxEscape, Reason: "escape"}
		return nil
	})
	require.NoError(t, err)
	sa, err := a.Load(ctx)
	require.NoError(t, err)
	require.NotNil(t, sa.Halt)
	assert.Equal(t, gate.CauseSandboxEscape, sa.Halt.Cause, "the fleet's halt outranks the run's own")

	// Rev moves in every view when the fleet's part changes, only in a run's when its part does.
	before, err := b.Load(ctx)
	require.NoError(t, err)
	_, err = a.Update(ctx, func(s *reins.RunState) error { s.Failures["go"] = 1; return nil })
	require.NoError(t, err)
	after, err := b.Load(ctx)
	require.NoError(t, err)
	assert.Same(t, before, after, "another run's own change leaves this run's view as it was (and Load returns the same state)")
}

// A run may tighten what the fleet shares, never loosen it: the operator does.
func TestRunCannotLoosenTheFleet(t *testing.T) {
	srv := startEtcd(t)
	ctx := context.Background()
	prefix := srv.prefix()
	s := srv.newStore(t, prefix, "a", nil)
	always := grant("g-always", reins.Always)
	always.MaxUses, always.Used = 3, 1
	_, err := s.Update(ctx, func(st *reins.RunState) error {
		st.Meters = map[string]reins.MeterStatus{"cost": {Meter: reins.Meter{Name: "cost", Limit: 10, WarnAt: 0.8}, Used: 10, Warned: true, Exhausted: true}}
		st.Grants = append(st.Grants, always)
		st.Halt = &gate.Halt{Cause: gate.CauseManual, Reason: "stop"}
		return nil
	})
	require.NoError(t, err)
	for _, tt := range []struct {
		name string
		fn   func(st *reins.RunState)
	}{
		{"clear the fleet's halt", func(st *reins.RunState) { st.Halt = nil }},
		{"change the fleet's halt", func(st *reins.RunState) { st.Halt = &gate.Halt{Cause: gate.CauseBudget, Reason: "x"} }},
		{"raise a limit", func(st *reins.RunState) { m := st.Meters["cost"]; m.Limit = 100; st.Meters["cost"] = m }},
		{"lower the use", func(st *reins.RunState) { m := st.Meters["cost"]; m.Used = 0; st.Meters["cost"] = m }},
		{"clear the exhaustion", func(st *reins.RunState) { m := st.Meters["cost"]; m.Exhausted = false; st.Meters["cost"] = m }},
		{"remove a meter", func(st *reins.RunState) { delete(st.Meters, "cost") }},
		{"raise a grant's uses", func(st *reins.RunState) { st.Grants[0].MaxUses = 100 }},
		{"lower a grant's use count", func(st *reins.RunState) { st.Grants[0].Used = 0 }},
		{"extend a grant", func(st *reins.RunState) { st.Grants[0].Expires = time.Now().Add(time.Hour) }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := s.Update(ctx, func(st *reins.RunState) error { tt.fn(st); return nil })
			require.ErrorIs(t, err, etcdstore.ErrFleetOwned)
		})
	}
	// What tightens is allowed: counting a use, revoking the grant.
	_, err = s.Update(ctx, func(st *reins.RunState) error { st.Grants[0].Used++; return nil })
	require.NoError(t, err)
	_, err = s.Update(ctx, func(st *reins.RunState) error { st.Grants = nil; return nil })
	require.NoError(t, err)

	// The run's Reset is refused while the fleet is halted, and says who resets it.
	r := newRun(t, s, nil)
	err = r.Reset(ctx, "let me go on")
	require.ErrorIs(t, err, etcdstore.ErrFleetOwned)
	assert.Contains(t, err.Error(), "the operator resets it")
	d, err := r.Check(ctx, readme)
	require.NoError(t, err)
	assert.Equal(t, policy.Deny, d.Verdict, "still halted")

	f := srv.newFleet(t, prefix, nil)
	require.NoError(t, f.Reset(ctx, "budget raised"))
	d, err = r.Check(ctx, readme)
	require.NoError(t, err)
	assert.Equal(t, policy.Allow, d.Verdict, "%s", d.Reason)
}
