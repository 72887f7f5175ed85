package etcdstore_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"

	"github.com/reins-go/reins"
	"github.com/reins-go/reins/etcdstore"
	"github.com/reins-go/reins/gate"
	"github.com/reins-go/reins/policy"
	"github.com/reins-go/reins/profile"
	"github.com/reins-go/reins/risk"
)

// server is a one-member etcd cluster in this process, on loopback, with its data in a
// temporary directory. It can be stopped and started again on the same ports and data.
type server struct {
	tb         testing.TB
	dir        string
	client     url.URL
	peer       url.URL
	e          *embed.Etcd
	prefixSeen atomic.Int64
}

// startEtcd starts a server; the test's cleanup stops it.
func startEtcd(tb testing.TB) *server {
	tb.Helper()
	s := &server{tb: tb, dir: filepath.Join(tb.TempDir(), "etcd"),
		client: url.URL{Scheme: "http", Host: freeAddr(tb)}, peer: url.URL{Scheme: "http", Host: freeAddr(tb)}}
	s.start()
	tb.Cleanup(s.stop)
	return s
}

func freeAddr(tb testing.TB) string {
	tb.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(tb, err)
	defer l.Close()
	return l.Addr().String()
}

func (s *server) start() {
	s.tb.Helper()
	cfg := embed.NewConfig()
	cfg.Name = "reins-test"
	cfg.Dir = s.dir
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{s.client}, []url.URL{s.client}
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{s.peer}, []url.URL{s.peer}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(zap.NewNop())
	// The tests stop the server cleanly; fsync would only slow the shared machine down.
	cfg.UnsafeNoFsync = true
	e, err := embed.StartEtcd(cfg)
	require.NoError(s.tb, err)
	select {
	case <-e.Server.ReadyNotify():
	case <-time.After(60 * time.Second):
		e.Close()
		s.tb.Fatal("etcd did not become ready within 60s")
	}
	s.e = e
}

// stop stops the server (a second stop does nothing). A server that does not stop within a
// minute fails the test with every goroutine's stack, rather than hanging the package.
func (s *server) stop() {
	if s.e == nil {
		return
	}
	e := s.e
	s.e = nil
	done := make(chan struct{})
	go func() { e.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(time.Minute):
		buf := make([]byte, 1<<20)
		s.tb.Errorf("etcd did not stop within a minute; goroutines:\n%s", buf[:runtime.Stack(buf, true)])
	}
}

// restart starts a stopped server again, on the same ports and data.
func (s *server) restart() {
	s.tb.Helper()
	require.Nil(s.tb, s.e, "restart a stopped server")
	s.start()
}

// newClient returns a client of the server; the test's cleanup closes it.
func (s *server) newClient(tb testing.TB) *clientv3.Client {
	tb.Helper()
	c, err := clientv3.New(clientv3.Config{Endpoints: []string{s.client.Host}, DialTimeout: 5 * time.Second,
		Logger: zap.NewNop()})
	require.NoError(tb, err)
	tb.Cleanup(func() { c.Close() })
	return c
}

// prefix returns a fresh fleet prefix.
func (s *server) prefix() string {
	return fmt.Sprintf("/test/fleet%d", s.prefixSeen.Add(1))
}

// newStore returns a store of run id under prefix on its own client; the test's cleanup closes
// both.
func (s *server) newStore(tb testing.TB, prefix, id string, tune func(*etcdstore.Options)) *etcdstore.Store {
	tb.Helper()
	o := &etcdstore.Options{Prefix: prefix, RunID: id}
	if tune != nil {
		tune(o)
	}
	st, err := etcdstore.New(s.newClient(tb), o)
	require.NoError(tb, err)
	tb.Cleanup(func() { st.Close() })
	return st
}

// newFleet returns the operator's handle on prefix.
func (s *server) newFleet(tb testing.TB, prefix string, tune func(*etcdstore.FleetOptions)) *etcdstore.Fleet {
	tb.Helper()
	o := &etcdstore.FleetOptions{Prefix: prefix, By: "operator", Timeout: 30 * time.Second}
	if tune != nil {
		tune(o)
	}
	f, err := etcdstore.NewFleet(s.newClient(tb), o)
	require.NoError(tb, err)
	return f
}

