package fspath

// fileStat is what resolution and the identity index need of one file: its kind, its identity
// (device and inode), its link count and its change times. ok is false where the platform
// gives no identity (Windows): then the identity fields are zero and nothing is matched by
// identity.
type fileStat struct {
	kind  fileKind
	dev   uint64
	ino   uint64
	nlink uint64
	ctime int64 // status change time, Unix nanoseconds: a new link, a rename, a write
	mtime int64 // modification time, Unix nanoseconds: for a directory, an entry added or removed
}

// id returns the file's identity.
func (s *fileStat) id() fileID { return fileID{s.dev, s.ino} }

// fileID is a file's identity on the running system: its device and inode numbers.
type fileID struct{ dev, ino uint64 }

// lstatKind reports what path (NUL-terminated) names without following a final symbolic link.
func lstatKind(path []byte) (fileKind, error) {
	st, err := statPath(path, false)
	return st.kind, err
}
