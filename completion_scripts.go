// The three completion scripts of `agentknock completion`, each written
// from the table in completion.go.

package main

import (
	"fmt"
	"io"
	"strings"
)

// shellQuote quotes s for sh, bash, zsh and fish alike: the table holds only
// letters, digits, spaces, '-' and '|', none of which needs escaping inside
// single quotes in any of them.
func shellQuote(s string) string { return "'" + s + "'" }

func writeBashCompletion(w io.Writer) error {
	return writeTableCompletion(w, "# bash completion for agentknock, written by `agentknock completion bash`.\n", bashCompletionDriver)
}

func writeZshCompletion(w io.Writer) error {
	return writeTableCompletion(w, "#compdef agentknock\n# zsh completion for agentknock, written by `agentknock completion zsh`.\n", zshCompletionDriver)
}

// writeTableCompletion is the bash and zsh script: the shared shell tables,
// then the shell's own driver.
func writeTableCompletion(w io.Writer, header, driver string) error {
	var b strings.Builder
	b.WriteString(header)
	completionTables(&b)
	b.WriteString(driver)
	_, err := io.WriteString(w, b.String())
	return err
}

func writeFishCompletion(w io.Writer) error {
	var b strings.Builder
	b.WriteString("# fish completion for agentknock, written by `agentknock completion fish`.\n")
	fmt.Fprintln(&b, "function __agentknock_subcommands\n    switch $argv[1]")
	for _, c := range completionCommands {
		if len(c.subcommands) > 0 {
			fmt.Fprintf(&b, "        case %s\n            printf '%%s\\n' %s\n", shellQuote(c.path), strings.Join(c.subcommands, " "))
		}
	}
	fmt.Fprintln(&b, "    end\nend")
	fmt.Fprintln(&b, "function __agentknock_words\n    switch $argv[1]")
	for _, c := range completionCommands {
		if len(c.words) > 0 {
			fmt.Fprintf(&b, "        case %s\n            printf '%%s\\n' %s\n", shellQuote(c.path), strings.Join(c.words, " "))
		}
	}
	fmt.Fprintln(&b, "    end\nend")
	fmt.Fprintln(&b, "function __agentknock_options\n    switch $argv[1]")
	for _, c := range completionCommands {
		fmt.Fprintf(&b, "        case %s\n            printf '%%s\\n' %s\n", shellQuote(c.path), strings.Join(optionNames(c.options), " "))
	}
	fmt.Fprintln(&b, "    end\nend")
	fmt.Fprintln(&b, "function __agentknock_operands\n    switch \"$argv[1]|$argv[2]\"")
	for _, c := range completionCommands {
		for _, g := range operandGroups(c) {
			fmt.Fprintf(&b, "        case %s\n            echo %s\n", strings.Join(g.patterns, " "), g.kinds)
		}
	}
	fmt.Fprintln(&b, "    end\nend")
	fmt.Fprintln(&b, "function __agentknock_takes_command\n    switch $argv[1]")
	var paths []string
	for _, c := range completionCommands {
		if c.command {
			paths = append(paths, shellQuote(c.path))
		}
	}
	fmt.Fprintf(&b, "        case %s\n            return 0\n    end\n    return 1\nend\n", strings.Join(paths, " "))
	b.WriteString(fishCompletionDriver)
	_, err := io.WriteString(w, b.String())
	return err
}

// The drivers walk the words before the cursor: a known subcommand extends
// the command path, an option skips as many words as it has operands, and a
// "--" where the path takes a command hands the rest to the shell's own
// command completion. At the cursor they complete an operand by its kind,
// an option, or a subcommand or fixed word.

const bashCompletionDriver = `_agentknock_operand() {
  # $1 kind, $2 text typed so far, $3 prefix that the replaced word needs
  local IFS=$'\n'
  case $1 in
    f) compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -f -- "$2")) ;;
    d) compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -d -- "$2")) ;;
    e) COMPREPLY=($(compgen -e -- "$2")) ;;
    a) if [[ $2 == *=* ]]; then
         compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -f -- "${2#*=}"))
       fi ;;
  esac
  if [[ -n $3 && ${#COMPREPLY[@]} -gt 0 ]]; then COMPREPLY=("${COMPREPLY[@]/#/$3}"); fi
}
_agentknock() {
  local words=() raw=() i w cword=0
  # bash splits words at "=" (COMP_WORDBREAKS); join them again so that
  # --option=value and NAME=PATH count as one word.
  for ((i = 0; i < ${#COMP_WORDS[@]}; i++)); do
    w=${COMP_WORDS[i]}
    if ((i > 1)) && [[ $w == = || ${words[-1]} == *= ]]; then
      words[-1]+=$w
    else
      words+=("$w"); raw+=("$i")
    fi
    ((i == COMP_CWORD)) && cword=$((${#words[@]} - 1))
  done
  local cmdpath="" kinds="" dashdash=-1 s
  for ((i = 1; i < cword; i++)); do
    w=${words[i]}
    if [[ -n $kinds ]]; then kinds=${kinds:1}; continue; fi
    if [[ $w == -- ]] && _agentknock_takes_command "$cmdpath"; then dashdash=$i; break; fi
    if [[ $w == -?* ]]; then
      [[ $w == *=* ]] || kinds=$(_agentknock_operands "$cmdpath" "$w")
      continue
    fi
    for s in $(_agentknock_subcommands "$cmdpath"); do
      if [[ $w == "$s" ]]; then cmdpath=${cmdpath:+$cmdpath }$w; break; fi
    done
  done
  # The shell replaces only the raw word at the cursor: a candidate keeps
  # whatever of NAME= or --option= that word holds.
  local cur=${words[cword]} rawcur=${COMP_WORDS[COMP_CWORD]} prefix=""
  case $rawcur in
    =) prefix== ;;
    *=*) prefix=${rawcur%%=*}= ;;
  esac
  COMPREPLY=()
  if ((dashdash >= 0)); then
    if ((cword == dashdash + 1)); then
      COMPREPLY=($(compgen -c -- "$cur"))
    elif declare -F _command_offset >/dev/null; then
      _command_offset "${raw[dashdash + 1]}"
    else
      compopt -o default 2>/dev/null
    fi
    return 0
  fi
  if [[ -n $kinds ]]; then
    _agentknock_operand "${kinds:0:1}" "$cur" "$prefix"
    return 0
  fi
  if [[ $cur == -?*=* ]]; then
    kinds=$(_agentknock_operands "$cmdpath" "${cur%%=*}")
    [[ -n $kinds ]] && _agentknock_operand "${kinds:0:1}" "${cur#*=}" "$prefix"
    return 0
  fi
  if [[ $cur == -* ]]; then
    COMPREPLY=($(compgen -W "$(_agentknock_options "$cmdpath")" -- "$cur"))
  else
    COMPREPLY=($(compgen -W "$(_agentknock_subcommands "$cmdpath") $(_agentknock_words "$cmdpath")" -- "$cur"))
  fi
  return 0
}
complete -F _agentknock agentknock
`

