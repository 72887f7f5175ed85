package shell

import (
	"path"
	"strings"

	"github.com/reins-go/reins/risk"
)

// Handlers of the programs that create, change or destroy files. Their options are in
// filetables.go; each handler says what its operands are.

// parsed parses the arguments by sp and records the options' effects.
func (c *call) parsed(sp *spec) opts {
	o, _ := sp.parse(c.args)
	c.applyOpts(&o)
	return o
}

// writes is a program that creates or changes every operand (touch, mkdir, tee).
func writes(sp *spec) handler {
	return func(c *call) {
		c.risk(risk.Mutating)
		o := c.parsed(sp)
		c.writeAll(o.pos)
	}
}

// destroys is a program that destroys every operand (rm, rmdir, shred, truncate).
func destroys(sp *spec) handler {
	return func(c *call) {
		c.risk(risk.Destructive)
		o := c.parsed(sp)
		if sp == rmSpec && o.has("-r") {
			c.note("recursive delete")
		}
		c.writeAll(o.pos)
	}
}

// copier is cp, mv and install: sources are read (mv removes them: a write), the destination is
// written (the last operand, or -t DIR).
func copier(sp *spec, move bool) handler {
	return func(c *call) {
		c.risk(risk.Mutating)
		o := c.parsed(sp)
		srcs := o.pos
		if c.name == "install" && o.has("-d") {
			c.writeAll(srcs)
			return
		}
		if _, ok := o.value("-t"); !ok && len(srcs) > 0 {
			c.write(srcs[len(srcs)-1])
			srcs = srcs[:len(srcs)-1]
		}
		// cp -l makes hard links instead of copies: another name of each source, so writing
		// through it writes the source (issue 23).
		if move || c.name == "cp" && o.has("-l") {
			c.writeAll(srcs)
		} else {
			c.readAll(srcs)
		}
	}
}

// link is ln: the link is written (the last operand, -t DIR, or the working directory for a
// single operand). A symbolic link to a file is a way to reach it: its target is checked like a
// read. A hard link (without -s) is another name of the same file: writing through it writes
// the source, so the source is checked like a write (issue 23).
func link(c *call) {
	c.risk(risk.Mutating)
	o := c.parsed(lnSpec)
	source := c.read
	if !o.has("-s") {
		source = c.write
	}
	if _, ok := o.value("-t"); ok {
		for _, a := range o.pos {
			source(a)
		}
		return
	}
	switch len(o.pos) {
	case 0:
	case 1:
		source(o.pos[0])
		c.cwd(true)
	default:
		for _, a := range o.pos[:len(o.pos)-1] {
			source(a)
		}
		c.write(o.pos[len(o.pos)-1])
	}
}

// modeChanger is chmod, chown, chgrp, chattr and setfacl: the mode, owner or attributes come
// first (unless --reference or an option gave them), the rest are changed; recursively, it is
// destructive.
func modeChanger(sp *spec) handler {
	return func(c *call) {
		c.risk(risk.Mutating)
		o := c.parsed(sp)
		pos := o.pos
		switch c.name {
		case "setfacl":
			// The ACL is an option's value; every operand is changed.
		case "chattr":
			// Modes are "+i", "=i" and the "-i" options.
			for len(pos) > 0 && pos[0].lit && (strings.HasPrefix(pos[0].val, "+") || strings.HasPrefix(pos[0].val, "=")) {
				pos = pos[1:]
			}
		default:
			_, ref := o.value("--reference")
			if !ref && !o.has("-r") && len(pos) > 0 { // "-r" stands for every mode word ("-x", "-rw")
				pos = pos[1:]
			}
		}
		if o.has("-R") {
			c.risk(risk.Destructive)
			c.note("recursive " + c.name)
		}
		c.writeAll(pos)
	}
}

// wholeDisk is a program that formats, partitions or wipes what it is given: every word that is
// not an option is a target, and its options are not analysed.
func wholeDisk(c *call) {
	c.risk(risk.Destructive)
	c.severity(risk.High)
	for _, a := range c.args {
		if a.lit && strings.HasPrefix(a.val, "-") {
			c.opaque(c.name + " options are not analysed")
			continue
		}
		c.write(a)
	}
}

