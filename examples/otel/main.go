// Command otel ships every reins decision to an OpenTelemetry collector: the gate's audit sink is
// audit.Slog over the OpenTelemetry slog bridge (otelslog), whose logger provider exports through
// OTLP/HTTP. It is the pattern for teams that run many agents and already have a log pipeline:
// each decision arrives as one log record whose attributes are the audit record's fields
// (decision_id, verdict, layer, rule_id, tool, targets, ...), redacted as audit redacts them.
//
// It lives in its own module so that the reins module does not depend on OpenTelemetry.
//
// Usage:
//
//	go run . [-endpoint host:port] [-insecure] [-profile NAME] [-service NAME]
//
// The endpoint defaults to the OTEL_EXPORTER_OTLP_ENDPOINT environment variable, or
// localhost:4318. The program decides a few typical agent actions in a temporary workspace,
// prints each decision, and exits 1 if the records could not be exported: an audit trail that
// silently goes nowhere is worse than none.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"text/tabwriter"

	"go.opentelemetry.io/contrib/bridges/otelslog"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploghttp"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	"go.opentelemetry.io/otel/sdk/resource"

	"github.com/reins-go/reins"
	"github.com/reins-go/reins/audit"
	"github.com/reins-go/reins/policy"
	"github.com/reins-go/reins/profile"
)

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}

// run is main with its inputs and outputs passed in, so that tests run the whole program.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("otel", flag.ContinueOnError)
	fs.SetOutput(stderr)
	endpoint := fs.String("endpoint", "", "OTLP/HTTP collector `host:port` (default: $OTEL_EXPORTER_OTLP_ENDPOINT, else localhost:4318)")
	insecure := fs.Bool("insecure", false, "talk plain HTTP to the collector instead of HTTPS")
	profName := fs.String("profile", profile.ProfileDev, "the reins profile to decide under")
	service := fs.String("service", "reins-agent", "the service.name resource attribute")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: otel [-endpoint host:port] [-insecure] [-profile NAME] [-service NAME]")
		fmt.Fprintln(stderr, "Decides a few agent actions with reins and ships every decision to an OTLP/HTTP collector.")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "otel: unexpected argument %q (see -help)\n", fs.Arg(0))
		return 2
	}
	p, err := profile.Builtin(*profName)
	if err != nil {
		fmt.Fprintf(stderr, "otel: %v (profiles: see `go run ../reins profile list`)\n", err)
		return 2
	}

	var opts []otlploghttp.Option
	if *endpoint != "" {
		opts = append(opts, otlploghttp.WithEndpoint(*endpoint))
	}
	if *insecure {
		opts = append(opts, otlploghttp.WithInsecure())
	}
	exp, err := otlploghttp.New(ctx, opts...)
	if err != nil {
		fmt.Fprintf(stderr, "otel: OTLP exporter: %v\n", err)
		return 1
	}
	provider := newProvider(exp, *service)
	if err := decide(ctx, provider, p, stdout); err != nil {
		_ = provider.Shutdown(ctx)
		fmt.Fprintf(stderr, "otel: %v\n", err)
		return 1
	}
	// Shutdown flushes the batch; an export that failed is reported here.
	if err := provider.Shutdown(ctx); err != nil {
		fmt.Fprintf(stderr, "otel: exporting the decisions failed: %v\n", err)
		return 1
	}
	return 0
}

// newProvider returns a logger provider that batches records to exp.
func newProvider(exp sdklog.Exporter, service string) *sdklog.LoggerProvider {
	res := resource.NewSchemaless(attribute.String("service.name", service))
	return sdklog.NewLoggerProvider(
		sdklog.WithResource(res),
		sdklog.WithProcessor(sdklog.NewBatchProcessor(exp)),
	)
}

// NewSink returns an audit sink that hands every record to OpenTelemetry through provider:
// one log record per audit record, with the record's fields as attributes. Use it as
// reins.Options.Audit (alone, or beside a local JSONL log with audit.Multi).
func NewSink(provider *sdklog.LoggerProvider) audit.Sink {
	h := otelslog.NewHandler("github.com/reins-go/reins", otelslog.WithLoggerProvider(provider))
	return audit.NewSlog(h, &audit.SlogOptions{Message: "reins.audit"})
}

// decide runs a few typical agent actions through a run whose audit sink is OpenTelemetry.
func decide(ctx context.Context, provider *sdklog.LoggerProvider, p profile.Profile, stdout io.Writer) error {
	ws, err := os.MkdirTemp("", "reins-otel-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(ws)
	g, err := reins.New(ctx, p, &reins.Options{Workspace: []string{ws}, Audit: NewSink(provider)})
	if err != nil {
		return err
	}
	defer g.Close()
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ACTION\tVERDICT\tDECISION ID")
	for _, a := range Actions() {
		d, err := g.Check(ctx, a)
		if err != nil && d.Verdict != policy.Deny {
			return err
		}
		what := a.Command
		if what == "" {
			what = string(a.Operation) + " " + fmt.Sprint(a.Targets)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", what, d.Verdict, d.DecisionID)
	}
	return tw.Flush()
}

// Actions are the actions the program decides.
func Actions() []policy.Action {
	return []policy.Action{
		{Tool: "read_file", Operation: policy.OpRead, Targets: []string{"main.go"}},
		{Tool: "edit_file", Operation: policy.OpWrite, Targets: []string{"main.go"}},
		{Tool: "bash", Operation: policy.OpShell, Command: "go test ./..."},
		{Tool: "bash", Operation: policy.OpShell, Command: "cat .env"},
		{Tool: "bash", Operation: policy.OpShell, Command: "curl -H 'Authorization: Bearer sk-live-0123456789abcdef0123' https://api.example.com"},
	}
}
