package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins/audit"
)

// session runs the whole program on an in-memory transport and connects a client to it. approve
// answers the server's elicitations (nil: the client cannot elicit).
func session(t *testing.T, approve func(*mcp.ElicitRequest) (*mcp.ElicitResult, error)) (*mcp.ClientSession, string) {
	return sessionAt(t, "2025-11-25", approve)
}

// sessionAt is session with the client on protocol version ver.
func sessionAt(t *testing.T, ver string, approve func(*mcp.ElicitRequest) (*mcp.ElicitResult, error)) (*mcp.ClientSession, string) {
	t.Helper()
	ws := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(ws, "README.md"), []byte("# hello\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(ws, "old.txt"), []byte("old\n"), 0o644))
	st, ct := mcp.NewInMemoryTransports()
	ctx, cancel := context.WithCancel(context.Background())
	var stderr bytes.Buffer
	done := make(chan int, 1)
	go func() { done <- run(ctx, []string{"-workspace", ws}, st, &stderr) }()
	var opts mcp.ClientOptions
	if approve != nil {
		opts.ElicitationHandler = func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) { return approve(req) }
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "v0"}, &opts)
	// The example asks for approval by elicitation during the call, which protocol versions
	// before 2026-07-28 allow (see elicitApproval).
	cs, err := client.Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: ver})
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = cs.Close()
		cancel()
		select {
		case code := <-done:
			assert.Equal(t, 0, code, "stderr: %s", stderr.String())
		case <-time.After(10 * time.Second):
			t.Error("the server did not stop")
		}
	})
	return cs, ws
}

func call(cs *mcp.ClientSession, tool string, args map[string]any) (*mcp.CallToolResult, error) {
	return cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
}

func textOf(r *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range r.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

func TestAllowedCallRuns(t *testing.T) {
	cs, _ := session(t, nil)
	res, err := call(cs, "read_file", map[string]any{"path": "README.md"})
	require.NoError(t, err)
	assert.False(t, res.IsError)
	assert.Equal(t, "# hello\n", textOf(res))
}

func TestDeniedCallIsAnMCPErrorWithTheReason(t *testing.T) {
	cs, ws := session(t, nil)
	_, err := call(cs, "write_file", map[string]any{"path": ".env", "content": "TOKEN=x"})
	require.Error(t, err)
	var rpcErr *jsonrpc.Error
	require.True(t, errors.As(err, &rpcErr), "got %T: %v", err, err)
	assert.Equal(t, int64(CodeDenied), rpcErr.Code)
	assert.Contains(t, rpcErr.Message, "reins: ")
	assert.Contains(t, rpcErr.Message, ".env")
	assert.Contains(t, string(rpcErr.Data), `"verdict":"DENY"`)
	assert.NoFileExists(t, filepath.Join(ws, ".env"), "a denied call never runs")

	// An unknown tool of another kind is denied as unknown, and so are unreadable arguments.
	_, err = call(cs, "write_file", map[string]any{"path": 42, "content": "x"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `argument "path" of write_file is not a string`)
}

func TestConfirmGoesToTheApprover(t *testing.T) {
	var asked []string
	cs, ws := session(t, func(req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		asked = append(asked, req.Params.Message)
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": true}}, nil
	})
	res, err := call(cs, "delete_file", map[string]any{"path": "old.txt"})
	require.NoError(t, err)
	assert.Equal(t, "deleted old.txt", textOf(res))
	require.Len(t, asked, 1)
	assert.Contains(t, asked[0], "mcp__files__delete_file")
	assert.NoFileExists(t, filepath.Join(ws, "old.txt"))
}

func TestConfirmDeclinedOrUnaskable(t *testing.T) {
	for name, approve := range map[string]func(*mcp.ElicitRequest) (*mcp.ElicitResult, error){
		"declined": func(*mcp.ElicitRequest) (*mcp.ElicitResult, error) { return &mcp.ElicitResult{Action: "decline"}, nil },
		"client says yes without approving": func(*mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": false}}, nil
		},
		"client cannot elicit": nil,
	} {
		t.Run(name, func(t *testing.T) {
			cs, ws := session(t, approve)
			_, err := call(cs, "delete_file", map[string]any{"path": "old.txt"})
			require.Error(t, err)
			assert.Contains(t, err.Error(), "not approved")
			assert.FileExists(t, filepath.Join(ws, "old.txt"))
		})
	}
}

// TestConfirmOnTheNewestProtocol: a client on 2026-07-28 cannot be asked during the call, so a
// CONFIRM is denied, saying why, even when the user would have said yes.
func TestConfirmOnTheNewestProtocol(t *testing.T) {
	cs, ws := sessionAt(t, "2026-07-28", func(*mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": true}}, nil
	})
	_, err := call(cs, "delete_file", map[string]any{"path": "old.txt"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "not approved (")
	assert.Contains(t, err.Error(), "multi round-trip")
	assert.FileExists(t, filepath.Join(ws, "old.txt"))
}

// TestArgumentsReachTheAuditRecordRedacted: the call's arguments are in its decision record,
// with the secret in them masked.
func TestArgumentsReachTheAuditRecordRedacted(t *testing.T) {
	cs, ws := session(t, nil)
	const secret = "ghp_0123456789abcdefghijABCDEFGHIJ012345"
	_, err := call(cs, "write_file", map[string]any{"path": "notes.txt", "content": "token " + secret})
	require.NoError(t, err)
	require.NoError(t, cs.Close())
	var inputs []string
	for r, err := range audit.Scan(filepath.Join(ws, ".reins", "audit.jsonl"), nil) {
		require.NoError(t, err)
		if r.Kind == audit.KindDecision {
			inputs = append(inputs, r.Input)
		}
	}
	require.Len(t, inputs, 1)
	assert.Contains(t, inputs[0], `"path":"notes.txt"`)
	assert.NotContains(t, inputs[0], secret)
	assert.Contains(t, inputs[0], audit.Mask)
}

// TestEveryCallIsAudited: each call, allowed or not, leaves a decision in the hash-chained log.
func TestEveryCallIsAudited(t *testing.T) {
	cs, ws := session(t, nil)
	_, err := call(cs, "read_file", map[string]any{"path": "README.md"})
	require.NoError(t, err)
	_, err = call(cs, "write_file", map[string]any{"path": ".env", "content": "x"})
	require.Error(t, err)
	require.NoError(t, cs.Close())
	logPath := filepath.Join(ws, ".reins", "audit.jsonl")
	var tools []string
	for r, err := range audit.Scan(logPath, nil) {
		require.NoError(t, err)
		if r.Kind == audit.KindDecision {
			tools = append(tools, r.Tool+" "+r.Decision.String())
		}
	}
	assert.Equal(t, []string{"mcp__files__read_file ALLOW", "mcp__files__write_file DENY"}, tools)
	res, err := audit.Verify(logPath)
	require.NoError(t, err)
	assert.Equal(t, len(tools), res.Records)
	assert.Nil(t, res.Torn)
}

func TestUsage(t *testing.T) {
	var stderr bytes.Buffer
	assert.Equal(t, 2, run(context.Background(), nil, nil, &stderr))
	assert.Contains(t, stderr.String(), "-workspace is required")
	stderr.Reset()
	assert.Equal(t, 0, run(context.Background(), []string{"-help"}, nil, &stderr))
	assert.Contains(t, stderr.String(), "usage: mcp")
}
