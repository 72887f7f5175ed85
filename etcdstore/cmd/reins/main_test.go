package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"

	"github.com/reins-go/reins"
	"github.com/reins-go/reins/audit"
	"github.com/reins-go/reins/etcdstore"
	"github.com/reins-go/reins/examples/reins/cli"
	"github.com/reins-go/reins/gate"
	"github.com/reins-go/reins/policy"
	"github.com/reins-go/reins/profile"
	"github.com/reins-go/reins/risk"
)

// startEtcd starts a one-member etcd cluster in this process, on loopback, as package
// etcdstore's tests do, and returns its client endpoint; the test's cleanup stops it.
func startEtcd(t *testing.T) string {
	t.Helper()
	free := func() url.URL {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		defer l.Close()
		return url.URL{Scheme: "http", Host: l.Addr().String()}
	}
	client, peer := free(), free()
	cfg := embed.NewConfig()
	cfg.Name = "reins-cmd-test"
	cfg.Dir = filepath.Join(t.TempDir(), "etcd")
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{client}, []url.URL{client}
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{peer}, []url.URL{peer}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(zap.NewNop())
	cfg.UnsafeNoFsync = true
	e, err := embed.StartEtcd(cfg)
	require.NoError(t, err)
	t.Cleanup(e.Close)
	select {
	case <-e.Server.ReadyNotify():
	case <-time.After(60 * time.Second):
		t.Fatal("etcd did not become ready within 60s")
	}
	return client.Host
}

