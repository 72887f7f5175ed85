package audit

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"iter"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/reins-go/reins/policy"
)

// What reading or verifying a log can find wrong with a line. Every error [Scan] and [Verify]
// report for a line is a [*LineError] wrapping one of these.
var (
	// ErrTorn: the last line of the log has no newline: a write was interrupted (a crash, a
	// full disk). It is never an acknowledged record, and not a sign of tampering on its own
	// (but see "Security model and limitations" in the package documentation).
	ErrTorn = errors.New("audit: torn last line (an interrupted write)")
	// ErrMalformed: the line is not a record in canonical form (edited by hand, truncated,
	// not JSON, longer than MaxLineSize, an unterminated line that is not the log's last).
	ErrMalformed = errors.New("audit: malformed record")
	// ErrAltered: the record's hash does not match its content: it was edited.
	ErrAltered = errors.New("audit: record altered")
	// ErrBrokenChain: the record does not follow the one before it (its prev is not that
	// record's hash, or its seq is not the next): a record was deleted, inserted or moved.
	ErrBrokenChain = errors.New("audit: hash chain broken")
)

// LineError locates a problem in a log: the file and the 1-based line number in that file.
type LineError struct {
	File string
	Line int
	Err  error
}

// Error implements error.
func (e *LineError) Error() string {
	return fmt.Sprintf("audit: %s:%d: %s", e.File, e.Line, strings.TrimPrefix(fmt.Sprint(e.Err), "audit: "))
}

// Unwrap returns the cause, one of ErrTorn, ErrMalformed, ErrAltered, ErrBrokenChain.
func (e *LineError) Unwrap() error { return e.Err }

// Files returns the files of the log whose active file is path, in chain order: the rotated
// files "<path>.<n>" by n, then path itself if it exists. A log with no file is an error
// matching fs.ErrNotExist.
func Files(path string) ([]string, error) {
	files, err := rotatedFiles(path)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(path); err == nil {
		files = append(files, path)
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("audit: %w", err)
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("audit: no log at %s: %w", path, os.ErrNotExist)
	}
	return files, nil
}

// rotatedFiles returns the rotated files of the log at path, oldest first.
func rotatedFiles(path string) ([]string, error) {
	dir := filepath.Dir(path)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("audit: listing the log's directory: %w", err)
	}
	type numbered struct {
		n    int
		name string
	}
	var found []numbered
	for _, e := range entries {
		name := filepath.Join(dir, e.Name())
		if n, ok := rotatedIndex(path, name); ok && e.Type().IsRegular() {
			found = append(found, numbered{n, name})
		}
	}
	slices.SortFunc(found, func(a, b numbered) int { return a.n - b.n })
	files := make([]string, len(found))
	for i, f := range found {
		files[i] = f.name
	}
	return files, nil
}

// rotatedIndex returns n if name is the rotated file "<path>.<n>".
func rotatedIndex(path, name string) (int, bool) {
	rest, ok := strings.CutPrefix(filepath.Base(name), filepath.Base(path)+".")
	if !ok || rest == "" || strings.Trim(rest, "0123456789") != "" {
		return 0, false
	}
	n, err := strconv.Atoi(rest)
	return n, err == nil
}

// lineReader reads the lines of one file, counting them and bounding their length.
type lineReader struct {
	r    *bufio.Reader
	line int
	buf  []byte
}

// next returns the next line without its newline. complete is false for bytes at the end of the
// file with no newline after them; io.EOF ends the file. A line longer than MaxLineSize is
// returned as nil with errTooLong (the reader skips past it).
func (lr *lineReader) next() (line []byte, complete bool, err error) {
	lr.buf = lr.buf[:0]
	tooLong := false
	for {
		chunk, err := lr.r.ReadSlice('\n')
		if !tooLong {
			lr.buf = append(lr.buf, chunk...)
			if len(lr.buf) > MaxLineSize+1 {
				tooLong, lr.buf = true, lr.buf[:0]
			}
		}
		switch {
		case err == nil:
			lr.line++
			if tooLong {
				return nil, true, errTooLong
			}
			return lr.buf[:len(lr.buf)-1], true, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF):
			if len(lr.buf) == 0 && !tooLong {
				return nil, false, io.EOF
			}
			lr.line++
			if tooLong {
				return nil, false, errTooLong
			}
			return lr.buf, false, nil
		default:
			return nil, false, err
		}
	}
}

var errTooLong = fmt.Errorf("%w: line longer than MaxLineSize", ErrMalformed)

