package commands

import (
	"strings"
	"testing"
)

// A cmake cache variable that names a program is not understood; its
// benign twins (a build type, a project switch) stay understood.
func TestCMakeCacheVariables(t *testing.T) {
	for _, c := range []struct {
		script     string
		understood bool
	}{
		{`cmake -S . -B build -DCMAKE_BUILD_TYPE=Release && cmake --build build`, true},
		{`cmake -S . -B build -DWITH_TESTS=ON -D BUILD_DOCS=OFF`, true},
		{`cmake -S . -B build -DCMAKE_C_COMPILER_LAUNCHER=/tmp/.cl && cmake --build build`, false},
		{`cmake -S . -B build -DCMAKE_C_COMPILER=/tmp/cc`, false},
		{`cmake -S . -B build -D CMAKE_TOOLCHAIN_FILE=/tmp/t.cmake`, false},
		{`cmake -S . -B build -DHELPER=/tmp/x`, false},
	} {
		a := Analyze(Request{Argv: []string{"sh", "-c", c.script}, Executable: "/bin/sh", Dir: "/work/app"})
		if a.Understood != c.understood {
			var why []string
			for _, r := range a.Reasons {
				why = append(why, r.Text)
			}
			t.Errorf("%s: understood=%v, want %v (%s)", c.script, a.Understood, c.understood, strings.Join(why, "; "))
		}
	}
}
