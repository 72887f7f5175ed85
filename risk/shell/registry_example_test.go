package shell_test

import (
	"fmt"

	"github.com/reins-go/reins/risk/shell"
)

// A package install reaches its ecosystem's configured registry. With no registry hosts
// configured, the analysis reports the ecosystem's symbolic registry host, which the gate counts
// in the package-managers host group; an explicit --registry is a host like any other.
func ExampleRegistryHost() {
	an, _ := shell.Analyze("npm install --registry https://npm.corp.example left-pad", nil)
	for _, h := range an.Hosts {
		eco, registry := shell.RegistryOf(h)
		fmt.Printf("%s registry=%v ecosystem=%q\n", h, registry, eco)
	}
	fmt.Println(shell.RegistryHost("pypi"))
	// Output:
	// npm.corp.example registry=false ecosystem=""
	// npm.registry.invalid registry=true ecosystem="npm"
	// pypi.registry.invalid
}
