package fspath

import (
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkResolve: a clean relative target three components deep (three lstat calls), against
// the same three os.Lstat calls as a baseline in the same run.
func BenchmarkResolve(b *testing.B) {
	dir := b.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "src", "pkg"), 0o755); err != nil {
		b.Fatal(err)
	}
	w, err := NewWorkspace([]string{dir}, nil, "")
	if err != nil {
		b.Fatal(err)
	}
	b.Run("resolve", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_, _, _ = w.Resolve("src/pkg/main.go")
		}
	})
	b.Run("lstat-baseline", func(b *testing.B) {
		p := w.Primary()
		for b.Loop() {
			_, _ = os.Lstat(p + "/src")
			_, _ = os.Lstat(p + "/src/pkg")
			_, _ = os.Lstat(p + "/src/pkg/main.go")
		}
	})
	b.Run("resolve-dotdot", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_, _, _ = w.Resolve("src/../src/pkg/main.go")
		}
	})
}

// BenchmarkMatcherIn: the default lists against a path inside a root that matches nothing (the
// ALLOW path) and one that matches.
func BenchmarkMatcherIn(b *testing.B) {
	m, err := NewMatcher(Defaults(), "/home/u")
	if err != nil {
		b.Fatal(err)
	}
	r := m.ForRoot("/work/repo")
	for _, rel := range []string{"src/pkg/main.go", "deploy/.env.production"} {
		b.Run(filepath.Base(rel), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = m.In("/work/repo", rel)
			}
		})
		b.Run(filepath.Base(rel)+"-for-root", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = r.In(rel)
			}
		})
	}
}
