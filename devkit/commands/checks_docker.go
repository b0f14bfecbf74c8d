// Named checks of docker run's options that decide what of the host the
// container gets (https://docs.docker.com/reference/cli/docker/container/run/):
// --mount, and the secrets handed to the image's code with -e.
package commands

import "strings"

// dockerMountKeys are the --mount keys that give the container nothing of
// the host beyond the source the check judges. volume-opt and
// volume-driver are absent: the local driver's o=bind,device=PATH mounts
// any host path as a "volume".
var dockerMountKeys = map[string]bool{"type": true, "source": true, "src": true, "target": true, "destination": true,
	"dst": true, "readonly": true, "ro": true, "volume-nocopy": true, "consistency": true, "tmpfs-size": true, "tmpfs-mode": true}

// checkDockerMount: --mount type=bind,source=SRC,target=DST follows -v's
// rule for SRC (the project's files only); type=volume and type=tmpfs
// give no host path. The default type is volume.
func checkDockerMount(in checkInput) checkResult {
	for _, v := range in.Words {
		if v == "" {
			return checkResult{NotUnderstood: "a mount (--mount) decided at run time may give the container any host path"}
		}
		typ, src := "volume", ""
		for _, f := range strings.Split(v, ",") {
			key, val, _ := strings.Cut(f, "=")
			if !dockerMountKeys[key] {
				return checkResult{NotUnderstood: "the mount key " + Literal(key) + " is not one the device knows (--mount " + Literal(v) + ")"}
			}
			switch key {
			case "type":
				typ = val
			case "source", "src":
				src = val
			}
		}
		switch typ {
		case "volume", "tmpfs":
			if strings.ContainsAny(src, "/.~") {
				return checkResult{NotUnderstood: "the mount " + Literal(v) + " names a path as a volume"}
			}
		case "bind":
			if r := checkDockerVolume(checkInput{Words: []string{src + ":/"}}); r.NotUnderstood != "" || src == "" {
				return checkResult{NotUnderstood: "the mount --mount " + Literal(v) + " gives the container the host's " + cmpOr(src, "path decided at run time")}
			}
		default:
			return checkResult{NotUnderstood: "the mount type " + Literal(typ) + " is not one the device knows"}
		}
	}
	return checkResult{}
}

// checkDockerEnv: -e NAME (or --env NAME=$NAME) and --env-file hand
// variables to the image's code, which the device does not see: a secret
// among them is given to that code, which runs unseen (ordered so).
func checkDockerEnv(in checkInput) checkResult {
	for _, v := range in.Words {
		name, _, _ := strings.Cut(v, "=")
		if secret, ok := in.SecretEnv[name]; ok {
			return checkResult{Mark: "gives secret " + secret + " to the image's code (-e " + name + ")", SecretMark: true, Runs: true}
		}
		if v == "" && len(in.SecretEnv) > 0 {
			return checkResult{Mark: "gives the image's code a variable decided at run time, possibly a secret", SecretMark: true, Runs: true}
		}
	}
	return checkResult{}
}

// checkDockerBuildArg: --build-arg NAME, with no value, takes NAME's
// value from the environment (docker buildx build: "If you specify a
// build argument without a value, the builder uses the value from the
// local environment"): a secret so named is given to the Dockerfile's
// steps, and the image's history keeps it. NAME=VALUE is the value
// written, which the walk reads as any word.
func checkDockerBuildArg(in checkInput) checkResult {
	for _, v := range in.Words {
		if strings.Contains(v, "=") {
			continue
		}
		if secret, ok := in.SecretEnv[v]; ok {
			return checkResult{Mark: "gives secret " + secret + " to the Dockerfile's steps as a build argument (--build-arg " + v + "), which the image's history keeps", SecretMark: true, Runs: true}
		}
	}
	return checkResult{}
}

// checkDockerEnvFile: --env-file FILE hands the image's code every
// variable the file names, which the device does not read.
func checkDockerEnvFile(in checkInput) checkResult {
	return checkResult{Mark: "gives the image's code the variables in " + Literal(strings.Join(in.Words, " ")) + ", which the device does not read", SecretMark: true, Runs: true}
}

// checkDockerNetwork: --network host shares the host's network stack (its
// loopback services, every port), a note; a named or built-in network
// isolates the container; container:NAME joins another container's, which
// the device does not see.
func checkDockerNetwork(in checkInput) checkResult {
	for _, v := range in.Words {
		switch {
		case v == "host":
			return checkResult{Mark: "the container shares the host's network: it reaches services listening on this machine's loopback"}
		case v == "" || strings.Contains(v, ":"):
			return checkResult{NotUnderstood: "the network " + cmpOr(Literal(v), "decided at run time") + " is not one the device knows"}
		}
	}
	return checkResult{}
}

// checkDockerCp: docker cp copies between a container and this machine
// (docker container cp): CONTAINER:SRC DEST writes DEST here (unless it
// is "-", a tar stream on standard output), SRC CONTAINER:DEST writes in
// the container. A local path with a colon is written ./name:x, so a
// word NAME:PATH whose NAME has no "/" names a container.
func checkDockerCp(in checkInput) checkResult {
	if len(in.Words) != 2 {
		return checkResult{}
	}
	container := func(w string) bool {
		name, _, found := strings.Cut(w, ":")
		return found && name != "" && !strings.Contains(name, "/") && name != "." && name != ".." && name != "~"
	}
	if src, dst := in.Words[0], in.Words[1]; container(src) && !container(dst) && dst != "-" {
		return checkResult{Writes: dst}
	}
	return checkResult{}
}
