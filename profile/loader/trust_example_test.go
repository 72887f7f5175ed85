package loader_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/reins-go/reins/profile/loader"
)

// ExampleTrustDigest computes the value a user file's trusted_projects entry records for a
// project file, and shows that a directory in its place is refused (as a named pipe or a device
// would be) without being read.
func ExampleTrustDigest() {
	dir, err := os.MkdirTemp("", "reins-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	file := filepath.Join(dir, "project-profile.json")
	if err := os.WriteFile(file, []byte("{}\n"), 0o600); err != nil {
		panic(err)
	}
	sum, err := loader.TrustDigest(context.Background(), file)
	fmt.Println(sum, err)

	_, err = loader.TrustDigest(context.Background(), dir)
	fmt.Println(err.(*loader.Error).Reason)
	// Output:
	// ca3d163bab055381827226140568f3bef7eaac187cebd76878e0b63e9e442356 <nil>
	// not a regular file (d---------)
}
