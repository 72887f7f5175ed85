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
	Safe     = Preset{nameSafe}
	Dev      = Preset{nameDev}
	FullAuto = Preset{nameFullAuto}

	ReadOnly      = Preset{nameReadOnly}
	Plan          = Preset{namePlan}
	Supervised    = Preset{nameSupervised}
	Trusted       = Preset{nameTrusted}
	Autonomous    = Preset{nameAutonomous}
	EmergencyStop = Preset{nameEmergencyStop}

	AskApproval  = Preset{nameAskApproval}
	SafeApproval = Preset{nameSafeApproval}
	AutoApproval = Preset{nameAutoApproval}
	YoloApproval = Preset{nameYoloApproval}
)

// Name returns the built-in profile's name, as [Builtin] accepts it ("PROFILE-DEV"); "" for the
// zero Preset.
func (p Preset) Name() string { return p.name }

// String returns the profile's name, or "emergency-stop (zero Preset)" for the zero Preset.
func (p Preset) String() string {
	if p.name == "" {
		return nameEmergencyStop + " (zero Preset)"
	}
	return p.name
}

// Profile returns a fresh, deep copy of the built-in profile: changing its slices and maps
// changes neither the preset nor any other copy. The zero Preset returns emergency-stop.
func (p Preset) Profile() Profile {
	if p.name == "" {
		return mustBuiltin(nameEmergencyStop)
	}
	return mustBuiltin(p.name)
}
