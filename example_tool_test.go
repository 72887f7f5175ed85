package reins_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/reins-go/reins"
	"github.com/reins-go/reins/policy"
	"github.com/reins-go/reins/profile"
)

// Guard puts a tool's body behind the run: the spec says which input field holds the path the
// tool reads, so the gate decides on the file, and a refusal reaches the model as the tool's
// result (Denial.Message) instead of an error that would end the agent's turn.
func ExampleGuard() {
	ctx := context.Background()
	ws, _ := os.MkdirTemp("", "reins-example-")
	defer os.RemoveAll(ws)
	_ = os.WriteFile(filepath.Join(ws, "README.md"), []byte("# hello"), 0o644)
	_ = os.WriteFile(filepath.Join(ws, ".env"), []byte("TOKEN=s3cret"), 0o644)
	r, err := reins.New(ctx, profile.Dev.Profile(), &reins.Options{Workspace: []string{ws}})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer r.Close()

	type readArgs struct {
		Path string `json:"path"`
	}
	read := reins.Guard(r, reins.ToolSpec{Tool: "read_file", Operation: policy.OpRead, Reads: []string{"path"}},
		func(_ context.Context, in readArgs) (string, error) {
			b, err := os.ReadFile(filepath.Join(ws, in.Path))
			return string(b), err
		}, reins.Denial.Message)

	for _, p := range []string{"README.md", ".env"} {
		out, err := read(ctx, readArgs{Path: p})
		fmt.Printf("%s: %s (err: %v)\n", p, out, err)
	}
	// Output:
	// README.md: # hello (err: <nil>)
	// .env: reins denied this call of read_file; it did not run. Reason: target ".env" is protected (.env). (err: <nil>)
}

// MCP tool annotations only ever raise a tool's risk. A server the host does not trust cannot
// make a tool the host did not describe look read-only; the host's own server can.
func ExampleToolSpec_Action() {
	readOnly, closed := true, false
	ann := &reins.ToolAnnotations{ReadOnlyHint: &readOnly, OpenWorldHint: &closed}
	for _, trusted := range []bool{false, true} {
		spec := reins.ToolSpec{Tool: "mcp__docs__search", Annotations: ann, TrustAnnotations: trusted}
		a, err := spec.Action([]byte(`{"query":"rollback"}`))
		if err != nil {
			fmt.Println(err)
			continue
		}
		fmt.Printf("trusted=%v: operation %s, risk %s\n", trusted, a.Operation, a.Risk)
	}
	// A field of the wrong type denies the call.
	write := reins.ToolSpec{Tool: "write_file", Operation: policy.OpWrite, Writes: []string{"path"}}
	_, err := write.Action([]byte(`{"path":["notes.txt",{"x":".env"}]}`))
	fmt.Println(err)
	// Output:
	// trusted=false: operation tool, risk destructive
	// trusted=true: operation tool, risk read_only
	// field "path" of write_file's input is not a path or an array of paths
}
