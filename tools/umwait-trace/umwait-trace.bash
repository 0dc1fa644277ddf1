# bash completion for umwait-trace                          -*- shell-script -*-

_umwait_trace()
{
	local cur prev words cword
	_init_completion || return

	local cmds="status events caps sites"
	if [[ $cword -eq 1 ]]; then
		mapfile -t COMPREPLY < <(compgen -W "$cmds --help -h --version -V" -- "$cur")
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
		mapfile -t COMPREPLY < <(compgen -W "auto umwait msr" -- "$cur")
		return
		;;
	--format)
		mapfile -t COMPREPLY < <(compgen -W "text json prometheus openmetrics" -- "$cur")
		return
		;;
	-o | --output)
		_filedir prom
		return
		;;
	--residency)
		mapfile -t COMPREPLY < <(compgen -W "auto force off" -- "$cur")
		return
		;;
	-d | --duration | --max-entries)
		return
		;;
	esac

	# argp's own, for every subcommand
	local opts common="--help -? --usage --version -V"
	case ${words[1]} in
	status) opts="--format --json --output -o --verbose -v $common" ;;
	events) opts="--timestamp -T --json --duration -d --source --verbose -v $common" ;;
	caps) opts="--pid -p --tid -t --cgroup --all --hist --hist-perturbing --exact --max-entries --residency --per-pid --timestamp -T --format --json --output -o --verbose -v $common" ;;
	sites) opts="--pid -p --exact --verbose -v $common" ;;
	*) return ;;
	esac
	if [[ $cur == -* ]]; then
		mapfile -t COMPREPLY < <(compgen -W "$opts" -- "$cur")
		return
	fi
	# caps and sites take ELF files (caps also [interval [count]])
	case ${words[1]} in
	caps | sites) _filedir ;;
	esac
} &&
	complete -F _umwait_trace umwait-trace

# ex: filetype=sh