// openLog opens the files of the log whose active file is path, as one consistent snapshot,
// without waiting for writers: it opens the active file first, then the rotated files. Rotated
// files never change, so the snapshot is every rotated file plus the active one, unless a writer
// rotated that very file meanwhile, in which case it is already among the rotated files and the
// snapshot simply ends there. Either way the files hold a contiguous run of the chain.
func openLog(path string) ([]*os.File, error) {
	for attempt := 0; ; attempt++ {
		active, err := os.Open(path)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("audit: %w", err)
		}
		names, err := rotatedFiles(path)
		if err != nil {
			if active != nil {
				active.Close()
			}
			return nil, err
		}
		files := make([]*os.File, 0, len(names)+1)
		complete := true
		for _, name := range names {
			f, err := os.Open(name)
			if err != nil {
				complete = false // removed between listing and opening: look again
				break
			}
			files = append(files, f)
		}
		if !complete {
			closeAll(files)
			if active != nil {
				active.Close()
			}
			if attempt == 10 {
				return nil, fmt.Errorf("audit: the files of %s kept disappearing while opening them", path)
			}
			continue
		}
		if active != nil {
			if rotatedAlready(active, files) {
				active.Close()
			} else {
				files = append(files, active)
			}
		}
		if len(files) == 0 {
			return nil, fmt.Errorf("audit: no log at %s: %w", path, os.ErrNotExist)
		}
		return files, nil
	}
}

// rotatedAlready reports whether f is the same file as one of files (it was rotated after it was
// opened).
func rotatedAlready(f *os.File, files []*os.File) bool {
	st, err := f.Stat()
	if err != nil {
		return false
	}
	for i := len(files) - 1; i >= 0; i-- {
		if rst, err := files[i].Stat(); err == nil && os.SameFile(st, rst) {
			return true
		}
	}
	return false
}

func closeAll(files []*os.File) {
	for _, f := range files {
		f.Close()
	}
}

// lines yields every line of the files in order with its position, and closes the files. A
// read error ends the sequence with it.
func lines(files []*os.File) iter.Seq2[position, error] {
	return func(yield func(position, error) bool) {
		defer closeAll(files)
		for i, f := range files {
			name := f.Name()
			lr := &lineReader{r: bufio.NewReaderSize(f, 64<<10)}
			for {
				line, complete, err := lr.next()
				if errors.Is(err, io.EOF) {
					break
				}
				p := position{file: name, line: lr.line, text: line, complete: complete, last: i == len(files)-1}
				if err != nil && !errors.Is(err, errTooLong) {
					yield(position{}, fmt.Errorf("audit: reading %s: %w", name, err))
					return
				}
				p.tooLong = err != nil
				if !yield(p, nil) {
					return
				}
			}
		}
	}
}

type position struct {
	file     string
	line     int
	text     []byte
	complete bool // the line ends with a newline
	last     bool // the line is in the log's last file
	tooLong  bool
}

func (p *position) errorf(sentinel error, format string, args ...any) *LineError {
	return &LineError{File: p.file, Line: p.line, Err: fmt.Errorf("%w: "+format, append([]any{sentinel}, args...)...)}
}

// check returns the line's problem as a LineError, if it is torn or too long.
func (p *position) check() *LineError {
	switch {
	case p.tooLong:
		return &LineError{File: p.file, Line: p.line, Err: errTooLong}
	case !p.complete && p.last:
		return &LineError{File: p.file, Line: p.line, Err: fmt.Errorf("%w: %d bytes", ErrTorn, len(p.text))}
	case !p.complete:
		return p.errorf(ErrMalformed, "a rotated file ends without a newline")
	}
	return nil
}

// Scan yields the records of the log whose active file is path (the rotated files first, see
// [Files]) that match filter (nil matches every record), in order. It reads the files that
// exist when it starts (a rotation meanwhile does not make it skip or repeat records). A line that is not a record
// yields a [*LineError] and the scan goes on; stop ranging to stop. Scan parses strictly (see
// [ParseJSON]) but does not check the hash chain; [Verify] does.
//
// The log may be appended to while Scan reads it; Scan sees the files as they are when it
// reaches them, so a write in progress can show as a torn last line.
func Scan(path string, filter *Filter) iter.Seq2[Record, error] {
	return func(yield func(Record, error) bool) {
		files, err := openLog(path)
		if err != nil {
			yield(Record{}, err)
			return
		}
		for p, err := range lines(files) {
			if err != nil {
				yield(Record{}, err)
				return
			}
			if lerr := p.check(); lerr != nil {
				if !yield(Record{}, lerr) {
					return
				}
				continue
			}
			r, err := ParseJSON(p.text)
			if err != nil {
				if !yield(Record{}, p.errorf(ErrMalformed, "%v", err)) {
					return
				}
				continue
			}
			if filter.Match(&r) && !yield(r, nil) {
				return
			}
		}
	}
}

// Filter selects records. Every field that is set must hold; within a list, any one entry
// suffices. The zero Filter (and a nil *Filter) matches every record.
type Filter struct {
	// Since and Until bound the record's time: Since <= Time < Until. Zero: unbounded.
	Since, Until time.Time
	// Kinds lists record kinds.
	Kinds []Kind
	// Decisions lists verdicts.
	Decisions []policy.Verdict
	// Tools lists tool names (exact).
	Tools []string
	// Profiles lists active profile names (exact).
	Profiles []string
	// CorrelationID selects one agent turn or run. Zero: any.
	CorrelationID uuid.UUID
}

