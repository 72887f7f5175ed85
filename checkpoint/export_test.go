package checkpoint

// SetRestoreHook makes every later removal and write of c's restores call
// f first; an error from f fails the restore at that point.
func SetRestoreHook(c *Checkpointer, f func(op, path string) error) { c.hook = f }

// SetPortable makes c read files and maintain its private index the way
// it does on platforms without the stat data git records.
func SetPortable(c *Checkpointer) { c.portable = true }

// SetFetchBudget bounds the content c's restores read before writing.
func SetFetchBudget(c *Checkpointer, n int64) { c.fetchBudget = n }

// SetLoose makes c's path-scoped snapshots write loose objects and refs
// itself (true, the default where the repository allows it) or leave all
// writing to git (false, as in a repository whose refs or objects are not
// plain files).
func SetLoose(c *Checkpointer, on bool) { c.loose = on }

// Loose reports whether c's path-scoped snapshots write objects themselves.
func Loose(c *Checkpointer) bool { return c.loose }