// editor is an interactive editor: it can write any file and run commands.
func editor(c *call) {
	c.risk(risk.Mutating, risk.Exec)
	c.opaque(c.name + " is interactive: it can write any file and run commands")
	for _, a := range c.args {
		if !a.lit || !strings.HasPrefix(a.val, "-") && !strings.HasPrefix(a.val, "+") {
			c.write(a)
		}
	}
}

// A compressor's table, the file suffix it adds, and whether its name alone means decompressing
// or writing to standard output.
type compressorKind struct {
	spec   *spec
	suffix string
	decomp bool // gunzip, unxz ...
	stdout bool // zcat, xzcat ...
}

var compressors = map[string]compressorKind{
	"gzip": {gzipSpec, ".gz", false, false}, "gunzip": {gzipSpec, ".gz", true, false}, "zcat": {gzipSpec, ".gz", true, true},
	"bzip2": {bzip2Spec, ".bz2", false, false}, "bunzip2": {bzip2Spec, ".bz2", true, false}, "bzcat": {bzip2Spec, ".bz2", true, true},
	"xz": {xzSpec, ".xz", false, false}, "unxz": {xzSpec, ".xz", true, false}, "xzcat": {xzSpec, ".xz", true, true},
	"lzma": {xzSpec, ".lzma", false, false}, "unlzma": {xzSpec, ".lzma", true, false}, "lzcat": {xzSpec, ".lzma", true, true},
	"zstd": {zstdSpec, ".zst", false, false}, "unzstd": {zstdSpec, ".zst", true, false}, "zstdcat": {zstdSpec, ".zst", true, true},
	"lz4": {lz4Spec, ".lz4", false, false}, "unlz4": {lz4Spec, ".lz4", true, false}, "lz4cat": {lz4Spec, ".lz4", true, true},
	"compress": {compressSpec, ".Z", false, false}, "uncompress": {compressSpec, ".Z", true, false},
}

// compressor handles gzip and its kind: each operand is read and replaced by the file with the
// suffix added (compressing) or removed (decompressing), unless the output goes to standard
// output or the mode only tests or lists. lz4 writes a second operand; zstd writes -o, an output
// directory, or a dictionary.
func compressor(c *call) {
	k := compressors[c.name]
	c.risk(risk.ReadOnly)
	o := c.parsed(k.spec)
	// -d and -z (where the program has it) choose the mode, the last one given winning; the
	// analysis claims the outputs of every mode the words allow.
	decomp := k.decomp || o.has("-d")
	comp := !k.decomp && !o.has("-d") || o.has("-z")
	// Testing and listing write nothing, unless a -d or -z given with them chooses another mode
	// (bzip2, xz and zstd take the last mode given: "bunzip2 -t -d" decompresses).
	quiet := o.has("-t", "-l", "--list") && !o.has("-d", "-z")
	if k.stdout || o.has("-c") || quiet {
		c.readAll(o.pos)
		if o.has("--rm") {
			// lz4 --rm removes its operands even when it writes to standard output.
			c.risk(risk.Mutating)
			c.writeAll(o.pos)
		}
		return
	}
	c.risk(risk.Mutating)
	if c.name == "zstd" && o.has("--train", "--train-cover") {
		c.readAll(o.pos)
		if _, ok := o.value("-o"); !ok {
			c.write(arg{val: "dictionary", lit: true})
		}
		return
	}
	if k.spec == lz4Spec && !o.has("-m", "-r") && len(o.pos) == 2 {
		c.read(o.pos[0])
		c.write(o.pos[1])
		return
	}
	if _, ok := o.value("-o"); ok {
		c.readAll(o.pos)
		return
	}
	if _, ok := o.value("--output-dir-flat", "--output-dir-mirror"); ok {
		c.readAll(o.pos)
		return
	}
	suffix := k.suffix
	if s, ok := o.value("-S"); ok {
		if !s.lit {
			c.opaque(c.name + " -S: a suffix the line does not spell out")
			return
		}
		suffix = s.val
	}
	if decomp && k.spec == gzipSpec && o.has("-N") {
		c.opaque(c.name + " -N restores the file name stored in the archive")
	}
	for _, p := range o.pos {
		// The operand is read and removed (unless -k), and its (de)compressed twin written (a
		// recursive run's file operand too: -r only adds what a directory holds).
		c.write(p)
		if !p.lit || p.glob {
			continue
		}
		if comp {
			c.write(arg{val: p.val + suffix, lit: true, word: p.word})
		}
		if !decomp {
			continue
		}
		out, ok := strings.CutSuffix(p.val, suffix)
		switch {
		case ok:
		case k.spec == gzipSpec && strings.HasSuffix(p.val, ".tgz"):
			out = strings.TrimSuffix(p.val, ".tgz") + ".tar"
		case k.spec == bzip2Spec:
			out = p.val + ".out" // bzip2 cannot guess the name: it writes NAME.out
		case k.spec == gzipSpec || k.spec == compressSpec:
			// gzip given NAME decompresses NAME.gz (or NAME with another of its suffixes)
			// into NAME and removes it.
			c.write(arg{val: p.val + suffix, lit: true, word: p.word})
			if k.spec == gzipSpec {
				for _, sfx := range []string{".gz", ".z", "-gz", "-z", "_z", ".tgz", ".taz"} {
					if sfx != suffix {
						c.write(arg{val: p.val + sfx, lit: true, word: p.word})
					}
				}
			}
			continue
		default:
			continue // no known suffix: the program refuses the file
		}
		c.write(arg{val: out, lit: true, word: p.word})
	}
}

