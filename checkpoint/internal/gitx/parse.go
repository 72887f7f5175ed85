package gitx

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// SplitNUL splits NUL-terminated records (the -z output of ls-files and
// friends). A missing final terminator is an error: output was truncated.
func SplitNUL(b []byte) ([]string, error) {
	if len(b) == 0 {
		return nil, nil
	}
	if b[len(b)-1] != 0 {
		return nil, errors.New("git output is not NUL-terminated")
	}
	return strings.Split(string(b[:len(b)-1]), "\x00"), nil
}

// Status is the one-letter change status of a raw diff entry.
type Status byte

// Statuses that --no-renames raw output can contain.
const (
	Added       Status = 'A'
	Deleted     Status = 'D'
	Modified    Status = 'M'
	TypeChanged Status = 'T'
)

// Mode values found in trees.
const (
	ModeNone    = 0
	ModeFile    = 0o100644
	ModeExec    = 0o100755
	ModeSymlink = 0o120000
	ModeGitlink = 0o160000
	ModeTree    = 0o040000
)

// RawEntry is one entry of "git diff-tree --raw -z --no-renames".
type RawEntry struct {
	OldMode, NewMode uint32
	OldOID, NewOID   string
	Status           Status
	Path             string
}

// RawPair is the output for one pair of trees of "diff-tree --stdin".
type RawPair struct {
	Header  string // the echoed input line, without its newline ("" outside --stdin)
	Entries []RawEntry
}

// ParseRaw parses "git diff-tree -r -z --raw --no-renames" output. With
// stdin set it expects the output of --stdin, where each pair of trees is
// echoed as a header line before its entries; otherwise there is one pair
// and no header.
func ParseRaw(b []byte, stdin bool) ([]RawPair, error) {
	var pairs []RawPair
	if !stdin {
		pairs = append(pairs, RawPair{})
	}
	for len(b) > 0 {
		if b[0] != ':' {
			if !stdin {
				return nil, fmt.Errorf("raw diff: unexpected byte %q", b[0])
			}
			i := bytes.IndexByte(b, '\n')
			if i < 0 {
				return nil, errors.New("raw diff: unterminated header line")
			}
			h := string(b[:i])
			if !validHeader(h) {
				return nil, fmt.Errorf("raw diff: malformed header %q", truncate(h))
			}
			pairs = append(pairs, RawPair{Header: h})
			b = b[i+1:]
			continue
		}
		if len(pairs) == 0 {
			return nil, errors.New("raw diff: entry before header")
		}
		i := bytes.IndexByte(b, 0)
		if i < 0 {
			return nil, errors.New("raw diff: unterminated entry")
		}
		e, err := parseRawMeta(string(b[1:i]))
		if err != nil {
			return nil, err
		}
		b = b[i+1:]
		j := bytes.IndexByte(b, 0)
		if j < 0 {
			return nil, errors.New("raw diff: unterminated path")
		}
		e.Path = string(b[:j])
		if e.Path == "" {
			return nil, errors.New("raw diff: empty path")
		}
		b = b[j+1:]
		p := &pairs[len(pairs)-1]
		p.Entries = append(p.Entries, e)
	}
	return pairs, nil
}

func validHeader(h string) bool {
	f := strings.Split(h, " ")
	if len(f) != 2 {
		return false
	}
	for _, x := range f {
		if !IsOID(x) {
			return false
		}
	}
	return true
}

