package loader

// ManagedDirFor is managedDir for tests: the managed directory of another operating system.
var ManagedDirFor = managedDir
