package shell

// Option tables of the package managers and build tools the analysis classifies by subcommand.
// Their commands are exec (they run the project's code or packages' install scripts); the
// tables still say which options write elsewhere, read files, run another program or name
// another registry, and an unknown option makes the command opaque.

// go(1) 1.22, "go help build" (the build flags every build, test, run, vet, install and list
// share) and "go help testflag".
const goBuildOpts = `
	-C =M
	-a
	-n
	-p =
	-race
	-msan
	-asan !X
	-cover
	-covermode =
	-coverpkg =
	-v
	-work
	-x
	-asmflags =
	-buildmode =
	-buildvcs =
	-compiler =
	-gccgoflags =X
	-gcflags =
	-installsuffix =
	-json
	-ldflags =M
	-linkshared
	-mod =
	-modcacherw
	-modfile =R
	-overlay =X
	-pgo =R
	-pkgdir =W
	-tags =
	-toolexec =X
	-trimpath
	-o =W`

var goSpecs = map[string]*spec{
	"build":   {man: "go help build", oneDash: true, opts: goBuildOpts},
	"install": {man: "go help install", oneDash: true, opts: goBuildOpts},
	"run":     {man: "go help run", oneDash: true, opts: goBuildOpts + "\n-exec =X"},
	"vet":     {man: "go help vet", oneDash: true, opts: goBuildOpts + "\n-vettool =X"},
	"test": {man: "go help test, go help testflag", oneDash: true, opts: goBuildOpts + `
	-c
	-exec =X
	-i
	-args !M
	-bench -benchtime -count -cpu -fuzz -fuzztime -fuzzminimizetime -list -parallel -run -shuffle -skip -timeout =
	-benchmem
	-failfast
	-fullpath
	-short
	-vet =
	-coverprofile -cpuprofile -memprofile -blockprofile -mutexprofile -trace -outputdir =W
	-memprofilerate -blockprofilerate -mutexprofilefraction =`},
	"list": {man: "go help list", oneDash: true, opts: goBuildOpts + `
	-f =
	-m
	-deps
	-test
	-e
	-find
	-reuse =R
	-u !N
	-versions !N
	-retracted !N
	-export !X
	-compiled !X`},
	"env": {man: "go help env", oneDash: true, opts: `
	-json
	-changed
	-u !M
	-w !M`},
	"version": {man: "go help version", oneDash: true, opts: `
	-m
	-v
	-json`},
	"doc": {man: "go help doc", oneDash: true, opts: `
	-all
	-c
	-cmd
	-short
	-src
	-u
	-http !N`},
	"fmt": {man: "go help fmt", oneDash: true, opts: `
	-n
	-x
	-mod =`},
	"generate": {man: "go help generate", oneDash: true, opts: goBuildOpts + `
	-run -skip =`},
	"clean": {man: "go help clean", oneDash: true, opts: goBuildOpts + `
	-i
	-r
	-cache
	-testcache
	-modcache
	-fuzzcache`},
	"get": {man: "go help get", oneDash: true, opts: goBuildOpts + `
	-t
	-u ?
	-tool`},
	"mod": {man: "go help mod", oneDash: true, opts: `
	-json
	-x
	-v
	-e
	-reuse =R
	-go -compat =
	-diff
	-fmt
	-print
	-module -require -droprequire -exclude -dropexclude -replace -dropreplace -retract -dropretract -godebug -dropgodebug -tool -droptool -toolchain =
	-modfile =R`},
	"work": {man: "go help work", oneDash: true, opts: `
	-json
	-print
	-fmt
	-go -toolchain -use -dropuse -replace -dropreplace -godebug -dropgodebug =
	-r`},
}

