package audit

// Exported for the black-box tests in package audit_test.
var (
	Sample       = sample
	RandomRecord = randomRecord
)
