package shell_test

import (
	"fmt"

	"github.com/reins-go/reins/risk/shell"
)

// The classic bypass of string allowlists: an allowed prefix, then something else.
func ExampleAnalyze() {
	an, err := shell.Analyze(`go test ./...; V=.env; cat "$V"`, &shell.Options{Dir: "/work/app"})
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	for _, c := range an.Commands {
		fmt.Printf("%-14s %-10s reads=%v\n", c.Text, c.Risk, len(c.Reads))
	}
	fmt.Println(an.Reads[0].Path, an.Risk)
	// Output:
	// go test ./...  exec       reads=0
	// cat "$V"       read_only  reads=1
	// /work/app/.env read_only,exec
}

// Code handed to an interpreter cannot be analysed: the command is opaque.
func ExampleAnalyze_opaque() {
	an, err := shell.Analyze(`python -c 'open(".e"+"nv").read()'`, nil)
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	c := an.Commands[0]
	fmt.Println(c.Opaque, c.ExecutesCode, c.Why[0])
	// Output: true true python -c runs code the analysis does not read
}
