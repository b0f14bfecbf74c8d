// Configuration files the script wrote whole with a literal text
// (written_script.go), judged by their keys instead of "write, then run":
// a program that reads one runs no code the script put there when every
// key is one that runs nothing. The keys are data, per file name; a key
// not listed (or a line that is no KEY=VALUE) keeps write, then run.
package commands

import (
	"fmt"
	"path"
	"slices"
	"strings"
)

// inertConfigKeys are, per file name, the keys that run nothing; "*"
// stands for any text (a host, a scope). .npmrc, from
// https://docs.npmjs.com/cli/v10/configuring-npm/npmrc and
// https://docs.npmjs.com/cli/v10/using-npm/config: registries and their
// tokens, and switches of how npm saves, reports and checks. Absent on
// purpose: script-shell, shell, editor, git, node-options,
// onload-script, browser, viewer (programs npm runs), prefix,
// globalconfig, userconfig (where npm reads more configuration and
// installs programs).
var inertConfigKeys = map[string][]string{
	".npmrc": {"registry", "@*:registry", "//*:_authToken", "//*:always-auth", "always-auth", "save-exact",
		"engine-strict", "fund", "audit", "progress", "loglevel"},
}

// registryKeys choose where npm fetches packages, and so whose install
// scripts run: inert only when they name a public registry.
var registryKeys = []string{"registry", "@*:registry"}

// knownRegistries are the public registries a registry key may name.
var knownRegistries = []string{"registry.npmjs.org", "registry.yarnpkg.com", "npm.pkg.github.com"}

func knownRegistry(url string) bool {
	h, userinfo := hostOfURL(url)
	return userinfo == "" && strings.HasPrefix(url, "https://") && slices.Contains(knownRegistries, strings.ToLower(h))
}

// inertConfig reports whether the file at resolved path p was written
// whole with a text the device knows, and every key it sets is one its
// name's list says runs nothing.
func (w *walker) inertConfig(p string) bool {
	ws, ok := w.scripts[p]
	keys := inertConfigKeys[path.Base(p)]
	if !ok || keys == nil {
		return false
	}
	for _, l := range strings.Split(ws.text, "\n") {
		l = strings.TrimSpace(l)
		if l == "" || l[0] == '#' || l[0] == ';' {
			continue
		}
		key, val, ok := strings.Cut(l, "=")
		key = strings.TrimSpace(key)
		if !ok || !matchesAny(key, keys) {
			return false
		}
		if matchesAny(key, registryKeys) && !knownRegistry(strings.TrimSpace(val)) {
			// where packages come from is where their install code comes from
			return false
		}
	}
	return true
}

// matchesAny reports whether key is one of the patterns, where "*" in a
// pattern stands for any text without "=" (one "*" at most).
func matchesAny(key string, patterns []string) bool {
	for _, p := range patterns {
		before, after, star := strings.Cut(p, "*")
		if !star && key == p || star && len(key) > len(before)+len(after) && strings.HasPrefix(key, before) && strings.HasSuffix(key, after) {
			return true
		}
	}
	return false
}

// configSecrets shows where a configuration the script wrote sends a
// delivered secret it names as ${VAR} (npm expands it from the
// environment): an .npmrc line //HOST/:_authToken=${VAR} gives VAR to
// HOST. To a host the secret's API is, a destination line; elsewhere, a
// mark.
func (w *walker) configSecrets(p, name string, line int) {
	ws := w.scripts[p]
	for _, l := range strings.Split(ws.text, "\n") {
		key, val, _ := strings.Cut(strings.TrimSpace(l), "=")
		for v, secret := range w.envSecrets {
			if !strings.Contains(val, "${"+v+"}") {
				continue
			}
			host, ok := strings.CutPrefix(key, "//")
			if end := strings.IndexAny(host, "/:"); ok && end > 0 {
				host = host[:end]
			} else {
				host = "(the registry the configuration names)"
			}
			if slices.Contains(apiHostsByVariable[v], host) {
				w.a.Destinations = append(w.a.Destinations, fmt.Sprintf("%s: %s sends secret %s, which %s names for it (line %d)", host, w.display(name), v, w.display(path.Base(p)), line))
				continue
			}
			w.mark(SeveritySecret, line, true, "%s sends secret %s (%s) to %s, as %s written at line %d says", w.display(name), v, secret, w.display(host), w.display(path.Base(p)), ws.line)
		}
	}
}

