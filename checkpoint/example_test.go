package checkpoint_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/reins-go/reins/checkpoint"
)

// exampleWorkspace makes a throwaway workspace (not a git repository, so
// the checkpoints go to a shadow repository under shadowRoot).
func exampleWorkspace() (dir, shadowRoot string, cleanup func()) {
	base, err := os.MkdirTemp("", "checkpoint-example-")
	if err != nil {
		panic(err)
	}
	dir = filepath.Join(base, "workspace")
	shadowRoot = filepath.Join(base, "shadow")
	_ = os.MkdirAll(filepath.Join(dir, "src"), 0o755)
	_ = os.WriteFile(filepath.Join(dir, "src", "main.go"), []byte("package main\n"), 0o644)
	return dir, shadowRoot, func() { os.RemoveAll(base) }
}

func read(dir, name string) string {
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		return "(absent)"
	}
	return string(b)
}

// Checkpoint, let the agent change things, then restore: modified files
// come back, and files created since are removed.
func Example() {
	dir, shadow, cleanup := exampleWorkspace()
	defer cleanup()
	ctx := context.Background()

	c, err := checkpoint.New(ctx, dir, &checkpoint.Options{ShadowRoot: shadow})
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	cp, err := c.Create(ctx, "before the agent's edit")
	if err != nil {
		fmt.Println("error:", err)
		return
	}

	_ = os.WriteFile(filepath.Join(dir, "src", "main.go"), []byte("package broken\n"), 0o644)
	_ = os.WriteFile(filepath.Join(dir, "scratch.txt"), []byte("temporary\n"), 0o644)

	res, err := c.Rewind(ctx, cp.ID)
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	for _, ch := range res.Changes {
		fmt.Println(ch.Kind, ch.Path)
	}
	fmt.Print("main.go: ", read(dir, "src/main.go"))
	fmt.Println("scratch.txt:", read(dir, "scratch.txt"))
	// Output:
	// deleted scratch.txt
	// modified src/main.go
	// main.go: package main
	// scratch.txt: (absent)
}

// A batch that fails is rolled back automatically; the error reports both
// the failure and the rollback.
func ExampleCheckpointer_Batch() {
	dir, shadow, cleanup := exampleWorkspace()
	defer cleanup()
	ctx := context.Background()
	c, err := checkpoint.New(ctx, dir, &checkpoint.Options{ShadowRoot: shadow})
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	errTests := errors.New("tests failed")
	res, err := c.Batch(ctx, "apply patch", func(ctx context.Context) error {
		_ = os.WriteFile(filepath.Join(dir, "src", "main.go"), []byte("half-applied\n"), 0o644)
		return errTests
	})
	fmt.Println("is errTests:", errors.Is(err, errTests))
	fmt.Println("rolled back:", res.RolledBack)
	fmt.Print("main.go: ", read(dir, "src/main.go"))
	// Output:
	// is errTests: true
	// rolled back: true
	// main.go: package main
}

// A file-edit tool knows which files it will touch: a path-scoped
// checkpoint costs the same in a huge workspace as in a small one, and
// restores those paths exactly, including removing a file that did not
// exist.
func ExampleCheckpointer_CreateWith() {
	dir, shadow, cleanup := exampleWorkspace()
	defer cleanup()
	ctx := context.Background()
	c, err := checkpoint.New(ctx, dir, &checkpoint.Options{ShadowRoot: shadow})
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	cp, err := c.CreateWith(ctx, checkpoint.CreateOptions{
		Label:         "edit_file src/main.go",
		CorrelationID: "decision-17",
		Paths:         []string{"src/main.go", "src/new_helper.go"},
	})
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	fmt.Println("paths:", cp.Paths)
	_ = os.WriteFile(filepath.Join(dir, "src", "main.go"), []byte("package edited\n"), 0o644)
	_ = os.WriteFile(filepath.Join(dir, "src", "new_helper.go"), []byte("package main\n"), 0o644)
	if err := c.Restore(ctx, cp.ID); err != nil {
		fmt.Println("error:", err)
		return
	}
	fmt.Print("main.go: ", read(dir, "src/main.go"))
	fmt.Println("new_helper.go:", read(dir, "src/new_helper.go"))
	// Output:
	// paths: [src/main.go src/new_helper.go]
	// main.go: package main
	// new_helper.go: (absent)
}

