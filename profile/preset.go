package profile

// Preset is a built-in profile as a value: profile.Dev, profile.Trusted. A Preset is immutable
// (it holds only the profile's name), so it can be a package-level variable without letting
// anyone change a built-in profile through it; [Preset.Profile] builds a fresh copy on every
// call, which the caller may modify freely.
//
// The zero Preset is not a built-in profile. It fails closed: its Profile is emergency-stop,
// which denies every action.
type Preset struct{ name string }

// The built-in profiles as values, one per built-in name; the package documentation's
// "Presets" table maps each to its name and family.
var (
	Safe     = Preset{ProfileSafe}
	Dev      = Preset{ProfileDev}
	FullAuto = Preset{ProfileFullAuto}

	ReadOnly      = Preset{PermissionReadOnly}
	Plan          = Preset{PermissionPlan}
	Supervised    = Preset{PermissionSupervised}
	Trusted       = Preset{PermissionTrusted}
	Autonomous    = Preset{PermissionAutonomous}
	EmergencyStop = Preset{PermissionEmergencyStop}

	AskApproval  = Preset{ApprovalAsk}
	SafeApproval = Preset{ApprovalSafe}
	AutoApproval = Preset{ApprovalAuto}
	YoloApproval = Preset{ApprovalYolo}
)

// Presets returns every built-in profile as a Preset, in the order of [Names].
func Presets() []Preset {
	names := Names()
	out := make([]Preset, len(names))
	for i, n := range names {
		out[i] = Preset{n}
	}
	return out
}

// Name returns the built-in profile's name, as [Builtin] accepts it ("PROFILE-DEV"); "" for the
// zero Preset.
func (p Preset) Name() string { return p.name }

// String returns the profile's name, or "emergency-stop (zero Preset)" for the zero Preset.
func (p Preset) String() string {
	if p.name == "" {
		return PermissionEmergencyStop + " (zero Preset)"
	}
	return p.name
}

// Profile returns a fresh, deep copy of the built-in profile: changing its slices and maps
// changes neither the preset nor any other copy. The zero Preset returns emergency-stop.
func (p Preset) Profile() Profile {
	if p.name == "" {
		return MustBuiltin(PermissionEmergencyStop)
	}
	return MustBuiltin(p.name)
}
