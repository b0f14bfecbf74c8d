// Tests of in-place editing with code given by an option (perl -pi -e,
// ruby -pi -e): the operands are the files edited, not the program, so the
// edit is understood: a perl substitution the device reads with no mark,
// ruby code with its "runs ruby code" mark; a script file written by the
// same script and then run stays write, then run.
package commands

import "testing"

func TestInPlaceEditWithCodeByOption(t *testing.T) {
	for _, argv := range [][]string{
		{"perl", "-pi", "-e", "s/a/b/", "f.txt"},
		{"perl", "-i.bak", "-pe", "s/a/b/", "f.txt"},
		{"perl", "-i", "-p", "-e", "s/a/b/", "f.txt", "g.txt"},
		{"ruby", "-pi", "-e", "$_.upcase!", "f.txt"},
	} {
		a := testAnalyze([]string{"sh", "-c", shellJoin(argv)})
		if !a.Understood {
			t.Errorf("%q: an in-place edit is not understood:\n%s", argv, dump(a))
			continue
		}
		if argv[0] == "perl" && len(a.Marks) > 0 || argv[0] == "ruby" && !mentions(a, "runs ruby code given on its command line") {
			t.Errorf("%q: the marks are not what %s's code does:\n%s", argv, argv[0], dump(a))
		}
	}
	checkTwins(t, []twin{
		{name: "a perl script written, then run on a file", hostile: "echo 'system q(id)' > t.pl; perl -i t.pl f.txt",
			want: "which the script wrote at line 1", benign: "perl -v"},
	})
}
