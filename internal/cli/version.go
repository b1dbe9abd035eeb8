package cli

import "runtime/debug"

// Version is the version a command reports: stamped, when the build set it (each main has
// `var version` for -ldflags "-X main.version=…"); otherwise the main module's version from the
// build information; otherwise, as for a build from a checkout without one, "dev".
func Version(stamped string) string {
	if stamped != "" {
		return stamped
	}
	return moduleVersion(debug.ReadBuildInfo())
}

func moduleVersion(bi *debug.BuildInfo, ok bool) string {
	if ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
}