// newRun starts a run of PROFILE-DEV on an etcd store of run id under prefix, on its own client.
func newRun(t *testing.T, endpoint, prefix, id string) *reins.Run {
	t.Helper()
	c, err := clientv3.New(clientv3.Config{Endpoints: []string{endpoint}, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	st, err := etcdstore.New(c, &etcdstore.Options{Prefix: prefix, RunID: id, TTL: 3 * time.Second})
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	r, err := reins.New(context.Background(), profile.Dev.Profile(), &reins.Options{Workspace: []string{t.TempDir()},
		ConfigDir: filepath.Join(t.TempDir(), "reins"), Store: st, Meters: []reins.Meter{{Name: reins.MeterCost, Limit: 10}}})
	require.NoError(t, err)
	t.Cleanup(func() { r.Close() })
	return r
}

// teamGrant is an "always" grant as narrow as an approval: the fleet shares it.
func teamGrant(id string) reins.Grant {
	p := profile.Dev.Profile()
	return reins.Grant{ID: id, Scope: reins.Always, Line: "go test ./...", Dir: "/w", Profile: p, ProfileHash: p.Hash(),
		Created: time.Unix(1700000000, 0).UTC(),
		Rules: []policy.Rule{{ID: gate.CheckGrantPrefix + id, Action: policy.Allow, Condition: policy.Condition{
			OperationType: []policy.Operation{policy.OpShell}, Tools: []string{"bash"},
			Commands: []string{"go test ./..."}, CommandPattern: "^" + regexp.QuoteMeta("go test ./...") + "$",
			Risk: policy.RiskMatch{Levels: risk.Of(risk.Exec)}}}}}
}

// run runs the command line as this command's main does, and returns the exit code, stdout and
// stderr.
func run(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := cli.Main(context.Background(), args, strings.NewReader(""), &out, &errb, &cli.Options{Fleet: Backend()})
	return code, out.String(), errb.String()
}

var readme = policy.Action{Tool: "read_file", Operation: policy.OpRead, Targets: []string{"README.md"}}

// TestFleetVerbsOnEtcd: the core CLI's fleet verbs, through this command's backend, against a
// real etcd server: status lists the live runs and the shared meter; halt makes every run's
// next decision deny (naming the halt); reset lets them decide again; grants lists the shared
// grant, revoke takes it from every run; each change is recorded by the operator; the errors
// are the core command's (no endpoints: usage, 4; an unreachable cluster: error, 3).
func TestFleetVerbsOnEtcd(t *testing.T) {
	endpoint := startEtcd(t)
	ctx := context.Background()
	const prefix = "/test/team-a"
	a := newRun(t, endpoint, prefix, "run-a")
	b := newRun(t, endpoint, prefix, "run-b")
	_, err := a.AddGrant(ctx, teamGrant("g-team"))
	require.NoError(t, err)
	require.NoError(t, b.Use(ctx, reins.MeterCost, 4))
	flags := []string{"-endpoints", endpoint, "-prefix", prefix, "-timeout", "30s"}
	log := filepath.Join(t.TempDir(), "operator.jsonl")
	change := append([]string{"-audit", log, "-by", "alice"}, flags...)

	// The stores write their member keys in the background: wait for both.
	var st cli.FleetStatus
	deadline := time.Now().Add(30 * time.Second)
	for {
		code, out, stderr := run(t, append([]string{"--json", "fleet", "status"}, flags...)...)
		require.Equal(t, 0, code, stderr)
		require.NoError(t, json.Unmarshal([]byte(out), &st))
		if len(st.Runs) == 2 && st.Runs[0].Live && st.Runs[1].Live || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	require.Len(t, st.Runs, 2)
	assert.Equal(t, "run-a", st.Runs[0].ID)
	assert.True(t, st.Runs[1].Live)
	assert.Nil(t, st.Halt)
	assert.Equal(t, 1, st.Grants)
	require.Len(t, st.Meters, 1)
	assert.Equal(t, 4.0, st.Meters[0].Used, "the shared budget")

	code, out, stderr := run(t, append([]string{"fleet", "status"}, flags...)...)
	require.Equal(t, 0, code, stderr)
	assert.Regexp(t, `(?m)^halt\s+none$`, out)
	assert.Regexp(t, `(?m)^cost\s+4\s+10\s+ok$`, out)
	assert.Regexp(t, `(?m)^run-a\s+yes\s+\S+\s+\d+\s`, out)

	code, out, stderr = run(t, append(append([]string{"fleet", "halt"}, change...), "incident", "42")...)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, out, "halted: manual: fleet halt: incident 42")
	for _, r := range []*reins.Run{a, b} {
		d, err := r.Check(ctx, readme)
		require.NoError(t, err)
		assert.Equal(t, policy.Deny, d.Verdict, "every run's next decision denies")
		assert.Contains(t, d.Reason, "fleet halt: incident 42")
	}

	code, out, stderr = run(t, append(append([]string{"fleet", "reset"}, change...), "resolved")...)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, out, "reset:")
	for _, r := range []*reins.Run{a, b} {
		d, err := r.Check(ctx, readme)
		require.NoError(t, err)
		assert.Equal(t, policy.Allow, d.Verdict, "after the reset every run decides again")
	}

	code, out, stderr = run(t, append([]string{"fleet", "grants"}, flags...)...)
	require.Equal(t, 0, code, stderr)
	assert.Regexp(t, `(?m)^g-team\s+shared\s+always\s+PROFILE-DEV\s+0\s+op=shell`, out)
	code, out, stderr = run(t, append(append([]string{"fleet", "revoke"}, change...), "g-team", "too", "wide")...)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, out, "revoked g-team")
	for _, r := range []*reins.Run{a, b} {
		gs, err := r.Grants(ctx)
		require.NoError(t, err)
		var ids []string
		for _, g := range gs {
			ids = append(ids, g.ID)
		}
		assert.Empty(t, ids, "the grant is gone from every run")
	}
	code, _, stderr = run(t, append(append([]string{"fleet", "revoke"}, flags...), "g-team")...)
	assert.Equal(t, 5, code)
	assert.Equal(t, "reins: fleet revoke: the fleet has no grant \"g-team\" (see 'reins fleet grants')\n", stderr)

	var kinds []audit.Kind
	for r, err := range audit.Scan(log, nil) {
		require.NoError(t, err)
		kinds = append(kinds, r.Kind)
		assert.Equal(t, "alice", r.Approver)
		assert.Equal(t, "fleet "+prefix, r.Profile)
	}
	assert.Equal(t, []audit.Kind{audit.KindHalt, audit.KindReset, audit.KindGrantRevoked}, kinds)

	// Errors, in the core command's format and codes.
	t.Setenv("REINS_ETCD_ENDPOINTS", "")
	code, out, stderr = run(t, "fleet", "status")
	assert.Equal(t, 4, code)
	assert.Empty(t, out)
	assert.Equal(t, "reins: fleet status: -endpoints HOST:PORT[,...] is required (or $REINS_ETCD_ENDPOINTS): the cluster the runs share\n", stderr)
	code, _, stderr = run(t, "fleet", "status", "-endpoints", endpoint, "-prefix", "no-slash")
	assert.Equal(t, 4, code, stderr)
	assert.Contains(t, stderr, "reins: fleet status: -prefix: ")
	code, _, stderr = run(t, "fleet", "status", "-endpoints", endpoint, "-cert", "c.pem")
	assert.Equal(t, 4, code, stderr)
	assert.Contains(t, stderr, "-cert and -key need -cacert")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	dead := l.Addr().String()
	require.NoError(t, l.Close())
	code, out, stderr = run(t, "--json", "fleet", "halt", "-endpoints", dead, "-timeout", "300ms", "nobody", "there")
	assert.Equal(t, 3, code, "an unreachable cluster is an error: nothing was halted")
	assert.Empty(t, out, "no success is printed")
	var e struct {
		Verb  string `json:"verb"`
		Error string `json:"error"`
	}
	require.NoError(t, json.Unmarshal([]byte(stderr), &e), stderr)
	assert.Equal(t, "fleet halt", e.Verb)
	assert.Equal(t, "error", e.Error)
}
