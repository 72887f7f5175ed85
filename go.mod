module github.com/reins-go/reins

go 1.26.0

require (
	github.com/bmatcuk/doublestar/v4 v4.10.4
	github.com/google/uuid v1.6.0
	github.com/landlock-lsm/go-landlock v0.11.0
	github.com/santhosh-tekuri/jsonschema/v5 v5.3.1
	github.com/stretchr/testify v1.12.1
	go.yaml.in/yaml/v3 v3.0.5
	golang.org/x/net v0.62.0
	golang.org/x/sync v0.24.0
	golang.org/x/sys v0.49.0
	mvdan.cc/sh/v3 v3.14.1
)

require kernel.org/pub/linux/libs/security/libcap/psx v1.2.77 // indirect