// Match reports whether r passes the filter.
func (f *Filter) Match(r *Record) bool {
	if f == nil {
		return true
	}
	switch {
	case !f.Since.IsZero() && r.Time.Before(f.Since),
		!f.Until.IsZero() && !r.Time.Before(f.Until),
		len(f.Kinds) > 0 && !slices.Contains(f.Kinds, r.Kind),
		len(f.Decisions) > 0 && !slices.Contains(f.Decisions, r.Decision),
		len(f.Tools) > 0 && !slices.Contains(f.Tools, r.Tool),
		len(f.Profiles) > 0 && !slices.Contains(f.Profiles, r.Profile),
		f.CorrelationID != uuid.Nil && f.CorrelationID != r.CorrelationID:
		return false
	}
	return true
}

// Records applies the filter to a sequence of records, passing errors through.
func (f *Filter) Records(seq iter.Seq2[Record, error]) iter.Seq2[Record, error] {
	return func(yield func(Record, error) bool) {
		for r, err := range seq {
			if (err != nil || f.Match(&r)) && !yield(r, err) {
				return
			}
		}
	}
}

// VerifyResult is what [Verify] found.
type VerifyResult struct {
	// Files are the log's files, in chain order.
	Files []string
	// Records is how many records verified.
	Records int
	// Seq and Head are the sequence number and hash of the last record that verified. Compare
	// them with a head kept elsewhere (see [JSONL.Head]) to detect a log cut short.
	Seq  uint64
	Head Digest
	// Torn is set when the log ends with a torn line (ErrTorn): a write that a crash
	// interrupted, which the next OpenJSONL truncates. Everything before it verified.
	Torn *LineError
}

// Verify checks the whole hash chain of the log whose active file is path: every line is a
// record in canonical form, carries the hash of its content, and follows the record before it
// (its prev is that record's hash and its seq the next number; the first record has seq 1 and
// no prev), across rotated files. It returns the first broken record as a [*LineError]
// wrapping ErrMalformed, ErrAltered or ErrBrokenChain, with the file and line number. A torn
// last line is not an error: it is reported in VerifyResult.Torn.
//
// Where a record was deleted, moved or inserted with a correct hash, the first line that does
// not follow its predecessor is reported: the line after the gap, the moved line, or the
// line after the inserted one.
func Verify(path string) (VerifyResult, error) {
	return verify(path, nil)
}

// verify is Verify; check, when not nil, is called with each record that verified (and its
// position) and stops the verification with its error.
func verify(path string, check func(p *position, r *Record) error) (VerifyResult, error) {
	var res VerifyResult
	files, err := openLog(path)
	if err != nil {
		return res, err
	}
	for _, f := range files {
		res.Files = append(res.Files, f.Name())
	}
	var prevFile string
	var prevLine int
	for p, err := range lines(files) {
		if err != nil {
			return res, err
		}
		if lerr := p.check(); lerr != nil {
			if errors.Is(lerr, ErrTorn) {
				res.Torn = lerr
				continue // the last line: the loop ends here
			}
			return res, lerr
		}
		r, err := ParseJSON(p.text)
		if err != nil {
			return res, p.errorf(ErrMalformed, "%v", err)
		}
		if r.Hash.IsZero() || r.Seq == 0 {
			return res, p.errorf(ErrMalformed, "the record has no seq or hash: it is not part of a chain")
		}
		if err := verifyHash(p.text, &r); err != nil {
			return res, p.errorf(ErrAltered, "%v", err)
		}
		switch {
		case res.Records == 0 && (r.Seq != 1 || !r.Prev.IsZero()):
			return res, p.errorf(ErrBrokenChain, "the log's first record has seq %d and prev %q, not seq 1 and no prev: the log does not start at the beginning of its chain (a deleted first record or missing rotated files)", r.Seq, r.Prev.hexOrNone())
		case res.Records > 0 && r.Prev != res.Head:
			return res, p.errorf(ErrBrokenChain, "prev %s is not the hash of the record before it (%s:%d, seq %d, hash %s)", r.Prev.hexOrNone(), prevFile, prevLine, res.Seq, res.Head)
		case res.Records > 0 && r.Seq != res.Seq+1:
			return res, p.errorf(ErrBrokenChain, "seq %d does not follow seq %d of the record before it (%s:%d)", r.Seq, res.Seq, prevFile, prevLine)
		}
		if check != nil {
			if err := check(&p, &r); err != nil {
				return res, err
			}
		}
		res.Records++
		res.Seq, res.Head = r.Seq, r.Hash
		prevFile, prevLine = p.file, p.line
	}
	return res, nil
}

func (d Digest) hexOrNone() string {
	if d.IsZero() {
		return "none"
	}
	return d.String()
}
