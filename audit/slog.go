package audit

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/reins-go/reins/policy"
)

// SlogOptions configure a [Slog] sink. A nil *SlogOptions, and every zero field, means the
// documented default.
type SlogOptions struct {
	// Message is the log message of every record. Default: "audit".
	Message string
	// Level is the level of every record. Default: slog.LevelInfo.
	Level slog.Leveler
	// Redact rewrites each record before it is logged. Default: RedactSecrets.
	Redact Redactor
	// KeepSecrets turns redaction off (Redact is then ignored). Default: false.
	KeepSecrets bool
}

// Slog is a [Sink] that hands each record to a [slog.Handler] as one log record whose
// attributes carry the record's fields under their JSON names, so any slog handler (JSON to a
// collector, OpenTelemetry, a test recorder) can ship the audit trail. Empty optional fields
// are left out as in the JSON encoding; times, booleans and the seq are typed attributes,
// obligations, risk_levels and targets are []string, the rest strings.
//
// Write calls the handler's Handle directly and returns its error, so a handler that fails
// makes the gate deny; a handler that is not enabled at the sink's level is an error too,
// since a record it drops would be lost silently.
type Slog struct {
	h        slog.Handler
	msg      string
	level    slog.Leveler
	redact   Redactor
	noRedact bool
}

// NewSlog returns a Slog sink writing to h.
func NewSlog(h slog.Handler, opts *SlogOptions) *Slog {
	s := &Slog{h: h, msg: "audit", level: slog.LevelInfo}
	if opts != nil {
		if opts.Message != "" {
			s.msg = opts.Message
		}
		if opts.Level != nil {
			s.level = opts.Level
		}
		s.redact, s.noRedact = opts.Redact, opts.KeepSecrets
	}
	return s
}

// Write logs r.
func (s *Slog) Write(ctx context.Context, r Record) error {
	if s.h == nil {
		return errors.New("audit: slog sink has no handler")
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("audit: slog: %w", err)
	}
	switch {
	case s.noRedact:
	case s.redact == nil:
		RedactSecrets(&r)
	default:
		r = redactCopy(s.redact, r)
	}
	level := s.level.Level()
	if !s.h.Enabled(ctx, level) {
		return fmt.Errorf("audit: slog handler is not enabled at level %v, so the record would be dropped", level)
	}
	rec := slog.NewRecord(r.Time, level, s.msg, 0)
	rec.AddAttrs(Attrs(&r)...)
	if err := s.h.Handle(ctx, rec); err != nil {
		return fmt.Errorf("audit: slog handler: %w", err)
	}
	return nil
}

// Attrs returns r's fields as slog attributes under their JSON names (see [Slog]).
func Attrs(r *Record) []slog.Attr {
	a := make([]slog.Attr, 0, 24)
	a = append(a,
		slog.Time("timestamp", r.Time),
		slog.String("correlation_id", r.CorrelationID.String()),
		slog.String("active_profile", r.Profile),
		slog.String("operation_type", r.Operation),
		slog.String("target", r.Target),
		slog.String("decision", r.Decision.String()),
		slog.String("rule_matched", r.RuleMatched),
		slog.Bool("user_override", r.UserOverride),
		slog.String("kind", string(r.Kind)),
		slog.String("decision_id", r.DecisionID.String()),
		slog.String("layer", r.Layer.String()),
	)
	if r.DecidedBy != "" {
		a = append(a, slog.String("decided_by", string(r.DecidedBy)))
	}
	a = append(a,
		slog.String("reason", r.Reason),
		slog.Any("obligations", obligationList(r.Obligations)),
		slog.Any("risk_levels", riskList(r)),
	)
	opt := func(key, v string) {
		if v != "" {
			a = append(a, slog.String(key, v))
		}
	}
	opt("tool", r.Tool)
	opt("command", r.Command)
	opt("host", r.Host)
	if len(r.Targets) > 0 {
		a = append(a, slog.Any("targets", append([]string(nil), r.Targets...)))
	}
	opt("profile_hash", r.ProfileHash)
	if r.BundleVersion != 0 {
		a = append(a, slog.Uint64("bundle_version", r.BundleVersion))
	}
	opt("requested_profile", r.RequestedProfile)
	opt("requested_profile_hash", r.RequestedProfileHash)
	opt("outcome", string(r.Outcome))
	opt("checkpoint_id", r.CheckpointID)
	opt("error", r.Error)
	opt("approver", r.Approver)
	opt("approval_scope", r.ApprovalScope)
	opt("note", r.Note)
	opt("input", r.Input)
	if r.Seq != 0 {
		a = append(a, slog.Uint64("seq", r.Seq))
	}
	if !r.Prev.IsZero() {
		a = append(a, slog.String("prev", r.Prev.String()))
	}
	if !r.Hash.IsZero() {
		a = append(a, slog.String("hash", r.Hash.String()))
	}
	return a
}

func obligationList(o policy.Obligations) []string {
	names := []string{}
	for _, n := range obligationNames {
		if o&n.o != 0 {
			names = append(names, n.quoted[1:len(n.quoted)-1])
		}
	}
	return names
}

func riskList(r *Record) []string {
	names := []string{}
	for l := range r.Risk.All() {
		names = append(names, l.String())
	}
	return names
}

var _ Sink = (*Slog)(nil)