// workspace makes a workspace with a README.
func workspace(tb testing.TB) string {
	tb.Helper()
	dir := tb.TempDir()
	require.NoError(tb, os.WriteFile(filepath.Join(dir, "README.md"), []byte("hello\n"), 0o644))
	return dir
}

// newRun starts a run of the trusted profile on store st.
func newRun(tb testing.TB, st reins.Store, tune func(*reins.Options)) *reins.Run {
	tb.Helper()
	o := &reins.Options{Workspace: []string{workspace(tb)}, ConfigDir: filepath.Join(tb.TempDir(), "reins"), Store: st}
	if tune != nil {
		tune(o)
	}
	r, err := reins.New(context.Background(), profile.Trusted.Profile(), o)
	require.NoError(tb, err)
	tb.Cleanup(func() { r.Close() })
	return r
}

// grant is a grant as narrow as an approval: one command line, in one directory.
func grant(id string, scope reins.Scope) reins.Grant {
	p := profile.Trusted.Profile()
	return reins.Grant{ID: id, Scope: scope, Line: "go test ./...", Dir: "/w", Profile: p, ProfileHash: p.Hash(),
		Created: time.Unix(1700000000, 0).UTC(),
		Rules: []policy.Rule{{ID: gate.CheckGrantPrefix + id, Action: policy.Allow, Condition: policy.Condition{
			OperationType: []policy.Operation{policy.OpShell}, Tools: []string{"bash"},
			Commands: []string{"go test ./..."}, CommandPattern: "^" + regexp.QuoteMeta("go test ./...") + "$",
			Risk: policy.RiskMatch{Levels: risk.Of(risk.Exec)}}}}}
}

func jsonOf(v any) (string, error) {
	b, err := json.Marshal(v)
	return string(b), err
}

// readme is an action the trusted profile allows without obligations.
var readme = policy.Action{Tool: "read_file", Operation: policy.OpRead, Targets: []string{"README.md"}}

// proxy forwards TCP connections to the server; down cuts every connection and refuses new
// ones (a partition between the runs and the cluster), up lets them through again.
type proxy struct {
	tb     testing.TB
	addr   string
	target string
	mu     sync.Mutex
	ln     net.Listener
	conns  map[net.Conn]struct{}
}

func newProxy(tb testing.TB, target string) *proxy {
	p := &proxy{tb: tb, addr: freeAddr(tb), target: target, conns: map[net.Conn]struct{}{}}
	p.up()
	tb.Cleanup(p.down)
	return p
}

func (p *proxy) up() {
	p.tb.Helper()
	ln, err := net.Listen("tcp", p.addr)
	require.NoError(p.tb, err)
	p.mu.Lock()
	p.ln = ln
	p.mu.Unlock()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go p.forward(c)
		}
	}()
}

func (p *proxy) forward(c net.Conn) {
	s, err := net.Dial("tcp", p.target)
	if err != nil {
		c.Close()
		return
	}
	p.mu.Lock()
	if p.ln == nil {
		p.mu.Unlock()
		c.Close()
		s.Close()
		return
	}
	p.conns[c], p.conns[s] = struct{}{}, struct{}{}
	p.mu.Unlock()
	go func() { _, _ = io.Copy(s, c); s.Close(); c.Close() }()
	go func() { _, _ = io.Copy(c, s); s.Close(); c.Close() }()
}

func (p *proxy) down() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln != nil {
		p.ln.Close()
		p.ln = nil
	}
	for c := range p.conns {
		c.Close()
	}
	clear(p.conns)
}

// clientVia returns a client that reaches the server through p.
func clientVia(tb testing.TB, p *proxy) *clientv3.Client {
	tb.Helper()
	c, err := clientv3.New(clientv3.Config{Endpoints: []string{p.addr}, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	require.NoError(tb, err)
	tb.Cleanup(func() { c.Close() })
	return c
}
