# bash completion for umwait-trace                          -*- shell-script -*-

_umwait_trace()
{
	local cur prev words cword
	_init_completion || return

	local cmds="status events caps sites"
	if [[ $cword -eq 1 ]]; then
		COMPREPLY=($(compgen -W "$cmds --help --version" -- "$cur"))
		return
	fi

	case $prev in
	-p | --pid | -t | --tid)
		_pids
		return
		;;
	--cgroup)
		_filedir -d
		return
		;;
	--source)
		COMPREPLY=($(compgen -W "auto umwait msr" -- "$cur"))
		return
		;;
	--format)
		COMPREPLY=($(compgen -W "text json prometheus openmetrics" -- "$cur"))
		return
		;;
	-o | --output)
		_filedir prom
		return
		;;
	-d | --duration | --max-entries)
		return
		;;
	esac

	local opts
	case ${words[1]} in
	status) opts="--format --json --output -o --verbose -v --help" ;;
	events) opts="--timestamp -T --json --duration -d --source --verbose -v --help" ;;
	caps) opts="--pid -p --tid -t --cgroup --all --hist --hist-perturbing --exact --max-entries --residency --per-pid --timestamp -T --format --json --output -o --verbose -v --help" ;;
	sites) opts="--pid -p --exact --verbose -v --help" ;;
	*) return ;;
	esac
	if [[ $cur == -* ]]; then
		COMPREPLY=($(compgen -W "$opts" -- "$cur"))
		return
	fi
	# caps and sites take ELF files (caps also [interval [count]])
	case ${words[1]} in
	caps | sites) _filedir ;;
	esac
} &&
	complete -F _umwait_trace umwait-trace

# ex: filetype=sh