// npm(1) 10, "npm help config" (the options every npm command accepts), with the yarn and pnpm
// spellings agents use. --script-shell, --node-options and another user config run programs;
// --registry names a registry host to check.
const npmOpts = `
	-g --global !O
	--location =M
	--registry =N
	-C --prefix =W
	--workspace =
	--workspaces
	--include-workspace-root
	--if-present
	--ignore-scripts
	--foreground-scripts
	--script-shell --node-options =X
	--userconfig --globalconfig =X
	--cache =W
	-y --yes
	--no
	-f --force
	-D --save-dev --dev
	-P --save-prod
	-O --save-optional --optional
	--save-peer --peer
	-E --save-exact --exact
	-B --save-bundle
	--no-save
	--save
	--legacy-peer-deps
	--strict-peer-deps
	--prefer-offline --prefer-online --offline
	--dry-run
	--omit --include =
	--production --prod
	--package-lock-only
	--no-package-lock
	--frozen-lockfile --immutable --pure-lockfile --prefer-frozen-lockfile
	--audit --no-audit --fund --no-fund
	--json
	-p --parseable
	-l --long
	-a --all
	--depth =
	-s --silent
	-q --quiet
	--loglevel =
	--verbose
	--color =
	--no-color
	--progress --no-progress
	--install-links
	--install-strategy =
	--tag --access --otp --scope --before =
	--engine-strict
	--no-update-notifier
	--filter =
	-r --recursive
	--dir --cwd =W
	--stream
	--parallel
	--reporter =
	--non-interactive
	--check-files
	--shamefully-hoist
	-h --help`

var npmSpec = &spec{man: "npm-config(7)", abbrev: true, opts: npmOpts}
var pnpmSpec = &spec{man: "pnpm(1)", opts: npmOpts + `
	-w --workspace-root`}

// pip(1) 24, "pip help install" and the general options.
var pipSpec = &spec{man: "pip(1)", abbrev: true, opts: `
	-h --help
	--debug
	--isolated
	--require-virtualenv
	--python =X
	-v --verbose
	-V --version
	-q --quiet
	--log =W
	--no-input
	--keyring-provider =X
	--proxy =N
	--retries --timeout --exists-action --trusted-host =
	--cert --client-cert =R
	--cache-dir =W
	--no-cache-dir
	--disable-pip-version-check
	--no-color
	--no-python-version-warning
	--use-feature --use-deprecated =
	-r --requirement =R
	-c --constraint =R
	--no-deps
	--pre
	-e --editable =M
	--dry-run
	-t --target =W
	--platform --python-version --implementation --abi =
	--user !O
	--root --prefix --src =W
	-U --upgrade
	--upgrade-strategy =
	--force-reinstall
	-I --ignore-installed
	--ignore-requires-python
	--no-build-isolation
	--use-pep517 --no-use-pep517
	--check-build-dependencies
	--break-system-packages
	-C --config-settings =
	--global-option =X
	--compile --no-compile
	--no-warn-script-location
	--no-warn-conflicts
	--no-binary --only-binary =
	--prefer-binary
	--require-hashes
	--progress-bar --root-user-action =
	--report =W
	--no-clean
	-i --index-url --extra-index-url =N
	--no-index
	-f --find-links =M
	-o --outdated
	-u --uptodate
	-l --local
	--not-required
	--format --exclude =
	--include-editable --exclude-editable
	--path =R
	--all
	--files
	-y --yes
	-d --dest -w --wheel-dir =W`}

// cargo(1) 1.79, the options of cargo-build(1), cargo-test(1), cargo-install(1) and the global
// ones. --config and -Z set configuration that can run programs (runners, linkers).
var cargoSpec = &spec{man: "cargo(1)", opts: `
	-V --version
	--list
	--explain =
	-v --verbose
	-q --quiet
	--color =
	-C =M
	--locked
	--offline
	--frozen
	--config =X
	-Z =X
	-h --help
	-p --package =
	--workspace --all
	--exclude =
	--lib
	--bins
	--bin =
	--examples
	--example =
	--tests
	--test =
	--benches
	--bench =
	--all-targets
	-F --features =
	--all-features
	--no-default-features
	-j --jobs =
	--keep-going
	-r --release
	--profile --target =
	--target-dir --artifact-dir --out-dir =W
	--manifest-path --lockfile-path =R
	--ignore-rust-version
	--message-format =
	--unit-graph
	--timings ?
	--future-incompat-report
	--no-run
	--no-fail-fast
	--doc
	--open !X
	--document-private-items
	--no-deps
	--fix !M
	--allow-dirty --allow-staged --allow-no-vcs
	--force
	--index --git =N
	--registry =M
	--branch --tag --rev =
	--path =R
	--root =W
	--dry-run
	--no-track
	--debug
	--check`}