// tar reads or writes its archive (-f) by its mode; members are read from, or extracted to, the
// working directory or -C.
func tar(c *call) {
	c.risk(risk.ReadOnly)
	o := c.parsed(tarSpec)
	archive, hasArchive := o.value("-f")
	if hasArchive && archive.lit && !o.has("--force-local") {
		if h := remoteHost(archive.val); h != "" {
			// "host:file" is a remote archive, reached through rsh or ssh.
			c.net(h)
			c.risk(risk.Exec)
			c.opaque("tar reaches a remote archive through a remote shell")
		}
	}
	for _, v := range o.values("-N", "--mtime") {
		if v.lit && (strings.HasPrefix(v.val, "/") || strings.HasPrefix(v.val, ".")) {
			c.read(v) // a file whose time is the date
		}
	}
	dirs := o.values("-C")
	if len(dirs) > 1 {
		c.opaque("tar with several -C: the analysis does not follow which member goes where")
	}
	var dir arg
	hasDir := len(dirs) > 0
	if hasDir {
		dir = dirs[len(dirs)-1]
	}
	switch {
	case o.has("-x", "-d"):
		if hasArchive {
			c.read(archive)
		}
		if o.has("-d") && !o.has("-x") {
			c.readUnder(dir, hasDir, o.pos)
			return
		}
		if o.has("-O") {
			return
		}
		c.risk(risk.Mutating)
		if hasDir {
			c.write(dir)
		} else {
			c.cwd(true)
		}
		if top, ok := o.value("--one-top-level"); ok {
			c.writeUnder(dir, hasDir, []arg{top})
		}
		if o.has("-P") {
			c.opaque("tar -P extracts members to the absolute paths the archive names")
		}
	case o.has("-c", "-r", "-u", "-A", "--delete"):
		c.risk(risk.Mutating)
		if hasArchive {
			c.write(archive)
			if !o.has("-c") {
				c.read(archive)
			}
		} else if o.has("--delete", "-r", "-u", "-A") {
			c.opaque("tar changes an archive the line does not name")
		}
		if o.has("--delete") {
			return // the operands are members
		}
		if o.has("-A") {
			c.readAll(o.pos) // other archives
			return
		}
		c.readUnder(dir, hasDir, o.pos)
		if o.has("--remove-files") {
			c.risk(risk.Destructive)
			c.writeUnder(dir, hasDir, o.pos)
		}
	case o.has("-t", "--test-label"):
		if hasArchive {
			c.read(archive)
		}
	default:
		c.risk(risk.Mutating)
		c.opaque("tar without a known mode")
		if hasArchive {
			c.read(archive)
		}
		c.cwd(true)
	}
}

// readUnder and writeUnder record operands relative to a directory an option named (tar -C).
func (c *call) readUnder(dir arg, hasDir bool, ops []arg)  { c.under(dir, hasDir, ops, false) }
func (c *call) writeUnder(dir arg, hasDir bool, ops []arg) { c.under(dir, hasDir, ops, true) }

