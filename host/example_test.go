package host_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/reins-go/reins"
	"github.com/reins-go/reins/host"
	"github.com/reins-go/reins/policy"
	"github.com/reins-go/reins/profile"
)

// A host embeds reins in about ten lines: New wires the checkpointer, the sandbox, the notifier
// and the audit log; Guard puts each tool behind the run. The write is checkpointed first (and
// would be rolled back if the tool failed); the secret is refused with a message the model
// reads as the tool's result.
func ExampleNew() {
	ctx := context.Background()
	ws, _ := os.MkdirTemp("", "reins-host-example-")
	defer os.RemoveAll(ws)
	shadow, _ := os.MkdirTemp("", "reins-host-example-shadow-") // checkpoints of a plain directory
	defer os.RemoveAll(shadow)

	run, err := host.New(ctx, ws, profile.Dev, &host.Options{Logger: slog.New(slog.DiscardHandler), ShadowRoot: shadow})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer run.Close()
	write := reins.Guard(run, reins.ToolSpec{Tool: "write_file", Operation: policy.OpWrite, Writes: []string{reins.WholeInput}},
		func(_ context.Context, path string) (string, error) {
			return "wrote " + path, os.WriteFile(filepath.Join(ws, path), []byte("hello\n"), 0o644)
		}, reins.Denial.Message)

	for _, path := range []string{"notes.txt", ".env"} {
		out, err := write(ctx, path)
		fmt.Println(out, err)
	}
	timeline, _ := run.Checkpointer.List(ctx)
	fmt.Println("checkpoints:", len(timeline))
	// Output:
	// wrote notes.txt <nil>
	// reins denied this call of write_file; it did not run. Reason: target ".env" is protected (.env). <nil>
	// checkpoints: 1
}