// checkNpmConfigKey: npm config set KEY VALUE (or KEY=VALUE) writes one
// key of the same .npmrc keys: one that runs nothing is inert, as in a
// written .npmrc; any other key (script-shell, node-options, git ...), or
// a registry that is not a public one, decides what a later npm runs.
func checkNpmConfigKey(in checkInput) checkResult {
	if len(in.Words) == 0 {
		return checkResult{}
	}
	key, val, hasVal := strings.Cut(in.Words[0], "=")
	if !hasVal && len(in.Words) > 1 {
		val = in.Words[1]
	}
	keys := inertConfigKeys[".npmrc"]
	if !matchesAny(key, keys) || matchesAny(key, registryKeys) && !knownRegistry(val) {
		return checkResult{Runs: true, Mark: "sets npm's " + Literal(key) + ", which decides what a later npm runs or where its packages come from"}
	}
	// //HOST/:_authToken: the token npm sends to HOST.
	if host, ok := strings.CutPrefix(key, "//"); ok {
		host, _, _ = strings.Cut(host, "/")
		if !knownRegistry("https://" + host + "/") {
			return checkResult{SecretMark: true, Mark: "sets the token npm sends to " + Literal(host) + ", which is not a public registry"}
		}
	}
	return checkResult{}
}

// inertNpmKey: an npm configuration key, with its value, that .npmrc may
// set and run nothing (a registry only when it is a public one).
func inertNpmKey(key, value string) bool {
	if !matchesAny(key, inertConfigKeys[".npmrc"]) || strings.ContainsAny(key, "/:@*") {
		return false
	}
	return !matchesAny(key, registryKeys) || knownRegistry(value)
}

// inertBundleKeys are the bundle config keys that run nothing and fetch
// from nowhere new, from bundle-config(1)
// (https://bundler.io/man/bundle-config.1.html): where gems are
// installed, which groups, how many jobs, and switches of how strictly
// the lockfile is kept. Absent on purpose: mirror.* (where gems, and so
// the code they run, come from), local.* (a gem's code from a directory),
// build.* (options given to a gem's native build), gemfile (which file is
// evaluated as the Gemfile), auto_install, and every other key.
var inertBundleKeys = []string{"path", "without", "with", "only", "jobs", "retry", "frozen", "deployment",
	"clean", "cache_all", "no_prune", "silence_root_warning", "disable_shared_gems", "force_ruby_platform"}

// checkBundleConfigKey: bundle config set KEY VALUE writes one key that
// every later bundle reads: a key not known to run nothing decides what a
// later bundle runs or where its gems come from.
func checkBundleConfigKey(in checkInput) checkResult {
	if len(in.Words) == 0 {
		return checkResult{}
	}
	key := strings.ToLower(strings.TrimPrefix(in.Words[0], "BUNDLE_"))
	if !slices.Contains(inertBundleKeys, key) {
		return checkResult{Runs: true, Mark: "sets bundle's " + Literal(in.Words[0]) + ", which decides what a later bundle runs or where its gems come from"}
	}
	return checkResult{}
}

// inertPipKeys are the options of pip's configuration that run nothing and
// fetch from nowhere new (https://pip.pypa.io/en/stable/topics/configuration/,
// each the long name of a command-line option): how pip reports, retries
// and caches. index-url, extra-index-url, find-links, trusted-host, cert,
// proxy and every other key decide where later installs fetch packages,
// and so whose build code runs.
var inertPipKeys = []string{"timeout", "retries", "no-cache-dir", "disable-pip-version-check", "progress-bar",
	"require-virtualenv", "no-warn-script-location", "quiet", "verbose", "no-input", "no-color"}

// checkPipConfigKey: pip config set SECTION.KEY VALUE writes a key every
// later pip reads.
func checkPipConfigKey(in checkInput) checkResult {
	if len(in.Words) == 0 || !slices.Contains(in.Argv, "set") {
		return checkResult{}
	}
	_, key, ok := strings.Cut(in.Words[0], ".")
	if !ok || !slices.Contains(inertPipKeys, key) {
		return checkResult{Runs: true, Mark: "sets pip's " + Literal(in.Words[0]) + ", which decides where a later pip fetches packages, and so whose build code runs"}
	}
	return checkResult{}
}

// inertYarnKeys are yarn's settings that run nothing
// (https://yarnpkg.com/configuration/yarnrc, and the classic yarn config):
// how it reports and lays out node_modules. registry and
// npmRegistryServer are inert only for a public registry; yarnPath (a
// file yarn runs as itself), plugins, and every other key are marked.
var inertYarnKeys = []string{"nodeLinker", "enableTelemetry", "enableGlobalCache", "enableProgressBars",
	"enableImmutableInstalls", "enableColors", "save-exact", "save-prefix", "network-timeout"}

// checkYarnConfigKey: yarn config set KEY VALUE writes a key every later
// yarn reads.
func checkYarnConfigKey(in checkInput) checkResult {
	if len(in.Words) == 0 {
		return checkResult{}
	}
	key, val := in.Words[0], ""
	if len(in.Words) > 1 {
		val = in.Words[1]
	}
	if (key == "registry" || key == "npmRegistryServer") && knownRegistry(val) || slices.Contains(inertYarnKeys, key) {
		return checkResult{}
	}
	return checkResult{Runs: true, Mark: "sets yarn's " + Literal(key) + ", which decides what a later yarn runs or where its packages come from"}
}
