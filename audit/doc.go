// Package audit is reins' decision log: every decision the gate makes becomes a [Record],
// handed to a [Sink] before the decision is returned, and a durable sink keeps it in a
// tamper-evident, replayable file.
//
// It sits beside the gate in the decision flow: the gate evaluates an action, builds the record
// (the policy spec's PolicyDecisionLog fields plus the deciding layer, who decided, the reason,
// obligations and risk), and writes it. A decision whose record cannot be written is a DENY, so
// nothing happens unrecorded. Halts, resets, profile switches and the outcomes of actions are
// records too.
//
// # Quick start
//
//	log, err := audit.OpenJSONL("/var/lib/agent/audit.jsonl", &audit.JSONLOptions{
//		Durability: audit.DurabilityGroup,
//	})
//	if err != nil { ... }
//	defer log.Close(context.Background())
//	r, err := reins.New(ctx, p, &reins.Options{Audit: log})
//	...
//	res, err := audit.Verify("/var/lib/agent/audit.jsonl") // later, or on another machine
//
// # Sinks
//
//   - [JSONL] appends one JSON object per line to a file, each record chained to the one before
//     by SHA-256 (see below), with a [Durability] of sync (fsync per record), group (records
//     written concurrently share one fsync) or buffered (for tests and development),
//     size-based rotation that carries the chain across files, and appends from several
//     processes (Shared, with flock on "<path>.lock").
//   - [Memory] keeps the last records in memory (tests, UIs); [Discard] keeps nothing (the
//     gate's default).
//   - [Slog] hands each record to any [log/slog.Handler] as attributes named like the JSON
//     fields.
//   - [FanOut] writes to several sinks; a record counts as kept only if every sink kept it.
//   - [Redact] wraps a sink with a [Redactor]; [JSONL] and [Slog] redact by default with
//     [RedactSecrets], which masks tokens, passwords in flags and URLs, AWS-style keys and
//     Authorization headers in command lines (see [MaskSecrets]).
//   - [SinkFunc] adapts a function. Package audittest checks any sink against the contract of
//     [Sink.Write].
//
// # Record fields
//
// The JSON field names are stable. They appear in this order ([AppendJSON] writes them so);
// fields marked "optional" are left out when empty.
//
//	timestamp               when the decision was made (RFC 3339 with nanoseconds; UTC in JSONL)
//	correlation_id          UUID grouping the decisions of one agent turn or run
//	active_profile          name of the active profile
//	operation_type          the action's operation type (read, write, shell, ...)
//	target                  the action's first target path, "" if none
//	decision                ALLOW, DENY or CONFIRM
//	rule_matched            id of the deciding rule, or the deciding check ("matrix", "protected-path", "hard-stop:budget")
//	user_override           true when a human answered a CONFIRM or reset a halt
//	kind                    decision, halt, reset, outcome, profile_switch_requested,
//	                        profile_switch_applied, profile_switch_refused, recovery,
//	                        checkpoint_created, checkpoint_restored, checkpoint_pruned,
//	                        approval, parked, parked_resolved, grant, grant_revoked, budget,
//	                        sandbox_waived, run_state
//	decision_id             UUID of the decision (an outcome record carries the decision's id)
//	layer                   the gate's deciding layer: input, halted, hard_stop, boundary, mode, rule, matrix, audit
//	decided_by              optional: rule, matrix, hard_stop, boundary, mode, user, hook, default (see [DecidedByLayer])
//	reason                  explanation for a human
//	obligations             array of checkpoint, notify, sandbox
//	risk_levels             array of read_only, mutating, exec, destructive, network
//	tool                    optional: the tool the agent called
//	command                 optional: the shell command line (redacted)
//	host                    optional: the network host
//	targets                 optional: every target path
//	profile_hash            optional: content hash of the active profile
//	bundle_version          optional: version of the signed policy bundle the profile's managed tier came from
//	requested_profile       optional: the profile a switch record asks for
//	requested_profile_hash  optional: its content hash
//	outcome                 optional: succeeded, failed or rolled_back (outcome records)
//	checkpoint_id           optional: the checkpoint taken before the action, or restored
//	error                   optional: error text of a failed or rolled-back action
//	approver                optional: who answered a CONFIRM (approval records)
//	approval_scope          optional: once, session or always
//	note                    optional: the approver's note
//	input                   optional: the tool call's input as the host gave it (redacted, at most 8 KiB)
//	seq                     optional: position in the hash chain, from 1 (chained sinks)
//	prev                    optional: hash of the previous record (absent on the first)
//	hash                    optional: SHA-256 of this record's canonical encoding without hash
//
// The first eight are the policy spec's PolicyDecisionLog. For the profile switch kinds,
// active_profile and profile_hash name the profile in force before the switch.
//
// # The hash chain
//
// A chained record's hash is the SHA-256 of its canonical encoding with the hash field left
// out: exactly the bytes [AppendJSON] writes for it (which, for valid UTF-8, are the bytes
// json.Marshal writes).
// The line in the file is that encoding with `,"hash":"<64 hex digits>"` inserted before the
// closing brace. Because the encoding includes seq and prev, editing a record changes its hash
// ([ErrAltered]), and deleting, inserting or reordering records breaks the link from the next
// record ([ErrBrokenChain]). The first record has seq 1 and no prev; the chain runs on across
// rotated files "<path>.000001", "<path>.000002", ... and the active file.
//
// [Verify] checks a whole log and names the first broken record by file and line;
// [VerifyAnchored] also checks it against [Anchor]s, heads kept off the machine; [Scan]
// reads a log back, with a [Filter], for replay; [ParseJSON] parses one line strictly.
//
// # Crashes and failures
//
// Each record is written with a single write(2) of one whole line to a file opened with
// O_APPEND (DurabilityBuffered writes several whole lines at once). A crash therefore leaves at
// most a torn last line, which Verify reports in [VerifyResult].Torn rather than as an error,
// and which [OpenJSONL] truncates, writing a [KindRecovery] record that says how many bytes it
// removed. A torn line was never acknowledged: Write had not returned.
//
// If a write fails part way, the sink truncates the partial line away and returns the error;
// if it cannot, or an fsync fails, the sink fails every later Write until it is reopened, since
// the file's state is unknown. In every case the gate turns the error into a DENY.
//
// # Concurrency
//
// Every sink is safe for concurrent use. [JSONL] redacts and encodes a record before it takes
// its mutex (and, with Shared, an flock), which it holds only to chain and append the line;
// with DurabilityGroup the fsync runs outside the mutex, so writers fill the next batch while
// one is being synced. With DurabilityBuffered (not Shared) the hashing too leaves the writers:
// the mutex covers appending the encoded line with its seq to a buffer, and a goroutine of the
// sink fills in prev and hash of a full buffer, record by record, and writes it while writers
// fill the next (Head waits for it). Readers ([Scan], [Verify]) may run while a log is
// written: they see a consistent prefix, possibly ending in a torn line.
//
// # Security model and limitations
//
// The chain makes a log tamper-evident, not tamper-proof. Anyone who can write the file can
// rewrite it from any point on, recomputing every hash, or cut records off its end; the chain
// cannot tell that from a genuine log. What it guarantees is that every change shows unless
// everything after it is rewritten too. To detect a rewrite or a cut tail, keep the head (the
// last seq and hash, [JSONL.Head] or [VerifyResult]) somewhere the agent cannot write: another
// host, a signed note, an append-only store; a run does it periodically with
// reins.AnchorOptions, and [VerifyAnchored] checks a log against the [Anchor]s kept. Cutting the
// file in the middle of a line looks exactly like a crash (a torn last line); only an anchored
// head tells them apart.
//
// The hash is a plain SHA-256, not a keyed MAC or a signature: it proves integrity relative to
// an anchor, not authorship. Run the agent as a user that cannot write the log directory, or
// ship records off the machine ([Slog], [FanOut]).
//
// Deleting old rotated files breaks verification from the start of the chain (the oldest
// remaining record has a prev); archive them instead. Readers follow the rotated files as they
// are named when the read starts.
//
// Redaction is a best effort over text: [MaskSecrets] recognizes common shapes of secrets, not
// all of them, and a secret the agent computes at run time never appears in the command line.
// Hosts with stricter needs install their own [Redactor].
//
// # Platforms
//
// Encoding, verification ([Verify], [Scan]) and the in-memory and slog sinks work everywhere.
// The JSONL sink ([OpenJSONL]) needs advisory file locks (flock) to keep two writers from
// interleaving a chain: on Unix systems it locks; on other platforms (Windows) OpenJSONL fails
// with an error that says file locking is not supported, rather than writing an unprotected
// log. fdatasync and the no-replace rename of rotation are Linux system calls; elsewhere they
// fall back to fsync and a link-then-remove rename with the same guarantees.
package audit
