package fspath_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/reins-go/reins/internal/fspath"
)

// A workspace with a link inside it (inlink -> deep/dir) and one leading out (esc -> outside):
// the kernel reads inlink/../esc/pwned as deep/esc/pwned, filepath.Join as esc/pwned, which is
// outside. Resolve refuses the target instead of answering for one reading.
func ExampleWorkspace_Resolve() {
	top, _ := os.MkdirTemp("", "fspath-example")
	defer os.RemoveAll(top)
	ws := filepath.Join(top, "ws")
	_ = os.MkdirAll(filepath.Join(ws, "deep", "dir"), 0o755)
	_ = os.MkdirAll(filepath.Join(top, "outside"), 0o755)
	_ = os.Symlink("deep/dir", filepath.Join(ws, "inlink"))
	_ = os.Symlink("../outside", filepath.Join(ws, "esc"))

	w, err := fspath.NewWorkspace([]string{ws}, nil, "")
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, target := range []string{"inlink/new.txt", "nonexist/../esc/pwned", "inlink/../esc/pwned"} {
		root, p, err := w.Resolve(target)
		var amb *fspath.AmbiguousError
		switch {
		case errors.As(err, &amb):
			fmt.Printf("%s: refused, ambiguous\n", target)
		case err != nil:
			fmt.Printf("%s: %v\n", target, err)
		case root == "":
			fmt.Printf("%s: outside (%s)\n", target, filepath.Base(filepath.Dir(p)))
		default:
			fmt.Printf("%s: inside at %s\n", target, p)
		}
	}
	// Output:
	// inlink/new.txt: inside at deep/dir/new.txt
	// nonexist/../esc/pwned: outside (outside)
	// inlink/../esc/pwned: refused, ambiguous
}

// The default lists in their two classes: secrets are neither read nor written, write-protected
// files are read but never written.
func ExampleMatcher_In() {
	m, err := fspath.NewMatcher(fspath.Defaults(), "/home/u")
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, rel := range []string{"app/.env.production", ".git/hooks/pre-commit", ".vscode/tasks.json", "src/main.go"} {
		h := m.In("/work/repo", rel)
		fmt.Printf("%-24s %-20s read denied: %v, write denied: %v\n", rel, h.Class, h.Class.Denies(false), h.Class.Denies(true))
	}
	// Output:
	// app/.env.production      read-write-protected read denied: true, write denied: true
	// .git/hooks/pre-commit    write-protected      read denied: false, write denied: true
	// .vscode/tasks.json       write-protected      read denied: false, write denied: true
	// src/main.go              unprotected          read denied: false, write denied: false
}

// Clean with another platform's rules, as filepath.Clean would there.
func ExamplePlatform_Clean() {
	fmt.Println(fspath.Windows.Clean(`c:\Users\me\..\you\.ssh`))
	fmt.Println(fspath.Linux.Clean("/srv//app/./../data/"))
	// Output:
	// C:/Users/you/.ssh
	// /srv/data
}
