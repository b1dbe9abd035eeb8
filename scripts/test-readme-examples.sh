#!/usr/bin/env bash
# Runs the command examples in README.md against a real ahp-server and checks what they print.
#
# An example is a ```sh (or ```bash) block right after a marker comment, which GitHub does not render:
#
#   <!-- verified-example
#   expect: "verdict": "VERDICT_DENY"
#   -->
#
# Each `expect:` line is a literal string the command's standard output must contain (at least one per
# example). The block holds one command, which must start with grpcurl, buf or curl and must address
# the server as 127.0.0.1:8080 (the default of `go run ./cmd/ahp-server`).
#
# The script builds ahp-server once, starts it on a free loopback port with the embedded default
# policy, rewrites 127.0.0.1:8080 to that port and runs every example with `grpcurl` and `buf`
# resolving to scripts/grpcurl and scripts/buf (never to whatever is installed). It fails when an
# example exits non-zero or lacks an expected string, when a marker is malformed, when no examples
# are found, or when grpcurl, buf or curl has no example at all.
#
# A tool that cannot be obtained (grpcurl needs the Go module proxy the first time; curl must be
# installed) fails the run, unless AHP_README_TOOLS_OPTIONAL=1, which skips that tool's examples
# with a message instead. Usage: scripts/test-readme-examples.sh [MARKDOWN_FILE] (default README.md).
set -euo pipefail
doc="README.md"
if [[ $# -gt 0 ]]; then
	[[ -f "$1" ]] || { echo "FAILED: $1 not found" >&2; exit 1; }
	doc="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
fi
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root="$PWD"
optional="${AHP_README_TOOLS_OPTIONAL:-0}"
example_timeout=60 # seconds per example; the tools are built before the first one runs
default_addr="127.0.0.1:8080"
required_tools=(grpcurl buf curl)

step() { printf '\n==> %s\n' "$*"; }
now_ms() { # bash 5 has EPOCHREALTIME; older shells get whole seconds
	if [[ -n "${EPOCHREALTIME:-}" ]]; then
		local t="${EPOCHREALTIME//[.,]/}"
		echo $((10#$t / 1000))
	else
		echo $((SECONDS * 1000))
	fi
}
die() {
	echo "FAILED: $*" >&2
	exit 1
}

[[ -f "$doc" ]] || die "$doc not found"

step "examples marked in $doc"
# Parallel arrays, one entry per example.
ex_line=() ex_cmd=() ex_expect=() ex_tool=()
state=text n=0 cmd="" expects="" start=0
while IFS= read -r line || [[ -n "$line" ]]; do
	n=$((n + 1))
	case "$state" in
	text)
		if [[ "$line" =~ ^\<!--\ verified-example[[:space:]]*$ ]]; then
			state=directives start=$n expects=""
		elif [[ "$line" =~ ^\<!--\ verified-example[[:space:]]*--\>[[:space:]]*$ ]]; then
			state=fence start=$n expects=""
		elif [[ "$line" =~ ^[[:space:]]*\<!--.*verified-example ]]; then
			die "$doc:$n: malformed marker (want a line '<!-- verified-example', then 'expect: TEXT' lines, then '-->'): $line"
		fi
		;;
	directives)
		if [[ "$line" =~ ^[[:space:]]*--\>[[:space:]]*$ ]]; then
			state=fence
		elif [[ "$line" =~ ^expect:\ (.+)$ ]]; then
			expects+="${BASH_REMATCH[1]}"$'\n'
		else
			die "$doc:$n: unknown line in the marker opened on line $start (want 'expect: TEXT' or '-->'): $line"
		fi
		;;
	fence)
		if [[ "$line" =~ ^\`\`\`(sh|bash|shell)[[:space:]]*$ ]]; then
			state=code cmd=""
		else
			die "$doc:$n: the marker on line $start must be followed directly by a \`\`\`sh block"
		fi
		;;
	code)
		if [[ "$line" =~ ^\`\`\`[[:space:]]*$ ]]; then
			ex_line+=("$start") ex_cmd+=("$cmd") ex_expect+=("$expects")
			state=text
		else
			cmd+="$line"$'\n'
		fi
		;;
	esac
done <"$doc"
[[ "$state" == text ]] || die "$doc: the example marked on line $start is not closed before the end of the file"
((${#ex_cmd[@]})) || die "no examples found in $doc (no '<!-- verified-example' markers): nothing would be checked"

for i in "${!ex_cmd[@]}"; do
	where="$doc:${ex_line[$i]}"
	read -r first _ <<<"${ex_cmd[$i]}"
	case "$first" in
	grpcurl | buf | curl) ex_tool+=("$first") ;;
	*) die "$where: an example must start with grpcurl, buf or curl, not '$first'" ;;
	esac
	[[ -n "${ex_expect[$i]}" ]] || die "$where: the marker has no 'expect:' line"
	[[ "${ex_cmd[$i]}" == *"$default_addr"* ]] ||
		die "$where: the example does not address the server as $default_addr, so it cannot be pointed at the test server"
	echo "$where: $first, checks $(grep -c . <<<"${ex_expect[$i]}") string(s)"
done
for tool in "${required_tools[@]}"; do
	found=0
	for t in "${ex_tool[@]}"; do [[ "$t" == "$tool" ]] && found=1; done
	((found)) || die "$doc has no marked $tool example"
done
echo "${#ex_cmd[@]} examples"

work="$(mktemp -d)"
# shellcheck source=lib/ahp-server.sh
source scripts/lib/ahp-server.sh

step "tools"
# Plain `grpcurl` and `buf` in the examples run the project's pinned tools through these wrappers,
# put first on PATH; curl is the system's.
mkdir -p "$work/bin"
for tool in grpcurl buf; do
	printf '#!/usr/bin/env bash\nexec %q "$@"\n' "$root/scripts/$tool" >"$work/bin/$tool"
	chmod +x "$work/bin/$tool"
done
have_grpcurl="" have_buf="" have_curl="" # set to 1 below for each tool that runs
unavailable() {
	if [[ "$optional" == 1 ]]; then
		echo "SKIPPED: the $1 examples: $2 (AHP_README_TOOLS_OPTIONAL=1)"
		return 0
	fi
	die "the $1 examples cannot run: $2. Set AHP_README_TOOLS_OPTIONAL=1 to skip them."
}
# The first scripts/grpcurl run builds grpcurl from the Go module proxy; later runs hit the cache.
if v="$("$work/bin/grpcurl" -version 2>&1)"; then
	have_grpcurl=1
	echo "grpcurl: scripts/grpcurl ($v; tools/grpcurl.mod pins $(sed -n 's/^[[:space:]]*github.com\/fullstorydev\/grpcurl \(v[^ ]*\).*/\1/p' tools/grpcurl.mod))"
else
	printf '%s\n' "$v" | tail -5 >&2
	unavailable grpcurl "scripts/grpcurl could not build or run grpcurl (tools/grpcurl.mod; needs the Go module proxy the first time)"
fi
if v="$("$work/bin/buf" --version 2>&1)"; then
	have_buf=1
	echo "buf: scripts/buf ($v)"
else
	printf '%s\n' "$v" | tail -5 >&2
	unavailable buf "scripts/buf does not run (npm ci at the repo root, or the Go module proxy for tools/buftool.mod)"
fi
if command -v curl >/dev/null 2>&1; then
	have_curl=1
	echo "curl: $(command -v curl)"
else
	unavailable curl "curl not found"
fi

step "build and start ahp-server on a free loopback port"
start_ahp_server
addr="${url#http://}"
[[ "$addr" =~ ^127\.0\.0\.1:[0-9]+$ ]] || die "unexpected listen address '$url'"
echo "ahp-server listening on $url (pid $server_pid); examples use $addr instead of $default_addr"

step "run the examples"
passed=0 skipped=0 failed=()
for i in "${!ex_cmd[@]}"; do
	where="$doc:${ex_line[$i]}"
	tool="${ex_tool[$i]}"
	have="have_$tool"
	if [[ -z "${!have:-}" ]]; then
		echo "SKIP  $where ($tool unavailable)"
		skipped=$((skipped + 1))
		continue
	fi
	script="$work/example-$i.sh"
	printf '%s' "${ex_cmd[$i]//"$default_addr"/"$addr"}" >"$script"
	t0=$(now_ms)
	status=0
	PATH="$work/bin:$PATH" timeout "$example_timeout" bash -eo pipefail "$script" \
		>"$work/example-$i.out" 2>"$work/example-$i.err" </dev/null || status=$?
	ms=$(($(now_ms) - t0))
	out="$(<"$work/example-$i.out")"
	missing=()
	while IFS= read -r exp; do
		[[ -z "$exp" || "$out" == *"$exp"* ]] || missing+=("$exp")
	done <<<"${ex_expect[$i]}"
	if ((status == 0 && ${#missing[@]} == 0)); then
		echo "ok    $where $tool (${ms} ms)"
		passed=$((passed + 1))
		continue
	fi
	failed+=("$where")
	{
		echo "FAIL  $where $tool (${ms} ms)"
		if ((status == 124)); then
			echo "  timed out after ${example_timeout} s"
		elif ((status != 0)); then
			echo "  exit status $status"
		fi
		for exp in ${missing[@]+"${missing[@]}"}; do echo "  output lacks: $exp"; done
		echo "  --- command run"
		sed 's/^/  | /' "$script"
		echo "  --- stdout"
		sed 's/^/  | /' "$work/example-$i.out"
		echo "  --- stderr"
		sed 's/^/  | /' "$work/example-$i.err"
	} >&2
done

if ! kill -0 "$server_pid" 2>/dev/null; then
	echo "ahp-server exited during the examples" >&2
	failed+=(server)
fi
if ((${#failed[@]})); then
	echo "--- ahp-server log (warnings and errors) ---" >&2
	tail -50 "$work/server.log" >&2 || true
fi

step "README examples: ${passed} passed, ${skipped} skipped, ${#failed[@]} failed"
if ((${#failed[@]})); then
	die "${failed[*]}"
fi
if ((passed == 0)); then
	echo "SKIPPED: no example ran: none of their tools could be obtained (AHP_README_TOOLS_OPTIONAL=1)"
fi
