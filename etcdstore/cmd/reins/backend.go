package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/reins-go/reins/etcdstore"
	"github.com/reins-go/reins/examples/reins/cli"
	"github.com/reins-go/reins/gate"
)

// maxEndpoints bounds -endpoints.
const maxEndpoints = 64

// Backend is the fleet of an etcd cluster's prefix: the flags that name it and how to open it.
func Backend() *cli.FleetBackend {
	return &cli.FleetBackend{
		Store: "an etcd cluster",
		Flags: func(fs *flag.FlagSet) {
			fs.String("endpoints", os.Getenv("REINS_ETCD_ENDPOINTS"), "the cluster's client `endpoints`, host:port separated by commas (default $REINS_ETCD_ENDPOINTS)")
			fs.String("prefix", etcdstore.DefaultPrefix, "the fleet's key `prefix` (the runs' etcdstore.Options.Prefix)")
			fs.Duration("timeout", etcdstore.DefaultTimeout, "how long one call to the cluster may take")
			fs.String("cacert", "", "the PEM `file` of the CA that signed the cluster's certificates (TLS)")
			fs.String("cert", "", "the operator's client certificate, a PEM `file` (TLS; with -key)")
			fs.String("key", "", "the client certificate's private key, a PEM `file`")
		},
		Open: open,
	}
}

func open(ctx context.Context, fs *flag.FlagSet, o cli.FleetOpenOptions) (cli.Fleet, func() error, error) {
	get := func(name string) string { return fs.Lookup(name).Value.String() }
	var endpoints []string
	for e := range strings.SplitSeq(get("endpoints"), ",") {
		if e = strings.TrimSpace(e); e != "" {
			endpoints = append(endpoints, e)
		}
	}
	switch {
	case len(endpoints) == 0:
		return nil, nil, cli.Usagef("-endpoints HOST:PORT[,...] is required (or $REINS_ETCD_ENDPOINTS): the cluster the runs share")
	case len(endpoints) > maxEndpoints:
		return nil, nil, cli.Usagef("-endpoints lists %d endpoints: at most %d", len(endpoints), maxEndpoints)
	}
	timeout := fs.Lookup("timeout").Value.(flag.Getter).Get().(time.Duration)
	if timeout <= 0 {
		return nil, nil, cli.Usagef("-timeout must be positive, got %v", timeout)
	}
	tlsConf, err := tlsConfig(get("cacert"), get("cert"), get("key"))
	if err != nil {
		return nil, nil, err
	}
	c, err := clientv3.New(clientv3.Config{Endpoints: endpoints, DialTimeout: timeout, TLS: tlsConf, Logger: zap.NewNop(),
		Context: ctx})
	if err != nil {
		return nil, nil, fmt.Errorf("etcd %s: %w", strings.Join(endpoints, ","), err)
	}
	f, err := etcdstore.NewFleet(c, &etcdstore.FleetOptions{Prefix: get("prefix"), Timeout: timeout, Audit: o.Audit, By: o.By})
	if err != nil {
		c.Close()
		return nil, nil, cli.Usagef("-prefix: %v", err)
	}
	return fleet{f}, c.Close, nil
}

// tlsConfig returns the TLS configuration the flags give, or nil for none.
func tlsConfig(cacert, cert, key string) (*tls.Config, error) {
	if cacert == "" && cert == "" && key == "" {
		return nil, nil
	}
	if cacert == "" {
		return nil, cli.Usagef("-cert and -key need -cacert: the CA the cluster's certificate must be signed by")
	}
	if (cert == "") != (key == "") {
		return nil, cli.Usagef("-cert and -key go together")
	}
	pem, err := readPEM(cacert, "-cacert")
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("-cacert %s: no PEM certificate in it", cacert)
	}
	conf := &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	if cert != "" {
		pair, err := tls.LoadX509KeyPair(cert, key)
		if err != nil {
			return nil, fmt.Errorf("-cert %s, -key %s: %w", cert, key, err)
		}
		conf.Certificates = []tls.Certificate{pair}
	}
	return conf, nil
}

// maxPEM bounds a certificate file.
const maxPEM = 1 << 20

func readPEM(path, flagName string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", flagName, err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxPEM+1))
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", flagName, path, err)
	}
	if len(b) > maxPEM {
		return nil, fmt.Errorf("%s %s: larger than %d bytes", flagName, path, maxPEM)
	}
	return b, nil
}

// fleet is etcdstore.Fleet as the fleet verbs see it.
type fleet struct{ f *etcdstore.Fleet }

func (f fleet) Status(ctx context.Context) (*cli.FleetStatus, error) {
	st, err := f.f.Status(ctx)
	if err != nil {
		return nil, err
	}
	out := &cli.FleetStatus{Halt: st.Halt, Meters: st.Meters, Grants: st.Grants, Runs: make([]cli.FleetRun, 0, len(st.Runs))}
	for _, r := range st.Runs {
		out.Runs = append(out.Runs, cli.FleetRun{ID: r.ID, Live: r.Live, Host: r.Host, PID: r.PID, Started: r.Started,
			LastActive: r.LastActive, Halt: r.Halt, Failures: r.Failures, Parked: r.Parked, Grants: r.Grants, Problem: r.Problem})
	}
	return out, nil
}

func (f fleet) Halt(ctx context.Context, reason string) (gate.Halt, error) {
	return f.f.Halt(ctx, reason)
}

func (f fleet) EmergencyStop(ctx context.Context, reason string) (gate.Halt, error) {
	return f.f.EmergencyStop(ctx, reason)
}

func (f fleet) Reset(ctx context.Context, reason string) error { return f.f.Reset(ctx, reason) }

func (f fleet) Grants(ctx context.Context) ([]cli.FleetGrant, error) {
	gs, err := f.f.Grants(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]cli.FleetGrant, len(gs))
	for i, g := range gs {
		out[i] = cli.FleetGrant{Run: g.Run, Grant: g.Grant, Problem: g.Problem}
	}
	return out, nil
}

func (f fleet) Revoke(ctx context.Context, id, reason string) error {
	return f.f.Revoke(ctx, id, reason)
}
