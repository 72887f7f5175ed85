package shell_test

import (
	"fmt"
	"strings"

	"github.com/reins-go/reins/risk/shell"
)

// An expansion bash evaluates a second time makes the command opaque: the analysis says why.
func ExampleAnalyze_secondEvaluation() {
	for _, line := range []string{`echo ${v@P}`, `X='a[$(touch m)]'; echo $((X))`, `LESSOPEN='|cmd %s' less f`, `echo $((1+2))`} {
		an, _ := shell.Analyze(line, &shell.Options{Dir: "/w"})
		fmt.Printf("%-32s opaque=%v", line, an.Opaque)
		for _, c := range an.Commands {
			if c.Opaque {
				fmt.Printf(" (%s)", strings.Join(c.Why, "; "))
			}
		}
		fmt.Println()
	}
	// Output:
	// echo ${v@P}                      opaque=true (${v@P} transforms the value in a way the analysis does not evaluate)
	// X='a[$(touch m)]'; echo $((X))   opaque=true (arithmetic expansion evaluates a value the analysis does not know as arithmetic, which can run commands)
	// LESSOPEN='|cmd %s' less f        opaque=true (sets LESSOPEN in the environment, which can change what runs)
	// echo $((1+2))                    opaque=false
}

// A line longer than MaxLine is not parsed: the analysis is opaque and fails closed.
func ExampleAnalyze_tooLong() {
	an, err := shell.Analyze("echo "+strings.Repeat("a", shell.MaxLine), nil)
	fmt.Println(err, an.Opaque)
	// Output:
	// shell: command line too long to analyse true
}
