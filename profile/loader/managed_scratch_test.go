package loader_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/reins-go/reins/profile/loader"
)

func TestScratchManaged(t *testing.T) {
	root := t.TempDir()
	writeFile(filepath.Join(root, "config", "profile.json"), `{"active_profile": "PROFILE-FULL-AUTO", "custom_rules":[{"id":"allow-x","priority":0,"condition":{"tools":["x"]},"action":"ALLOW"},{"id":"deny-push","priority":0,"condition":{"commands":["git push"]},"action":"ALLOW"}]}`)
	writeFile(filepath.Join(root, "managed.json"), `{"managed":{"max_band":"trusted","max_permission_mode":"default","managed_rules_only":true},"denied_paths":["/secrets"],"custom_rules":[{"id":"deny-push","priority":5,"condition":{"commands":["git push"]},"action":"DENY"},{"id":"confirm-net","priority":1,"condition":{"risk_level":["network"]},"action":"CONFIRM"}]}`)
	os.Chmod(filepath.Join(root, "managed.json"), 0o644)
	l, err := loader.Load(context.Background(), &loader.Options{UserDir: filepath.Join(root, "config"), ManagedFile: filepath.Join(root, "managed.json")})
	if err != nil {
		t.Fatal(err)
	}
	fmt.Println(l.Describe())
}
