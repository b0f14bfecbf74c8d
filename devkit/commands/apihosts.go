// Which hosts an API token's variable is for: a secret sent only there is
// the token's ordinary use, shown as a destination, not as a secret mark.
package commands

import (
	"path"
	"slices"
	"strings"
)

// apiHostsByVariable lists, by a secret variable's conventional name, the
// hosts whose API the secret is for. The hosts are compared whole, after
// the URL is parsed, so look-alikes and userinfo tricks do not match.
var apiHostsByVariable = map[string][]string{
	// GitHub Packages' registries take the same token
	// (https://docs.github.com/en/packages/working-with-a-github-packages-registry).
	"GH_TOKEN":     {"api.github.com", "github.com", "uploads.github.com", "ghcr.io", "npm.pkg.github.com", "maven.pkg.github.com", "nuget.pkg.github.com", "rubygems.pkg.github.com"},
	"GITHUB_TOKEN": {"api.github.com", "github.com", "uploads.github.com", "ghcr.io", "npm.pkg.github.com", "maven.pkg.github.com", "nuget.pkg.github.com", "rubygems.pkg.github.com"},
	// A token for GitHub's container registry, by its conventional name.
	"GHCR_TOKEN": {"ghcr.io"},
	"NPM_TOKEN":  {"registry.npmjs.org"},
	// twine's and uv publish's upload credentials: upload.pypi.org unless
	// a repository URL says otherwise (https://twine.readthedocs.io/en/stable/,
	// https://docs.astral.sh/uv/reference/cli/#uv-publish).
	"TWINE_PASSWORD":       {"upload.pypi.org"},
	"UV_PUBLISH_TOKEN":     {"upload.pypi.org"},
	"UV_PUBLISH_PASSWORD":  {"upload.pypi.org"},
	"GITLAB_TOKEN":         {"gitlab.com"},
	"PYPI_TOKEN":           {"upload.pypi.org"},
	"CARGO_REGISTRY_TOKEN": {"crates.io"},
	"HF_TOKEN":             {"huggingface.co"},
	"OPENAI_API_KEY":       {"api.openai.com"},
	"ANTHROPIC_API_KEY":    {"api.anthropic.com"},
	"DIGITALOCEAN_TOKEN":   {"api.digitalocean.com"},
	"CLOUDFLARE_API_TOKEN": {"api.cloudflare.com"},
	"SLACK_BOT_TOKEN":      {"slack.com"},
	"VERCEL_TOKEN":         {"api.vercel.com"},
	"NETLIFY_AUTH_TOKEN":   {"api.netlify.com"},
	"HEROKU_API_KEY":       {"api.heroku.com"},
	"FLY_API_TOKEN":        {"api.fly.io"},
	"DOCKERHUB_TOKEN":      {"hub.docker.com"},
	"CIRCLECI_TOKEN":       {"circleci.com"},
	"SENTRY_AUTH_TOKEN":    {"sentry.io"},
}

// exposingOptions are, per client, the options that let a host the script
// does not name see the credentials: following redirects with them, or not
// checking the server's certificate. A single letter also counts inside a
// cluster of short options (-fsSk).
var exposingOptions = map[string][]string{
	"curl": {"--location-trusted", "-k", "--insecure", "--proxy-insecure", "--doh-insecure"},
	"wget": {"--no-check-certificate", "--auth-no-challenge"},
}

// exposesCredentials reports whether a word of c is one of its client's
// exposing options.
func exposesCredentials(c *simpleCmd, name string) bool {
	for _, wd := range c.ws[1:] {
		for _, o := range exposingOptions[path.Base(name)] {
			long := strings.HasPrefix(o, "--")
			if strings.HasPrefix(wd.prefix, o) && (long || wd.prefix == o) ||
				!long && strings.HasPrefix(wd.prefix, "-") && !strings.HasPrefix(wd.prefix, "--") && strings.Contains(wd.prefix, o[1:]) {
				return true
			}
		}
	}
	return false
}

// redirectResendsHeader: curl -L sends the request's custom headers to
// every host a redirect leads to; only Authorization and Cookie stay with
// the first host (curl 7.58 and later). A secret in another header then
// reaches hosts the script does not name.
func redirectResendsHeader(c *simpleCmd, name string) bool {
	if path.Base(name) != "curl" {
		return false
	}
	follows := false
	for _, wd := range c.ws[1:] {
		p := wd.prefix
		if p == "--location" || len(p) > 1 && p[0] == '-' && p[1] != '-' && strings.Trim(p[1:], "abcdefgijklmnopqrstuvwxyzABCDEFGIJKLMNOPQRSTUVWXYZ") == "" && strings.Contains(p, "L") {
			follows = true
		}
	}
	if !follows {
		return false
	}
	for k := 1; k < len(c.ws); k++ {
		header, taint := "", ""
		switch p := c.ws[k].prefix; {
		case (p == "-H" || p == "--header") && k+1 < len(c.ws):
			header, taint = c.ws[k+1].prefix, c.taints[k+1]
		case strings.HasPrefix(p, "--header="):
			header, taint = strings.TrimPrefix(p, "--header="), c.taints[k]
		case strings.HasPrefix(p, "-H") && len(p) > 2:
			header, taint = p[2:], c.taints[k]
		}
		field, _, _ := strings.Cut(strings.ToLower(strings.TrimSpace(header)), ":")
		if taint != "" && field != "authorization" && field != "cookie" {
			return true
		}
	}
	return false
}

// sentToItsAPI reports whether every secret variable named is sent only to
// hosts its API is for: hosts are the command's parsed destinations, none
// unknown.
func sentToItsAPI(c *simpleCmd, name string, named, hosts []string) bool {
	if len(named) == 0 || len(hosts) == 0 || len(c.ws) == 0 || exposesCredentials(c, name) || redirectResendsHeader(c, name) {
		return false
	}
	for _, v := range named {
		api := apiHostsByVariable[v]
		for _, h := range hosts {
			if !slices.Contains(api, strings.ToLower(h)) {
				return false
			}
		}
	}
	return true
}