func (c *call) under(dir arg, hasDir bool, ops []arg, write bool) {
	if !hasDir {
		for _, p := range ops {
			c.path(p, write)
		}
		return
	}
	sub := c.sc.clone()
	cd(sub, dir.val, dir.lit, c.w.opts.Home)
	for _, p := range ops {
		if !p.lit {
			c.opaque("a path argument is not literal")
			continue
		}
		addPath(c.cmd, sub, p.val, p.glob, write)
	}
}

// unzip reads the archive (its first operand) and, unless it only lists, tests or prints,
// extracts into -d or the working directory.
func unzip(c *call) {
	c.risk(risk.ReadOnly)
	o := c.parsed(unzipSpec)
	if len(o.pos) > 0 {
		c.read(o.pos[0])
	}
	if o.has("-l", "-t", "-v", "-Z", "-p", "-c", "-z") {
		return
	}
	c.risk(risk.Mutating)
	if d, ok := o.value("-d"); ok {
		c.write(d)
	} else {
		c.cwd(true)
	}
	if o.has("-:") {
		c.opaque("unzip -: extracts members to the paths the archive names, \"../\" included")
	}
}

// zip writes the archive (its first operand, read too when it exists) from the files it names;
// -m removes them, -d deletes members.
func zip(c *call) {
	c.risk(risk.Mutating)
	o := c.parsed(zipSpec)
	if len(o.pos) == 0 {
		c.opaque("zip without an archive operand")
		return
	}
	c.write(o.pos[0])
	c.read(o.pos[0])
	if o.has("-d") {
		return // the operands are members
	}
	files := o.pos[1:]
	if o.has("-x") {
		files = nil // -x and -i lists are patterns; the files before them are not told apart
		c.opaque("zip -x or -i: the files added are not told apart from the patterns")
	}
	c.readAll(files)
	if o.has("-m") {
		c.risk(risk.Destructive)
		c.writeAll(files)
	}
	if o.has("-@") {
		c.opaque("zip -@ adds the files its input names")
	}
}

// sevenZip is 7z and rar: a command letter, the archive, then switches of their own syntax,
// which the analysis does not follow.
func sevenZip(c *call) {
	c.risk(risk.Mutating)
	c.opaque(c.name + " switches are not analysed: they name output directories, list files and programs")
	for _, a := range c.args {
		if a.lit && strings.HasPrefix(a.val, "-o") && len(a.val) > 2 {
			c.write(arg{val: a.val[2:], lit: true, word: a.word})
			continue
		}
		if !a.lit || !strings.HasPrefix(a.val, "-") {
			c.write(a)
		}
	}
}

// splitter is split and csplit: the input is read, the pieces written under a prefix (split's
// second operand, csplit's -f; "x" and "xx" by default).
func splitter(c *call) {
	c.risk(risk.Mutating)
	prefix := arg{val: "x", lit: true}
	if c.name == "csplit" {
		o := c.parsed(csplitSpec)
		if len(o.pos) > 0 {
			c.read(o.pos[0])
		}
		prefix.val = "xx"
		if p, ok := o.value("-f"); ok {
			prefix = p
		}
	} else {
		o := c.parsed(splitSpec)
		if len(o.pos) > 0 {
			c.read(o.pos[0])
		}
		if len(o.pos) > 1 {
			prefix = o.pos[1]
		}
	}
	if !prefix.lit {
		c.opaque(c.name + ": a prefix the line does not spell out")
		return
	}
	c.write(arg{val: prefix.val + "*", lit: true, glob: true, word: prefix.word})
}

