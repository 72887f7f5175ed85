// Command reins is the reins command line (examples/reins, package examples/reins/cli) whose
// fleet verbs operate on an etcd cluster: every verb of the core command, and
//
//	reins fleet status  -endpoints HOST:2379[,...] [-prefix /reins/team-a]
//	reins fleet halt    -endpoints ... [-emergency] [-audit LOG] REASON...
//	reins fleet reset   -endpoints ... [-audit LOG] REASON...
//	reins fleet grants  -endpoints ...
//	reins fleet revoke  -endpoints ... [-audit LOG] ID [REASON...]
//
// on the fleet of runs whose etcdstore.Store has that prefix on that cluster (see package
// etcdstore). The verbs, their output, errors and exit codes are the core command's code; this
// command only opens the fleet (etcdstore.NewFleet), so the core module stays free of etcd.
//
// -endpoints defaults to $REINS_ETCD_ENDPOINTS. -cacert, -cert and -key give the cluster's CA and
// the operator's client certificate (TLS; without -cacert the connection is plain text, for a
// cluster on loopback or a private network only). Whoever holds credentials that can write the
// prefix can halt, reset and revoke for the whole fleet: give them to operators only.
package main

import (
	"context"
	"os"

	"github.com/reins-go/reins/examples/reins/cli"
)

func main() {
	os.Exit(cli.Main(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr, &cli.Options{Fleet: Backend()}))
}
