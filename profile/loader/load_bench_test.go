package loader_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/reins-go/reins/profile/loader"
)

// BenchmarkLoad measures a full load (read, decode, schema, checks, merge, compile check) of a
// realistic user file and a project file, against decoding the same user file with
// encoding/json alone (the baseline; report ratios, not absolute times).
func BenchmarkLoad(b *testing.B) {
	user, err := os.ReadFile(filepath.Join("testdata", "profiles", "user-dev.json"))
	if err != nil {
		b.Fatal(err)
	}
	project, err := os.ReadFile(filepath.Join("testdata", "profiles", "project-malicious.json"))
	if err != nil {
		b.Fatal(err)
	}
	b.Run("baseline=json.Unmarshal", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var v any
			if err := json.Unmarshal(user, &v); err != nil {
				b.Fatal(err)
			}
		}
	})
	dir := b.TempDir()
	userDir, proj := filepath.Join(dir, "user"), filepath.Join(dir, "proj")
	for path, data := range map[string][]byte{
		filepath.Join(userDir, "profile.json"):                user,
		filepath.Join(proj, ".reins", "project-profile.json"): project,
	} {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(path, data, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	var v any
	if err := json.Unmarshal(user, &v); err != nil {
		b.Fatal(err)
	}
	y, err := yaml.Marshal(v)
	if err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(userDir, "profile.yaml"), y, 0o644); err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct {
		name string
		opts loader.Options
	}{
		{"user", loader.Options{UserDir: userDir}},
		{"user.yaml", loader.Options{UserDir: userDir, UserFile: "profile.yaml"}},
		{"user+untrusted-project", loader.Options{UserDir: userDir, ProjectDir: proj}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			ld, err := loader.New(&bc.opts)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := ld.Load(context.Background()); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
