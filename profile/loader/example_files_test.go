package loader_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"

	"github.com/reins-go/reins/profile"
	"github.com/reins-go/reins/profile/loader"
)

// writeFile is the examples' helper for laying out profile files.
func writeFile(path, content string) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		panic(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		panic(err)
	}
}

// A user file selects PROFILE-DEV and adds to its lists; a cloned repository's project file
// tries to raise the dial and allow "rm -rf". The project is not trusted, so only its
// tightening settings apply, and the load reports the rest.
func ExampleLoad() {
	root, err := os.MkdirTemp("", "reins-example")
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	defer os.RemoveAll(root)
	userDir, project := filepath.Join(root, "config", "reins"), filepath.Join(root, "repo")
	writeFile(filepath.Join(userDir, "profile.json"), `{
  "active_profile": "PROFILE-DEV",
  "shell_allowlist": ["golangci-lint run"],
  "host_groups": {"package-managers": ["proxy.golang.org"]}
}`)
	writeFile(filepath.Join(project, ".reins", "project-profile.json"), `{
  "autonomy": 1.0,
  "shell_blocklist": ["npm publish"],
  "custom_rules": [
    {"id": "allow-rm", "priority": 0, "condition": {"commands": ["rm -rf"]}, "action": "allow"}
  ]
}`)

	l, err := loader.Load(context.Background(), &loader.Options{UserDir: userDir, ProjectDir: project})
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	p := l.Profile
	fmt.Println("profile:", p.Name, p.Family, "autonomy", p.Autonomy)
	fmt.Println("blocks npm publish:", contains(p.ShellBlocklist, "npm publish"))
	src, _ := l.Provenance.Of("shell_blocklist", "npm publish")
	fmt.Println("set by:", src.Origin, src.Pointer, "line", src.Line)
	fmt.Println("project:", l.Trust)
	for _, s := range l.Skipped {
		fmt.Printf("not applied: %s (line %d): %s\n", s.Source.Pointer, s.Source.Line, s.Reason)
	}
	// Output:
	// profile: PROFILE-DEV custom autonomy 0.5
	// blocks npm publish: true
	// set by: project file /shell_blocklist/0 line 3
	// project: untrusted
	// not applied: /autonomy (line 2): raises autonomy from 0.5 to 1 (more autonomous)
	// not applied: /custom_rules/0 (line 5): adds the ALLOW rule "allow-rm"
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// The user trusts a project by listing its directory and the SHA-256 of its project file in
// the user file; editing the project file ends the trust.
func ExampleLoad_trustedProject() {
	root, err := os.MkdirTemp("", "reins-example")
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	defer os.RemoveAll(root)
	userDir, project := filepath.Join(root, "config", "reins"), filepath.Join(root, "repo")
	projectFile := filepath.Join(project, ".reins", "project-profile.json")
	writeFile(projectFile, `{"active_profile": "PROFILE-FULL-AUTO"}`)
	content, err := os.ReadFile(projectFile)
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	sum := sha256.Sum256(content)
	writeFile(filepath.Join(userDir, "profile.json"), `{
  "active_profile": "PROFILE-DEV",
  "trusted_projects": [{"path": "`+project+`", "sha256": "`+hex.EncodeToString(sum[:])+`"}]
}`)
	opts := &loader.Options{UserDir: userDir, ProjectDir: project}

	l, err := loader.Load(context.Background(), opts)
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	fmt.Println(l.Profile.Name, "-", l.Trust)

	writeFile(projectFile, `{"active_profile": "PROFILE-FULL-AUTO", "autonomy": 1}`)
	l, err = loader.Load(context.Background(), opts)
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	fmt.Println(l.Profile.Name, "-", l.Trust, "-", len(l.Skipped), "settings not applied")
	// Output:
	// PROFILE-FULL-AUTO - trusted by the user file
	// PROFILE-DEV - untrusted - 2 settings not applied
}

// A host without a trust list asks the user instead. The Loader remembers the answer for this
// content of the project file, so reloading an unchanged file does not ask again.
func ExampleLoader_Load_confirm() {
	root, err := os.MkdirTemp("", "reins-example")
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	defer os.RemoveAll(root)
	project := filepath.Join(root, "repo")
	writeFile(filepath.Join(project, ".reins", "project-profile.json"), `{"autonomy": 0.3}`)

	ld, err := loader.New(&loader.Options{
		NoUserFile: true,
		ProjectDir: project,
		Confirm: func(ctx context.Context, req loader.TrustRequest) (bool, error) {
			for _, s := range req.Loosenings {
				fmt.Println("asked:", s.Source.Pointer, s.Reason)
			}
			return true, nil
		},
	})
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	for range 2 {
		l, err := ld.Load(context.Background())
		if err != nil {
			fmt.Println("error:", err)
			return
		}
		fmt.Println(l.Profile.Name, l.Profile.Autonomy, l.Trust)
	}
	// Output:
	// asked: /autonomy raises autonomy from 0 to 0.3 (more autonomous)
	// PROFILE-SAFE 0.3 confirmed by the host
	// PROFILE-SAFE 0.3 confirmed by the host
}

// Every problem in a profile file is reported with the file, the JSON pointer and the line.
func ExampleErrors() {
	dir, err := os.MkdirTemp("", "reins-example")
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	defer os.RemoveAll(dir)
	writeFile(filepath.Join(dir, "profile.json"), `{
  "active_profile": "PROFILE-DEV",
  "autonomy": 2,
  "shell_allowlist": "go test",
  "netwrok_allowlist": ["*.example.com"]
}`)
	_, err = loader.Load(context.Background(), &loader.Options{UserDir: dir})
	for _, e := range loader.Errors(err) {
		fmt.Printf("line %d %s: %s\n", e.Line, e.Pointer, e.Reason)
	}
	// Output:
	// line 3 /autonomy: out of range: 2 is not <= 1
	// line 4 /shell_allowlist: wrong type: want array, got string
	// line 5 /netwrok_allowlist: unknown key "netwrok_allowlist" (did you mean "network_allowlist"?)
}

// The approval block of the approval-mode ADR loads from YAML.
func ExampleLoad_yaml() {
	dir, err := os.MkdirTemp("", "reins-example")
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	defer os.RemoveAll(dir)
	writeFile(filepath.Join(dir, "profile.yaml"), `approval:
  mode: auto
  denied_paths: [~/.kube]
  allowed_tools: [read_file, list_files]
  auto_approve_patterns: ["go test", "npm run build"]
`)
	l, err := loader.Load(context.Background(), &loader.Options{UserDir: dir, UserFile: "profile.yaml"})
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	p := l.Profile
	fmt.Println(p.Name, p.AllowedTools, p.AutoApprovePatterns, contains(p.ProtectedPaths, "~/.kube"))
	// Output: auto [read_file list_files] [go test npm run build] true
}

// Switching the active profile keeps the files' settings: the user's denied paths hold in yolo.
func ExampleLoaded_Rebase() {
	dir, err := os.MkdirTemp("", "reins-example")
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	defer os.RemoveAll(dir)
	writeFile(filepath.Join(dir, "profile.json"), `{"active_profile": "PROFILE-DEV", "denied_paths": ["secrets"]}`)
	l, err := loader.Load(context.Background(), &loader.Options{UserDir: dir})
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	y, err := l.Rebase(profile.ApprovalYolo)
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	src, _ := y.Provenance.Of("active_profile", "")
	fmt.Println(y.Profile.Name, contains(y.Profile.ProtectedPaths, "secrets"), src)
	// Output: yolo true host switch to "yolo"
}