// The timeline lists checkpoints newest first with their own creation
// time (from the injected clock here) and the files changed against the
// previous one; RewindN(ctx, n) restores the n-th most recent.
func ExampleCheckpointer_List() {
	dir, shadow, cleanup := exampleWorkspace()
	defer cleanup()
	ctx := context.Background()
	now := time.Date(2030, 1, 2, 15, 4, 5, 0, time.UTC)
	c, err := checkpoint.New(ctx, dir, &checkpoint.Options{
		ShadowRoot: shadow,
		Clock:      func() time.Time { return now },
		OnEvent: func(ev checkpoint.Event) {
			fmt.Println("event:", ev.Kind, ev.Checkpoint.Reason)
		},
	})
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	if _, err := c.Create(ctx, "start"); err != nil {
		fmt.Println("error:", err)
		return
	}
	now = now.Add(time.Minute)
	_ = os.WriteFile(filepath.Join(dir, "a.txt"), []byte("a\n"), 0o644)
	_ = os.WriteFile(filepath.Join(dir, "b.txt"), []byte("b\n"), 0o644)
	if _, err := c.Create(ctx, "added two files"); err != nil {
		fmt.Println("error:", err)
		return
	}
	list, err := c.List(ctx)
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	for i, cp := range list {
		fmt.Printf("%d. %s %q files changed: %d\n", i+1, cp.Time.Format(time.TimeOnly), cp.Label, cp.FilesChanged)
	}
	if _, err := c.RewindN(ctx, 2); err != nil {
		fmt.Println("error:", err)
		return
	}
	fmt.Println("a.txt:", read(dir, "a.txt"))
	// Output:
	// event: checkpoint_created create
	// event: checkpoint_created create
	// 1. 15:05:05 "added two files" files changed: 2
	// 2. 15:04:05 "start" files changed: 1
	// event: checkpoint_created before-restore
	// event: checkpoint_restored create
	// a.txt: (absent)
}

// A secret is never stored, and a rollback never deletes it, even after
// the agent un-ignored it; a restore that cannot be carried out says why
// and changes nothing.
func ExampleRestoreError() {
	dir, shadow, cleanup := exampleWorkspace()
	defer cleanup()
	ctx := context.Background()
	_ = os.WriteFile(filepath.Join(dir, ".gitignore"), []byte(".env\n"), 0o644)
	_ = os.WriteFile(filepath.Join(dir, ".env"), []byte("TOKEN=s3cret\n"), 0o600)

	c, err := checkpoint.New(ctx, dir, &checkpoint.Options{ShadowRoot: shadow})
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	_, err = c.Batch(ctx, "agent step", func(context.Context) error {
		_ = os.Remove(filepath.Join(dir, ".gitignore")) // .env is no longer ignored
		return errors.New("step failed")
	})
	fmt.Println("batch:", err != nil)
	fmt.Print(".env: ", read(dir, ".env"))
	fmt.Print(".gitignore: ", read(dir, ".gitignore"))

	// "out" is a file in the checkpoint; now a directory holding a secret
	// is where it must go.
	_ = os.WriteFile(filepath.Join(dir, "out"), []byte("a file\n"), 0o644)
	cp, _ := c.Create(ctx, "with out")
	_ = os.Remove(filepath.Join(dir, "out"))
	_ = os.MkdirAll(filepath.Join(dir, "out"), 0o755)
	_ = os.WriteFile(filepath.Join(dir, "out", ".env.local"), []byte("KEY=1\n"), 0o600)
	_, err = c.Rewind(ctx, cp.ID)
	var re *checkpoint.RestoreError
	if errors.As(err, &re) {
		fmt.Println("restore:", re.Failure, "at", re.Path)
		fmt.Println("is ErrConflict:", errors.Is(err, checkpoint.ErrConflict))
	}
	fmt.Print("out/.env.local: ", read(dir, "out/.env.local"))
	// Output:
	// batch: true
	// .env: TOKEN=s3cret
	// .gitignore: .env
	// restore: something the snapshots do not cover is in the way at out
	// is ErrConflict: true
	// out/.env.local: KEY=1
}
