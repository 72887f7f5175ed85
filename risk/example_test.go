package risk_test

import (
	"encoding/json"
	"fmt"

	"github.com/reins-go/reins/risk"
)

// A shell line such as `go test ./... && git push` carries two risks at once.
func ExampleSet() {
	s := risk.Of(risk.Exec, risk.Network)
	b, err := json.Marshal(s)
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	fmt.Println(string(b), s.Severity())
	// Output: ["exec","network"] medium
}

// Unknown names are errors, never a silent ReadOnly.
func ExampleParseLevel() {
	l, err := risk.ParseLevel("destructive")
	fmt.Println(l, l.Severity(), err)
	_, err = risk.ParseLevel("harmless")
	fmt.Println(err)
	// Output:
	// destructive high <nil>
	// risk: unknown risk level "harmless" (want one of read_only, mutating, exec, destructive, network)
}