// patchCmd changes the files a patch names, in the working directory or -d: [ORIGFILE
// [PATCHFILE]] names the file patched and the patch read; -o writes the result elsewhere; -B
// writes backups under a prefix.
func patchCmd(c *call) {
	c.risk(risk.Mutating)
	o := c.parsed(patchSpec)
	dir, hasDir := o.value("-d")
	if len(o.pos) > 1 {
		c.readUnder(dir, hasDir, o.pos[1:2])
	}
	if len(o.pos) > 2 {
		c.opaque("patch with more than two operands")
	}
	if p, ok := o.value("-B"); ok {
		if p.lit {
			c.writeUnder(dir, hasDir, []arg{{val: p.val + "*", lit: true, glob: true, word: p.word}})
		} else {
			c.opaque("patch -B: a prefix the line does not spell out")
		}
	}
	if _, ok := o.value("-o"); ok {
		c.readUnder(dir, hasDir, o.pos[:min(1, len(o.pos))])
		return
	}
	if len(o.pos) > 0 {
		c.writeUnder(dir, hasDir, o.pos[:1])
		return
	}
	if hasDir {
		c.write(dir)
	} else {
		c.cwd(true)
	}
}

// mktemp creates a file or directory under -p, --tmpdir, the template's directory, or the
// temporary directory.
func mktemp(c *call) {
	o := c.parsed(mktempSpec)
	if o.has("-u") {
		c.risk(risk.ReadOnly)
		return
	}
	c.risk(risk.Mutating)
	dir := c.w.opts.TempDir
	if dir == "" {
		dir = "/tmp"
	}
	if d, ok := o.value("-p", "--tmpdir"); ok {
		c.write(d)
		return
	}
	if len(o.pos) > 0 && o.pos[0].lit && strings.Contains(o.pos[0].val, "/") && !o.has("-t") && !o.has("--tmpdir") {
		c.write(arg{val: path.Dir(o.pos[0].val), lit: true})
		return
	}
	c.write(arg{val: dir, lit: true})
}

// dd reads if= and writes of=; its other operands are settings.
func dd(c *call) {
	c.risk(risk.ReadOnly)
	for _, a := range c.args {
		if !a.lit {
			c.opaque("a dd operand is not literal")
			continue
		}
		k, v, _ := strings.Cut(a.val, "=")
		switch k {
		case "if":
			c.read(arg{val: v, lit: true})
		case "of":
			c.risk(risk.Destructive)
			c.write(arg{val: v, lit: true})
		case "bs", "cbs", "conv", "count", "ibs", "iflag", "obs", "oflag", "seek", "oseek", "skip", "iseek", "status":
		case "--help", "--version":
		default:
			c.opaque("dd operand " + a.val + " is not known")
		}
	}
}

func registerWriters() {
	register(writes(touchSpec), "touch")
	register(writes(mkdirSpec), "mkdir")
	register(writes(teeSpec), "tee")
	register(copier(cpSpec, false), "cp")
	register(copier(mvSpec, true), "mv")
	register(copier(installSpec, false), "install")
	programs["ln"] = link
	register(destroys(truncateSpec), "truncate")
	register(destroys(shredSpec), "shred")
	register(destroys(rmSpec), "rm", "srm")
	register(destroys(rmdirSpec), "rmdir")
	register(destroys(plainSpec), "unlink")
	programs["dd"] = dd
	register(modeChanger(chmodSpec), "chmod")
	register(modeChanger(chownSpec), "chown", "chgrp")
	register(modeChanger(chattrSpec), "chattr")
	register(modeChanger(setfaclSpec), "setfacl")
	register(wholeDisk, "mkfs", "mkfs.ext2", "mkfs.ext3", "mkfs.ext4", "mkfs.xfs", "mkfs.btrfs", "mkfs.vfat", "mkfs.fat", "mkfs.ntfs",
		"mke2fs", "mkswap", "wipefs", "fdisk", "sfdisk", "cfdisk", "parted", "gdisk", "sgdisk", "blkdiscard", "badblocks")
	programs["sed"] = sed
	programs["gsed"] = sed
	register(awk, "awk", "gawk", "mawk", "nawk")
	for name := range compressors {
		programs[name] = compressor
	}
	programs["tar"] = tar
	programs["bsdtar"] = tar
	programs["unzip"] = unzip
	programs["zip"] = zip
	register(sevenZip, "7z", "7za", "7zr", "rar")
	register(splitter, "split", "csplit")
	programs["patch"] = patchCmd
	programs["mktemp"] = mktemp
	register(editor, "vi", "vim", "nvim", "nano", "emacs", "pico", "ed", "ex", "code", "subl", "joe", "micro", "hx", "kak")
}