// IsOID reports whether s is a full lowercase hex SHA-1 or SHA-256 object id.
func IsOID(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

func parseRawMeta(s string) (RawEntry, error) {
	var e RawEntry
	f := strings.Split(s, " ")
	if len(f) != 5 {
		return e, fmt.Errorf("raw diff: malformed entry %q", truncate(s))
	}
	for i, m := range f[:2] {
		if len(m) != 6 {
			return e, fmt.Errorf("raw diff: malformed mode %q", truncate(m))
		}
		v, err := strconv.ParseUint(m, 8, 32)
		if err != nil || !validMode(uint32(v)) {
			return e, fmt.Errorf("raw diff: malformed mode %q", truncate(m))
		}
		if i == 0 {
			e.OldMode = uint32(v)
		} else {
			e.NewMode = uint32(v)
		}
	}
	if !IsOID(f[2]) || !IsOID(f[3]) || len(f[2]) != len(f[3]) {
		return e, fmt.Errorf("raw diff: malformed object ids in %q", truncate(s))
	}
	e.OldOID, e.NewOID = f[2], f[3]
	if len(f[4]) != 1 {
		return e, fmt.Errorf("raw diff: unsupported status %q", truncate(f[4]))
	}
	e.Status = Status(f[4][0])
	switch e.Status {
	case Added:
		if e.OldMode != ModeNone || e.NewMode == ModeNone {
			return e, fmt.Errorf("raw diff: inconsistent added entry %q", truncate(s))
		}
	case Deleted:
		if e.OldMode == ModeNone || e.NewMode != ModeNone {
			return e, fmt.Errorf("raw diff: inconsistent deleted entry %q", truncate(s))
		}
	case Modified, TypeChanged:
		if e.OldMode == ModeNone || e.NewMode == ModeNone {
			return e, fmt.Errorf("raw diff: inconsistent modified entry %q", truncate(s))
		}
	default:
		return e, fmt.Errorf("raw diff: unsupported status %q", truncate(f[4]))
	}
	return e, nil
}

func validMode(m uint32) bool {
	switch m {
	case ModeNone, ModeFile, ModeExec, ModeSymlink, ModeGitlink, ModeTree:
		return true
	}
	return false
}

// Ref is one record of "for-each-ref" with RefFormat.
type Ref struct {
	Name      string
	Commit    string
	Tree      string
	Committed int64 // committer date, Unix seconds
	Body      string
}

// RefFormat is the for-each-ref format ParseRefs reads: NUL-separated
// fields; for-each-ref ends every record with a newline.
const RefFormat = "%(refname)%00%(objectname)%00%(tree)%00%(committerdate:unix)%00%(contents:body)%00"

// ParseRefs parses for-each-ref output produced with RefFormat.
func ParseRefs(b []byte) ([]Ref, error) {
	if len(b) == 0 {
		return nil, nil
	}
	if !bytes.HasSuffix(b, []byte{0, '\n'}) {
		return nil, errors.New("for-each-ref: output is not terminated")
	}
	fields := strings.Split(string(b[:len(b)-2]), "\x00")
	if len(fields)%5 != 0 {
		return nil, fmt.Errorf("for-each-ref: %d fields is not a multiple of 5", len(fields))
	}
	refs := make([]Ref, 0, len(fields)/5)
	for i := 0; i < len(fields); i += 5 {
		name := fields[i]
		if i > 0 {
			var ok bool
			if name, ok = strings.CutPrefix(name, "\n"); !ok {
				return nil, fmt.Errorf("for-each-ref: record %d does not start a line", i/5)
			}
		}
		if name == "" || strings.ContainsAny(name, "\n\x00 ") || !strings.HasPrefix(name, "refs/") {
			return nil, fmt.Errorf("for-each-ref: malformed ref name %q", truncate(name))
		}
		r := Ref{Name: name, Commit: fields[i+1], Tree: fields[i+2], Body: fields[i+4]}
		if !IsOID(r.Commit) || !IsOID(r.Tree) {
			return nil, fmt.Errorf("for-each-ref: %s: malformed object id", name)
		}
		t, err := strconv.ParseInt(fields[i+3], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("for-each-ref: %s: malformed committer date %q", name, truncate(fields[i+3]))
		}
		r.Committed = t
		refs = append(refs, r)
	}
	return refs, nil
}

// StatusEntry is one record of "git status --porcelain=v2 -z" for an
// ordinary tracked entry ('1'), an untracked path ('?') or an ignored one
// ('!').
type StatusEntry struct {
	Kind byte // '1', '?' or '!'
	// X and Y are the HEAD-to-index and index-to-work-tree states of a
	// '1' record ('.', 'M', 'T', 'A' or 'D'); 0 for '?' and '!'.
	X, Y byte
	Path string // as git prints it with -z: verbatim, directories end in "/"
	// IndexMode and IndexOID are the index's entry of a '1' record
	// (ModeNone and the zero id when the index does not hold the path).
	IndexMode uint32
	IndexOID  string
}

// ParseStatusV2 parses the output of "git status --porcelain=v2 -z
// --no-renames" without --branch or --show-stash. Renamed, copied and
// unmerged records, headers and any other shape fail closed: the
// private index that is scanned never holds them.
func ParseStatusV2(b []byte) ([]StatusEntry, error) {
	if len(b) == 0 {
		return nil, nil
	}
	if b[len(b)-1] != 0 {
		return nil, errors.New("status: output is not NUL-terminated")
	}
	var out []StatusEntry
	for len(b) > 0 {
		i := bytes.IndexByte(b, 0)
		rec := b[:i]
		b = b[i+1:]
		if len(rec) < 3 || rec[1] != ' ' {
			return nil, fmt.Errorf("status: malformed record %q", truncate(string(rec)))
		}
		switch rec[0] {
		case '?', '!':
			p := string(rec[2:])
			if !validStatusPath(p) {
				return nil, fmt.Errorf("status: malformed path %q", truncate(p))
			}
			out = append(out, StatusEntry{Kind: rec[0], Path: p})
		case '1':
			e, err := parseStatusOrdinary(rec)
			if err != nil {
				return nil, err
			}
			out = append(out, e)
		default:
			return nil, fmt.Errorf("status: unsupported record %q", truncate(string(rec)))
		}
	}
	return out, nil
}

// parseStatusOrdinary parses "1 XY sub mH mI mW hH hI path".
func parseStatusOrdinary(rec []byte) (StatusEntry, error) {
	var f [8][]byte
	rest := rec
	for i := range f {
		j := bytes.IndexByte(rest, ' ')
		if j < 0 {
			return StatusEntry{}, fmt.Errorf("status: malformed record %q", truncate(string(rec)))
		}
		f[i], rest = rest[:j], rest[j+1:]
	}
	if len(f[1]) != 2 {
		return StatusEntry{}, fmt.Errorf("status: malformed record %q", truncate(string(rec)))
	}
	e := StatusEntry{Kind: '1', X: f[1][0], Y: f[1][1]}
	if !strings.ContainsRune(".MTAD", rune(e.X)) || !strings.ContainsRune(".MTD", rune(e.Y)) || e.X == '.' && e.Y == '.' {
		return StatusEntry{}, fmt.Errorf("status: unsupported state %q", truncate(string(f[1])))
	}
	if len(f[2]) != 4 || f[2][0] != 'N' && f[2][0] != 'S' {
		return StatusEntry{}, fmt.Errorf("status: malformed submodule field %q", truncate(string(f[2])))
	}
	for i, m := range f[3:6] {
		v, ok := parseMode(m)
		if !ok {
			return StatusEntry{}, fmt.Errorf("status: malformed mode %q", truncate(string(m)))
		}
		if i == 1 {
			e.IndexMode = v
		}
	}
	if !isOIDBytes(f[6]) || !isOIDBytes(f[7]) || len(f[6]) != len(f[7]) {
		return StatusEntry{}, fmt.Errorf("status: malformed object ids in %q", truncate(string(rec)))
	}
	e.IndexOID = string(f[7])
	e.Path = string(rest)
	if !validStatusPath(e.Path) || strings.HasSuffix(e.Path, "/") {
		return StatusEntry{}, fmt.Errorf("status: malformed path %q", truncate(e.Path))
	}
	return e, nil
}

// parseMode parses six octal digits naming a valid mode.
func parseMode(m []byte) (uint32, bool) {
	if len(m) != 6 {
		return 0, false
	}
	var v uint32
	for _, ch := range m {
		if ch < '0' || ch > '7' {
			return 0, false
		}
		v = v<<3 | uint32(ch-'0')
	}
	return v, validMode(v)
}

func isOIDBytes(b []byte) bool {
	if len(b) != 40 && len(b) != 64 {
		return false
	}
	for _, c := range b {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

func validStatusPath(p string) bool {
	return p != "" && p != "/" && !strings.HasPrefix(p, "/")
}