const zshCompletionDriver = `_agentknock() {
  local i w cmdpath="" kinds="" dashdash=0 s
  for ((i = 2; i < CURRENT; i++)); do
    w=${words[i]}
    if [[ -n $kinds ]]; then kinds=${kinds:1}; continue; fi
    if [[ $w == -- ]] && _agentknock_takes_command "$cmdpath"; then dashdash=$i; break; fi
    if [[ $w == -?* ]]; then
      [[ $w == *=* ]] || kinds=$(_agentknock_operands "$cmdpath" "$w")
      continue
    fi
    for s in ${=$(_agentknock_subcommands "$cmdpath")}; do
      if [[ $w == "$s" ]]; then cmdpath=${cmdpath:+$cmdpath }$w; break; fi
    done
  done
  local cur=${words[CURRENT]} kind=""
  if ((dashdash > 0)); then
    shift $dashdash words
    ((CURRENT -= dashdash))
    _normal
    return
  fi
  if [[ -n $kinds ]]; then
    kind=${kinds:0:1}
  elif [[ $cur == -?*=* ]]; then
    kind=$(_agentknock_operands "$cmdpath" "${cur%%=*}")
    kind=${kind:0:1}
    compset -P '*='
  fi
  if [[ -n $kind ]]; then
    case $kind in
      f) _files ;;
      d) _files -/ ;;
      e) _parameters -g '*export*' ;;
      a) compset -P '*=' && _files ;;
      *) _message 'value' ;;
    esac
    return
  fi
  if [[ $cur == -* ]]; then
    compadd -- ${=$(_agentknock_options "$cmdpath")}
  else
    compadd -- ${=$(_agentknock_subcommands "$cmdpath")} ${=$(_agentknock_words "$cmdpath")}
  fi
}
if [[ $funcstack[1] == _agentknock ]]; then
  _agentknock "$@"
else
  compdef _agentknock agentknock
fi
`

const fishCompletionDriver = `function __agentknock_complete
    set -l tokens (commandline -opc)
    set -l cur (commandline -ct)
    set -l cmdpath ''
    set -l kinds ''
    set -l i 2
    while test $i -le (count $tokens)
        set -l w $tokens[$i]
        if test -n "$kinds"
            set kinds (string sub -s 2 -- $kinds)
        else if test "$w" = -- && __agentknock_takes_command "$cmdpath"
            if test $i -eq (count $tokens)
                __fish_complete_command $cur
            else
                complete -C (string join ' ' -- (string escape -- $tokens[(math $i + 1)..-1]) $cur)
            end
            return
        else if string match -q -- '-?*' $w
            string match -q -- '*=*' $w; or set kinds (__agentknock_operands "$cmdpath" $w)
        else if contains -- $w (__agentknock_subcommands "$cmdpath")
            if test -n "$cmdpath"
                set cmdpath "$cmdpath $w"
            else
                set cmdpath $w
            end
        end
        set i (math $i + 1)
    end
    set -l kind (string sub -l 1 -- "$kinds")
    set -l prefix ''
    set -l value $cur
    if test -z "$kind"; and string match -q -- '-?*=*' $cur
        set -l parts (string split -m 1 = -- $cur)
        set kind (string sub -l 1 -- (__agentknock_operands "$cmdpath" $parts[1]))
        set prefix $parts[1]=
        set value $parts[2]
    end
    if test "$kind" = a
        string match -q -- '*=*' $value; or return
        set -l parts (string split -m 1 = -- $value)
        set prefix $prefix$parts[1]=
        set value $parts[2]
        set kind f
    end
    switch "$kind"
        case f
            for p in (__fish_complete_path $value)
                echo $prefix$p
            end
        case d
            for p in (__fish_complete_directories $value)
                echo $prefix$p
            end
        case e
            for v in (set --names --export)
                echo $prefix$v
            end
        case w
            return
        case '*'
            if string match -q -- '-*' $cur
                __agentknock_options "$cmdpath"
            else
                __agentknock_subcommands "$cmdpath"
                __agentknock_words "$cmdpath"
            end
    end
end
complete -c agentknock -f -a '(__agentknock_complete)'
`
