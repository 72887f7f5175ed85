// Package risk describes what an agent's action can do: the five risk levels of the autonomy
// seed (ReadOnly, Mutating, Exec, Destructive, Network), the Low/Medium/High severity scale of
// the policy spec, and small sets of levels for compound actions.
//
// It is the leaf of reins' import graph: [policy] rules condition on levels and severities, the
// gate's autonomy matrix maps (autonomy band, level) to a verdict, and the shell analysis in the
// sub-package risk/shell turns a command line into the levels it carries.
//
// # Levels and severities
//
// A tool declares a [Level] for its actions. When it does not declare a severity, the default
// mapping applies:
//
//	read_only    low
//	mutating     medium
//	exec         medium
//	network      medium
//	destructive  high
//
// Levels and severities round-trip through text and JSON by their canonical lower-case names.
// Unknown names are errors, and the zero values (undeclared) cannot be marshalled, so nothing
// undeclared can pass for ReadOnly or Low.
package risk
