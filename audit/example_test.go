package audit_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/reins-go/reins/audit"
	"github.com/reins-go/reins/policy"
	"github.com/reins-go/reins/risk"
)

// decision returns a decision record like the ones the gate writes.
func decision(n byte, tool, command string, v policy.Verdict) audit.Record {
	id := uuid.UUID{0x01, 0x97, 0, 0, 0, 0, 0x70, 0, 0x80, 0, 0, 0, 0, 0, 0, n}
	return audit.Record{
		Time:          time.Date(2025, 6, 1, 12, 0, int(n), 0, time.UTC),
		CorrelationID: uuid.UUID{0x01, 0x97, 0, 0, 0, 0, 0x70, 0, 0x80},
		Profile:       "PROFILE-DEV",
		Operation:     "shell",
		Decision:      v,
		RuleMatched:   "matrix",
		Kind:          audit.KindDecision,
		DecisionID:    id,
		Layer:         policy.LayerMatrix,
		DecidedBy:     audit.DecidedByLayer(policy.LayerMatrix),
		Reason:        "the autonomy matrix",
		Risk:          risk.Of(risk.Exec),
		Tool:          tool,
		Command:       command,
	}
}

// A JSONL log: write records, verify the chain, read them back.
func Example() {
	dir, err := os.MkdirTemp("", "audit-example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "audit.jsonl")

	log, err := audit.OpenJSONL(path, &audit.JSONLOptions{Durability: audit.DurabilityGroup})
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx := context.Background()
	for i, cmd := range []string{"go test ./...", "git push --force", "curl -u bob:hunter2 https://example.com"} {
		if err := log.Write(ctx, decision(byte(i), "bash", cmd, policy.Allow)); err != nil {
			fmt.Println(err)
			return
		}
	}
	if err := log.Close(ctx); err != nil {
		fmt.Println(err)
		return
	}

	res, err := audit.Verify(path)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("verified", res.Records, "records; torn:", res.Torn != nil)
	for r, err := range audit.Scan(path, nil) {
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(r.Seq, r.Decision, r.DecidedBy, r.Command)
	}
	// Output:
	// verified 3 records; torn: false
	// 1 ALLOW matrix go test ./...
	// 2 ALLOW matrix git push --force
	// 3 ALLOW matrix curl -u bob:[REDACTED] https://example.com
}

// Verify names the first record that breaks the chain.
func ExampleVerify() {
	dir, err := os.MkdirTemp("", "audit-example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "audit.jsonl")
	log, err := audit.OpenJSONL(path, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	for i := range 5 {
		if err := log.Write(context.Background(), decision(byte(i), "bash", "make", policy.Deny)); err != nil {
			fmt.Println(err)
			return
		}
	}
	if err := log.Close(context.Background()); err != nil {
		fmt.Println(err)
		return
	}

	// Someone turns the third DENY into an ALLOW.
	b, err := os.ReadFile(path)
	if err != nil {
		fmt.Println(err)
		return
	}
	lines := strings.SplitAfter(string(b), "\n")
	lines[2] = strings.Replace(lines[2], `"decision":"DENY"`, `"decision":"ALLOW"`, 1)
	if err := os.WriteFile(path, []byte(strings.Join(lines, "")), 0o600); err != nil {
		fmt.Println(err)
		return
	}

	_, err = audit.Verify(path)
	var le *audit.LineError
	if errors.As(err, &le) {
		fmt.Println("line", le.Line, "altered:", errors.Is(err, audit.ErrAltered))
	}
	// Output:
	// line 3 altered: true
}

// Scan with a filter replays part of a log.
func ExampleScan() {
	dir, err := os.MkdirTemp("", "audit-example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "audit.jsonl")
	log, err := audit.OpenJSONL(path, &audit.JSONLOptions{Durability: audit.DurabilityBuffered})
	if err != nil {
		fmt.Println(err)
		return
	}
	records := []audit.Record{
		decision(1, "bash", "ls", policy.Allow),
		decision(2, "bash", "rm -rf /", policy.Deny),
		decision(3, "edit_file", "", policy.Deny),
	}
	for _, r := range records {
		if err := log.Write(context.Background(), r); err != nil {
			fmt.Println(err)
			return
		}
	}
	if err := log.Close(context.Background()); err != nil {
		fmt.Println(err)
		return
	}

	denied := &audit.Filter{Decisions: []policy.Verdict{policy.Deny}, Tools: []string{"bash"}}
	for r, err := range audit.Scan(path, denied) {
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(r.Time.Format(time.TimeOnly), r.Decision, r.Command)
	}
	// Output:
	// 12:00:02 DENY rm -rf /
}

func ExampleMaskSecrets() {
	fmt.Println(audit.MaskSecrets(`curl -H "Authorization: Bearer eyJhbGciOi" https://api.example.com`))
	fmt.Println(audit.MaskSecrets("GITHUB_TOKEN=ghp_16C7e42F292c6912E7710c838347Ae178B4a git push"))
	fmt.Println(audit.MaskSecrets("git clone https://bob:hunter2@git.example.com/repo.git"))
	fmt.Println(audit.MaskSecrets("aws s3 ls --profile prod # AKIAIOSFODNN7EXAMPLE"))
	fmt.Println(audit.MaskSecrets("go test ./..."))
	// Output:
	// curl -H "Authorization: Bearer [REDACTED]" https://api.example.com
	// GITHUB_TOKEN=[REDACTED] git push
	// git clone https://bob:[REDACTED]@git.example.com/repo.git
	// aws s3 ls --profile prod # AKIA[REDACTED]
	// go test ./...
}

// A slog sink ships records through any handler; here JSON to stdout, without the times.
func ExampleNewSlog() {
	h := slog.NewJSONHandler(os.Stdout, &slog.HandlerOptions{
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey || a.Key == "timestamp" || a.Key == "correlation_id" || a.Key == "decision_id" {
				return slog.Attr{}
			}
			return a
		},
	})
	sink := audit.NewSlog(h, nil)
	if err := sink.Write(context.Background(), decision(1, "bash", "go vet ./...", policy.Allow)); err != nil {
		fmt.Println(err)
	}
	// Output:
	// {"level":"INFO","msg":"audit","active_profile":"PROFILE-DEV","operation_type":"shell","target":"","decision":"ALLOW","rule_matched":"matrix","user_override":false,"kind":"decision","layer":"matrix","decided_by":"matrix","reason":"the autonomy matrix","obligations":[],"risk_levels":["exec"],"tool":"bash","command":"go vet ./..."}
}

// FanOut keeps a record in memory for a UI and in a durable log; if either fails, the write
// fails and the gate denies.
func ExampleFanOut() {
	ui := audit.NewMemory(100)
	failing := audit.SinkFunc(func(context.Context, audit.Record) error { return errors.New("disk full") })
	err := audit.FanOut{ui, failing}.Write(context.Background(), decision(1, "bash", "make", policy.Allow))
	fmt.Println(err)
	fmt.Println(ui.Len())
	// Output:
	// audit: fan-out sink 1: disk full
	// 1
}

// The gate maps its deciding layer to decided_by.
func ExampleDecidedByLayer() {
	for _, layer := range []policy.Layer{policy.LayerRule, policy.LayerMatrix, policy.LayerHalted, policy.LayerBoundary, policy.LayerInput} {
		fmt.Println(layer, "->", audit.DecidedByLayer(layer))
	}
	// Output:
	// rule -> rule
	// matrix -> matrix
	// halted -> hard_stop
	// boundary -> boundary
	// input -> default
}

// AppendJSON writes the canonical encoding a chained record's hash covers.
func ExampleAppendJSON() {
	r := decision(1, "bash", "ls", policy.Allow)
	b, err := audit.AppendJSON(nil, &r)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(string(b))
	// Output:
	// {"timestamp":"2025-06-01T12:00:01Z","correlation_id":"01970000-0000-7000-8000-000000000000","active_profile":"PROFILE-DEV","operation_type":"shell","target":"","decision":"ALLOW","rule_matched":"matrix","user_override":false,"kind":"decision","decision_id":"01970000-0000-7000-8000-000000000001","layer":"matrix","decided_by":"matrix","reason":"the autonomy matrix","obligations":[],"risk_levels":["exec"],"tool":"bash","command":"ls"}
}
