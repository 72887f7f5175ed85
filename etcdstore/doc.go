// Package etcdstore keeps the run state of a fleet of reins runs on an etcd v3 cluster: one halt,
// one emergency stop, one set of budgets and one set of standing grants for every agent of a
// team (CI jobs, background agents, every developer's editor), changed by any of them and by an
// operator, and seen by each at its next decision.
//
// It sits under the run in the decision flow: a [reins.Run] whose Options.Store is a [Store]
// reads its state from the cluster before every decision (one linearizable round trip) and
// writes it back through transactions (a meter, a use count, a halt), so a fleet shares what
// one run's [reins.MemoryStore] or one machine's [reins.FileStore] holds. The operator's
// commands ([Fleet]) write the same keys. The package is a module of its own
// (github.com/reins-go/reins/etcdstore), so the core module does not depend on etcd.
//
// # Quick start
//
//	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{"etcd-1:2379", "etcd-2:2379", "etcd-3:2379"}, TLS: tlsConfig})
//	if err != nil { ... }
//	defer cli.Close()
//	st, err := etcdstore.New(cli, &etcdstore.Options{Prefix: "/reins/team-a", RunID: "ci-1234"})
//	if err != nil { ... }
//	defer st.Close()
//	r, err := reins.New(ctx, p, &reins.Options{
//		Store:  st,
//		Meters: []reins.Meter{{Name: reins.MeterActions, Limit: 10000}}, // one budget for the team
//		Audit:  log,                                                     // an *audit.JSONL
//		Anchor: &reins.AnchorOptions{To: st},                            // its head kept in the cluster
//	})
//	if err != nil { ... }
//	defer r.Close()
//
// # What the fleet shares, and what each run keeps
//
// The runs whose stores have the same Prefix on the same cluster form a fleet. A
// [reins.RunState] is one value to a run; the store maps it onto keys:
//
//   - The halt is the fleet's: a halt latched by any run (a budget exceeded, a sandbox escape,
//     an emergency stop, a manual halt) or by the operator denies every run's next decision.
//     The one exception is the tool-failures hard stop, which is the run's own, as its failure
//     counts are; the fleet's halt outranks it.
//   - The meters are the fleet's: a budget (the actions meter, a cost meter) is spent by every
//     run, under transactions, and never overspent: the actions meter admits an action only
//     while the whole fleet is under its limit. The wall-time meter of a fleet counts from when
//     the first run declared it.
//   - "Always" grants are the fleet's, with their use counts: a grant one approver made for
//     the team applies to every run (in the directory and under the profile it was made for),
//     a use by any run counts against its MaxUses, and revoking it (any run, or
//     [Fleet.Revoke]) takes it away from all. Session grants stay with the run that made them.
//   - Failure counts and parked actions are the run's (a tool failing in one run says nothing
//     about another).
//
// A run may tighten what the fleet shares but never loosen it: clearing or replacing the
// fleet's halt, lowering a shared meter's use, changing its limit, clearing its warning or
// exhaustion, removing a meter, or changing a shared grant other than counting a use fails with
// [ErrFleetOwned]. So a run's reins.Run.Reset while the fleet is halted fails and the run stays
// halted: the operator resets the fleet ([Fleet.Reset], [Fleet.ResetMeter]).
//
// # Keys
//
// Under the fleet's prefix P (Options.Prefix, default "/reins"); values are JSON, except the
// rev keys (decimal):
//
//	P/state/fleet/rev               how many updates the fleet's part has seen
//	P/state/fleet/halt              the fleet's halt; absent: not halted
//	P/state/fleet/meters/<name>     one shared meter and its use
//	P/state/fleet/grants/<id>       one shared grant and its use count
//	P/state/runs/<run>/rev          how many updates the run's own part has seen
//	P/state/runs/<run>/halt         the run's own halt (tool failures)
//	P/state/runs/<run>/failures     the run's failure counts
//	P/state/runs/<run>/parked       the run's parked actions and their sequence number
//	P/state/runs/<run>/grants/<id>  one session grant of the run
//	P/members/<run>                 the run's host, pid, start and last activity (under its lease)
//	P/anchors/<run>/<seq>           one audit chain head of the run, seq in 20 digits, written once
//
// <name> and <id> are path-escaped. A run's view is the fleet's part plus its own; its Rev is
// the sum of the two rev counts. Load reads both parts in one transaction (or, when neither rev
// key moved since its last read, learns that in the same round trip and returns the state it
// returned before). Update runs its function on that state and commits one transaction that
// writes only the keys whose value changed and bumps the rev key of the part that changed, if
// the mod revisions of both rev keys are still those it read; otherwise the transaction returns
// the current keys and the function runs again. Every writer goes through the rev keys, so a
// change to any key of a part is seen by every concurrent update that read that part: no update
// is lost and none is applied twice. One update may change at most 126 keys (etcd's default
// --max-txn-ops of 128, less the two compares).
//
// Every value read is checked before it is used: unknown keys, values that do not decode
// strictly, a meter or grant under another key's name, a grant broader than an approval
// ([reins.Grant.Validate]) or a state beyond [reins.RunState.Validate]'s bounds make Load fail,
// and the run denies naming the key. Write only through this package: a key changed behind it
// without bumping its part's rev key is seen only after the next update of that part.
//
// # Leases
//
// Each [Store] grants one lease of Options.TTL (default 30 s) and keeps P/members/<run> under
// it, renewed every TTL/3 by a goroutine of the store (Close stops it and revokes the lease).
// The key is liveness for [Fleet.Status] only: a run whose process died leaves the status after
// at most TTL, and its state stays until [Fleet.Forget]. No run state and no anchor is under a
// lease: nothing a decision depends on expires with a lease, and a lease lost in an outage is
// granted again when the cluster answers.
//
// # The operator
//
// [Fleet] is what `reins fleet ...` calls, each verb one method:
//
//	reins fleet status           Fleet.Status: the halt, the meters, each run (live, host, last activity, own halt, failures)
//	reins fleet halt REASON      Fleet.Halt (Fleet.EmergencyStop with --emergency: also cancels work in flight)
//	reins fleet reset REASON     Fleet.Reset: the fleet's halt, exhausted meters, every run's halt and failure counts
//	reins fleet grants           Fleet.Grants; `reins fleet grants revoke ID` is Fleet.Revoke
//	reins fleet verify RUN LOG   Fleet.Anchors, then audit.VerifyAnchored(LOG, anchors)
//
// With FleetOptions.Audit, each command that changes the fleet is recorded (decided by the user,
// FleetOptions.By as the approver).
//
// # Deploying
//
// Run one etcd cluster per team (per trust domain: everyone who can write its keys can stop or
// unblock every run on it), three or five members for availability, with TLS and client
// certificates or etcd's authentication. Give each fleet its own prefix; more than one fleet may
// share a cluster. With etcd's role-based access, give runs read and write on P/state/,
// P/members/ and P/anchors/ (budgets, use counts and halts are writes), and the operator the
// same plus everything a reset needs; keep the runs' client credentials out of the agents'
// reach (the gate protects the user configuration directory; put them there, or in the host's
// own process). Enable auto-compaction (every update adds revisions); watches that fall behind
// a compaction read the state afresh and watch again.
//
// Costs: a decision is one linearizable read (a round trip, and the leader confirming its
// leadership); an update is one transaction, written to the leader's disk and a quorum. A budget
// spent by many runs is one key they all update: the runs take turns (conflicting transactions
// are retried with a short random delay, at most 1,000 times), so size a shared budget's
// granularity accordingly. Options.Timeout (default 2 s) bounds every call.
//
// # Partitions and an unreachable cluster
//
// A run that cannot reach a quorum fails closed. Reads are linearizable, so a member cut off
// from the quorum cannot answer them either: Load fails with [ErrUnavailable] once
// Options.Timeout has passed, and the run denies every decision with the cause in the reason
// (check "run-state", "the run state could not be read, so nothing is allowed: etcdstore: the
// cluster at ... cannot be reached: ..."). Updates fail the same way: nothing is spent, counted
// or latched locally to be reconciled later. When the cluster answers again the next decision
// reads the current state; a halt latched while the run was cut off holds.
//
// A host may opt into a bounded grace period (Options.Grace): while the cluster cannot be
// reached, Load serves the last state it read, as long as that read is at most Grace old. Its
// start and end are reported to the run ([reins.StoreReporter]) and recorded in its audit log
// (kind run_state: "run-state:stale", then "run-state:current", or a Deny when the grace runs
// out). During a grace period decisions are taken on a state up to Grace old: a halt the
// operator latched meanwhile is not seen until the run reaches the cluster again or the grace
// ends. Updates still fail, so a Do under an actions budget is denied, a grant's use cannot be
// counted (the action is asked about again), and no budget is overspent.
//
// The emergency stop reaches runs through their watch ([Store.Watch], started by reins.New):
// a run cut off from the cluster does not learn of it until it is back (its decisions are
// denied meanwhile, unless a grace period serves the old state). A watch that breaks (no leader,
// a restart, a compaction) reads the state afresh and watches again, so a stop latched while
// it was down is acted on when it is back.
//
// # Audit anchors
//
// A [Store] is a [reins.Anchorer]: with reins.Options.Anchor, the run writes its audit log's
// head to P/anchors/<run>/<seq> periodically and at Close, each key written once (an anchor for
// a seq that holds another digest is refused with [ErrAnchorConflict]); the run keeps its newest
// Options.MaxAnchors (default 1,000: the newest vouches for every record before it).
// [Fleet.Anchors] reads them back for audit.VerifyAnchored and refuses an anchor key that was
// overwritten, or deleted and written again before a later one.
//
// # Security model and limitations
//
// The rules that keep a run from loosening the fleet's state ([ErrFleetOwned]) are enforced by
// this package in the run's process, not by etcd: its access control grants read or write per
// key range and cannot say "only increase". A process that holds a run's credentials and does
// not go through this package can write any key the credentials allow: clear the halt, reset a
// budget, widen a grant (a grant broader than an approval is refused on read, but a narrow one
// for another command is not), or delete and rewrite anchors (etcd's history until compaction
// shows it; for more, copy the anchors to write-once storage). Keep the credentials where the
// agent cannot read them. The cluster's availability is the fleet's: without a quorum every run
// denies (or, with a grace period, decides on a state up to Grace old).
package etcdstore
