// Named checks for service command lines whose judgement data cannot
// carry (Step 21): gh api's method and endpoint, and the verbs of the
// cloud command lines (aws, gcloud, az), which have thousands of
// operations named by a verb: the tables name the common read-only ones
// as forms, and this check makes every operation that deletes, terminates,
// removes or purges irreversible, lets a reading verb stand, and leaves
// any other operation not understood. The manuals:
// https://cli.github.com/manual/gh_api,
// https://docs.aws.amazon.com/cli/latest/reference/,
// https://cloud.google.com/sdk/gcloud/reference,
// https://learn.microsoft.com/cli/azure/reference-index.
package commands

import "strings"

// checkGHAPIMethod: gh api's --method; GET and HEAD read, any other
// method changes GitHub.
func checkGHAPIMethod(in checkInput) checkResult {
	for _, w := range in.Words {
		switch m := strings.ToUpper(w); m {
		case "GET", "HEAD":
		case "POST", "PUT", "PATCH", "DELETE":
			return checkResult{Irreversible: "gh api --method " + m + " changes GitHub"}
		default:
			return checkResult{NotUnderstood: "gh api: the method " + w + " is not one the device knows"}
		}
	}
	return checkResult{}
}

// checkGHAPIHeader: gh api -H adds a request header; only the two that
// choose a response format or an API version are understood, since
// others could override the method (X-HTTP-Method-Override) or the
// credentials (Authorization).
func checkGHAPIHeader(in checkInput) checkResult {
	for _, w := range in.Words {
		name, _, ok := strings.Cut(w, ":")
		if !ok {
			return checkResult{NotUnderstood: "gh api: the header " + Literal(w) + " is not NAME: VALUE"}
		}
		switch strings.ToLower(strings.TrimSpace(name)) {
		case "accept", "x-github-api-version":
		default:
			return checkResult{NotUnderstood: "gh api: the header " + Literal(name) + " is not one the device knows"}
		}
	}
	return checkResult{}
}

// checkGHAPIEndpoint: gh api's endpoint is a path of the GitHub API (or
// "graphql"); a full URL would take the token wherever it points.
func checkGHAPIEndpoint(in checkInput) checkResult {
	for _, w := range in.Words {
		if strings.Contains(w, "://") || strings.HasPrefix(w, "//") || strings.ContainsAny(w, "@\\") {
			return checkResult{NotUnderstood: "gh api: the endpoint " + w + " is not a path of the GitHub API (the token would go where it points)"}
		}
	}
	return checkResult{}
}

// cloudDestroyVerbs: an operation whose verb starts with one of these
// destroys or takes away what cannot be had back.
var cloudDestroyVerbs = []string{"delete", "terminate", "remove", "rm", "rb", "destroy", "purge",
	"deregister", "revoke", "release", "wipe", "drop", "erase", "disassociate", "detach", "deprovision"}

// cloudReadVerbs: an operation whose verb starts with one of these only
// reads.
var cloudReadVerbs = []string{"describe", "list", "get", "show", "ls", "info", "version", "lookup",
	"search", "check", "validate", "estimate", "preview", "head",
	// aws SERVICE wait CONDITION polls a describe operation until it holds
	// (https://docs.aws.amazon.com/cli/latest/reference/ecs/wait/)
	"wait"}

// cloudKnownOps are the few operations that neither read nor destroy
// which the device knows from their manual pages, each with the options
// it leaves out (a command using one is not understood):
//   - aws cloudfront create-invalidation: tells the CDN to drop its
//     cached copies of the paths given, so they are fetched again
//     (https://docs.aws.amazon.com/cli/latest/reference/cloudfront/create-invalidation.html);
//   - aws ecs update-service: changes a service's task definition, count
//     or deployment, and with --force-new-deployment restarts its tasks
//     (https://docs.aws.amazon.com/cli/latest/reference/ecs/update-service.html);
//   - gcloud run deploy: deploys a container image as a Cloud Run
//     revision (https://cloud.google.com/sdk/gcloud/reference/run/deploy);
//     --source is left out: it uploads the directory and builds it.
var cloudKnownOps = map[string][]string{
	"aws cloudfront create-invalidation": nil,
	"aws ecs update-service":             nil,
	"gcloud run deploy":                  {"--source"},
}

// cloudWritingReads read, but write their answer into a file named by a
// positional operand (aws s3api get-object BUCKET KEY OUTFILE): a write
// the table does not see, so not understood.
var cloudWritingReads = map[string]bool{"get-object": true, "get-object-torrent": true,
	"get-media": true, "get-clip": true, "get-export": true, "get-sdk": true}

// cloudRedirects send the request, signed with the secret, elsewhere or
// without checking the server, or read options from a file the device
// does not see.
var cloudRedirects = []string{"--endpoint-url", "--endpoint", "--no-verify-ssl", "--ca-bundle",
	"--flags-file", "--api-endpoint-overrides"}

// checkCloudVerb judges the operation words of aws, gcloud and az: in.Words
// are the service (or group) and what follows, "aws ec2
// terminate-instances --instance-ids i-1" giving [ec2
// terminate-instances --instance-ids i-1].
func checkCloudVerb(in checkInput) checkResult {
	var path []string
	for _, w := range in.Words {
		if strings.HasPrefix(w, "-") {
			break
		}
		path = append(path, w)
	}
	for _, w := range in.Words {
		for _, r := range cloudRedirects {
			if w == r || strings.HasPrefix(w, r+"=") {
				return checkResult{NotUnderstood: in.Program + ": the option " + r + " sends the request where the device cannot see"}
			}
		}
	}
	if len(path) < 2 {
		return checkResult{NotUnderstood: in.Program + ": the operation " + strings.Join(path, " ") + " is not one the device knows"}
	}
	op := strings.Join(path, " ")
	if left, ok := cloudKnownOps[in.Program+" "+path[0]+" "+path[1]]; ok {
		for _, w := range in.Words {
			for _, o := range left {
				if w == o || strings.HasPrefix(w, o+"=") {
					return checkResult{NotUnderstood: in.Program + " " + path[0] + " " + path[1] + ": the option " + o + " is not one the device knows"}
				}
			}
		}
		return checkResult{}
	}
	for _, w := range path[1:] {
		if hasVerb(w, cloudDestroyVerbs) {
			return checkResult{Irreversible: in.Program + " " + op + " deletes or takes away what cannot be had back"}
		}
	}
	for _, w := range path[1:] {
		if hasVerb(w, cloudReadVerbs) {
			if cloudWritingReads[w] {
				return checkResult{NotUnderstood: in.Program + ": " + w + " writes its answer into a file the device does not see"}
			}
			return checkResult{}
		}
	}
	return checkResult{NotUnderstood: in.Program + ": the operation " + op + " is not one the device knows"}
}

// hasVerb reports whether a kebab-case operation word starts with one of
// verbs ("terminate-instances", "delete", "rm").
func hasVerb(word string, verbs []string) bool {
	first, _, _ := strings.Cut(strings.ToLower(word), "-")
	for _, v := range verbs {
		if first == v {
			return true
		}
	}
	return false
}
