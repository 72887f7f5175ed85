package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	collogs "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	"google.golang.org/protobuf/proto"
)

// collector is a minimal OTLP/HTTP logs endpoint: it decodes every export request the real
// exporter sends and keeps the log records' attributes.
type collector struct {
	mu      sync.Mutex
	records []map[string]string
	service []string
	fail    bool
}

func (c *collector) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/v1/logs" || r.Header.Get("Content-Type") != "application/x-protobuf" {
		http.Error(w, "unexpected request", http.StatusBadRequest)
		return
	}
	if c.fail {
		http.Error(w, "collector down", http.StatusBadRequest)
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var req collogs.ExportLogsServiceRequest
	if err := proto.Unmarshal(body, &req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, rl := range req.ResourceLogs {
		for _, kv := range rl.GetResource().GetAttributes() {
			if kv.Key == "service.name" {
				c.service = append(c.service, kv.Value.GetStringValue())
			}
		}
		for _, sl := range rl.ScopeLogs {
			for _, lr := range sl.LogRecords {
				m := map[string]string{"body": lr.Body.GetStringValue()}
				for _, kv := range lr.Attributes {
					m[kv.Key] = flatten(kv.Value)
				}
				c.records = append(c.records, m)
			}
		}
	}
	out, _ := proto.Marshal(&collogs.ExportLogsServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(out)
}

func flatten(v *commonpb.AnyValue) string {
	if arr := v.GetArrayValue(); arr != nil {
		parts := make([]string, 0, len(arr.Values))
		for _, e := range arr.Values {
			parts = append(parts, flatten(e))
		}
		return "[" + strings.Join(parts, " ") + "]"
	}
	switch x := v.Value.(type) {
	case *commonpb.AnyValue_StringValue:
		return x.StringValue
	case *commonpb.AnyValue_BoolValue:
		if x.BoolValue {
			return "true"
		}
		return "false"
	case *commonpb.AnyValue_IntValue:
		return strconv.FormatInt(x.IntValue, 10)
	}
	return v.String()
}

// TestRunShipsEveryDecision runs the program against a local collector: every decision arrives
// as one record with its fields and its decision id, and the secret in a command is redacted.
func TestRunShipsEveryDecision(t *testing.T) {
	c := &collector{}
	srv := httptest.NewServer(c)
	defer srv.Close()
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"-endpoint", strings.TrimPrefix(srv.URL, "http://"), "-insecure", "-service", "test-agent"}, &stdout, &stderr)
	require.Equal(t, 0, code, "stderr: %s", stderr.String())

	// The printed table names each decision id; each one arrived with its fields.
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	require.Len(t, lines, 1+len(Actions()))
	c.mu.Lock()
	defer c.mu.Unlock()
	require.Len(t, c.records, len(Actions()))
	assert.Contains(t, c.service, "test-agent")
	byID := map[string]map[string]string{}
	for _, r := range c.records {
		assert.Equal(t, "reins.audit", r["body"])
		assert.Equal(t, "decision", r["kind"])
		for _, k := range []string{"decision_id", "decision", "layer", "tool", "active_profile", "correlation_id"} {
			assert.NotEmpty(t, r[k], "field %s in %v", k, r)
		}
		byID[r["decision_id"]] = r
	}
	for i, line := range lines[1:] {
		f := strings.Fields(line)
		id, verdict := f[len(f)-1], f[len(f)-2]
		r, ok := byID[id]
		require.True(t, ok, "decision %s (%s) did not arrive", id, line)
		assert.Equal(t, verdict, r["decision"], "action %d", i)
		assert.Equal(t, Actions()[i].Tool, r["tool"])
	}
	for _, r := range c.records {
		assert.NotContains(t, r["command"], "sk-live-0123456789abcdef0123", "secrets are redacted before they leave the host")
	}
}

// TestRunReportsExportFailure: a collector that refuses the records makes the program fail,
// never report success.
func TestRunReportsExportFailure(t *testing.T) {
	srv := httptest.NewServer(&collector{fail: true})
	defer srv.Close()
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"-endpoint", strings.TrimPrefix(srv.URL, "http://"), "-insecure"}, &stdout, &stderr)
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr.String(), "exporting the decisions failed")
}

func TestRunUsage(t *testing.T) {
	var stdout, stderr bytes.Buffer
	assert.Equal(t, 0, run(context.Background(), []string{"-help"}, &stdout, &stderr))
	assert.Contains(t, stderr.String(), "usage: otel")
	stderr.Reset()
	assert.Equal(t, 2, run(context.Background(), []string{"-profile", "NOPE"}, &stdout, &stderr))
	assert.Contains(t, stderr.String(), "NOPE")
	stderr.Reset()
	assert.Equal(t, 2, run(context.Background(), []string{"extra"}, &stdout, &stderr))
	assert.Contains(t, stderr.String(), `unexpected argument "extra"`)
}
